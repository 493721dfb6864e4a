// Line-ending helpers shared by the text layer's sources (not public).
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace weft::text {

// `line` without one trailing '\r' (a CRLF file's line, split at '\n').
inline std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace weft::text
