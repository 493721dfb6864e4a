// Shared helpers for the workspace tools: schema builders, argument access,
// path resolution through the workspace and the client's roots, and small
// encoders. Private to src/server/.
#ifndef WEFT_SRC_SERVER_TOOLS_TOOL_UTIL_H_
#define WEFT_SRC_SERVER_TOOLS_TOOL_UTIL_H_

#include <string>
#include <string_view>
#include <vector>

#include "weft/fs/filesystem.h"
#include "weft/fs/path.h"
#include "weft/server/tool.h"
#include "weft/kernel/kernel.h"
#include "weft/server/workspace.h"
#include "weft/server/workspace_tools.h"
#include "weft/source/file_block.h"

namespace weft::server::tools {

// {"type":"object","properties":...,"required":[...],"additionalProperties":false}
Json object_schema(Json properties, std::vector<std::string> required = {});
Json string_prop(std::string description, size_t min_length = 0);
Json integer_prop(std::string description, int64_t minimum, int64_t maximum);
Json bool_prop(std::string description);
Json enum_prop(std::string description, std::vector<std::string> values);
// The ToolAnnotations presets.
ToolAnnotations read_only_hints();
ToolAnnotations write_hints(bool destructive, bool idempotent);

// args[key] or `fallback` when absent.
std::string arg_string(const Json& args, const char* key, std::string fallback = "");
int64_t arg_int(const Json& args, const char* key, int64_t fallback);
bool arg_bool(const Json& args, const char* key, bool fallback = false);

// The workspace of the call; kFailedPrecondition when the server has none.
Result<Workspace*> workspace_of(const ToolContext& ctx);
// Resolves args[key] as a workspace path under the client's roots.
Result<std::string> resolve_arg(const ToolContext& ctx, const Json& args, const char* key);

// A failed-call hint appended to fs errors, e.g. "(paths are relative to the workspace root)".
Status explain(const Status& status, std::string_view path);

std::string base64_encode(std::string_view bytes);
// MIME type guessed from the file name ("application/octet-stream" when unknown).
std::string mime_type_for(std::string_view path);
Json stat_to_json(const fs::FileStat& stat);

// " [line truncated: N bytes total]": what text output appends to a line the
// fs layer cut (FsLimits::max_line_bytes).
std::string cut_line_note(int64_t length_bytes);


// The kernel of the call's workspace; kFailedPrecondition when it has none.
Result<kernel::Kernel*> kernel_of(const ToolContext& ctx);
// The author of the call's changes: "agent:<client name>", doing `tool`.
source::Attribution agent_of(const ToolContext& ctx, std::string_view tool);
// The text and structured fields of a change the rules sent to a person:
// "Pending approval apr_...: <rule>. The file is unchanged until a person approves it".
// Adds pending_approval and applied=false to `structured`.
ToolOutput pending_output(const std::string& path, const kernel::ChangeOutcome& outcome,
                          Json structured);
// The output-schema properties every changing tool adds: version, pending_approval, applied.
void add_change_properties(Json& output_schema);

// Registration of each tool (one file each under src/server/tools/).
ToolSpec fs_read_tool();
ToolSpec fs_read_media_tool();
ToolSpec fs_write_tool();
ToolSpec fs_edit_tool();
ToolSpec fs_patch_tool();
ToolSpec fs_list_tool();
ToolSpec fs_glob_tool();
ToolSpec fs_grep_tool();
ToolSpec fs_stat_tool();
ToolSpec fs_delete_tool();
ToolSpec fs_mkdir_tool();
ToolSpec fs_move_tool();
ToolSpec fs_copy_tool();
ToolSpec fs_snapshot_tool();
ToolSpec fs_restore_tool();
ToolSpec fs_snapshots_tool();
ToolSpec shell_exec_tool(const WorkspaceToolsOptions& options);
ToolSpec fs_history_tool();
ToolSpec fs_diff_tool();
ToolSpec fs_rollback_tool();
ToolSpec fs_undo_tool();
ToolSpec fs_redo_tool();
ToolSpec fs_status_tool();

}  // namespace weft::server::tools

#endif  // WEFT_SRC_SERVER_TOOLS_TOOL_UTIL_H_
