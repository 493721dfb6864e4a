// fs_glob: paths matching a glob pattern, sorted.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run_fs_glob(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string base, resolve_arg(ctx, args, "path"));
  size_t max = static_cast<size_t>(arg_int(args, "max_results", 1000));
  auto matches = ws->fs().glob(arg_string(args, "pattern"), base);
  if (!matches.ok()) return explain(matches.status(), base);
  Json paths = Json::array();
  std::string text;
  bool truncated = matches->size() > max;
  for (size_t i = 0; i < matches->size() && i < max; ++i) {
    const auto& m = (*matches)[i];
    paths.push_back(m.path);
    text += fs::display_name(m.path) + std::string(fs::file_type_mark(m.type)) + "\n";
  }
  if (paths.empty()) text = "No paths match.\n";
  if (truncated) {
    text += "[" + std::to_string(matches->size() - max) + " more; narrow the pattern]\n";
  }
  return ToolOutput{
      std::move(text),
      Json{{"matches", std::move(paths)}, {"total", matches->size()}, {"truncated", truncated}},
      nullptr};
}

}  // namespace

ToolSpec fs_glob_tool() {
  ToolSpec t;
  t.name = "fs_glob";
  t.title = "Find paths by glob";
  t.description =
      "Find files and directories whose path (relative to `path`) matches a glob: * and ? stay "
      "within a segment, ** spans directories, {a,b} alternatives, [a-z] classes. Examples: "
      "\"**/*.py\", \"src/*.{h,cc}\". Results are workspace-relative and sorted; in the text, "
      "directories end with '/', symlinks '@', fifos '|' and sockets '='. Symbolic links are not "
      "followed. Control characters in names are escaped in the text (\\n, \\xNN); "
      "structuredContent holds the exact paths.";
  t.input_schema = object_schema(
      {{"pattern", string_prop("Glob pattern, e.g. \"**/*.md\"", 1)},
       {"path", string_prop("Directory to search under (default: the workspace root)")},
       {"max_results", integer_prop("Most paths to return (default 1000)", 1, 100'000)}},
      {"pattern"});
  t.output_schema =
      object_schema({{"matches", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                     {"total", {{"type", "integer"}}},
                     {"truncated", {{"type", "boolean"}}}});
  t.annotations = read_only_hints();
  t.handler = run_fs_glob;
  return t;
}

}  // namespace weft::server::tools
