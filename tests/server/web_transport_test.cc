// The web page on `weft serve`'s HTTP transport (HttpOptions::web): the page
// and its assets are served, the API needs the access token (bearer or
// ?token=), the Host and Origin checks still apply, MCP is unchanged, and the
// handler runs off the event loop.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/server_test_util.h"
#include "support/test_support.h"
#include "weft/server/http_transport.h"
#include "weft/server/web_assets.h"
#include "weft/server/web_routes.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace stdfs = std::filesystem;
using Json = nlohmann::json;

constexpr char kPageToken[] = "0123456789abcdef0123456789abcdef";

using Headers = std::vector<std::pair<std::string, std::string>>;
using Response = http::response<http::string_body>;

// One HTTP/1.1 client connection to the server on 127.0.0.1.
class PageClient {
 public:
  explicit PageClient(uint16_t port) : sock_(ioc_) {
    sock_.connect({net::ip::make_address("127.0.0.1"), port});
  }
  Response request(http::verb verb, const std::string& target, Headers headers = {},
                   const std::string& body = "") {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    http::write(sock_, req);
    Response res;
    // HEAD answers carry a Content-Length but no body.
    http::response_parser<http::string_body> parser;
    parser.skip(verb == http::verb::head);
    parser.body_limit(64u << 20);
    beast::error_code ec;
    http::read(sock_, buffer_, parser, ec);
    EXPECT_FALSE(ec) << target << ": " << ec.message();
    return parser.release();
  }

 private:
  net::io_context ioc_;
  net::ip::tcp::socket sock_;
  beast::flat_buffer buffer_;
};

Response get(uint16_t port, const std::string& target, Headers headers = {}) {
  PageClient c(port);
  return c.request(http::verb::get, target, std::move(headers));
}

Json json_of(const Response& r) {
  EXPECT_EQ(r[http::field::content_type], "application/json") << r.body();
  return Json::parse(r.body(), nullptr, false);
}

// `weft serve` in process: the workspace server with its kernel, live sync,
// and the page built as serve_command.cc builds it.
class WebTransportTest : public ::testing::Test {
 protected:
  virtual std::string host() const { return "127.0.0.1"; }

  void SetUp() override {
    root_ = tmp_.path() / "ws";
    stdfs::create_directories(root_ / "vendor");
    std::ofstream(root_ / "a.txt") << "hello\n";
    std::ofstream(root_ / "vendor" / "lib.c") << "int x;\n";
    std::ofstream(root_ / "weft.toml")
        << "[permissions]\nrules = [\n  { glob = \"vendor/**\", level = \"read_only\" },\n]\n";
    auto built = testing::make_live_workspace(root_, tmp_.path() / "state");
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
    HttpOptions http;
    http.host = host();
    http.port = 0;
    http.sync = built_.sync;
    http.token = kPageToken;
    WebRoutesOptions web_options;
    web_options.authorize = token_authorizer(kPageToken);
    auto web = std::make_shared<WebRoutes>(built_.workspace, std::move(web_options));
    http.web = [web](const WebRequest& r) { return web->handle(r); };
    http_ = std::make_unique<HttpServer>(*built_.server, http);
    ASSERT_TRUE(http_->listen().ok());
    runner_ = std::thread([this] { http_->run().ignore_error(); });
  }
  void TearDown() override {
    if (http_) {
      http_->stop();
      runner_.join();
    }
  }
  uint16_t port() const { return http_->port(); }

  weft::testing::TempDir tmp_;
  stdfs::path root_;
  WorkspaceServer built_;
  std::unique_ptr<HttpServer> http_;
  std::thread runner_;
};

TEST_F(WebTransportTest, ThePageIsServedAtEveryRouteWithoutTheToken) {
  for (const char* target : {"/", "/?token=whatever", "/edit/a.txt", "/history/a.txt",
                             "/approvals"}) {
    Response r = get(port(), target);
    EXPECT_EQ(r.result_int(), 200) << target;
    EXPECT_NE(std::string(r[http::field::content_type]).find("text/html"), std::string::npos)
        << target;
    EXPECT_NE(r.body().find("<html"), std::string::npos) << target;
    EXPECT_FALSE(r["Content-Security-Policy"].empty()) << target;
  }
  // Every file of the embedded bundle is an asset the page can load.
  for (const auto& [name, asset] : embedded_web_bundle().files) {
    Response r = get(port(), "/assets/" + name, {{"Accept-Encoding", "gzip"}});
    EXPECT_EQ(r.result_int(), 200) << name;
    EXPECT_EQ(r[http::field::content_type], asset.content_type) << name;
    EXPECT_EQ(r.body().size(), asset.bytes.size()) << name;
  }
  EXPECT_EQ(get(port(), "/assets/no-such-file.js").result_int(), 404);
}

