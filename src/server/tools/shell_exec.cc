// shell_exec: a command run by `sh -c` inside the workspace's bubblewrap
// sandbox (no network, the rest of the system read-only), with bounded output
// and time.
#include <chrono>

#include "server/tools/tool_util.h"

namespace weft::server::tools {
namespace {

Result<ToolOutput> run(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  if (!ws->sandbox()) {
    return failed_precondition("shell_exec needs the server to run with --sandbox");
  }
  fs::ExecOptions options;
  WEFT_ASSIGN_OR_RETURN(options.cwd, resolve_arg(ctx, args, "cwd"));
  options.timeout = std::chrono::milliseconds(arg_int(args, "timeout_ms", 30'000));
  options.max_output_bytes = arg_int(args, "max_output_bytes", 64 * 1024);
  ctx.progress(0, 1, "running");
  auto result = ws->sandbox()->exec({"sh", "-c", arg_string(args, "command")}, options);
  if (!result.ok()) return result.status();
  std::string text = "exit code: " + std::to_string(result->exit_code) +
                     (result->timed_out ? " (killed: timed out)" : "") +
                     (result->truncated ? " (output truncated)" : "") + "\n";
  if (!result->stdout_text.empty()) text += "--- stdout ---\n" + result->stdout_text + "\n";
  if (!result->stderr_text.empty()) text += "--- stderr ---\n" + result->stderr_text + "\n";
  ctx.progress(1, 1, "done");
  return ToolOutput{std::move(text),
                    Json{{"exit_code", result->exit_code},
                         {"stdout", result->stdout_text},
                         {"stderr", result->stderr_text},
                         {"timed_out", result->timed_out},
                         {"truncated", result->truncated}},
                    nullptr};
}

}  // namespace

ToolSpec shell_exec_tool() {
  ToolSpec t;
  t.name = "shell_exec";
  t.title = "Run shell command (sandboxed)";
  t.description =
      "Run a shell command (`sh -c`) inside the workspace's bubblewrap sandbox: the workspace is "
      "mounted read-write at /workspace, the rest of the system read-only, no network, a private "
      "/tmp. Output (stdout, stderr) is cut at max_output_bytes per stream and the command is "
      "killed after timeout_ms. A non-zero exit code is reported, not treated as a tool error.";
  t.input_schema = object_schema(
      {{"command", string_prop("Shell command line", 1)},
       {"cwd", string_prop("Working directory in the workspace (default: the root)")},
       {"timeout_ms", integer_prop("Time limit (default 30000)", 1, 600'000)},
       {"max_output_bytes", integer_prop("Per-stream output cap (default 65536)", 1, 8 << 20)}},
      {"command"});
  t.output_schema = object_schema({{"exit_code", {{"type", "integer"}}},
                                   {"stdout", {{"type", "string"}}},
                                   {"stderr", {{"type", "string"}}},
                                   {"timed_out", {{"type", "boolean"}}},
                                   {"truncated", {{"type", "boolean"}}}});
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  t.handler = run;
  return t;
}

}  // namespace weft::server::tools
