// Fuzzes path normalisation, glob compilation/matching and the snapshot
// record parser. Input: "<path>\n<glob>\n<candidate path>\n<json...>".
// Invariants: a normalised path never contains "", "." or ".." segments,
// respects the limits, and normalising its string form is the identity;
// nothing crashes or hangs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weft/base/glob.h"
#include "weft/fs/path.h"
#include "weft/fs/types.h"

namespace {

std::string_view next_line(std::string_view* in) {
  size_t nl = in->find('\n');
  std::string_view line = in->substr(0, nl);
  in->remove_prefix(nl == std::string_view::npos ? in->size() : nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string_view path = next_line(&in);
  std::string_view pattern = next_line(&in);
  std::string_view candidate = next_line(&in);
  weft::fs::FsLimits limits;
  auto p = weft::fs::normalize_path(path, "/root/ws", limits);
  if (p.ok()) {
    if (static_cast<int>(p->segments.size()) > limits.max_path_depth) __builtin_trap();
    for (const auto& s : p->segments) {
      if (s.empty() || s == "." || s == ".." || s.find('/') != std::string::npos ||
          static_cast<int>(s.size()) > limits.max_segment_length) {
        __builtin_trap();
      }
    }
    auto again = weft::fs::normalize_path(p->str(), "/root/ws", limits);
    if (!again.ok() || again->segments != p->segments) __builtin_trap();
  }
  if (pattern.size() < 200) {
    auto g = weft::GlobPattern::compile(pattern);
    if (g.ok()) {
      bool m = g->matches(candidate);
      // A path that matches must have had a viable prefix at every level.
      if (m) {
        size_t slash = candidate.rfind('/');
        std::string_view dir = slash == std::string_view::npos ? "" : candidate.substr(0, slash);
        if (!candidate.empty() && candidate.find("//") == std::string_view::npos &&
            candidate.front() != '/' && candidate.back() != '/' && !g->could_match_below(dir)) {
          __builtin_trap();
        }
      }
    }
  }
  (void)weft::fs::snapshot_from_json(in);
  return 0;
}
