// `weft serve`: serves a workspace over MCP Streamable HTTP, live sync and the web page.
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command_registry.h"
#include "cli/stop_signals.h"
#include "weft/server/http_transport.h"
#include "weft/server/sync_auth.h"
#include "weft/server/web_routes.h"
#include "weft/server/workspace_server.h"

namespace weft::cli {
namespace {

struct ServeArgs {
  std::string root = "workspace";
  std::string host = "127.0.0.1";
  uint16_t port = 8765;
  bool read_only = false;
  bool sandbox = false;
  std::string enforcement;
  bool fsync = false;
  bool no_kernel = false;
  std::string state;
  std::vector<std::string> origins;
  std::vector<std::string> hosts;
  std::string token_file;
};

// The access token: WEFT_TOKEN, else the first line of --token-file, else a
// fresh one (*generated set).
Result<std::string> access_token(const ServeArgs& args, bool* generated) {
  *generated = false;
  if (const char* env = std::getenv("WEFT_TOKEN"); env && *env) return std::string(env);
  if (!args.token_file.empty()) {
    std::ifstream in(args.token_file);
    if (!in) return not_found("cannot read --token-file '" + args.token_file + "'");
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.size() < 16) {
      return invalid_argument("the token in '" + args.token_file +
                              "' is shorter than 16 characters; use a long random one");
    }
    return line;
  }
  *generated = true;
  return server::sync::generate_token();
}

// Who edits over live sync, as history shows it (human:<name>): $USER, or "person".
std::string person_name() {
  const char* user = std::getenv("USER");
  std::string name = user ? user : "";
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  }
  return ok ? name : "person";
}

std::string json_quote(const std::string& s) { return server::Json(s).dump(); }

void print_banner(const server::WorkspaceServer& built, const ServeArgs& args, uint16_t port,
                  const std::string& token, bool token_generated) {
  std::string root = built.workspace->root();
  std::string host = args.host.find(':') != std::string::npos ? "[" + args.host + "]" : args.host;
  std::cout
      << "weft serve: workspace " << root << " (" << built.tools->tools().size() << " tools"
      << (args.read_only ? ", read-only" : "") << (args.sandbox ? ", sandboxed" : "")
      << (args.fsync ? ", fsync on every write" : "") << ")\n"
      << "MCP Streamable HTTP endpoint: http://" << host << ":" << port << "/mcp\n\n"
      << "HTTP client config:\n"
      << "  {\"mcpServers\": {\"weft\": {\"type\": \"http\", \"url\": \"http://" << host << ":"
      << port << "/mcp\"}}}\n"
      << "stdio client config (Claude Desktop, Cursor, ...):\n"
      << "  {\"mcpServers\": {\"weft\": {\"command\": \"weft\", \"args\": [\"mcp\", \"--root\", "
      << json_quote(root) << (args.read_only ? ", \"--read-only\"" : "")
      << (args.sandbox ? ", \"--sandbox\"" : "") << (args.fsync ? ", \"--fsync\"" : "")
      << "]}}}\n\n";
  if (built.sync) {
    std::cout << "Live sync: ws://" << host << ":" << port << "/sync (token required)\n";
  }
  std::cout << "Page: http://" << host << ":" << port << "/?token="
            << (token_generated ? token : std::string("<the token in $WEFT_TOKEN or --token-file>")) << "\n\n";
  std::cout << "Press Ctrl-C to stop." << std::endl;
}

void setup_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve",
      "Serve a workspace to MCP clients over Streamable HTTP, with live sync and a web page for "
      "people (default: ./workspace on 127.0.0.1:8765)");
  cmd->add_option("--root", args->root,
                  "Workspace directory, created if absent (default ./workspace)");
  cmd->add_option("--port", args->port, "TCP port (default 8765; 0 picks a free one)");
  cmd->add_option("--host", args->host,
                  "Address to bind (default 127.0.0.1; anything else exposes the workspace)");
  cmd->add_flag("--read-only", args->read_only, "Publish only tools that change nothing");
  cmd->add_option("--state", args->state, kStateHelp);
  cmd->add_flag("--sandbox", args->sandbox,
                "Serve through a bubblewrap sandbox and publish shell_exec");
  cmd->add_option("--enforcement", args->enforcement, kEnforcementHelp)
      ->check(CLI::IsMember({"strict", "warned", "audit", "none"}));
  cmd->add_flag("--no-kernel", args->no_kernel,
                "Change files directly: no blocks, history, weft.toml rules or reconcile");
  cmd->add_flag("--fsync", args->fsync,
                "fsync every written file and its directory before answering (survives a power "
                "cut; slower). Default: atomic rename without fsync, like editors");
  cmd->add_option("--allow-origin", args->origins,
                  "Extra browser Origin allowed besides localhost (repeatable)");
  cmd->add_option("--allow-host", args->hosts,
                  "Extra Host header name accepted besides localhost names (repeatable; "
                  "needed to reach a loopback-bound server by another name)");
  cmd->add_option("--token-file", args->token_file,
                  "File whose first line is the access token for live sync and the page "
                  "(default: $WEFT_TOKEN, else a fresh token printed at start)");
  cmd->footer(
      "Requests whose Origin is not localhost, or (on a loopback address) whose Host is not a "
      "localhost name, get 403. Live sync (/sync) and the page's API (/api/) always need the "
      "access token; on an address other than loopback so does MCP. Exit 6 when the port is in "
      "use.");
  cmd->callback([args] {
    std::signal(SIGPIPE, SIG_IGN);
    StopSignals signals;  // before any thread starts: they inherit its mask
    server::tune_allocator_for_serving();
    server::WorkspaceServerOptions options;
    options.root = args->root;
    options.create_root = true;
    options.read_only = args->read_only;
    options.sandbox = args->sandbox;
    if (!args->enforcement.empty()) {
      options.shell_enforcement = *source::parse_enforcement(args->enforcement);
    }
    options.fsync = args->fsync;
    options.kernel = !args->no_kernel;
    options.live_sync = true;
    if (!args->state.empty()) options.state_dir = args->state;
    options.diagnostics = [](const std::string& line) {
      std::cerr << "weft serve: " << line << "\n";
    };
    auto built = server::make_workspace_server(options);
    if (!built.ok()) {
      fail(built.status());
      return;
    }
    server::HttpOptions http;
    http.host = args->host;
    http.port = args->port;
    http.allowed_origins = args->origins;
    http.allowed_hosts = args->hosts;
    bool token_generated = false;
    auto token = access_token(*args, &token_generated);
    if (!token.ok()) {
      fail(token.status());
      return;
    }
    http.token = *token;
    http.sync = built->sync;
    http.sync_person = person_name();
    // The page: its API takes the same token as /sync.
    server::WebRoutesOptions web_options;
    web_options.authorize = server::token_authorizer(http.token);
    auto web = std::make_shared<server::WebRoutes>(built->workspace, std::move(web_options));
    http.web = [web](const server::WebRequest& request) { return web->handle(request); };
    server::HttpServer listener(*built->server, http);
    Status s = listener.listen();
    if (!s.ok()) {
      fail(s);
      return;
    }
    print_banner(*built, *args, listener.port(), http.token, token_generated);
    signals.on_stop([&listener] { listener.stop(); });
    s = listener.run();
    signals.finish();
    if (signals.received() != 0) {
      std::cerr << "weft serve: stopped by " << (signals.received() == SIGTERM ? "SIGTERM" : "SIGINT")
                << "\n";
    }
    if (!s.ok()) {
      fail(s);
      return;
    }
    set_exit_code(kExitOk);
  });
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("serve", 10, weft::cli::setup_serve);
