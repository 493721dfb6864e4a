// Assembles the MCP server of `weft mcp` and `weft serve`: a host (or
// bubblewrap-sandboxed) workspace on a directory, the workspace tools, the
// workspace resources and the roots mapping.
//
// Thread safety: the returned server is ready for concurrent use.
#ifndef WEFT_SERVER_WORKSPACE_SERVER_H_
#define WEFT_SERVER_WORKSPACE_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "weft/base/status.h"
#include "weft/server/mcp_server.h"
#include "weft/server/workspace.h"

namespace weft::server {

struct WorkspaceServerOptions {
  std::string root;          // the workspace directory
  bool create_root = false;  // create `root` when absent
  bool read_only = false;    // no writing tools, and a read-only filesystem underneath
  bool sandbox = false;      // serve through a bubblewrap SandboxWorkspace; adds shell_exec
  std::function<void(const std::string&)> diagnostics;  // log lines (stderr in the CLI)
};

struct WorkspaceServer {
  std::shared_ptr<Workspace> workspace;
  std::shared_ptr<ToolRegistry> tools;
  std::unique_ptr<McpServer> server;
};

// Filesystem limits suited to agents (larger than the seed's defaults: files
// of several MB can be written and edited; grep may scan many matches).
fs::FsLimits server_fs_limits();

// Builds the server. kNotFound / kNotADirectory for a bad root (unless
// create_root), kUnavailable when --sandbox cannot work here.
Result<WorkspaceServer> make_workspace_server(const WorkspaceServerOptions& options);

}  // namespace weft::server

#endif  // WEFT_SERVER_WORKSPACE_SERVER_H_
