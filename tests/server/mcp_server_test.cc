// The protocol engine: both eras, tools/list paging, tools/call errors,
// logging, progress, cancellation and roots.
#include "weft/server/mcp_server.h"

#include <gtest/gtest.h>

#include <thread>

#include "server/server_test_util.h"

namespace weft::server {
namespace {

using testing::Recorder;
using testing::toy_tools;

class McpServerTest : public ::testing::Test {
 protected:
  McpServerTest() : server_(make_options(), toy_tools()), session_(recorder_.sender()) {}

  static ServerOptions make_options() {
    ServerOptions o;
    o.tools_page_size = 1;
    o.map_roots = [](const std::vector<std::string>& uris) {
      std::vector<std::string> out;
      for (const auto& u : uris) {
        if (u.rfind("file:///ws/", 0) == 0) out.push_back(u.substr(11));
      }
      return out;
    };
    return o;
  }

  Json send(const std::string& text) {
    auto reply = server_.handle_text(text, session_, related_.sender());
    return reply ? *reply : Json();
  }
  Json call(const Json& request) { return send(request.dump()); }
  Json initialize(const std::string& version, Json caps = Json::object()) {
    return call({{"jsonrpc", "2.0"},
                 {"id", 1},
                 {"method", "initialize"},
                 {"params",
                  {{"protocolVersion", version},
                   {"capabilities", caps},
                   {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}});
  }
  static Json modern_meta() {
    return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
            {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  }

  McpServer server_;
  Recorder recorder_;
  Recorder related_;
  Session session_;
};

TEST_F(McpServerTest, InitializeEchoesKnownVersionsAndAnswersUnknownWithNewest) {
  for (const char* v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    EXPECT_EQ(initialize(v)["result"]["protocolVersion"], v);
  }
  Json r = initialize("1999-01-01");
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "weft");
  EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  EXPECT_TRUE(r["result"]["capabilities"].contains("logging"));
  EXPECT_EQ(call({{"jsonrpc", "2.0"},
                  {"id", 2},
                  {"method", "initialize"},
                  {"params", Json::object()}})["error"]["code"],
            rpc::kInvalidParams);
}

TEST_F(McpServerTest, DeeplyNestedMessagesGetInvalidRequestNotACrash) {
  std::string objects = R"({"jsonrpc":"2.0","id":9,"method":"ping","params":)";
  for (int i = 0; i < 100'000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(100'000, '}') + "}";
  Json r = send(objects);
  EXPECT_EQ(r["error"]["code"], rpc::kInvalidRequest);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("nested deeper than 64 levels"),
            std::string::npos);
  Json arrays = send(std::string(150'000, '[') + std::string(150'000, ']'));
  EXPECT_EQ(arrays["error"]["code"], rpc::kInvalidRequest);
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":"p","method":"ping"})")["result"], Json::object());
}

TEST_F(McpServerTest, PingAndUnknownMethods) {
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":"p","method":"ping"})")["result"], Json::object());
  Json r = send(R"({"jsonrpc":"2.0","id":3,"method":"no/such"})");
  EXPECT_EQ(r["error"]["code"], rpc::kMethodNotFound);
  EXPECT_EQ(r["id"], 3);
  EXPECT_TRUE(server_.handle_text(R"({"jsonrpc":"2.0","method":"notifications/whatever"})",
                                  session_, nullptr) == std::nullopt);
}

TEST_F(McpServerTest, ToolsListPagesWithCursorsAndRejectsBadCursors) {
  Json first = send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  ASSERT_EQ(first["result"]["tools"].size(), 1u);
  Json tool = first["result"]["tools"][0];
  EXPECT_EQ(tool["name"], "echo");
  EXPECT_TRUE(tool["inputSchema"].is_object());
  EXPECT_TRUE(tool["outputSchema"].is_object());
  EXPECT_EQ(tool["annotations"]["readOnlyHint"], true);
  std::string cursor = first["result"]["nextCursor"];
  Json second = call(
      {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}, {"params", {{"cursor", cursor}}}});
  EXPECT_EQ(second["result"]["tools"][0]["name"], "slow");
  EXPECT_FALSE(second["result"].contains("nextCursor"));
  EXPECT_EQ(tool["annotations"].value("destructiveHint", true), false);
  for (Json bad : {Json("garbage"), Json(5), Json("tools:99"), Json("tools:x")}) {
    Json r = call(
        {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}, {"params", {{"cursor", bad}}}});
    EXPECT_EQ(r["error"]["code"], rpc::kInvalidParams) << bad;
  }
}

