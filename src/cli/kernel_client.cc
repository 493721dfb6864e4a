#include "cli/kernel_client.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/command_registry.h"
#include "weft/server/kernel_service.h"

namespace weft::cli {

using server::Json;

void add_kernel_options(CLI::App* cmd, KernelArgs& a, bool with_agent) {
  cmd->add_option("--root", a.root, "Workspace directory (default: the current directory)");
  cmd->add_option("--state", a.state, kStateHelp);
  cmd->add_flag("--json", a.json, "Print JSON instead of human-readable text");
  if (with_agent) {
    cmd->add_option("--agent", a.agent,
                    "Act as agent:NAME (its undo stack, its attribution) instead of yourself");
  }
}

std::string person() {
  for (const char* var : {"WEFT_USER", "USER", "LOGNAME"}) {
    if (const char* v = std::getenv(var); v && *v) return v;
  }
  return "uid" + std::to_string(::getuid());
}

Result<server::WorkspaceServer> connect_kernel(const KernelArgs& a) {
  server::WorkspaceServerOptions options;
  options.root = a.root;
  if (!a.state.empty()) options.state_dir = a.state;
  options.diagnostics = [](const std::string& line) {
    // Only what a person must know: the kernel's routine lines stay quiet.
    if (line.find("frozen") != std::string::npos || line.find("damaged") != std::string::npos) {
      std::cerr << "weft: " << line << "\n";
    }
  };
  WEFT_ASSIGN_OR_RETURN(server::WorkspaceServer built, server::make_workspace_server(options));
  if (!built.kernel_link) return unavailable("the workspace kernel is off for this root");
  return built;
}

Status tool_error_status(const std::string& text) {
  if (text.rfind("Invalid arguments for tool", 0) == 0) {
    return Status(StatusCode::kInvalidArgument, text);
  }
  for (int c = 1; c <= static_cast<int>(StatusCode::kNotADirectory); ++c) {
    auto code = static_cast<StatusCode>(c);
    std::string prefix = "Error (" + std::string(status_code_name(code)) + "): ";
    if (text.rfind(prefix, 0) == 0) return Status(code, text.substr(prefix.size()));
  }
  return Status(StatusCode::kUnknown, text);
}

Result<ToolReply> call_kernel_tool(server::WorkspaceServer& server, const KernelArgs& a,
                                   const std::string& tool, Json arguments) {
  Json request = {{"op", "tool"}, {"name", tool}, {"arguments", std::move(arguments)}};
  if (a.agent.empty()) {
    request["client"] = "weft-cli";
    request["origin"] = "human:" + person();
  } else {
    request["client"] = a.agent;
  }
  WEFT_ASSIGN_OR_RETURN(Json reply, server::kernel_request(*server.kernel_link, request));
  ToolReply out;
  if (auto c = reply.find("content"); c != reply.end() && c->is_array() && !c->empty()) {
    out.text = (*c)[0].value("text", "");
  }
  if (reply.value("isError", false)) return tool_error_status(out.text);
  out.structured = reply.value("structuredContent", Json::object());
  return out;
}

void print_tool_reply(const KernelArgs& a, const ToolReply& reply) {
  if (a.json) {
    std::cout << reply.structured.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << reply.text << (reply.text.empty() || reply.text.back() == '\n' ? "" : "\n");
  }
  set_exit_code(kExitOk);
}

void run_kernel_tool(const KernelArgs& a, const std::string& tool, Json arguments) {
  auto built = connect_kernel(a);
  if (!built.ok()) {
    fail(built.status());
    return;
  }
  auto reply = call_kernel_tool(*built, a, tool, std::move(arguments));
  if (!reply.ok()) {
    fail(reply.status());
    return;
  }
  print_tool_reply(a, *reply);
}

}  // namespace weft::cli