TEST_F(WebTransportTest, TheApiNeedsTheTokenAsBearerOrQuery) {
  Response none = get(port(), "/api/tree?path=.");
  EXPECT_EQ(none.result_int(), 401);
  EXPECT_NE(json_of(none)["error"].get<std::string>().find("token"), std::string::npos);
  EXPECT_EQ(get(port(), "/api/tree?path=.", {{"Authorization", "Bearer wrong"}}).result_int(),
            401);
  EXPECT_EQ(get(port(), "/api/tree?path=.&token=wrong").result_int(), 401);

  Response bearer =
      get(port(), "/api/tree?path=.", {{"Authorization", std::string("Bearer ") + kPageToken}});
  ASSERT_EQ(bearer.result_int(), 200) << bearer.body();
  Json tree = json_of(bearer);
  std::vector<std::string> names;
  for (const auto& e : tree["entries"]) names.push_back(e["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "a.txt"), names.end()) << tree.dump();

  Response query = get(port(), std::string("/api/file?path=vendor/lib.c&token=") + kPageToken);
  ASSERT_EQ(query.result_int(), 200) << query.body();
  Json file = json_of(query);
  EXPECT_EQ(file["kind"], "text");
  EXPECT_EQ(file["read_only"], true);
}

TEST_F(WebTransportTest, ApiCallsReachTheKernelAndBadBodiesGet400) {
  const Headers auth{{"Authorization", std::string("Bearer ") + kPageToken},
                     {"Content-Type", "application/json"}};
  PageClient c(port());
  Response history = c.request(http::verb::get, "/api/history?path=a.txt", auth);
  ASSERT_EQ(history.result_int(), 200) << history.body();
  EXPECT_TRUE(json_of(history)["entries"].is_array());
  // A wrongly typed field is refused, not a crash; the connection goes on.
  Response bad = c.request(http::verb::post, "/api/rollback", auth,
                           R"({"path":"a.txt","version":1,"person":5})");
  EXPECT_EQ(bad.result_int(), 400) << bad.body();
  Response approvals = c.request(http::verb::get, "/api/approvals", auth);
  EXPECT_EQ(approvals.result_int(), 200);
  EXPECT_TRUE(json_of(approvals)["approvals"].is_array());
  Response head = c.request(http::verb::head, "/", {});
  EXPECT_EQ(head.result_int(), 200);
  EXPECT_TRUE(head.body().empty());
}

TEST_F(WebTransportTest, HostAndOriginChecksApplyToThePage) {
  EXPECT_EQ(get(port(), "/", {{"Host", "evil.example"}}).result_int(), 403);
  EXPECT_EQ(get(port(), "/api/session", {{"Host", "evil.example"},
                                         {"Authorization", std::string("Bearer ") + kPageToken}})
                .result_int(),
            403);
  EXPECT_EQ(get(port(), "/", {{"Origin", "http://evil.example"}}).result_int(), 403);
  EXPECT_EQ(get(port(), "/", {{"Origin", "http://localhost:1234"}}).result_int(), 200);
}

TEST_F(WebTransportTest, McpAndOtherPathsAreUnchanged) {
  PageClient c(port());
  Response init = c.request(
      http::verb::post, "/mcp",
      {{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}},
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}})");
  EXPECT_EQ(init.result_int(), 200) << init.body();
  EXPECT_FALSE(init["Mcp-Session-Id"].empty());
  Response other = get(port(), "/favicon.ico");
  EXPECT_EQ(other.result_int(), 404);
  EXPECT_NE(other.body().find("/mcp"), std::string::npos);
}

// Bound to every address: MCP needs the token, the page's files still do not
// (a browser cannot attach it to them), and the API needs it as before.
class WebTransportOffLoopbackTest : public WebTransportTest {
 protected:
  std::string host() const override { return "0.0.0.0"; }
};

TEST_F(WebTransportOffLoopbackTest, OnlyThePageItselfIsServedWithoutTheToken) {
  EXPECT_EQ(get(port(), "/").result_int(), 200);
  EXPECT_EQ(get(port(), "/edit/a.txt").result_int(), 200);
  EXPECT_EQ(get(port(), "/api/session").result_int(), 401);
  EXPECT_EQ(get(port(), std::string("/api/session?token=") + kPageToken).result_int(), 200);
  EXPECT_EQ(get(port(), "/mcp").result_int(), 401);
}

// The handler runs on a worker: while one is stuck, the event loop keeps
// answering other connections, and a handler that throws gets 500.
class WebHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<McpServer>(ServerOptions{}, std::make_shared<ToolRegistry>());
    HttpOptions options;
    options.port = 0;
    options.workers = 2;
    options.web = [this](const WebRequest& r) -> std::optional<WebResponse> {
      if (r.target == "/api/throw") throw std::runtime_error("boom");
      if (r.target == "/api/none") return std::nullopt;
      if (r.target == "/api/block") {
        std::unique_lock lock(mu_);
        entered_ = true;
        cv_.notify_all();
        cv_.wait(lock, [this] { return released_; });
      }
      WebResponse res;
      res.content_type = "text/plain";
      res.body = "ok " + r.target;
      return res;
    };
    http_ = std::make_unique<HttpServer>(*server_, options);
    ASSERT_TRUE(http_->listen().ok());
    runner_ = std::thread([this] { http_->run().ignore_error(); });
  }
  void TearDown() override {
    release();
    http_->stop();
    runner_.join();
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

  std::unique_ptr<McpServer> server_;
  std::unique_ptr<HttpServer> http_;
  std::thread runner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
};

TEST_F(WebHandlerTest, AStuckHandlerDoesNotStopTheEventLoop) {
  std::thread blocked([this] {
    Response r = get(http_->port(), "/api/block");
    EXPECT_EQ(r.body(), "ok /api/block");
  });
  {
    std::unique_lock lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10), [this] { return entered_; }));
  }
  // Answered on the loop, and on the other worker, while the first is held.
  EXPECT_EQ(get(http_->port(), "/favicon.ico").result_int(), 404);
  EXPECT_EQ(get(http_->port(), "/").body(), "ok /");
  release();
  blocked.join();
}

TEST_F(WebHandlerTest, ThrowingOrDecliningHandlersGetAnErrorStatus) {
  PageClient c(http_->port());
  Response thrown = c.request(http::verb::get, "/api/throw");
  EXPECT_EQ(thrown.result_int(), 500);
  EXPECT_NE(thrown.body().find("boom"), std::string::npos);
  EXPECT_EQ(c.request(http::verb::get, "/api/none").result_int(), 404);
  EXPECT_EQ(c.request(http::verb::get, "/approvals").body(), "ok /approvals");
}

}  // namespace
}  // namespace weft::server
