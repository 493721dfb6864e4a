// Test helper: a batch of FileChange as one line ("renamed b <- a; changed b/; "),
// for compact expectations and failure messages.
#ifndef WEFT_TESTS_SOURCE_CHANGE_TEXT_H_
#define WEFT_TESTS_SOURCE_CHANGE_TEXT_H_

#include <string>
#include <vector>

#include "weft/source/watcher.h"

namespace weft::source::testing {

inline std::string show(const std::vector<FileChange>& changes) {
  std::string out;
  for (const auto& c : changes) {
    out += std::string(file_change_kind_name(c.kind)) + " " + c.path;
    if (!c.from.empty()) out += " <- " + c.from;
    if (c.is_dir) out += "/";
    out += "; ";
  }
  return out;
}

}  // namespace weft::source::testing

#endif  // WEFT_TESTS_SOURCE_CHANGE_TEXT_H_
