// The Streamable HTTP transport with a raw Beast client: sessions, Origin
// check, 202 for notifications, SSE responses, the stateless era and stop().
#include "weft/server/http_transport.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

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
  std::string retry_after;
};

class HttpTransportTest : public ::testing::Test {
 protected:
  // The transport's options for a test (a fixture may change them).
  virtual HttpOptions options() const {
    HttpOptions options;
    options.port = 0;
    return options;
  }
  virtual ServerOptions server_options() const { return ServerOptions{}; }
  virtual std::shared_ptr<ToolRegistry> tools() const { return testing::toy_tools(); }
  void SetUp() override {
    server_ = std::make_unique<McpServer>(server_options(), tools());
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
            std::string(res[http::field::content_type]),
            std::string(res[http::field::retry_after])};
  }
  net::ip::tcp::socket connect_raw(net::io_context& ioc) {
    net::ip::tcp::socket sock(ioc);
    sock.connect({net::ip::make_address("127.0.0.1"), http_->port()});
    return sock;
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
  // Sends raw bytes on a new connection; returns all the server answers until it closes.
  std::string exchange_raw(const std::string& bytes) {
    net::io_context ioc;
    auto sock = connect_raw(ioc);
    net::write(sock, net::buffer(bytes));
    return read_until_closed(sock, std::chrono::seconds(5));
  }
  std::string initialize_session(const std::string& version = "2025-06-18") {
    return send(http::verb::post,
                R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")" +
                    version + R"(","capabilities":{}}})")
        .session;
  }
  int ping(const std::string& session) {
    return send(http::verb::post, R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
                {{"Mcp-Session-Id", session}})
        .status;
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

// The fixture with its transport options changed by `Tweak`.
template <void (*Tweak)(HttpOptions&)>
class HttpOptionsTest : public HttpTransportTest {
 protected:
  HttpOptions options() const override {
    HttpOptions options = HttpTransportTest::options();
    Tweak(options);
    return options;
  }
};

// A small connection cap and a short request timeout.
void small_limits(HttpOptions& o) {
  o.max_connections = 2;
  o.request_timeout_ms = 300;
}

class HttpLimitsTest : public HttpOptionsTest<small_limits> {
 protected:
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

// Opens a session's GET stream on a raw connection; returns once its header arrived.
std::string open_stream_request(const std::string& session) {
  return "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: " +
         session + "\r\n\r\n";
}

std::string read_header(net::ip::tcp::socket& sock) {
  std::string got;
  char c;
  while (got.find("\r\n\r\n") == std::string::npos && ::recv(sock.native_handle(), &c, 1, 0) == 1) {
    got.push_back(c);
  }
  return got;
}

// Three sessions at most; one unused for 300 ms may be evicted.
void session_cap(HttpOptions& o) {
  o.max_sessions = 3;
  o.session_evict_grace_ms = 300;
}
using HttpSessionCapTest = HttpOptionsTest<session_cap>;

TEST_F(HttpSessionCapTest, TheCapEvictsTheLeastRecentlyUsedIdleSessionOr503) {
  const std::string a = initialize_session();
  const std::string b = initialize_session();
  const std::string c = initialize_session();
  ASSERT_FALSE(a.empty() || b.empty() || c.empty());
  net::io_context ioc;
  auto stream = connect_raw(ioc);  // an open GET stream keeps `a` from eviction
  net::write(stream, net::buffer(open_stream_request(a)));
  ASSERT_EQ(read_header(stream).rfind("HTTP/1.1 200", 0), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(ping(c), 200);  // c is recent now; b is the idle one
  const std::string d = initialize_session();
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(ping(b), 404);
  EXPECT_EQ(ping(c), 200);
  // a streams, c and d were used within the grace: nothing may go.
  Reply busy = send(http::verb::post, kInit);
  EXPECT_EQ(busy.status, 503);
  EXPECT_TRUE(busy.session.empty());
  EXPECT_GE(std::stoi(busy.retry_after.empty() ? "0" : busy.retry_after), 1);
  EXPECT_EQ(Json::parse(busy.body)["error"]["code"], rpc::kInternalError);
  EXPECT_EQ(ping(a), 200);
  // Once the grace passes, the least recently used idle session makes room.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(ping(d), 200);
  EXPECT_FALSE(initialize_session().empty());
  EXPECT_EQ(ping(c), 404);
  EXPECT_EQ(ping(a), 200);
  EXPECT_EQ(ping(d), 200);
}

// Sessions expire after 300 ms without a request.
void quick_expiry(HttpOptions& o) { o.session_idle_timeout_ms = 300; }
using HttpSessionExpiryTest = HttpOptionsTest<quick_expiry>;

TEST_F(HttpSessionExpiryTest, AnIdleSessionExpiresAndItsGetStreamEnds) {
  const std::string s = initialize_session();
  net::io_context ioc;
  auto stream = connect_raw(ioc);
  net::write(stream, net::buffer(open_stream_request(s)));
  ASSERT_EQ(read_header(stream).rfind("HTTP/1.1 200", 0), 0u);
  const auto start = std::chrono::steady_clock::now();
  std::string rest = read_until_closed(stream, std::chrono::seconds(5));
  EXPECT_EQ(rest.find("<timeout>"), std::string::npos) << rest;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(ping(s), 404);
  // A session in use stays.
  const std::string kept = initialize_session();
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(ping(kept), 200);
  }
}

TEST_F(HttpTransportTest, ThreeHundredClientsKeepTheirSessions) {
  constexpr int kClients = 300;
  constexpr int kThreads = 10;
  std::vector<std::string> sessions(kClients);
  std::atomic<int> lost{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kClients; i += kThreads) sessions[i] = initialize_session();
    });
  }
  for (auto& t : threads) t.join();
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2; ++round) {
        for (int i = t; i < kClients; i += kThreads) {
          if (sessions[i].empty() || ping(sessions[i]) != 200) ++lost;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(lost, 0);
}

// A tool that runs until cancelled (at most 5 s), counting its calls.
std::atomic<int> g_started{0};
std::atomic<int> g_finished{0};

class HttpDisconnectTest : public HttpTransportTest {
 protected:
  std::shared_ptr<ToolRegistry> tools() const override {
    auto registry = testing::toy_tools();
    ToolSpec spin;
    spin.name = "spin";
    spin.description = "Runs until cancelled (or 5 s).";
    spin.input_schema = Json::parse(R"({"type":"object"})");
    spin.handler = [](const Json&, ToolContext& ctx) -> Result<ToolOutput> {
      ++g_started;
      for (int i = 0; i < 500 && !ctx.cancelled(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      ++g_finished;
      return ToolOutput{"done", nullptr, nullptr};
    };
    (void)registry->add(std::move(spin));
    return registry;
  }
};

TEST_F(HttpDisconnectTest, AClientLeavingCancelsItsBatch) {
  g_started = 0;
  g_finished = 0;
  const std::string s = initialize_session("2025-03-26");
  Json batch = Json::array();
  for (int i = 0; i < 20; ++i) {
    batch.push_back({{"jsonrpc", "2.0"},
                     {"id", i + 10},
                     {"method", "tools/call"},
                     {"params", {{"name", "spin"}, {"arguments", Json::object()}}}});
  }
  const std::string body = batch.dump();
  {
    net::io_context ioc;
    auto sock = connect_raw(ioc);
    net::write(sock, net::buffer("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                 "application/json\r\nMcp-Session-Id: " +
                                 s + "\r\nContent-Length: " + std::to_string(body.size()) +
                                 "\r\n\r\n" + body));
    for (int i = 0; i < 200 && g_started == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(g_started, 1);
  }  // the client goes away
  const auto left = std::chrono::steady_clock::now();
  while (g_finished == 0 && std::chrono::steady_clock::now() - left < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - left, std::chrono::seconds(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(g_started, 1);  // the rest of the batch never ran
  EXPECT_EQ(g_finished, 1);
}

// The spinning tool with only two workers.
class HttpBusyWorkersTest : public HttpDisconnectTest {
 protected:
  HttpOptions options() const override {
    HttpOptions options = HttpDisconnectTest::options();
    options.workers = 2;
    return options;
  }
};

TEST_F(HttpBusyWorkersTest, CancellationsReachCallsWhileEveryWorkerIsBusy) {
  g_started = 0;
  g_finished = 0;
  const std::string s = initialize_session();
  std::vector<std::thread> calls;
  for (int id : {100, 101}) {
    calls.emplace_back([this, s, id] {
      send(http::verb::post,
           R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
               R"(,"method":"tools/call","params":{"name":"spin","arguments":{}}})",
           {{"Mcp-Session-Id", s}});
    });
  }
  for (int i = 0; i < 200 && g_started < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(g_started, 2);
  const auto start = std::chrono::steady_clock::now();
  for (int id : {100, 101}) {
    EXPECT_EQ(send(http::verb::post,
                   R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
                       std::to_string(id) + "}}",
                   {{"Mcp-Session-Id", s}})
                  .status,
              202);
  }
  for (auto& t : calls) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(g_finished, 2);
}

TEST_F(HttpTransportTest, OnLoopbackOnlyLoopbackHostNamesAreServed) {
  for (const char* host : {"127.0.0.1", "localhost:8765", "LOCALHOST", "127.1.2.3:1", "[::1]:80"}) {
    EXPECT_EQ(send(http::verb::post, kInit, {{"Host", host}}).status, 200) << host;
  }
  for (const char* host : {"evil.example", "localhost.evil.example", "127.0.0.1.evil.example",
                           "10.0.0.1", "[::2]", "localhost:80x", ""}) {
    Reply r = send(http::verb::post, kInit, {{"Host", host}});
    EXPECT_EQ(r.status, 403) << host;
    EXPECT_TRUE(r.session.empty());
  }
  std::string no_host = exchange_raw(
      "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(no_host.rfind("HTTP/1.1 400", 0), 0u) << no_host;
  EXPECT_TRUE(is_loopback_host("127.0.0.1:80"));
  EXPECT_FALSE(is_loopback_host("127.0.0.256"));
  EXPECT_FALSE(is_loopback_host("127.0.0"));
}

void internal_host(HttpOptions& o) { o.allowed_hosts = {"weft.internal"}; }
using HttpAllowedHostsTest = HttpOptionsTest<internal_host>;

TEST_F(HttpAllowedHostsTest, AllowedHostsAreServedToo) {
  EXPECT_EQ(send(http::verb::post, kInit, {{"Host", "weft.internal:8765"}}).status, 200);
  EXPECT_EQ(send(http::verb::post, kInit, {{"Host", "localhost"}}).status, 200);
  EXPECT_EQ(send(http::verb::post, kInit, {{"Host", "other.internal"}}).status, 403);
}

TEST_F(HttpTransportTest, BrokenFramingGets400ThenClose) {
  const std::string post =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  for (const std::string& bad : {
           std::string("GARBAGE\r\n\r\n"),
           std::string("POST /mcp HTTP/1.1x\r\nHost: 127.0.0.1\r\n\r\n"),
           std::string("POST /mcp HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n"),
           post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
           post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
           post + "Content-Length: -1\r\n\r\n",
       }) {
    std::string got = exchange_raw(bad);
    EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << bad << " -> " << got;
    EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
    EXPECT_EQ(got.find("<timeout>"), std::string::npos) << got;
  }
  std::string huge = exchange_raw(post + "X-Big: " + std::string(70000, 'a') + "\r\n\r\n");
  EXPECT_EQ(huge.rfind("HTTP/1.1 431", 0), 0u) << huge.substr(0, 200);
  EXPECT_EQ(huge.find("<timeout>"), std::string::npos);
  // A client that just closes is owed nothing.
  net::io_context ioc;
  auto quiet = connect_raw(ioc);
  quiet.shutdown(net::socket_base::shutdown_send);
  EXPECT_EQ(read_until_closed(quiet, std::chrono::seconds(5)), "");
}

class HttpSmallBodyTest : public HttpTransportTest {
 protected:
  ServerOptions server_options() const override {
    ServerOptions o;
    o.max_message_bytes = 1000;
    return o;
  }
};

TEST_F(HttpSmallBodyTest, AnOversizeBodyGets413) {
  Reply r = send(http::verb::post, std::string(2000, ' '));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find("exceeds the limit of 1000 bytes"), std::string::npos);
}

TEST_F(HttpTransportTest, PostsMustBeJsonAndAcceptJson) {
  for (const char* type :
       {"text/plain", "application/x-www-form-urlencoded", "", "application/jsonx"}) {
    Reply r = send(http::verb::post, kInit, {{"Content-Type", type}});
    EXPECT_EQ(r.status, 415) << type;
    EXPECT_TRUE(r.session.empty());
  }
  EXPECT_EQ(
      send(http::verb::post, kInit, {{"Content-Type", "Application/JSON; charset=utf-8"}}).status,
      200);
  for (const char* accept : {"text/html", "text/event-stream", "image/*", "application/json;q=0"}) {
    EXPECT_EQ(send(http::verb::post, kInit, {{"Accept", accept}}).status, 406) << accept;
  }
  for (const char* accept :
       {"application/json", "*/*", "application/*", "text/event-stream, application/json;q=0.5"}) {
    EXPECT_EQ(send(http::verb::post, kInit, {{"Accept", accept}}).status, 200) << accept;
  }
  std::string no_accept = exchange_raw(
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: "
      "close\r\nContent-Length: " +
      std::to_string(std::strlen(kInit)) + "\r\n\r\n" + kInit);
  EXPECT_EQ(no_accept.rfind("HTTP/1.1 200", 0), 0u) << no_accept;
}

// One event-loop thread and two workers.
void few_threads(HttpOptions& o) {
  o.io_threads = 1;
  o.workers = 2;
}
class HttpFewThreadsTest : public HttpOptionsTest<few_threads> {
 protected:
  ServerOptions server_options() const override {
    ServerOptions options;
    options.map_roots = [](const std::vector<std::string>& uris) { return uris; };
    return options;
  }
};

size_t thread_count() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

TEST_F(HttpFewThreadsTest, OpenGetStreamsHoldNoThreadAndStillGetTheirMessages) {
  constexpr int kStreams = 40;
  const size_t threads_before = thread_count();
  net::io_context ioc;
  std::vector<std::string> sessions;
  std::vector<net::ip::tcp::socket> streams;
  for (int i = 0; i < kStreams; ++i) {
    sessions.push_back(
        send(http::verb::post,
             R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
             R"("2025-06-18","capabilities":{"roots":{"listChanged":true}}}})")
            .session);
    ASSERT_FALSE(sessions.back().empty());
    streams.push_back(connect_raw(ioc));
    net::write(streams.back(), net::buffer(open_stream_request(sessions.back())));
    ASSERT_EQ(read_header(streams.back()).rfind("HTTP/1.1 200", 0), 0u);
  }
  EXPECT_LT(thread_count(), threads_before + 4);
  // The server's requests reach an open stream: roots/list follows initialized.
  for (int i : {0, kStreams - 1}) {
    EXPECT_EQ(send(http::verb::post, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                   {{"Mcp-Session-Id", sessions[i]}})
                  .status,
              202);
    std::string got;
    char buf[4096];
    timeval tv{5, 0};
    ::setsockopt(streams[i].native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (got.find("roots/list") == std::string::npos) {
      ssize_t n = ::recv(streams[i].native_handle(), buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    EXPECT_NE(got.find("roots/list"), std::string::npos) << got;
  }
  // Requests are served meanwhile, and DELETE ends its session's stream.
  for (int i = 0; i < kStreams; i += 7) EXPECT_EQ(ping(sessions[i]), 200);
  EXPECT_EQ(send(http::verb::delete_, "", {{"Mcp-Session-Id", sessions[1]}}).status, 200);
  std::string rest = read_until_closed(streams[1], std::chrono::seconds(5));
  EXPECT_EQ(rest.find("<timeout>"), std::string::npos) << rest;
}

// The default options (a worker pool as large as the cores), counting the
// process's threads before the server starts.
class HttpIdleConnectionsTest : public HttpTransportTest {
 protected:
  void SetUp() override {
    // ThreadSanitizer starts its own background thread with the process's
    // first thread: start one so that it is counted here, not as the server's.
    std::thread([] {}).join();
    threads_without_server_ = thread_count();
    HttpTransportTest::SetUp();
  }
  size_t threads_without_server_ = 0;
};

TEST_F(HttpIdleConnectionsTest, IdleConnectionsHoldNoThread) {
  constexpr int kConnections = 200;
  const std::string session = initialize_session();  // the server is up, its pool started
  ASSERT_FALSE(session.empty());
  const size_t serving = thread_count();
  const size_t pool = std::max(1u, std::thread::hardware_concurrency());
  // The pool, the event loop (run()'s own thread) and the reaper.
  EXPECT_LE(serving, threads_without_server_ + pool + 2);
  net::io_context ioc;
  std::vector<net::ip::tcp::socket> idle;
  for (int i = 0; i < kConnections; ++i) idle.push_back(connect_raw(ioc));
  // Every connection is accepted: the first request on each is answered.
  http::request<http::string_body> ping_req{http::verb::post, "/mcp", 11};
  ping_req.set(http::field::host, "127.0.0.1");
  ping_req.set(http::field::content_type, "application/json");
  ping_req.set("Mcp-Session-Id", session);
  ping_req.body() = R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  ping_req.prepare_payload();
  auto ping_on = [&](net::ip::tcp::socket& sock) {
    http::write(sock, ping_req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(sock, buffer, res, ec);
    return ec ? 0 : res.result_int();
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(thread_count(), serving) << kConnections << " connections opened, none used";
  // Half of them now sit idle in keep-alive after a request.
  for (int i = 0; i < kConnections; i += 2) ASSERT_EQ(ping_on(idle[i]), 200u) << i;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(thread_count(), serving) << kConnections << " connections idle, half after a request";
  for (int i = 1; i < kConnections; i += 2) ASSERT_EQ(ping_on(idle[i]), 200u) << i;
}

}  // namespace
}  // namespace weft::server
