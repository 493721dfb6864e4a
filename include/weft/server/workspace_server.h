// Assembles the MCP server of `weft mcp` and `weft serve`: a host (or
// bubblewrap-sandboxed) workspace on a directory, the workspace tools, the
// workspace resources and the roots mapping.
//
// Thread safety: the returned server is ready for concurrent use.
#ifndef WEFT_SERVER_WORKSPACE_SERVER_H_
#define WEFT_SERVER_WORKSPACE_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "weft/base/status.h"
#include "weft/kernel/kernel_link.h"
#include "weft/server/mcp_server.h"
#include "weft/server/sync_rooms.h"
#include "weft/server/workspace.h"
#include "weft/source/shell_hooks.h"

namespace weft::server {

struct WorkspaceServerOptions {
  std::string root;          // the workspace directory
  bool create_root = false;  // create `root` when absent
  bool read_only = false;    // no writing tools, and a read-only filesystem underneath
  bool sandbox = false;      // serve through a bubblewrap SandboxWorkspace; adds shell_exec
  // Writes fsync the file and its directory (fs::WriteDurability::kFsync). Default: atomic
  // rename without fsync, like editors and the reference server (see fs::WriteDurability).
  bool fsync = false;
  // The root's state directory, holding the lock that serialises changes with
  // other weft processes on the root (fs::open_root_change_lock). Default:
  // $XDG_STATE_HOME/weft/<hash of the root's real path>. Unused when read_only.
  std::optional<std::string> state_dir;
  // Run the workspace kernel: text files become blocks with history, weft.toml's
  // rules apply, and changes on disk are reconciled (kernel/kernel.h). Off: the
  // tools change files directly. Always off when read_only.
  bool kernel = true;
  // shell_exec's enforcement level (--enforcement); unset: weft.toml's
  // [shell] enforcement, else strict (source/shell_hooks.h).
  std::optional<source::Enforcement> shell_enforcement;
  // shell_exec's command predictor; empty: none (source::no_prediction).
  source::ShellPredictor shell_predictor;
  // Build the live-sync rooms (WorkspaceServer::sync) on the kernel's blocks.
  // Needs the kernel; `weft serve` turns it on.
  bool live_sync = false;
  std::function<void(const std::string&)> diagnostics;  // log lines (stderr in the CLI)
};

struct WorkspaceServer {
  std::shared_ptr<Workspace> workspace;
  std::shared_ptr<ToolRegistry> tools;
  std::unique_ptr<McpServer> server;
  // The root's kernel (this process's, or another's it sends changes to);
  // null without a kernel. Before exiting, a process that runs the kernel
  // calls kernel_link->linger() so the kernel outlives it while front ends
  // are connected.
  std::shared_ptr<kernel::KernelLink> kernel_link;
  // Live sync's rooms (HttpOptions::sync), their %LOR documents the kernel's
  // blocks (sync_kernel_backend.h); null unless options.live_sync and a kernel.
  std::shared_ptr<sync::SyncRooms> sync;
};

// Filesystem limits suited to agents (larger than the seed's defaults: files
// of several MB can be written and edited; grep may scan many matches).
fs::FsLimits server_fs_limits();

// The host filesystem options the server opens its workspace with (limits, read-only,
// durability).
fs::HostOptions server_host_options(const WorkspaceServerOptions& options);

// Tunes the process's allocator for serving: freed buffers of up to 32 MB stay in the heap
// for reuse instead of going back to the kernel. Without it every call that reads or edits
// a large file gets fresh pages from the kernel and pays a page fault per 4 KiB (about a
// third of an edit of a 1 MB file). Costs resident memory of a few times the largest file
// handled. Process-wide: `weft mcp` and `weft serve` call it once at startup.
void tune_allocator_for_serving();

// Builds the server. kNotFound / kNotADirectory for a bad root (unless
// create_root), kUnavailable when --sandbox cannot work here or options.state_dir
// cannot be used. When the default state directory cannot be made, the server
// still starts and options.diagnostics gets a warning.
Result<WorkspaceServer> make_workspace_server(const WorkspaceServerOptions& options);

}  // namespace weft::server

#endif  // WEFT_SERVER_WORKSPACE_SERVER_H_
