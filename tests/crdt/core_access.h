// Test support: the one door from a crdt test into a Doc's engine internals
// (src/crdt/core.h). Tests include this header, never crdt/core.h itself, so
// what they reach inside DocCore stays listed in one place: the test-only
// switches (TestOptions), the partial tracker's counters, and read access to
// the op log and state.
#ifndef WEFT_TESTS_CRDT_CORE_ACCESS_H_
#define WEFT_TESTS_CRDT_CORE_ACCESS_H_

#include "crdt/core.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {

// The DocCore behind `doc` (Doc::core applies buffered keystrokes first).
inline detail::DocCore& core_of(const Doc& doc) { return *doc.core(); }

// The test-only switches of `doc`'s engine (see detail::TestOptions).
inline detail::TestOptions& test_options(const Doc& doc) { return doc.core()->test_options(); }

}  // namespace weft::crdt

#endif  // WEFT_TESTS_CRDT_CORE_ACCESS_H_
