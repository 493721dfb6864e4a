// fs_delete: remove a file, or a directory with recursive: true.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run_fs_delete(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change());
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  if (path == ".") return permission_denied("refusing to delete the workspace root");
  Status s;
  if (kernel::Kernel* k = ws->kernel()) {
    auto outcome = k->remove(path, agent_of(ctx, "fs_delete"), arg_bool(args, "recursive"));
    if (outcome.ok() && !outcome->pending_approval.empty()) {
      return pending_output(path, *outcome, Json{{"path", path}, {"deleted", false}});
    }
    s = outcome.status();
  } else {
    s = ws->fs().remove(path, arg_bool(args, "recursive"));
  }
  if (s.code() == StatusCode::kIsADirectory) {
    return is_a_directory("'" + path +
                          "' is a directory; pass recursive: true to delete it "
                          "with its contents");
  }
  if (!s.ok()) return explain(s, path);
  return ToolOutput{"Deleted " + path, Json{{"path", path}, {"deleted", true}}, nullptr};
}

}  // namespace

ToolSpec fs_delete_tool() {
  ToolSpec t;
  t.name = "fs_delete";
  t.title = "Delete file or directory";
  t.description =
      "Delete a file, or a directory and everything in it when recursive is true. The workspace "
      "root cannot be deleted. Take an fs_snapshot first if you may want it back.";
  t.input_schema =
      object_schema({{"path", string_prop("Path in the workspace", 1)},
                     {"recursive", bool_prop("Required to delete a directory (default false)")}},
                    {"path"});
  t.output_schema =
      object_schema({{"path", {{"type", "string"}}}, {"deleted", {{"type", "boolean"}}}});
  add_change_properties(t.output_schema);
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/true);
  t.handler = run_fs_delete;
  t.via_kernel = true;
  return t;
}

}  // namespace weft::server::tools
