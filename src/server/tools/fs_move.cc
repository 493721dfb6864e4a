// fs_move: Move or rename a file or directory.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  auto change = ws->lock_for_change();
  WEFT_ASSIGN_OR_RETURN(std::string source, resolve_arg(ctx, args, "source"));
  WEFT_ASSIGN_OR_RETURN(std::string destination, resolve_arg(ctx, args, "destination"));
  Status s = ws->fs().move(source, destination, arg_bool(args, "overwrite"));
  if (s.code() == StatusCode::kAlreadyExists) {
    return already_exists("destination '" + destination +
                          "' already exists; pass overwrite: true to replace a file");
  }
  if (!s.ok()) return explain(s, source);
  return ToolOutput{"Moved " + source + " -> " + destination,
                    Json{{"source", source}, {"destination", destination}}, nullptr};
}

}  // namespace

ToolSpec fs_move_tool() {
  ToolSpec t;
  t.name = "fs_move";
  t.title = "Move";
  t.description =
      "Move or rename a file or directory. Fails if the destination exists unless overwrite is "
      "true (a directory is never "
      "overwritten). Missing parent directories of the destination are created.";
  t.input_schema = object_schema(
      {{"source", string_prop("Existing path in the workspace", 1)},
       {"destination", string_prop("New path in the workspace", 1)},
       {"overwrite", bool_prop("Replace an existing destination file (default false)")}},
      {"source", "destination"});
  t.output_schema =
      object_schema({{"source", {{"type", "string"}}}, {"destination", {{"type", "string"}}}});
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  t.handler = run;
  return t;
}

}  // namespace weft::server::tools
