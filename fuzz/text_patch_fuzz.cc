// Fuzzes the unified-diff parser and the patch applier: the input is split
// at the first NUL byte into a patch and a text to apply it to. Parsing must
// never crash; a parsed patch must format and re-parse to the same
// structure; applying must never crash and a failed plan yields no text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "weft/text/patch.h"
#include "weft/text/unified_diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t split = input.find('\0');
  std::string_view patch_text = input.substr(0, split);
  std::string_view text = split == std::string_view::npos ? "" : input.substr(split + 1);
  auto files = weft::text::parse_unified_diff(patch_text);
  if (!files.ok()) return 0;
  for (const auto& file : *files) {
    // Path-less files format without headers, so compare hunks only.
    auto again = weft::text::parse_unified_diff(weft::text::format_file_patch(file));
    if (!again.ok() || again->size() != 1 || (*again)[0].hunks != file.hunks) __builtin_trap();
    weft::text::PatchPlan plan = weft::text::plan_patch(text, file);
    if (plan.hunks.size() != file.hunks.size()) __builtin_trap();
    if (!plan.ok && !plan.new_text.empty()) __builtin_trap();
  }
  return 0;
}
