// Fuzzes the shell pre-hook: any text is predicted (with glob and kind
// callbacks over a small fake tree) and checked against rules, or refused
// with kInvalidArgument. Invariants: nothing crashes or hangs, spans lie in
// the command, the op and flag counts respect their limits, every op has a
// path, and a second prediction of the same text gives the same ops.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/source/shell_predict.h"

namespace {

using weft::source::ShellOptions;
using weft::source::ShellPathKind;

const std::vector<std::string> kTree = {"a.txt", "src", "src/x.cc", "src/y.h", "docs",
                                        "docs/r.md", "vendor", "vendor/v.js", "weft.toml"};

ShellOptions options() {
  ShellOptions o;
  o.root = "/ws";
  o.home = "/home/u";
  o.glob = [](std::string_view pattern) { return weft::source::shell_glob_in(pattern, kTree); };
  o.kind = [](std::string_view path) {
    for (const std::string& p : kTree) {
      if (p == path) return p.find('.') == std::string::npos ? ShellPathKind::kDirectory
                                                              : ShellPathKind::kFile;
    }
    return ShellPathKind::kMissing;
  };
  return o;
}

const weft::source::WorkspaceRules& rules() {
  static const weft::source::WorkspaceRules r = [] {
    auto parsed = weft::source::WorkspaceRules::parse(
        "[permissions]\nrules = [\n{ glob = \"vendor/**\", level = \"read_only\" },\n"
        "{ glob = \"docs/**\", level = \"human\", escalate = [\"delete\"] },\n]\n");
    return parsed.ok() ? std::move(parsed).value() : weft::source::WorkspaceRules();
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const ShellOptions o = options();
  auto p = weft::source::predict_shell(text, o);
  if (!p.ok()) {
    if (p.status().code() != weft::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  if (p->ops.size() > weft::source::kMaxShellOps) __builtin_trap();
  if (p->flags.size() > weft::source::kMaxShellFlags) __builtin_trap();
  for (const auto& op : p->ops) {
    if (op.path.empty() || op.span.begin > op.span.end || op.span.end > size) __builtin_trap();
  }
  for (const auto& f : p->flags) {
    if (f.span.begin > f.span.end || f.span.end > size) __builtin_trap();
  }
  auto checks = weft::source::check_prediction(*p, rules());
  if (checks.size() != p->ops.size()) __builtin_trap();
  auto again = weft::source::predict_shell(text, o);
  if (!again.ok() || again->ops.size() != p->ops.size()) __builtin_trap();
  for (size_t i = 0; i < p->ops.size(); ++i) {
    if (again->ops[i].path != p->ops[i].path || again->ops[i].op != p->ops[i].op) {
      __builtin_trap();
    }
  }
  return 0;
}
