// JSON nesting-depth pre-scan (see include/weft/base/json_depth.h).
#include "weft/base/json_depth.h"

#include <string>

namespace weft {

Status check_json_depth(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) {
          return invalid_argument("JSON nested deeper than " + std::to_string(max_depth) +
                                  " levels (at byte " + std::to_string(i) + ")");
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
