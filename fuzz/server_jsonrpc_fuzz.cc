// Fuzzes the MCP server's input path: arbitrary bytes as a JSON-RPC message
// text (framing, ids, batches, both eras, every method), and as the
// arguments of a workspace tool (schema validation, then the handler) over an
// in-memory workspace. Nothing may crash, hang or throw, and serialize (the
// wire writer with its own string fast path) must give nlohmann's exact bytes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weft/fs/filesystem.h"
#include "weft/server/mcp_server.h"
#include "weft/server/workspace.h"
#include "weft/server/workspace_tools.h"

namespace {

void check_serialize(const weft::server::Json& message) {
  std::string line = weft::server::serialize(message);
  if (line != message.dump(-1, ' ', false, weft::server::Json::error_handler_t::replace)) {
    __builtin_trap();
  }
}

struct Fixture {
  std::shared_ptr<weft::server::Workspace> workspace;
  std::shared_ptr<weft::server::ToolRegistry> tools;
  std::unique_ptr<weft::server::McpServer> server;

  Fixture() {
    weft::fs::InMemoryOptions options;
    std::shared_ptr<weft::fs::Filesystem> fs = weft::fs::make_in_memory_filesystem(options);
    fs->write("src/a.py", "def f():\n    return 1\n\nf()\nf()\n").status().ignore_error();
    fs->write("crlf.txt", "one\r\ntwo\r\n").status().ignore_error();
    workspace = std::make_shared<weft::server::Workspace>(fs);
    tools = std::make_shared<weft::server::ToolRegistry>();
    weft::server::add_workspace_tools(*tools, {}).ignore_error();
    weft::server::ServerOptions server_options;
    server_options.max_message_bytes = 1 << 16;
    server_options.tools_page_size = 5;
    auto ws = workspace;
    server_options.map_roots = [ws](const std::vector<std::string>& uris) {
      return ws->map_roots(uris);
    };
    server = std::make_unique<weft::server::McpServer>(
        server_options, tools, weft::server::make_workspace_resources(workspace), workspace.get());
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  if (size < 2) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  if (data[0] % 2 == 0) {
    weft::server::Session session([](const weft::server::Json&) {});
    auto reply = fixture.server->handle_text(rest, session, [](const weft::server::Json&) {});
    if (reply) check_serialize(*reply);
    return 0;
  }
  const auto& all = fixture.tools->tools();
  const auto& tool = all[data[1] % all.size()];
  auto args = weft::server::Json::parse(rest.begin(), rest.end(), nullptr, false);
  if (args.is_discarded()) return 0;
  weft::server::ToolContext ctx(fixture.workspace.get(), {}, nullptr, nullptr, nullptr);
  check_serialize(args);
  auto result = fixture.tools->call(tool, args, ctx);
  check_serialize(result);
  return 0;
}