TEST_F(McpServerTest, ToolsCallResultsAndErrors) {
  Json ok = send(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})");
  EXPECT_EQ(ok["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(ok["result"]["structuredContent"]["text"], "hi");
  EXPECT_FALSE(ok["result"].contains("isError"));

  Json bad_args = send(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":5}}})");
  EXPECT_EQ(bad_args["result"]["isError"], true);
  EXPECT_NE(bad_args["result"]["content"][0]["text"].get<std::string>().find("arguments.text"),
            std::string::npos);

  Json failed = send(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fail"}}})");
  EXPECT_EQ(failed["result"]["isError"], true);
  EXPECT_NE(failed["result"]["content"][0]["text"].get<std::string>().find("not found"),
            std::string::npos);

  Json unknown = send(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}})");
  EXPECT_EQ(unknown["error"]["code"], rpc::kInvalidParams);
  EXPECT_NE(unknown["error"]["message"].get<std::string>().find("echo"), std::string::npos);

  Json no_name = send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}})");
  EXPECT_EQ(no_name["error"]["code"], rpc::kInvalidParams);
  Json array_params = send(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1]})");
  EXPECT_EQ(array_params["error"]["code"], rpc::kInvalidParams);
}

TEST_F(McpServerTest, LoggingFollowsSetLevel) {
  const std::string echo =
      R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}})";
  send(echo);
  EXPECT_TRUE(related_.snapshot().empty());  // no level set: no logs
  EXPECT_EQ(
      send(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}})")
          ["result"],
      Json::object());
  send(echo);
  auto sent = related_.snapshot();
  ASSERT_EQ(sent.size(), 1u);  // info passes, the debug trace does not
  EXPECT_EQ(sent[0]["method"], "notifications/message");
  EXPECT_EQ(sent[0]["params"]["level"], "info");
  EXPECT_EQ(
      send(R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"loud"}})")
          ["error"]["code"],
      rpc::kInvalidParams);
}

TEST_F(McpServerTest, ModernEraIsStatelessAndVersionChecked) {
  Json discover = call({{"jsonrpc", "2.0"},
                        {"id", 1},
                        {"method", "server/discover"},
                        {"params", {{"_meta", modern_meta()}}}});
  EXPECT_EQ(discover["result"]["resultType"], "complete");
  EXPECT_EQ(discover["result"]["supportedVersions"][0], "2026-07-28");
  Json list = call({{"jsonrpc", "2.0"},
                    {"id", 2},
                    {"method", "tools/list"},
                    {"params", {{"_meta", modern_meta()}}}});
  EXPECT_EQ(list["result"]["resultType"], "complete");
  Json meta = modern_meta();
  meta["io.modelcontextprotocol/protocolVersion"] = "2030-01-01";
  Json wrong = call(
      {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}, {"params", {{"_meta", meta}}}});
  EXPECT_EQ(wrong["error"]["code"], rpc::kUnsupportedProtocolVersion);
  EXPECT_EQ(wrong["error"]["data"]["requested"], "2030-01-01");
  EXPECT_EQ(wrong["error"]["data"]["supported"][0], "2026-07-28");
  meta = modern_meta();
  meta.erase("io.modelcontextprotocol/clientCapabilities");
  EXPECT_EQ(call({{"jsonrpc", "2.0"},
                  {"id", 4},
                  {"method", "tools/list"},
                  {"params", {{"_meta", meta}}}})["error"]["code"],
            rpc::kInvalidParams);
  EXPECT_EQ(call({{"jsonrpc", "2.0"},
                  {"id", 5},
                  {"method", "ping"},
                  {"params", {{"_meta", modern_meta()}}}})["error"]["code"],
            rpc::kMethodNotFound);
  meta = modern_meta();
  meta["io.modelcontextprotocol/logLevel"] = "debug";
  Json call_result =
      call({{"jsonrpc", "2.0"},
            {"id", 6},
            {"method", "tools/call"},
            {"params", {{"_meta", meta}, {"name", "echo"}, {"arguments", {{"text", "m"}}}}}});
  EXPECT_EQ(call_result["result"]["resultType"], "complete");
  EXPECT_EQ(related_.snapshot().size(), 2u);  // debug trace + info line, per-request level
}

