// The Streamable HTTP transport with a raw Beast client: sessions, Origin
// check, 202 for notifications, SSE responses, the stateless era and stop().
#include "weft/server/http_transport.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "server/server_test_util.h"

namespace weft::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

struct Reply {
  int status = 0;
  std::string body;
  std::string session;
  std::string content_type;
};

class HttpTransportTest : public ::testing::Test {
 protected:
  // The transport's options for a test (a fixture may change them).
  virtual HttpOptions options() const {
    HttpOptions options;
    options.port = 0;
    return options;
  }
  void SetUp() override {
    server_ = std::make_unique<McpServer>(ServerOptions{}, testing::toy_tools());
    http_ = std::make_unique<HttpServer>(*server_, options());
    ASSERT_TRUE(http_->listen().ok());
    runner_ = std::thread([this] { http_->run().ignore_error(); });
  }
  void TearDown() override {
    http_->stop();
    runner_.join();
  }

  Reply send(http::verb verb, const std::string& body,
             std::vector<std::pair<std::string, std::string>> headers = {}) {
    net::io_context ioc;
    net::ip::tcp::socket sock(ioc);
    sock.connect({net::ip::make_address("127.0.0.1"), http_->port()});
    http::request<http::string_body> req{verb, "/mcp", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json, text/event-stream");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    http::write(sock, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(sock, buffer, res, ec);
    return {static_cast<int>(res.result_int()), res.body(), std::string(res["Mcp-Session-Id"]),
            std::string(res[http::field::content_type])};
  }

  std::unique_ptr<McpServer> server_;
  std::unique_ptr<HttpServer> http_;
  std::thread runner_;
};

const char* kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}})";

TEST_F(HttpTransportTest, InitializeOpensASessionThatLaterRequestsNeed) {
  Reply init = send(http::verb::post, kInit);
  EXPECT_EQ(init.status, 200);
  ASSERT_FALSE(init.session.empty());
  EXPECT_EQ(Json::parse(init.body)["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(send(http::verb::post, R"({"jsonrpc":"2.0","id":2,"method":"ping"})").status, 400);
  EXPECT_EQ(send(http::verb::post, R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
                 {{"Mcp-Session-Id", "unknown"}})
                .status,
            404);
  Reply ping = send(http::verb::post, R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
                    {{"Mcp-Session-Id", init.session}});
  EXPECT_EQ(ping.status, 200);
  EXPECT_EQ(send(http::verb::post, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                 {{"Mcp-Session-Id", init.session}})
                .status,
            202);
  EXPECT_EQ(send(http::verb::delete_, "", {{"Mcp-Session-Id", init.session}}).status, 200);
  EXPECT_EQ(send(http::verb::post, R"({"jsonrpc":"2.0","id":3,"method":"ping"})",
                 {{"Mcp-Session-Id", init.session}})
                .status,
            404);
}

TEST_F(HttpTransportTest, ForeignOriginsAreForbidden) {
  EXPECT_EQ(send(http::verb::post, kInit, {{"Origin", "http://evil.example"}}).status, 403);
  EXPECT_EQ(send(http::verb::post, kInit, {{"Origin", "http://localhost:5173"}}).status, 200);
  EXPECT_TRUE(is_local_origin("http://127.0.0.1"));
  EXPECT_TRUE(is_local_origin("https://[::1]:8080"));
  EXPECT_FALSE(is_local_origin("http://localhost.evil.com"));
  EXPECT_FALSE(is_local_origin("http://127.0.0.1:80x"));
}

TEST_F(HttpTransportTest, DeeplyNestedBodiesGet400WithoutASession) {
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(100'000, '}');
  for (const std::string& body : {objects, std::string(150'000, '[') + std::string(150'000, ']')}) {
    Reply reply = send(http::verb::post, body);
    EXPECT_EQ(reply.status, 400);
    Json error = Json::parse(reply.body);
    EXPECT_EQ(error["error"]["code"], rpc::kInvalidRequest);
    EXPECT_NE(error["error"]["message"].get<std::string>().find("nested deeper than 64 levels"),
              std::string::npos);
  }
  EXPECT_EQ(send(http::verb::post, kInit).status, 200);  // still serving
}

TEST_F(HttpTransportTest, ToolCallsStreamProgressOverSse) {
  Reply init = send(http::verb::post, kInit);
  std::thread canceller([this, session = init.session] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    send(http::verb::post,
         R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})",
         {{"Mcp-Session-Id", session}});
  });
  Reply slow = send(
      http::verb::post,
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}})",
      {{"Mcp-Session-Id", init.session}});
  canceller.join();
  EXPECT_EQ(slow.content_type, "text/event-stream");
  EXPECT_NE(slow.body.find("notifications/progress"), std::string::npos);
  EXPECT_EQ(slow.body.find("\"id\":5"), std::string::npos);  // cancelled: no response event
}

