// Internal: WEFT_DCHECK(cond), the engine's REQUIRES contracts as debug
// assertions. Checked in Debug and sanitizer builds (no NDEBUG), compiled
// out of Release builds so the fast paths pay nothing; a broken contract is
// a bug in weft, never a caller's input error (those return a Status).
//
// Thread safety: not applicable (a macro).
#ifndef WEFT_SRC_CRDT_DCHECK_H_
#define WEFT_SRC_CRDT_DCHECK_H_

#include <cassert>

#define WEFT_DCHECK(cond) assert(cond)

#endif  // WEFT_SRC_CRDT_DCHECK_H_