TEST_F(McpServerTest, BatchesFollowTheNegotiatedVersion) {
  const std::string batch =
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"ping"}])";
  EXPECT_EQ(send(batch)["error"]["code"], rpc::kInvalidRequest);  // default: newest, no batches
  initialize("2025-03-26");
  Json replies = send(batch);
  ASSERT_TRUE(replies.is_array());
  EXPECT_EQ(replies.size(), 2u);
  EXPECT_EQ(send(R"([{"jsonrpc":"2.0","method":"n"}])"), Json());  // notifications only: nothing
}

TEST_F(McpServerTest, ProgressNotificationsCarryTheToken) {
  std::thread canceller([this] {
    // Cancel only once the call runs, so it has sent some progress first.
    while (session_.in_flight() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}})");
  });
  auto reply = server_.handle_text(
      R"({"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"tok"}}})",
      session_, related_.sender());
  canceller.join();
  EXPECT_FALSE(reply.has_value());  // cancelled: no response at all
  auto sent = related_.snapshot();
  ASSERT_FALSE(sent.empty());
  double last = 0;
  for (const auto& m : sent) {
    EXPECT_EQ(m["method"], "notifications/progress");
    EXPECT_EQ(m["params"]["progressToken"], "tok");
    EXPECT_GT(m["params"]["progress"].get<double>(), last);
    last = m["params"]["progress"].get<double>();
  }
  EXPECT_EQ(session_.in_flight(), 0u);
}

TEST_F(McpServerTest, RootsAreRequestedAfterInitializedAndNarrowTheSession) {
  initialize("2025-11-25", {{"roots", {{"listChanged", true}}}});
  send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  auto out = recorder_.snapshot();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["method"], "roots/list");
  Json response = {
      {"jsonrpc", "2.0"},
      {"id", out[0]["id"]},
      {"result", {{"roots", {{{"uri", "file:///ws/src"}}, {{"uri", "file:///etc"}}}}}}};
  EXPECT_EQ(call(response), Json());
  EXPECT_EQ(session_.roots(), std::vector<std::string>{"src"});
}

TEST_F(McpServerTest, DuplicateInFlightIdsAreRejected) {
  std::thread t([this] {
    server_.handle_text(
        R"({"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"slow"}})", session_,
        nullptr);
  });
  while (session_.in_flight() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Json dup = send(R"({"jsonrpc":"2.0","id":77,"method":"ping"})");
  EXPECT_EQ(dup["error"]["code"], rpc::kInvalidRequest);
  EXPECT_TRUE(session_.cancel_request(77));
  t.join();
}

TEST_F(McpServerTest, CancelArrivingBeforeItsRequestStopsIt) {
  // A transport may read the cancel while the request still waits for a worker.
  send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"early"}})");
  const auto start = std::chrono::steady_clock::now();
  auto reply = server_.handle_text(
      R"({"jsonrpc":"2.0","id":"early","method":"tools/call","params":{"name":"slow"}})", session_,
      nullptr);
  EXPECT_FALSE(reply.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));  // slow never ran
  EXPECT_EQ(session_.in_flight(), 0u);
  // The early cancel was used up: the next request with another id runs and answers.
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":"later","method":"ping"})")["id"], "later");
}