TEST_F(HttpTransportTest, ModernRequestsAreStatelessAndHeaderChecked) {
  const std::string body =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
  Reply ok = send(http::verb::post, body, {{"MCP-Protocol-Version", "2026-07-28"}});
  EXPECT_EQ(ok.status, 200);
  EXPECT_TRUE(ok.session.empty());
  EXPECT_EQ(Json::parse(ok.body)["result"]["resultType"], "complete");
  Reply mismatch = send(http::verb::post, body, {{"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(Json::parse(mismatch.body)["error"]["code"], rpc::kHeaderMismatch);
  EXPECT_EQ(send(http::verb::post, "{garbage").status, 400);
  EXPECT_EQ(send(http::verb::put, "").status, 405);
}

// A small connection cap and a short request timeout.
class HttpLimitsTest : public HttpTransportTest {
 protected:
  HttpOptions options() const override {
    HttpOptions options = HttpTransportTest::options();
    options.max_connections = 2;
    options.request_timeout_ms = 300;
    return options;
  }
  net::ip::tcp::socket connect_raw(net::io_context& ioc) {
    net::ip::tcp::socket sock(ioc);
    sock.connect({net::ip::make_address("127.0.0.1"), http_->port()});
    return sock;
  }
  // Posts initialize until it is not refused for want of a free connection
  // (a closed connection's slot frees when its thread has finished).
  int initialize_when_free() {
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      status = send(http::verb::post, kInit).status;
      if (status != 503) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status;
  }
  // Everything the server sends until it closes (or `limit` passes).
  static std::string read_until_closed(net::ip::tcp::socket& sock,
                                       std::chrono::milliseconds limit) {
    timeval tv{static_cast<time_t>(limit.count() / 1000),
               static_cast<suseconds_t>(limit.count() % 1000 * 1000)};
    ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string got;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(sock.native_handle(), buf, sizeof buf, 0);
      if (n <= 0) return n == 0 ? got : got + "<timeout>";
      got.append(buf, static_cast<size_t>(n));
    }
  }
};

TEST_F(HttpLimitsTest, ConnectionsBeyondTheCapGet503AndServiceResumes) {
  net::io_context ioc;
  auto a = connect_raw(ioc);
  auto b = connect_raw(ioc);  // both idle, both counted once accepted
  auto c = connect_raw(ioc);
  std::string busy = read_until_closed(c, std::chrono::seconds(5));
  EXPECT_EQ(busy.rfind("HTTP/1.1 503", 0), 0u) << busy;
  EXPECT_NE(busy.find("Retry-After: 1"), std::string::npos);
  a.close();
  b.close();
  // Once the idle ones are gone, requests are served again.
  EXPECT_EQ(initialize_when_free(), 200);
}

TEST_F(HttpLimitsTest, ASilentOrSlowClientIsDisconnected) {
  net::io_context ioc;
  auto silent = connect_raw(ioc);
  auto slow = connect_raw(ioc);
  const std::string partial = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";  // never finished
  net::write(slow, net::buffer(partial));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(read_until_closed(silent, std::chrono::seconds(5)), "");
  EXPECT_EQ(read_until_closed(slow, std::chrono::seconds(5)), "");
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(4));
  // The slots free again, and a prompt client is unaffected by the timeout.
  EXPECT_EQ(initialize_when_free(), 200);
  EXPECT_EQ(initialize_when_free(), 200);
}

}  // namespace
}  // namespace weft::server
