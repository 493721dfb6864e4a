// fs_read: a page of a text file with numbered lines, the total line count
// and whether more remains.
#include <charconv>

#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

constexpr int64_t kDefaultLines = 2000;

// "     1\tfirst line\n" for each line of `page.content`, numbered from
// `first`; a line the fs layer cut ends with cut_line_note.
std::string number_lines(const fs::ReadResult& page, int64_t first) {
  std::string_view content = page.content;
  std::string out;
  out.reserve(content.size() + content.size() / 16 + 16);
  int64_t n = first;
  size_t pos = 0;
  size_t cut = 0;  // next entry of page.cut_lines
  char num[32];
  while (pos < content.size()) {
    size_t nl = content.find('\n', pos);
    size_t end = nl == std::string_view::npos ? content.size() : nl;
    std::string_view line = content.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // "%6lld\t" without snprintf's per-call parsing (a 100 KB file has ~1,500 lines).
    char* end_of_num = std::to_chars(num, num + sizeof num, n).ptr;
    size_t digits = static_cast<size_t>(end_of_num - num);
    if (digits < 6) out.append(6 - digits, ' ');
    out.append(num, digits);
    out.push_back('\t');
    out.append(line);
    if (cut < page.cut_lines.size() && page.cut_lines[cut].line == n - 1) {
      out += cut_line_note(page.cut_lines[cut++].length_bytes);
    }
    out.push_back('\n');
    ++n;
    pos = nl == std::string_view::npos ? content.size() : nl + 1;
  }
  return out;
}

Result<ToolOutput> run_fs_read(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  int64_t offset = arg_int(args, "offset", 1);
  int64_t limit = arg_int(args, "limit", kDefaultLines);
  auto page = ws->fs().read(path, offset - 1, limit);
  if (page.ok()) ws->note_read(path);
  if (!page.ok()) {
    if (page.status().code() == StatusCode::kInvalidArgument &&
        std::string(page.status().message()).find("UTF-8") != std::string::npos) {
      return invalid_argument("'" + path +
                              "' is not UTF-8 text (a binary file?); use fs_read_media for "
                              "images and other binary content");
    }
    return explain(page.status(), path);
  }
  const int64_t shown = page->lines;
  std::string text = number_lines(*page, offset);
  if (page->total_lines == 0) {
    text = "(empty file)\n";
  } else if (shown == 0) {
    text = "(offset " + std::to_string(offset) + " is past the end: the file has " +
           std::to_string(page->total_lines) + " lines)\n";
  } else if (page->truncated) {
    text += "[showing lines " + std::to_string(offset) + "-" + std::to_string(offset + shown - 1) +
            " of " + std::to_string(page->total_lines) + "; call again with offset " +
            std::to_string(offset + shown) + " for more]\n";
  }
  bool crlf = page->content.find("\r\n") != std::string::npos;
  Json structured = {
      {"path", page->path}, {"line_ending", crlf ? "crlf" : "lf"}, {"offset", offset},
      {"lines", shown},     {"total_lines", page->total_lines},    {"truncated", page->truncated}};
  if (!page->cut_lines.empty()) {
    Json cut = Json::array();
    for (const fs::CutLine& c : page->cut_lines) {
      cut.push_back({{"line", c.line + 1}, {"length_bytes", c.length_bytes}});
    }
    structured["cut_lines"] = std::move(cut);
  }
  return ToolOutput{std::move(text), std::move(structured), nullptr};
}

}  // namespace

ToolSpec fs_read_tool() {
  ToolSpec t;
  t.name = "fs_read";
  t.title = "Read file";
  t.description =
      "Read a UTF-8 text file from the workspace. Returns the lines with 1-based line numbers "
      "(`cat -n` style: number, tab, text; the prefix is not part of the file), the total line "
      "count and whether the output was truncated. Use offset/limit to page through large files. "
      "A line longer than 4 KiB is cut and marked \"[line truncated: N bytes total]\"; a page "
      "stops early after 256 KiB (truncated, with the offset to continue from). "
      "structuredContent carries the paging facts (total_lines, truncated, line_ending, "
      "cut_lines) without repeating the text. Binary files are refused: use fs_read_media.";
  t.input_schema = object_schema(
      {{"path",
        string_prop("File path, relative to the workspace root (or absolute inside it)", 1)},
       {"offset", integer_prop("1-based line to start at (default 1)", 1, 1'000'000'000)},
       {"limit", integer_prop("Most lines to return (default 2000)", 1, 1'000'000)}},
      {"path"});
  t.output_schema = object_schema({{"path", {{"type", "string"}}},
                                   {"line_ending", {{"type", "string"}}},
                                   {"offset", {{"type", "integer"}}},
                                   {"lines", {{"type", "integer"}}},
                                   {"total_lines", {{"type", "integer"}}},
                                   {"truncated", {{"type", "boolean"}}},
                                   {"cut_lines", {{"type", "array"}}}});
  t.output_schema.erase("additionalProperties");
  t.annotations = read_only_hints();
  t.handler = run_fs_read;
  return t;
}

}  // namespace weft::server::tools
