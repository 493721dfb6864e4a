// fs_grep: search file contents (RE2 regex or literal) with a glob filter,
// context lines, a match cap, and files-only / count modes.

#include "server/tools/tool_util.h"

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

// A matched line as grep text shows it: the (possibly cut) line, and where
// the fs layer cut it, the whole length and the shown window.
std::string match_text(const fs::GrepMatch& m) {
  std::string out = m.line_content;
  const int64_t shown = static_cast<int64_t>(m.line_content.size());
  if (m.line_length_bytes > shown) {
    out += " [line truncated: " + std::to_string(m.line_length_bytes) + " bytes total; bytes " +
           std::to_string(m.line_content_offset_byte) + "-" +
           std::to_string(m.line_content_offset_byte + shown) + " shown]";
  }
  return out;
}

// rg-style blocks: "path:12:text" for matches, "path-11-text" for context, "--" between
// groups. Context lines come from paged reads, so a long line is cut as in fs_read; once
// kContextScanBytes of files were read for context, the remaining files show their matching
// lines only.
std::string with_context(Workspace& ws, const std::vector<fs::GrepMatch>& matches, int64_t context,
                         const ToolContext& ctx) {
  constexpr int64_t kContextScanBytes = 64ll << 20;
  int64_t scanned = 0;
  std::string out;
  std::vector<std::pair<std::string, std::vector<const fs::GrepMatch*>>> files;
  for (const auto& m : matches) {
    if (files.empty() || files.back().first != m.path) files.push_back({m.path, {}});
    files.back().second.push_back(&m);
  }
  for (size_t f = 0; f < files.size() && !ctx.cancelled(); ++f) {
    ctx.progress(static_cast<double>(f + 1), static_cast<double>(files.size()), "context");
    const std::string& path = files[f].first;
    const auto& hits = files[f].second;
    const std::string shown_path = fs::display_name(path);
    auto emit_hit = [&](const fs::GrepMatch& m) {
      out += shown_path + ":" + std::to_string(m.line_number) + ":" + match_text(m) + "\n";
    };
    auto st = ws.fs().stat(path);
    if (!st.ok() || scanned + st->size_bytes > kContextScanBytes) {
      for (const fs::GrepMatch* m : hits) emit_hit(*m);
      out += "--\n";
      continue;
    }
    // Merged blocks of lines [from, to] around the hits, each read as one page.
    size_t i = 0;
    while (i < hits.size()) {
      int64_t from = std::max<int64_t>(1, hits[i]->line_number - context);
      int64_t to = hits[i]->line_number + context;
      size_t j = i + 1;
      while (j < hits.size() && hits[j]->line_number - context <= to + 1) {
        to = hits[j]->line_number + context;
        ++j;
      }
      scanned += st->size_bytes;
      auto page = ws.fs().read(path, from - 1, to - from + 1);
      if (!page.ok()) {
        for (size_t k = i; k < j; ++k) emit_hit(*hits[k]);
      } else {
        std::string_view content = page->content;
        size_t pos = 0, cut = 0, k = i;
        for (int64_t n = from; pos < content.size(); ++n) {
          size_t nl = content.find('\n', pos);
          size_t end = nl == std::string_view::npos ? content.size() : nl;
          std::string_view line = content.substr(pos, end - pos);
          pos = nl == std::string_view::npos ? content.size() : nl + 1;
          if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
          while (k < j && hits[k]->line_number < n) ++k;
          if (k < j && hits[k]->line_number == n) {
            emit_hit(*hits[k]);
          } else {
            out += shown_path + "-" + std::to_string(n) + "-";
            out.append(line);
            if (cut < page->cut_lines.size() && page->cut_lines[cut].line == n - 1) {
              out += cut_line_note(page->cut_lines[cut].length_bytes);
            }
            out += "\n";
          }
          while (cut < page->cut_lines.size() && page->cut_lines[cut].line <= n - 1) ++cut;
        }
        // Hits past what the page held (it stopped at its byte cap).
        for (; k < j; ++k) {
          if (hits[k]->line_number >= from + page->lines) emit_hit(*hits[k]);
        }
      }
      if (j < hits.size()) out += "--\n";
      i = j;
    }
    out += "--\n";
  }
  return out;
}

Result<ToolOutput> run_fs_grep(const Json& args, ToolContext& ctx) {
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
  fs::GrepOptions options;
  options.glob = glob;
  options.max_matches = mode == "content" ? max + 1 : kScanCap;
  options.cancel = ctx.cancel_flag();
  options.threads = 0;  // every core: the result is the same as one thread's, sooner
  if (mode != "content") options.max_line_bytes = 16;  // paths and counts only: keep little
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
      Json item = {{"path", m.path}, {"line", m.line_number}, {"text", m.line_content}};
      if (m.line_length_bytes > static_cast<int64_t>(m.line_content.size())) {
        item["line_length_bytes"] = m.line_length_bytes;
        item["text_offset_byte"] = m.line_content_offset_byte;
      }
      list.push_back(std::move(item));
    }
    if (context > 0) {
      text = with_context(*ws, matches, context, ctx);
    } else {
      for (const auto& m : matches) {
        text += fs::display_name(m.path) + ":" + std::to_string(m.line_number) + ":" +
                match_text(m) + "\n";
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
      std::string shown = fs::display_name(path);
      text += mode == "count" ? shown + ":" + std::to_string(n) + "\n" : shown + "\n";
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
      "bounds matching lines (content) or files (other modes). A matching line longer than 4 KiB "
      "shows a 4 KiB window around the match, marked \"[line truncated: N bytes total; bytes "
      "A-B shown]\". Control characters in paths are escaped in the text; structuredContent "
      "holds the exact paths.";
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
  t.handler = run_fs_grep;
  return t;
}

}  // namespace weft::server::tools
