// region_diff (see region_diff.h).
#include "server/tools/region_diff.h"

#include <algorithm>
#include <cstring>

namespace weft::server::tools {
namespace {

// Start of the line `lines` lines above the line holding `pos`.
size_t back_lines(std::string_view t, size_t pos, size_t lines) {
  size_t start = pos == 0 ? 0 : t.rfind('\n', pos - 1);
  start = start == std::string_view::npos ? 0 : start + 1;
  for (size_t i = 0; i < lines && start > 0; ++i) {
    size_t prev = start >= 2 ? t.rfind('\n', start - 2) : std::string_view::npos;
    start = prev == std::string_view::npos ? 0 : prev + 1;
  }
  return start;
}

// End (past the '\n') of the line `lines` lines below the line holding `pos`.
size_t forward_lines(std::string_view t, size_t pos, size_t lines) {
  size_t end = pos;
  for (size_t i = 0; i <= lines && end < t.size(); ++i) {
    size_t nl = t.find('\n', end);
    end = nl == std::string_view::npos ? t.size() : nl + 1;
  }
  return end;
}

}  // namespace

std::string region_diff(std::string_view a, std::string_view b,
                        const text::MakeDiffOptions& options) {
  if (a == b) return "";
  size_t limit = std::min(a.size(), b.size());
  size_t prefix = 0;
  while (prefix < limit) {  // block compares first: a byte loop is slow on 1 MB files
    size_t step = std::min<size_t>(4096, limit - prefix);
    if (std::memcmp(a.data() + prefix, b.data() + prefix, step) != 0) break;
    prefix += step;
  }
  prefix =
      std::mismatch(a.begin() + prefix, a.begin() + limit, b.begin() + prefix).first - a.begin();
  size_t suffix = 0;
  const size_t max_suffix = limit - prefix;
  while (suffix < max_suffix) {
    size_t step = std::min<size_t>(4096, max_suffix - suffix);
    if (std::memcmp(a.data() + a.size() - suffix - step, b.data() + b.size() - suffix - step,
                    step) != 0) {
      break;
    }
    suffix += step;
  }
  while (suffix < max_suffix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) ++suffix;
  // Widen to whole lines plus margin context lines; everything outside is identical.
  size_t margin = options.context + 1;
  size_t start = back_lines(a, prefix, margin);
  size_t a_end = forward_lines(a, a.size() - suffix, margin);
  size_t b_end = a_end + b.size() - a.size();
  size_t lines_before = static_cast<size_t>(std::count(a.begin(), a.begin() + start, '\n'));
  text::FilePatch patch = text::make_file_patch(a.substr(start, a_end - start),
                                                b.substr(start, b_end - start), options);
  for (auto& hunk : patch.hunks) {
    hunk.old_start += lines_before;
    hunk.new_start += lines_before;
  }
  if (!options.file_headers) {
    patch.old_path.clear();
    patch.new_path.clear();
  }
  return text::format_file_patch(patch);
}

}  // namespace weft::server::tools
