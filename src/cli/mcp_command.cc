// `weft mcp`: serves a workspace to one MCP client over stdio.
#include <unistd.h>

#include <csignal>
#include <iostream>

#include "cli/command_registry.h"
#include "weft/server/stdio_transport.h"
#include "weft/server/workspace_server.h"

namespace weft::cli {
namespace {

struct McpArgs {
  std::string root = ".";
  bool read_only = false;
  bool sandbox = false;
  std::string enforcement;
  bool fsync = false;
  bool no_kernel = false;
  std::string state;
  size_t workers = 4;
};

void setup_mcp(CLI::App& app) {
  auto args = std::make_shared<McpArgs>();
  auto* cmd = app.add_subcommand(
      "mcp",
      "Serve a workspace to an MCP client over stdio (what Claude Desktop, Cursor, etc. run)");
  cmd->add_option("--root", args->root, "Workspace directory (default: the current directory)");
  cmd->add_flag("--read-only", args->read_only, "Publish only tools that change nothing");
  cmd->add_option("--state", args->state, kStateHelp);
  cmd->add_flag("--sandbox", args->sandbox,
                "Serve through a bubblewrap sandbox and publish shell_exec");
  cmd->add_option("--enforcement", args->enforcement, kEnforcementHelp)
      ->check(CLI::IsMember({"strict", "warned", "audit", "none"}));
  cmd->add_flag("--fsync", args->fsync,
                "fsync every written file and its directory before answering (survives a power "
                "cut; slower). Default: atomic rename without fsync, like editors");
  cmd->add_flag("--no-kernel", args->no_kernel,
                "Change files directly: no blocks, history, weft.toml rules or reconcile");
  cmd->add_option("--workers", args->workers, "Requests handled concurrently (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->footer(
      "stdin/stdout carry one JSON-RPC message per line; logs go to stderr. End of input stops "
      "the server (exit 0).\nClient config: {\"command\": \"weft\", \"args\": [\"mcp\", "
      "\"--root\", \"/path/to/workspace\"]}");
  cmd->callback([args] {
    std::signal(SIGPIPE, SIG_IGN);
    server::tune_allocator_for_serving();
    server::WorkspaceServerOptions options;
    options.root = args->root;
    options.read_only = args->read_only;
    options.sandbox = args->sandbox;
    if (!args->enforcement.empty()) {
      options.shell_enforcement = *source::parse_enforcement(args->enforcement);
    }
    options.fsync = args->fsync;
    options.kernel = !args->no_kernel;
    if (!args->state.empty()) options.state_dir = args->state;
    options.diagnostics = [](const std::string& line) {
      std::cerr << "weft mcp: " << line << "\n";
    };
    auto built = server::make_workspace_server(options);
    if (!built.ok()) {
      fail(built.status());
      return;
    }
    std::cerr << "weft mcp: serving " << built->workspace->root() << " over stdio ("
              << built->tools->tools().size() << " tools" << (args->read_only ? ", read-only" : "")
              << (args->fsync ? ", fsync on every write" : "") << ")\n";
    Status s = server::serve_stdio(*built->server, STDIN_FILENO, STDOUT_FILENO,
                                   server::StdioOptions{args->workers});
    if (!s.ok()) {
      fail(s);
      return;
    }
    // Other front ends on this root use the kernel this process runs: it stays
    // until the last of them is gone.
    if (auto& link = built->kernel_link; link && link->is_kernel() && link->front_ends() > 0) {
      std::cerr << "weft mcp: the client left; the workspace kernel stays for "
                << link->front_ends() << " other front end(s)\n";
      link->linger();
    }
    set_exit_code(kExitOk);
  });
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("mcp", 20, weft::cli::setup_mcp);
