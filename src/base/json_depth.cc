// JSON nesting-depth pre-scan (see include/weft/base/json_depth.h).
#include "weft/base/json_depth.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace weft {

namespace {

// The index of the quote that closes the string opened just before `from`,
// or text.size() when it never closes. A quote after an odd run of
// backslashes is escaped. memchr keeps long strings (file contents) fast.
size_t string_end(std::string_view text, size_t from) {
  for (;;) {
    const void* hit = std::memchr(text.data() + from, '"', text.size() - from);
    if (!hit) return text.size();
    size_t quote = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    size_t backslashes = 0;
    while (text[quote - 1 - backslashes] == '\\') ++backslashes;  // stops at the opening quote
    if (backslashes % 2 == 0) return quote;
    from = quote + 1;
  }
}

}  // namespace

Status check_json_depth(std::string_view text, size_t max_depth) {
  return check_json_shape(text, max_depth, SIZE_MAX);
}

Status check_json_shape(std::string_view text, size_t max_depth, size_t max_values) {
  size_t depth = 0;
  size_t values = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
      case '"':
        i = string_end(text, i + 1);
        break;
      case '[':
      case '{':
        if (++depth > max_depth) {
          return invalid_argument("JSON nested deeper than " + std::to_string(max_depth) +
                                  " levels (at byte " + std::to_string(i) + ")");
        }
        [[fallthrough]];
      case ',':
      case ':':
        if (++values > max_values) {
          return invalid_argument("JSON of more than " + std::to_string(max_values) +
                                  " values (at byte " + std::to_string(i) + ")");
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced text is the parser's to reject
        break;
      default:
        break;
    }
  }
  return Status();
}

}  // namespace weft
