// Test helpers for the properties that run one session on a doc with a fast
// path and on one without (fast_commit off) and then compare them: asserts
// (RC_ASSERT, so only inside a RapidCheck property) that two docs agree on
// everything observable about their state and history.
#ifndef WEFT_TESTS_CRDT_DOC_COMPARE_H_
#define WEFT_TESTS_CRDT_DOC_COMPARE_H_

#include <rapidcheck.h>

#include <string>
#include <vector>

#include "weft/crdt/doc.h"

namespace weft::crdt::testing {

// One line per change: id, length, lamport, timestamp, message and deps.
inline std::string describe_changes(const std::vector<ChangeMeta>& changes) {
  std::string s;
  for (const ChangeMeta& c : changes) {
    s += c.id.to_string() + " len " + std::to_string(c.len) + " lamport " +
         std::to_string(c.lamport) + " ts " + std::to_string(c.timestamp) + " msg " +
         (c.message ? *c.message : "-") + " deps";
    for (const ID& d : c.deps) s += " " + d.to_string();
    s += "\n";
  }
  return s;
}

// The doc's invariants hold (Doc::check_invariants, deep); the failure
// names the first one broken.
inline void check_doc(const Doc& doc) {
  const Status st = doc.check_invariants(true);
  if (!st.ok()) RC_FAIL(std::string(st.message()));
}

// Value, versions, frontiers, changes, op count and every export are equal.
inline void expect_same_doc(const Doc& a, const Doc& b) {
  check_doc(a);
  check_doc(b);
  RC_ASSERT(a.to_json_string() == b.to_json_string());
  RC_ASSERT(a.version().to_json_string() == b.version().to_json_string());
  RC_ASSERT(a.oplog_version().to_json_string() == b.oplog_version().to_json_string());
  RC_ASSERT(a.frontiers() == b.frontiers());
  RC_ASSERT(a.oplog_frontiers() == b.oplog_frontiers());
  RC_ASSERT(describe_changes(a.changes()) == describe_changes(b.changes()));
  RC_ASSERT(a.op_count() == b.op_count());
  RC_ASSERT(a.export_updates() == b.export_updates());
  RC_ASSERT(a.export_snapshot() == b.export_snapshot());
  RC_ASSERT(a.export_json_updates() == b.export_json_updates());
}

}  // namespace weft::crdt::testing

#endif  // WEFT_TESTS_CRDT_DOC_COMPARE_H_
