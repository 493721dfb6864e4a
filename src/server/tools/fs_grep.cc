// fs_grep: search file contents (RE2 regex or literal) with a glob filter,
// context lines, a match cap, and files-only / count modes.
#include <map>

#include "server/tools/tool_util.h"
#include "weft/text/line_index.h"

namespace weft::server::tools {
namespace {

constexpr int64_t kScanCap = 100'000;  // matches fetched for files/count modes

std::string quote_regex(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// rg-style blocks: "path:12:text" for matches, "path-11-text" for context, "--" between groups.
std::string with_context(Workspace& ws, const std::vector<fs::GrepMatch>& matches, int64_t context,
                         const ToolContext& ctx) {
  std::string out;
  std::map<std::string, std::vector<int64_t>> by_file;
  std::vector<std::string> order;
  for (const auto& m : matches) {
    if (!by_file.count(m.path)) order.push_back(m.path);
    by_file[m.path].push_back(m.line_number);
  }
  for (size_t f = 0; f < order.size() && !ctx.cancelled(); ++f) {
    ctx.progress(static_cast<double>(f + 1), static_cast<double>(order.size()), "context");
    auto bytes = ws.fs().read_bytes(order[f]);
    if (!bytes.ok()) continue;
    text::LineIndex index(bytes->content);
    const auto& lines = by_file[order[f]];
    int64_t last_printed = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      int64_t from = std::max<int64_t>(1, lines[i] - context);
      int64_t to = std::min<int64_t>(static_cast<int64_t>(index.line_count()), lines[i] + context);
      if (last_printed && from > last_printed + 1) out += "--\n";
      for (int64_t n = std::max(from, last_printed + 1); n <= to; ++n) {
        bool hit = std::binary_search(lines.begin(), lines.end(), n);
        std::string_view line = index.line(static_cast<size_t>(n - 1));
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        out += order[f] + (hit ? ":" : "-") + std::to_string(n) + (hit ? ":" : "-");
        out.append(line);
        out += "\n";
      }
      last_printed = std::max(last_printed, to);
    }
    out += "--\n";
  }
  return out;
}

Result<ToolOutput> run(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string base, resolve_arg(ctx, args, "path"));
  std::string pattern = arg_string(args, "pattern");
  if (arg_bool(args, "literal")) pattern = quote_regex(pattern);
  if (arg_bool(args, "case_insensitive")) pattern = "(?i)" + pattern;
  std::string mode = arg_string(args, "output_mode", "content");
  int64_t max = arg_int(args, "max_matches", 200);
  int64_t context = arg_int(args, "context", 0);
  std::optional<std::string> glob;
  if (args.contains("glob")) glob = arg_string(args, "glob");
  ctx.progress(0, 1, "searching");
  // The scan polls the call's cancellation flag, so notifications/cancelled stops a long grep
  // within one file instead of after the whole tree.
  fs::GrepOptions options{glob, mode == "content" ? max + 1 : kScanCap, ctx.cancel_flag()};
  options.threads = 0;  // every core: the result is the same as one thread's, sooner
  auto found = ws->fs().grep(pattern, base, options);
  if (ctx.cancelled()) return cancelled_error("cancelled");
  if (!found.ok()) return explain(found.status(), base);
  std::vector<fs::GrepMatch>& matches = *found;
  std::string text;
  Json structured = {{"mode", mode}};
  if (mode == "content") {
    bool truncated = static_cast<int64_t>(matches.size()) > max;
    if (truncated) matches.resize(static_cast<size_t>(max));
    Json list = Json::array();
    for (const auto& m : matches) {
      list.push_back({{"path", m.path}, {"line", m.line_number}, {"text", m.line_content}});
    }
    if (context > 0) {
      text = with_context(*ws, matches, context, ctx);
    } else {
      for (const auto& m : matches) {
        text += m.path + ":" + std::to_string(m.line_number) + ":" + m.line_content + "\n";
      }
    }
    if (truncated) text += "[stopped at max_matches=" + std::to_string(max) + "]\n";
    structured["matches"] = std::move(list);
    structured["truncated"] = truncated;
  } else {
    std::vector<std::pair<std::string, int64_t>> counts;
    for (const auto& m : matches) {
      if (counts.empty() || counts.back().first != m.path) counts.push_back({m.path, 0});
      ++counts.back().second;
    }
    bool truncated = static_cast<int64_t>(counts.size()) > max;
    if (truncated) counts.resize(static_cast<size_t>(max));
    Json files = Json::array();
    for (const auto& [path, n] : counts) {
      files.push_back(mode == "count" ? Json{{"path", path}, {"count", n}} : Json(path));
      text += mode == "count" ? path + ":" + std::to_string(n) + "\n" : path + "\n";
    }
    structured["files"] = std::move(files);
    structured["truncated"] = truncated;
  }
  if (text.empty()) text = "No matches.\n";
  ctx.progress(1, 1, "done");
  return ToolOutput{std::move(text), std::move(structured), nullptr};
}

}  // namespace

ToolSpec fs_grep_tool() {
  ToolSpec t;
  t.name = "fs_grep";
  t.title = "Search file contents";
  t.description =
      "Search the contents of workspace files for an RE2 regular expression (or a literal string "
      "with literal: true). Binary files are skipped. glob filters files (\"*.py\" matches names, "
      "\"src/**/*.h\" paths). output_mode: \"content\" (default; path:line:text, with `context` "
      "lines around each match), \"files_with_matches\" (paths only) or \"count\". max_matches "
      "bounds matching lines (content) or files (other modes).";
  t.input_schema = object_schema(
      {{"pattern", string_prop("RE2 regular expression (or literal text with literal: true)", 1)},
       {"path", string_prop("File or directory to search (default: the workspace root)")},
       {"literal", bool_prop("Treat pattern as plain text (default false)")},
       {"case_insensitive", bool_prop("Ignore case (default false)")},
       {"glob", string_prop("Only files matching this glob", 1)},
       {"context", integer_prop("Lines of context before and after each match (default 0)", 0, 20)},
       {"max_matches", integer_prop("Most results (default 200)", 1, 10'000)},
       {"output_mode", enum_prop("content | files_with_matches | count (default content)",
                                 {"content", "files_with_matches", "count"})}},
      {"pattern"});
  t.output_schema = object_schema({{"mode", {{"type", "string"}}},
                                   {"matches", {{"type", "array"}}},
                                   {"files", {{"type", "array"}}},
                                   {"truncated", {{"type", "boolean"}}}});
  t.annotations = read_only_hints();
  t.handler = run;
  return t;
}

}  // namespace weft::server::tools
