// Helpers shared by the durability tests: the edits they write and how they
// check which ones a block holds.
#ifndef WEFT_TESTS_STORE_DURABILITY_TEST_UTIL_H_
#define WEFT_TESTS_STORE_DURABILITY_TEST_UTIL_H_

#include <string>
#include <vector>

namespace weft::store::testing {

// Edit `i` appends "e<i>;".
inline std::string edit_text(int i) { return "e" + std::to_string(i) + ";"; }

// Which edits 0..n-1 occur in `text` (made of edit_text pieces).
inline std::vector<bool> edits_present(const std::string& text, int n) {
  std::vector<bool> seen(static_cast<size_t>(n), false);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t semi = text.find(';', pos);
    if (semi == std::string::npos) break;
    if (text[pos] == 'e') {
      int i = std::atoi(text.c_str() + pos + 1);
      if (i >= 0 && i < n) seen[static_cast<size_t>(i)] = true;
    }
    pos = semi + 1;
  }
  return seen;
}

}  // namespace weft::store::testing

#endif  // WEFT_TESTS_STORE_DURABILITY_TEST_UTIL_H_
