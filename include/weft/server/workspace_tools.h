// The workspace tools weft publishes over MCP (fs_read, fs_read_media,
// fs_write, fs_edit, fs_patch, fs_list, fs_glob, fs_grep, fs_stat, fs_delete,
// fs_mkdir, fs_move, fs_copy, fs_snapshot, fs_restore, fs_snapshots; with a
// kernel fs_history, fs_diff, fs_rollback, fs_undo, fs_redo, fs_status and the
// block tools block_*, memory_*, kernel_search; with a sandbox, shell_exec), and workspace files as MCP resources.
//
// Thread safety: registration happens before serving; the tools and the
// resource provider are safe to call concurrently.
#ifndef WEFT_SERVER_WORKSPACE_TOOLS_H_
#define WEFT_SERVER_WORKSPACE_TOOLS_H_

#include <memory>
#include <optional>

#include "weft/base/status.h"
#include "weft/source/shell_hooks.h"
#include "weft/server/mcp_server.h"
#include "weft/server/tool.h"
#include "weft/server/workspace.h"

namespace weft::server {

struct WorkspaceToolsOptions {
  bool read_only = false;  // publish only tools that change nothing
  bool shell = false;      // publish shell_exec (needs a sandboxed workspace)
  // publish fs_history, fs_diff, fs_rollback, fs_undo, fs_redo, fs_status and
  // the block tools (needs a workspace with a kernel)
  bool kernel = false;
  // shell_exec's enforcement level; unset: weft.toml's [shell] enforcement,
  // else strict (source/shell_hooks.h).
  std::optional<source::Enforcement> shell_enforcement{};
  // What shell_exec asks before a command runs; empty: source::predict_shell.
  source::ShellPredictor shell_predictor{};
};

// Adds the tools in a fixed order. Errors only on a programming mistake
// (duplicate names).
Status add_workspace_tools(ToolRegistry& registry, const WorkspaceToolsOptions& options);

// Workspace files (not directories) as resources with file:// URIs.
std::shared_ptr<ResourceProvider> make_workspace_resources(std::shared_ptr<Workspace> workspace);

}  // namespace weft::server

#endif  // WEFT_SERVER_WORKSPACE_TOOLS_H_
