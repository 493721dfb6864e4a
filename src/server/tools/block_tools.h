// The block tools (block_*, memory_*, kernel_search): the kernel's block API
// (kernel/blocks.h) over MCP. Every one is via_kernel, reads too, since the
// blocks live in the root's one kernel. Private to src/server/.
#ifndef WEFT_SRC_SERVER_TOOLS_BLOCK_TOOLS_H_
#define WEFT_SRC_SERVER_TOOLS_BLOCK_TOOLS_H_

#include <string>
#include <string_view>
#include <vector>

#include "server/tools/tool_util.h"
#include "weft/kernel/blocks.h"

namespace weft::server::tools {

// The kernel's blocks; kFailedPrecondition when the workspace has no kernel.
Result<kernel::Blocks*> blocks_of(const ToolContext& ctx);
// args[key] as a block id; a "file:<path>" id is resolved under the client's
// roots like any fs_* path (and normalised). Errors say which forms exist.
Result<std::string> block_id_arg(const ToolContext& ctx, const Json& args, const char* key);
// A kernel error with what to do next added where the kernel's message lacks it.
Status block_error(const Status& status, std::string_view block_id);
// The text and structuredContent of a write: block_id, version, changed,
// status, applied; pending_approval (and applied=false) when a person must
// approve it first; buffered_bytes for appends.
ToolOutput write_output(const kernel::BlockWrite& write, const std::string& what);
// The output schema of write_output, plus `extra` properties.
Json write_schema(Json extra = Json::object());
// A block_id string property described for agents.
Json block_id_prop(std::string description = "");
// "3 lines" / "1 line".
std::string plural(size_t n, std::string_view word);
// A match as structuredContent shows it, and its lines as text ("12:\t..."
// for the matching line, "11-\t..." for context).
Json match_json(const kernel::BlockMatch& match);
void append_match_text(std::string& out, const kernel::BlockMatch& match);
// A via_kernel tool with an object input schema of `props`.
ToolSpec block_tool(std::string name, std::string title, std::string description, Json props,
                    std::vector<std::string> required, Json output_schema,
                    ToolAnnotations annotations, ToolHandler handler);

ToolSpec block_create_tool();
ToolSpec block_status_tool();
ToolSpec block_delete_tool();
ToolSpec block_append_tool();
ToolSpec block_edit_tool();
ToolSpec block_splice_tool();
ToolSpec block_apply_patch_tool();
ToolSpec block_read_tool();
ToolSpec block_search_tool();
ToolSpec block_list_tool();
ToolSpec block_history_tool();
ToolSpec block_diff_tool();
ToolSpec block_rollback_tool();
ToolSpec block_undo_tool();
ToolSpec block_redo_tool();
ToolSpec memory_create_tool();
ToolSpec memory_read_tool();
ToolSpec memory_update_tool();
ToolSpec memory_append_tool();
ToolSpec kernel_search_tool();

// Every tool above, in the order tools/list shows them.
std::vector<ToolSpec> block_tools();

}  // namespace weft::server::tools

#endif  // WEFT_SRC_SERVER_TOOLS_BLOCK_TOOLS_H_
