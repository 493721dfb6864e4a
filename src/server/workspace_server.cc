// Builds the workspace MCP server (see include/weft/server/workspace_server.h).
#include "weft/server/workspace_server.h"

#include <malloc.h>

#include <filesystem>
#include <system_error>

#include "weft/fs/change_lock.h"
#include "weft/server/kernel_service.h"
#include "weft/server/sync_kernel_backend.h"
#include "weft/server/workspace_tools.h"

namespace weft::server {
namespace {

constexpr const char* kInstructions =
    "weft workspace. Paths are relative to the workspace root. Read with fs_read (numbered "
    "lines, offset/limit), change files with fs_edit (exact old_string -> new_string, unique "
    "unless replace_all) or fs_patch (unified diff), search with fs_grep and fs_glob. Take an "
    "fs_snapshot before risky changes; fs_restore brings it back.";

Result<std::shared_ptr<Workspace>> open_workspace(const WorkspaceServerOptions& options,
                                                  std::string* state_dir) {
  fs::HostOptions host = server_host_options(options);
  if (!options.read_only) {
    WEFT_ASSIGN_OR_RETURN(fs::RootChangeLock lock,
                          fs::open_root_change_lock(options.root, options.state_dir));
    if (!lock.warning.empty() && options.diagnostics) options.diagnostics(lock.warning);
    host.change_lock = std::move(lock.lock);
    *state_dir = lock.dir;
  }
  if (!options.sandbox) {
    WEFT_ASSIGN_OR_RETURN(auto fs, fs::make_host_filesystem(options.root, host));
    return std::make_shared<Workspace>(std::shared_ptr<fs::Filesystem>(std::move(fs)), nullptr,
                                       host.change_lock);
  }
  WEFT_RETURN_IF_ERROR(fs::sandbox_available());
  fs::SandboxOptions sandbox;
  std::error_code ec;
  sandbox.overlay_dir = std::filesystem::canonical(options.root, ec).string();
  if (ec) return not_found("workspace root '" + options.root + "': " + ec.message());
  sandbox.keep_overlay = true;  // the overlay IS the user's workspace
  sandbox.host = host;
  WEFT_ASSIGN_OR_RETURN(auto box, fs::make_sandbox_workspace(sandbox));
  std::shared_ptr<fs::SandboxWorkspace> shared(std::move(box));
  return std::make_shared<Workspace>(shared, shared, host.change_lock);
}

}  // namespace

fs::FsLimits server_fs_limits() {
  fs::FsLimits limits;
  limits.max_write_chars = 64ll << 20;
  limits.max_path_depth = 64;
  limits.max_segment_length = 255;
  limits.max_grep_matches = 100'000;
  // What an agent's context can take from one call: longer lines are cut (and
  // say so), a page stops early.
  limits.max_line_bytes = 4096;
  limits.max_read_bytes = 256ll << 10;
  return limits;
}

fs::HostOptions server_host_options(const WorkspaceServerOptions& options) {
  fs::HostOptions host;
  host.limits = server_fs_limits();
  host.read_only = options.read_only;
  host.durability =
      options.fsync ? fs::WriteDurability::kFsync : fs::WriteDurability::kAtomicRename;
  return host;
}

void tune_allocator_for_serving() {
  // Fixed thresholds also turn off glibc's dynamic mmap threshold, which otherwise moves
  // with each freed chunk and still returns memory at the top of the heap.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum on 64-bit
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

Result<WorkspaceServer> make_workspace_server(const WorkspaceServerOptions& options) {
  if (options.create_root) {
    std::error_code ec;
    std::filesystem::create_directories(options.root, ec);
    if (ec) return unavailable("cannot create workspace '" + options.root + "': " + ec.message());
  }
  WorkspaceServer out;
  std::string state_dir;
  WEFT_ASSIGN_OR_RETURN(out.workspace, open_workspace(options, &state_dir));
  bool with_kernel = options.kernel && !options.read_only;
  if (with_kernel && state_dir.empty()) {
    return unavailable("the workspace kernel needs a state directory and none could be made; "
                       "pass --state DIR");
  }
  if (with_kernel) {
    // No tool may reach the kernel's database, approvals or socket.
    std::error_code ec;
    std::string root = out.workspace->root();
    std::string state = std::filesystem::weakly_canonical(state_dir, ec).string();
    if (!ec && (state == root || state.rfind(root + "/", 0) == 0)) {
      return invalid_argument("the state directory " + state +
                              " is inside the workspace, where tools could reach it; pass "
                              "--state DIR with a directory outside " + root);
    }
  }
  out.tools = std::make_shared<ToolRegistry>();
  WorkspaceToolsOptions tool_options;
  tool_options.read_only = options.read_only;
  tool_options.shell = options.sandbox;
  tool_options.kernel = with_kernel;
  tool_options.shell_enforcement = options.shell_enforcement;
  tool_options.shell_predictor = options.shell_predictor;
  WEFT_RETURN_IF_ERROR(add_workspace_tools(*out.tools, tool_options));
  if (with_kernel) {
    kernel::KernelOptions kernel_options;
    kernel_options.state_dir = state_dir;
    kernel_options.log = options.diagnostics;
    WEFT_ASSIGN_OR_RETURN(out.kernel_link,
                          attach_kernel(out.workspace, out.tools, kernel_options));
  }
  if (with_kernel && options.live_sync) {
    std::shared_ptr<Workspace> ws = out.workspace;
    auto backend = std::make_shared<KernelSyncBackend>([ws] { return ws->kernel(); });
    out.sync = std::make_shared<sync::SyncRooms>(sync::SyncOptions{}, backend);
    backend->set_rooms(out.sync);
  }
  ServerOptions server_options;
  server_options.instructions = kInstructions;
  server_options.diagnostics = options.diagnostics;
  std::shared_ptr<Workspace> ws = out.workspace;
  server_options.map_roots = [ws](const std::vector<std::string>& uris) {
    return ws->map_roots(uris);
  };
  out.server =
      std::make_unique<McpServer>(std::move(server_options), out.tools,
                                  make_workspace_resources(out.workspace), out.workspace.get());
  return out;
}

}  // namespace weft::server
