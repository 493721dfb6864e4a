// fs_write: create, overwrite or append to a file; parents are created.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  // Held from the existence check to the write, so "created" is true of this call.
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change({path}));
  WEFT_ASSIGN_OR_RETURN(fs::WriteMode mode,
                        fs::parse_write_mode(arg_string(args, "mode", "overwrite")));
  bool existed = ws->fs().exists(path);
  auto written = ws->fs().write(path, arg_string(args, "content"), mode,
                                arg_bool(args, "create_parents", true));
  if (!written.ok()) {
    if (written.status().code() == StatusCode::kAlreadyExists) {
      return already_exists("'" + path +
                            "' already exists; use mode \"overwrite\" to replace it or fs_edit to "
                            "change part of it");
    }
    return explain(written.status(), path);
  }
  std::string verb = mode == fs::WriteMode::kAppend ? "Appended"
                     : existed                      ? "Overwrote"
                                                    : "Created";
  return ToolOutput{verb + " " + path + " (" + std::to_string(written->bytes_written) + " bytes)",
                    Json{{"path", written->path},
                         {"bytes_written", written->bytes_written},
                         {"mode", fs::write_mode_name(mode)},
                         {"created", !existed}},
                    nullptr};
}

}  // namespace

ToolSpec fs_write_tool() {
  ToolSpec t;
  t.name = "fs_write";
  t.title = "Write file";
  t.description =
      "Write a UTF-8 text file. mode: \"overwrite\" (default) replaces the file or creates it, "
      "\"create\" fails if it exists, \"append\" adds to the end. Missing parent directories are "
      "created. The write is atomic (temp file + rename). To change part of a file prefer "
      "fs_edit.";
  t.input_schema = object_schema(
      {{"path", string_prop("File path in the workspace", 1)},
       {"content", string_prop("The text to write")},
       {"mode", enum_prop("create | overwrite | append (default overwrite)",
                          {"create", "overwrite", "append"})},
       {"create_parents", bool_prop("Create missing parent directories (default true)")}},
      {"path", "content"});
  t.output_schema = object_schema({{"path", {{"type", "string"}}},
                                   {"bytes_written", {{"type", "integer"}}},
                                   {"mode", {{"type", "string"}}},
                                   {"created", {{"type", "boolean"}}}});
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  t.handler = run;
  return t;
}

}  // namespace weft::server::tools
