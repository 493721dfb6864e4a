// Properties of merging a binary history into an empty doc: the plain-state
// path (whose text inserts and deletes apply inline in apply_change) must
// give the same text as the full Fugue tracker path, at the latest version
// and checked out at any version, including ones that cut an op in the middle.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/doc_compare.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

const std::vector<std::string> kPieces = {"a", "bc", "é", "😀", "中文", "\n", "xyz", "hello "};

// Random typing by one peer: multi-unit inserts (one op each), forward
// deletes and backspace runs (which merge into one backward delete op),
// committed at random points so that changes hold several ops.
void random_history(Doc& doc) {
  TextRef t = doc.get_text("t");
  const int steps = *rc::gen::inRange(1, 40);
  for (int s = 0; s < steps; ++s) {
    const int kind = *rc::gen::inRange(0, 4);
    if (kind <= 1 || t.len() == 0) {
      std::string text;
      const int pieces = *rc::gen::inRange(1, 5);
      for (int k = 0; k < pieces; ++k) text += *rc::gen::elementOf(kPieces);
      RC_ASSERT(t.insert(*rc::gen::inRange<size_t>(0, t.len() + 1), text).ok());
    } else if (kind == 2) {
      const size_t pos = *rc::gen::inRange<size_t>(0, t.len());
      const size_t n = *rc::gen::inRange<size_t>(1, std::min<size_t>(6, t.len() - pos) + 1);
      RC_ASSERT(t.erase(pos, n).ok());
    } else {
      // Backspacing from a random caret.
      size_t caret = *rc::gen::inRange<size_t>(1, t.len() + 1);
      const int n = *rc::gen::inRange(1, 6);
      for (int k = 0; k < n && caret > 0; ++k, --caret) RC_ASSERT(t.erase(caret - 1, 1).ok());
    }
    if (*rc::gen::inRange(0, 3) == 0) RC_ASSERT(doc.commit().ok());
    testing::check_doc(doc);
  }
  RC_ASSERT(doc.commit().ok());
}

RC_GTEST_PROP(BinaryMerge, PlainImportMatchesTrackerAtEveryVersion, ()) {
  Doc author(5);
  random_history(author);
  const std::string updates = author.export_updates();
  Doc plain(901);
  RC_ASSERT(plain.import(updates).ok());
  Doc full(902);
  test_options(full).plain_enabled = false;
  RC_ASSERT(full.import(updates).ok());
  const std::string want = author.get_text("t").to_string();
  RC_ASSERT(plain.get_text("t").to_string() == want);
  RC_ASSERT(full.get_text("t").to_string() == want);
  // Every version of the history (each counter ends a prefix of it).
  const Counter end = author.oplog_version().get(5);
  for (Counter c = 0; c < end; ++c) {
    const Frontiers at{ID{5, c}};
    RC_ASSERT(plain.checkout(at).ok());
    RC_ASSERT(full.checkout(at).ok());
    RC_ASSERT(plain.get_text("t").to_string() == full.get_text("t").to_string());
  }
}

// Checks every change of `core`'s log, in log order, against the rule that
// defines its causal fields: lamport is one past the latest dep's, deps_vv
// the closure of its deps plus its own earlier counters, deps_total its sum;
// and the op log's frontier is the frontier of its version. (append_change
// computes these on a fast path for a change whose one dep lies in its
// author's last change, and by merging for the rest.)
void check_causal_fields(const detail::DocCore& core) {
  for (const detail::Change& ch : core.log()) {
    detail::DenseVv want;
    Lamport lamport = 0;
    for (const ID& d : ch.deps) {
      const detail::Change* dc = core.find_change(d.peer, d.counter);
      RC_ASSERT(dc != nullptr);
      lamport = std::max(lamport, dc->lamport + static_cast<Lamport>(d.counter - dc->counter) + 1);
      want.merge(core.deps_vv(*dc));
      want.extend(dc->peer, d.counter + 1);
    }
    want.extend(ch.peer, ch.counter);
    RC_ASSERT(ch.lamport == lamport);
    std::vector<int32_t> got(core.deps_vv(ch).begin(), core.deps_vv(ch).end());
    while (!got.empty() && got.back() == 0) got.pop_back();
    while (!want.ends.empty() && want.ends.back() == 0) want.ends.pop_back();
    RC_ASSERT(got == want.ends);
    RC_ASSERT(ch.deps_total == want.total());
  }
  RC_ASSERT(core.oplog_heads() == core.dense_to_frontiers(core.oplog_version()));
}

// Three peers typing concurrently with random syncs (so that changes depend
// on their author's last change, on another peer's, or on both), then the
// whole history imported into an empty doc.
RC_GTEST_PROP(BinaryMerge, ImportedCausalFieldsMatchTheirDefinition, ()) {
  Doc peers[3] = {Doc(11), Doc(12), Doc(13)};
  const int steps = *rc::gen::inRange(1, 60);
  for (int s = 0; s < steps; ++s) {
    Doc& doc = peers[*rc::gen::inRange(0, 3)];
    if (*rc::gen::inRange(0, 4) == 0) {
      const Doc& from = peers[*rc::gen::inRange(0, 3)];
      RC_ASSERT(doc.import(from.export_updates(doc.oplog_version())).ok());
      testing::check_doc(doc);
      continue;
    }
    TextRef t = doc.get_text("t");
    if (t.len() == 0 || *rc::gen::inRange(0, 3) != 0) {
      RC_ASSERT(
          t.insert(*rc::gen::inRange<size_t>(0, t.len() + 1), *rc::gen::elementOf(kPieces)).ok());
    } else {
      RC_ASSERT(t.erase(*rc::gen::inRange<size_t>(0, t.len()), 1).ok());
    }
    RC_ASSERT(doc.commit().ok());
    testing::check_doc(doc);
  }
  Doc all(99);
  for (const Doc& d : peers) RC_ASSERT(all.import(d.export_updates()).ok());
  check_causal_fields(*all.core());
  for (const Doc& d : peers) check_causal_fields(*d.core());
}

}  // namespace
}  // namespace weft::crdt