TEST_F(McpServerTest, EarlyCancelsAreBounded) {
  for (size_t i = 0; i <= Session::kEarlyCancelsKept; ++i) {
    EXPECT_FALSE(session_.cancel_request("gone-" + std::to_string(i)));
  }
  // The oldest was forgotten, so its (late) request is answered; the newest is not.
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":"gone-0","method":"ping"})")["id"], "gone-0");
  const std::string newest = "gone-" + std::to_string(Session::kEarlyCancelsKept);
  EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":")" + newest + R"(","method":"ping"})"), Json());
}

}  // namespace
}  // namespace weft::server

namespace weft::server {
namespace {

// A 2025-03-26 session on a server with small batch limits.
struct BatchLimits {
  BatchLimits() : server(options(), testing::toy_tools()), session(nullptr) {
    server.handle_text(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})",
        session, nullptr);
  }
  static ServerOptions options() {
    ServerOptions o;
    o.max_batch_items = 10;
    o.max_batch_reply_bytes = 1000;
    return o;
  }
  static std::string echo_batch(size_t n, size_t text_bytes) {
    Json batch = Json::array();
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(
          {{"jsonrpc", "2.0"},
           {"id", i + 1},
           {"method", "tools/call"},
           {"params",
            {{"name", "echo"}, {"arguments", {{"text", std::string(text_bytes, 'x')}}}}}});
    }
    return batch.dump();
  }
  McpServer server;
  Session session;
};

TEST(McpServerBatchTest, ABatchLongerThanTheLimitIsRefusedWhole) {
  BatchLimits f;
  auto ok = f.server.handle_text(BatchLimits::echo_batch(10, 1), f.session, nullptr);
  ASSERT_TRUE(ok && ok->is_array());
  EXPECT_EQ(ok->size(), 10u);
  auto refused = f.server.handle_text(BatchLimits::echo_batch(11, 1), f.session, nullptr);
  ASSERT_TRUE(refused && refused->is_object());
  EXPECT_EQ((*refused)["error"]["code"], rpc::kInvalidRequest);
  EXPECT_NE((*refused)["error"]["message"].get<std::string>().find("exceeds the limit of 10"),
            std::string::npos);
}

TEST(McpServerBatchTest, RepliesStopGrowingAtTheByteLimit) {
  BatchLimits f;
  // Each echo reply is a few hundred bytes: only a few fit in 1000.
  auto reply = f.server.handle_text(BatchLimits::echo_batch(10, 100), f.session, nullptr);
  ASSERT_TRUE(reply && reply->is_array());
  ASSERT_EQ(reply->size(), 10u);
  size_t answered = 0;
  size_t answered_bytes = 2;
  for (const Json& r : *reply) {
    if (r.contains("result")) {
      EXPECT_EQ(answered, static_cast<size_t>(&r - &(*reply)[0])) << "results come first";
      ++answered;
      answered_bytes += serialize(r).size() + 1;
    } else {
      EXPECT_EQ(r["error"]["code"], rpc::kInvalidRequest);
      EXPECT_NE(r["error"]["message"].get<std::string>().find("reached the limit of 1000 bytes"),
                std::string::npos);
    }
  }
  EXPECT_GE(answered, 1u);
  EXPECT_LT(answered, 10u);
  EXPECT_LE(answered_bytes, 1000u);
  EXPECT_LE(serialize(*reply).size(), 1000u + 10 * 250);
}

TEST(McpServerBatchTest, ACancelledGroupStopsTheBatchAndOwesNothing) {
  BatchLimits f;
  CancelGroup group;
  group.cancel();
  EXPECT_FALSE(f.server.handle_text(BatchLimits::echo_batch(3, 1), f.session, nullptr, &group));
  auto flag = std::make_shared<std::atomic<bool>>(false);
  group.add(flag);
  EXPECT_TRUE(flag->load());  // a member that joins late is cancelled at once
}

}  // namespace
}  // namespace weft::server
