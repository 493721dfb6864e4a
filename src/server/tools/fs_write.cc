// fs_write: create, overwrite or append to a file; parents are created.
#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

std::string already_exists_message(const std::string& path) {
  return "'" + path +
         "' already exists; use mode \"overwrite\" to replace it or fs_edit to change part of it";
}

// Through the kernel: the file's block takes the new content as one change.
Result<ToolOutput> run_fs_write_in_kernel(kernel::Kernel& k, const std::string& path, fs::WriteMode mode,
                                 const Json& args, ToolContext& ctx) {
  std::string content = arg_string(args, "content");
  if (!arg_bool(args, "create_parents", true)) {
    auto slash = path.rfind('/');
    if (slash != std::string::npos && !ctx.workspace()->fs().exists(path.substr(0, slash))) {
      return not_found("the parent directory of '" + path +
                       "' does not exist; set create_parents or make it with fs_mkdir");
    }
  }
  size_t bytes_written = content.size();
  source::FileOp op =
      mode == fs::WriteMode::kAppend ? source::FileOp::kAppend : source::FileOp::kOverwrite;
  auto outcome = k.change_text(
      path, agent_of(ctx, "fs_write"), op,
      [&](const std::optional<std::string>& old) -> Result<std::string> {
        if (mode == fs::WriteMode::kCreate && old) return already_exists(already_exists_message(path));
        if (mode == fs::WriteMode::kAppend && old) return *old + content;
        return content;
      });
  if (!outcome.ok()) return explain(outcome.status(), path);
  Json structured{{"path", path},
                  {"bytes_written", bytes_written},
                  {"mode", fs::write_mode_name(mode)},
                  {"created", outcome->created}};
  if (!outcome->pending_approval.empty()) return pending_output(path, *outcome, structured);
  if (!outcome->version.empty()) structured["version"] = outcome->version;
  std::string verb = mode == fs::WriteMode::kAppend ? "Appended"
                     : outcome->created             ? "Created"
                                                    : "Overwrote";
  return ToolOutput{verb + " " + path + " (" + std::to_string(bytes_written) + " bytes)",
                    std::move(structured), nullptr};
}

Result<ToolOutput> run_fs_write(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  WEFT_ASSIGN_OR_RETURN(fs::WriteMode mode,
                        fs::parse_write_mode(arg_string(args, "mode", "overwrite")));
  if (kernel::Kernel* k = ws->kernel()) return run_fs_write_in_kernel(*k, path, mode, args, ctx);
  // Held from the existence check to the write, so "created" is true of this call.
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change({path}));
  bool existed = ws->fs().exists(path);
  auto written = ws->fs().write(path, arg_string(args, "content"), mode,
                                arg_bool(args, "create_parents", true));
  if (!written.ok()) {
    if (written.status().code() == StatusCode::kAlreadyExists) {
      return already_exists(already_exists_message(path));
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
  add_change_properties(t.output_schema);
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  t.handler = run_fs_write;
  t.via_kernel = true;
  return t;
}

}  // namespace weft::server::tools
