// fs_mkdir: create a directory (and its parents); an existing one is fine.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run_fs_mkdir(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change());
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  bool existed = ws->fs().exists(path);
  Status s = ws->fs().mkdir(path, arg_bool(args, "parents", true), /*exist_ok=*/true);
  if (!s.ok()) return explain(s, path);
  return ToolOutput{(existed ? "Directory already exists: " : "Created directory ") + path,
                    Json{{"path", path}, {"created", !existed}}, nullptr};
}

}  // namespace

ToolSpec fs_mkdir_tool() {
  ToolSpec t;
  t.name = "fs_mkdir";
  t.title = "Create directory";
  t.description =
      "Create a directory, with missing parents unless parents is false (like mkdir -p). An "
      "existing directory is not an error.";
  t.input_schema = object_schema({{"path", string_prop("Directory path in the workspace", 1)},
                                  {"parents", bool_prop("Create missing parents (default true)")}},
                                 {"path"});
  t.output_schema =
      object_schema({{"path", {{"type", "string"}}}, {"created", {{"type", "boolean"}}}});
  t.annotations = write_hints(/*destructive=*/false, /*idempotent=*/true);
  t.handler = run_fs_mkdir;
  return t;
}

}  // namespace weft::server::tools
