// A nesting-depth guard (and a value-count guard) for JSON text that came from
// outside, run before the text is parsed.
//
// nlohmann's parser is iterative, but copying, comparing and dumping a parsed
// value recurse once per level, as does weft's own code walking it: a few
// hundred kilobytes of "[[[[..." would overflow the stack later. So every
// parse of outside JSON first passes its text through check_json_depth, and no
// value deeper than the limit is ever built. The scan is one pass over the
// bytes and allocates nothing.
//
// Thread safety: pure function; safe from any thread.
#ifndef WEFT_BASE_JSON_DEPTH_H_
#define WEFT_BASE_JSON_DEPTH_H_

#include <cstddef>
#include <string_view>

#include "weft/base/status.h"

namespace weft {

// The default limit: arrays and objects nest at most this many levels.
inline constexpr size_t kMaxJsonDepth = 64;

// OK when no array or object in `text` nests deeper than `max_depth` levels
// (a top-level array or object is level 1). Brackets inside strings, escaped
// quotes included, do not count. Text that is not JSON may pass; the parser
// that follows rejects it, and never builds anything deeper than the limit
// before it does. Otherwise kInvalidArgument, e.g.
// "JSON nested deeper than 64 levels (at byte 64)".
Status check_json_depth(std::string_view text, size_t max_depth = kMaxJsonDepth);

// The default limit on a message's values: a parsed value costs 30-100 bytes
// of heap, so a text of millions of tiny values ("[[],[],...") would take
// hundreds of megabytes even within a 16 MiB size limit.
inline constexpr size_t kMaxJsonValues = 200'000;

// check_json_depth, and also at most `max_values` values, counted as the
// opening brackets, commas and colons outside strings (an object member
// counts twice). Otherwise kInvalidArgument, e.g.
// "JSON of more than 200000 values (at byte 1048576)".
Status check_json_shape(std::string_view text, size_t max_depth, size_t max_values);

}  // namespace weft

#endif  // WEFT_BASE_JSON_DEPTH_H_
