// How CLI commands reach a workspace root's kernel: through the root's
// KernelLink (kernel/kernel_link.h), so they work while a `weft mcp` or
// `weft serve` runs the kernel, and run one for the command otherwise. Used
// by `weft history|diff|rollback|approvals` and the kernel side of
// `weft block`.
//
// Thread safety: main thread only, like every CLI command.
#ifndef WEFT_CLI_KERNEL_CLIENT_H_
#define WEFT_CLI_KERNEL_CLIENT_H_

#include <CLI/CLI.hpp>

#include <string>

#include "weft/base/status.h"
#include "weft/server/jsonrpc.h"
#include "weft/server/workspace_server.h"

namespace weft::cli {

struct KernelArgs {
  std::string root = ".";
  std::string state;
  bool json = false;
  // Act as "agent:<agent>" instead of the person running the command.
  std::string agent;
};

// --root, --state and --json (and --agent when `with_agent`).
void add_kernel_options(CLI::App* cmd, KernelArgs& a, bool with_agent = false);

// The person running the command, for attribution ("human:<name>").
std::string person();

// The root's workspace server with its kernel link. kUnavailable when the
// root has no kernel.
Result<server::WorkspaceServer> connect_kernel(const KernelArgs& a);

// A tool's error text ("Error (not found): msg") back to a Status, for the
// exit code.
Status tool_error_status(const std::string& text);

// What a kernel tool answered: its text and structuredContent.
struct ToolReply {
  std::string text;
  server::Json structured;
};

// Runs one of the kernel's tools on `server`'s link, as the person (or as
// a.agent). The tool's error comes back as its Status.
Result<ToolReply> call_kernel_tool(server::WorkspaceServer& server, const KernelArgs& a,
                                   const std::string& tool, server::Json arguments);

// Connects, runs the tool and prints its text (or, with --json, its
// structuredContent); sets the exit code.
void run_kernel_tool(const KernelArgs& a, const std::string& tool, server::Json arguments);

// Prints a reply as run_kernel_tool does and sets the exit code to success.
void print_tool_reply(const KernelArgs& a, const ToolReply& reply);

}  // namespace weft::cli

#endif  // WEFT_CLI_KERNEL_CLIENT_H_
