// Test support: the one door from a crdt test into a Doc's engine internals
// (src/crdt/core.h). Tests include this header, never crdt/core.h itself, so
// what they reach inside DocCore stays listed in one place: the test-only
// switches (TestOptions), the partial tracker's counters, read access to the
// op log and state (DocCore's public accessors), and through CoreAccess (a
// friend of DocCore) the writes and the uncommitted-edit fields that only
// tests touch.
#ifndef WEFT_TESTS_CRDT_CORE_ACCESS_H_
#define WEFT_TESTS_CRDT_CORE_ACCESS_H_

#include "crdt/core.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace detail {

// What tests reach inside a DocCore beyond its public accessors: corrupting
// the op log or the state on purpose (doc_check_test), swapping the live
// state, and the fields of the uncommitted local edit.
struct CoreAccess {
  static std::vector<Change>& log(DocCore& core) { return core.changes; }
  static std::unique_ptr<State>& state(DocCore& core) { return core.state; }
  static const LocalEdit::TypingBuffer& typing(const DocCore& core) {
    return core.local_edit().buffer();
  }
  static Counter txn_len(const DocCore& core) { return core.local_edit().len(); }
};

}  // namespace detail

// The DocCore behind `doc` (Doc::core applies buffered keystrokes first).
inline detail::DocCore& core_of(const Doc& doc) { return *doc.core(); }

// The test-only switches of `doc`'s engine (see detail::TestOptions).
inline detail::TestOptions& test_options(const Doc& doc) { return doc.core()->test_options(); }

}  // namespace weft::crdt

#endif  // WEFT_TESTS_CRDT_CORE_ACCESS_H_
