// Test helpers for the server suite: a registry of toy tools (echo, slow) and
// a recording sender.
#ifndef WEFT_TESTS_SERVER_SERVER_TEST_UTIL_H_
#define WEFT_TESTS_SERVER_SERVER_TEST_UTIL_H_

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "weft/server/mcp_server.h"
#include "weft/server/workspace_server.h"

namespace weft::server::testing {

inline std::shared_ptr<ToolRegistry> toy_tools() {
  auto registry = std::make_shared<ToolRegistry>();
  ToolSpec echo;
  echo.name = "echo";
  echo.title = "Echo";
  echo.description = "Returns its text.";
  echo.input_schema = Json::parse(
      R"({"type":"object","properties":{"text":{"type":"string","minLength":1}},
          "required":["text"],"additionalProperties":false})");
  echo.output_schema = Json::parse(R"({"type":"object","properties":{"text":{"type":"string"}}})");
  echo.annotations.read_only = true;
  echo.handler = [](const Json& args, ToolContext& ctx) -> Result<ToolOutput> {
    ctx.log(LogLevel::kInfo, "echoing");
    std::string text = args["text"].get<std::string>();
    if (text == "fail") return not_found("nothing called 'fail'");
    return ToolOutput{text, Json{{"text", text}}, nullptr};
  };
  ToolSpec slow;
  slow.name = "slow";
  slow.description = "Sleeps until cancelled (or 5 s), reporting progress.";
  slow.input_schema = Json::parse(R"({"type":"object","additionalProperties":false})");
  slow.handler = [](const Json&, ToolContext& ctx) -> Result<ToolOutput> {
    for (int i = 1; i <= 500 && !ctx.cancelled(); ++i) {
      ctx.progress(i, 500, "tick");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (ctx.cancelled()) return cancelled_error("cancelled");
    return ToolOutput{"done", nullptr, nullptr};
  };
  (void)registry->add(std::move(echo));
  (void)registry->add(std::move(slow));
  return registry;
}

// `weft serve`'s workspace on `root`: the kernel and live sync, its state
// under `state_home` (XDG_STATE_HOME).
inline Result<WorkspaceServer> make_live_workspace(const std::filesystem::path& root,
                                                   const std::filesystem::path& state_home) {
  setenv("XDG_STATE_HOME", state_home.c_str(), 1);
  WorkspaceServerOptions options;
  options.root = root.string();
  options.live_sync = true;
  return make_workspace_server(options);
}

// Collects what a Session or a request sends.
struct Recorder {
  std::mutex mu;
  std::vector<Json> sent;
  Session::Sender sender() {
    return [this](const Json& m) {
      std::lock_guard lock(mu);
      sent.push_back(m);
    };
  }
  std::vector<Json> snapshot() {
    std::lock_guard lock(mu);
    return sent;
  }
};

}  // namespace weft::server::testing

#endif  // WEFT_TESTS_SERVER_SERVER_TEST_UTIL_H_
