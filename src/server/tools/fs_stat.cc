// fs_stat: metadata of one path.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run_fs_stat(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  auto st = ws->fs().stat(path);
  if (!st.ok()) return explain(st.status(), path);
  Json info = stat_to_json(*st);
  std::string text =
      "path: " + fs::display_name(st->path) + "\ntype: " + info["type"].get<std::string>() + "\n";
  if (st->symlink_target) text += "symlink_target: " + fs::display_name(*st->symlink_target) + "\n";
  text += "size_bytes: " + std::to_string(st->size_bytes) + "\n";
  if (info["modified_at"].is_string())
    text += "modified_at: " + info["modified_at"].get<std::string>() + "\n";
  if (info["created_at"].is_string())
    text += "created_at: " + info["created_at"].get<std::string>() + "\n";
  return ToolOutput{std::move(text), std::move(info), nullptr};
}

}  // namespace

ToolSpec fs_stat_tool() {
  ToolSpec t;
  t.name = "fs_stat";
  t.title = "File info";
  t.description =
      "Metadata of a workspace path, never following a symbolic link: type (file, directory, "
      "symlink with its symlink_target, fifo, socket, char_device, block_device, other), size "
      "in bytes, modification and creation times (ISO-8601 UTC, null when unknown). The text "
      "escapes control characters in names; structuredContent holds them exactly.";
  t.input_schema = object_schema({{"path", string_prop("Path in the workspace", 1)}}, {"path"});
  t.output_schema = object_schema({{"path", {{"type", "string"}}},
                                   {"type", {{"type", "string"}}},
                                   {"symlink_target", {{"type", "string"}}},
                                   {"size_bytes", {{"type", "integer"}}},
                                   {"modified_at", {{"type", {"string", "null"}}}},
                                   {"created_at", {{"type", {"string", "null"}}}}});
  t.annotations = read_only_hints();
  t.handler = run_fs_stat;
  return t;
}

}  // namespace weft::server::tools
