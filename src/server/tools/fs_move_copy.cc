// fs_move and fs_copy: the two tools that take a source and a destination.
// They share arguments, checks and result; only the fs call and wording differ.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

enum class Transfer { kMove, kCopy };

Result<ToolOutput> run_fs_move_copy(Transfer kind, const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change());
  WEFT_ASSIGN_OR_RETURN(std::string source, resolve_arg(ctx, args, "source"));
  WEFT_ASSIGN_OR_RETURN(std::string destination, resolve_arg(ctx, args, "destination"));
  bool overwrite = arg_bool(args, "overwrite");
  Status s;
  if (kernel::Kernel* k = ws->kernel()) {
    // Blocks move with their files and keep their history.
    auto who = agent_of(ctx, kind == Transfer::kMove ? "fs_move" : "fs_copy");
    auto outcome = kind == Transfer::kMove ? k->move(source, destination, who, overwrite)
                                           : k->copy(source, destination, who, overwrite);
    if (outcome.ok() && !outcome->pending_approval.empty()) {
      return pending_output(source, *outcome,
                            Json{{"source", source}, {"destination", destination}});
    }
    s = outcome.status();
  } else {
    s = kind == Transfer::kMove ? ws->fs().move(source, destination, overwrite)
                                : ws->fs().copy(source, destination, overwrite);
  }
  if (s.code() == StatusCode::kAlreadyExists) {
    return already_exists("destination '" + destination +
                          "' already exists; pass overwrite: true to replace a file");
  }
  if (!s.ok()) return explain(s, source);
  std::string verb = kind == Transfer::kMove ? "Moved " : "Copied ";
  return ToolOutput{verb + source + " -> " + destination,
                    Json{{"source", source}, {"destination", destination}}, nullptr};
}

ToolSpec transfer_tool(Transfer kind) {
  ToolSpec t;
  bool move = kind == Transfer::kMove;
  t.name = move ? "fs_move" : "fs_copy";
  t.title = move ? "Move" : "Copy";
  t.description =
      std::string(move ? "Move or rename a file or directory."
                       : "Copy a file, or a directory tree (symbolic links inside are skipped).") +
      " Fails if the destination exists unless overwrite is true (a directory is never "
      "overwritten). Missing parent directories of the destination are created.";
  t.input_schema = object_schema(
      {{"source", string_prop("Existing path in the workspace", 1)},
       {"destination", string_prop(move ? "New path in the workspace" : "Path of the copy", 1)},
       {"overwrite", bool_prop("Replace an existing destination file (default false)")}},
      {"source", "destination"});
  t.output_schema =
      object_schema({{"source", {{"type", "string"}}}, {"destination", {{"type", "string"}}}});
  add_change_properties(t.output_schema);
  t.annotations = write_hints(/*destructive=*/move, /*idempotent=*/false);
  t.handler = [kind](const Json& args, ToolContext& ctx) { return run_fs_move_copy(kind, args, ctx); };
  t.via_kernel = true;
  return t;
}

}  // namespace

ToolSpec fs_move_tool() { return transfer_tool(Transfer::kMove); }
ToolSpec fs_copy_tool() { return transfer_tool(Transfer::kCopy); }

}  // namespace weft::server::tools
