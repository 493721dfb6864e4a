// The stdio transport over real pipes: framing, garbage, oversize lines,
// concurrent requests, cancellation and clean EOF.
#include "weft/server/stdio_transport.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>

#include <future>
#include <string>
#include <thread>

#include "server/server_test_util.h"

namespace weft::server {
namespace {

class StdioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe(in_), 0);
    ASSERT_EQ(pipe(out_), 0);
    ServerOptions options;
    options.max_message_bytes = 4096;
    server_ = std::make_unique<McpServer>(options, testing::toy_tools());
    done_ = std::async(std::launch::async, [this] {
      Status s = serve_stdio(*server_, in_[0], out_[1], StdioOptions{4});
      close(out_[1]);
      return s;
    });
  }
  void TearDown() override {
    if (in_[1] >= 0) close(in_[1]);
    if (done_.valid()) done_.get().ignore_error();
    close(in_[0]);
    close(out_[0]);
  }
  void write_line(const std::string& text) {
    std::string line = text + "\n";
    ASSERT_EQ(write(in_[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  void write_raw(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = write(in_[1], bytes.data() + off, bytes.size() - off);
      ASSERT_GT(n, 0);
      off += static_cast<size_t>(n);
    }
  }
  Json read_message() {
    std::string line;
    char c;
    while (read(out_[0], &c, 1) == 1) {
      if (c == '\n') return Json::parse(line);
      line.push_back(c);
    }
    return Json();
  }
  void close_input() {
    close(in_[1]);
    in_[1] = -1;
  }

  int in_[2] = {-1, -1};
  int out_[2] = {-1, -1};
  std::unique_ptr<McpServer> server_;
  std::future<Status> done_;
};

TEST_F(StdioTest, AnswersEachLineAndSurvivesGarbage) {
  write_line("this is not json");
  EXPECT_EQ(read_message()["error"]["code"], rpc::kParseError);
  write_line("");  // blank lines are skipped
  write_line(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  Json pong = read_message();
  EXPECT_EQ(pong["id"], 1);
  EXPECT_EQ(pong["result"], Json::object());
  write_line(R"({"jsonrpc":"2.0","id":2,"method":"nope"})");
  EXPECT_EQ(read_message()["error"]["code"], rpc::kMethodNotFound);
  write_line("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\r");  // CRLF framing
  EXPECT_EQ(read_message()["id"], 3);
  close_input();
  EXPECT_TRUE(done_.get().ok());
  EXPECT_TRUE(read_message().is_null());  // nothing after EOF
}

TEST_F(StdioTest, OversizeLinesAreDiscardedAndAnswered) {
  write_raw(std::string(100'000, 'x') + "\n");
  Json error = read_message();
  EXPECT_EQ(error["error"]["code"], rpc::kInvalidRequest);
  EXPECT_TRUE(error["id"].is_null());
  write_line(R"({"jsonrpc":"2.0","id":"after","method":"ping"})");
  EXPECT_EQ(read_message()["id"], "after");
}

TEST_F(StdioTest, RequestsRunConcurrentlyAndCancelStopsThem) {
  write_line(R"({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow"}})");
  // A quick call answers while the slow one still runs on another worker.
  write_line(
      R"({"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})");
  Json fast = read_message();
  EXPECT_EQ(fast["id"], "fast");
  write_line(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}})");
  write_line(R"({"jsonrpc":"2.0","id":"after","method":"ping"})");
  Json next = read_message();
  EXPECT_EQ(next["id"], "after");  // the cancelled call sent nothing
  close_input();
  EXPECT_TRUE(done_.get().ok());
  EXPECT_TRUE(read_message().is_null());
}

// A quick tool (ToolSpec::quick) runs on the reader thread when nothing else
// is in flight, and on a worker when another request is running.
class StdioQuickToolTest : public StdioTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe(in_), 0);
    ASSERT_EQ(pipe(out_), 0);
    auto tools = testing::toy_tools();
    ToolSpec where;
    where.name = "where";
    where.description = "Says whether it ran on the reader thread.";
    where.input_schema = Json::parse(R"({"type":"object","additionalProperties":false})");
    where.quick = true;
    where.handler = [this](const Json&, ToolContext&) -> Result<ToolOutput> {
      const bool reader = std::this_thread::get_id() == reader_.load();
      return ToolOutput{reader ? "reader" : "worker", nullptr, nullptr};
    };
    ASSERT_TRUE(tools->add(std::move(where)).ok());
    server_ = std::make_unique<McpServer>(ServerOptions{}, tools);
    done_ = std::async(std::launch::async, [this] {
      reader_.store(std::this_thread::get_id());
      Status s = serve_stdio(*server_, in_[0], out_[1], StdioOptions{4});
      close(out_[1]);
      return s;
    });
  }
  std::string call_where(const std::string& id) {
    write_line(R"({"jsonrpc":"2.0","id":")" + id +
               R"(","method":"tools/call","params":{"name":"where"}})");
    for (;;) {
      Json m = read_message();
      if (m.is_null()) return "";
      if (m["id"] == id) return m["result"]["content"][0]["text"];
    }
  }
  std::atomic<std::thread::id> reader_{};
};

TEST_F(StdioQuickToolTest, RunsInlineOnlyWhenNothingElseIsInFlight) {
  EXPECT_EQ(call_where("a"), "reader");
  EXPECT_EQ(call_where("b"), "reader");
  write_line(R"({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow"}})");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a worker has taken it
  EXPECT_EQ(call_where("c"), "worker");
  write_line(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}})");
  close_input();
  EXPECT_TRUE(done_.get().ok());
}

TEST_F(StdioTest, ManyParallelRequestsAllGetWholeLines) {
  std::string burst;
  for (int i = 0; i < 200; ++i) {
    burst += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
             R"(,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m)" +
             std::to_string(i) + "\"}}}\n";
  }
  write_raw(burst);
  close_input();
  std::vector<bool> seen(200, false);
  for (int i = 0; i < 200; ++i) {
    Json m = read_message();
    ASSERT_TRUE(m.contains("id"));
    int id = m["id"].get<int>();
    EXPECT_EQ(m["result"]["structuredContent"]["text"], "m" + std::to_string(id));
    seen[id] = true;
  }
  for (bool s : seen) EXPECT_TRUE(s);
  EXPECT_TRUE(done_.get().ok());
}

TEST_F(StdioTest, AFloodWaitsInThePipeWhileEveryWorkerIsBusy) {
  // Four slow calls hold the four workers; then echo requests are written
  // without blocking. The server queues a bounded number and stops reading,
  // so the pipe fills long before the 8 MiB the client tries to send.
  for (int i = 0; i < 4; ++i) {
    write_line(R"({"jsonrpc":"2.0","id":"slow)" + std::to_string(i) +
               R"(","method":"tools/call","params":{"name":"slow"}})");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Lines of one length, each with its own id.
  auto echo_line = [](size_t i) {
    char id[16];
    std::snprintf(id, sizeof id, "e%07zu", i);
    return R"({"jsonrpc":"2.0","id":")" + std::string(id) +
           R"(","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}})"
           "\n";
  };
  const size_t line_size = echo_line(0).size();
  const int flags = fcntl(in_[1], F_GETFL);
  ASSERT_EQ(fcntl(in_[1], F_SETFL, flags | O_NONBLOCK), 0);
  size_t written = 0;
  bool blocked = false;
  while (written < (8u << 20)) {
    const std::string line = echo_line(written / line_size);
    const size_t at = written % line_size;
    ssize_t n = write(in_[1], line.data() + at, line_size - at);
    if (n < 0 && errno == EAGAIN) {
      // Full for now; the server has stopped reading if it stays full.
      pollfd p{in_[1], POLLOUT, 0};
      if (poll(&p, 1, 500) == 0) {
        blocked = true;
        break;
      }
      continue;
    }
    ASSERT_GT(n, 0);
    written += static_cast<size_t>(n);
  }
  EXPECT_TRUE(blocked) << "the server read all " << written << " bytes while its workers were busy";
  EXPECT_LT(written, 1u << 20);
  ASSERT_EQ(fcntl(in_[1], F_SETFL, flags), 0);
  if (written % line_size != 0) write_raw(echo_line(written / line_size).substr(written % line_size));
  const size_t echoes = (written + line_size - 1) / line_size;
  close_input();
  size_t answered = 0;
  for (size_t i = 0; i < echoes + 4; ++i) {
    Json m = read_message();
    EXPECT_TRUE(m.contains("result")) << m.dump();
    answered += m.contains("result") && m["id"].get<std::string>()[0] == 'e';
  }
  EXPECT_EQ(answered, echoes);  // nothing was dropped: the flood only waited
  EXPECT_TRUE(done_.get().ok());
}

TEST_F(StdioTest, OversizeLastLineWithoutNewlineIsAnswered) {
  write_line(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(read_message()["id"], 1);
  write_raw(std::string(100'000, 'x'));  // no newline: EOF ends it
  close_input();
  Json error = read_message();
  EXPECT_EQ(error["error"]["code"], rpc::kInvalidRequest);
  EXPECT_EQ(error["error"]["message"],
            "Invalid Request: message of 100000 bytes exceeds the limit of 4096 bytes");
  EXPECT_TRUE(error["id"].is_null());
  EXPECT_TRUE(done_.get().ok());
  EXPECT_TRUE(read_message().is_null());
}

TEST_F(StdioTest, DeeplyNestedLinesAreRefusedAndTheServerGoesOn) {
  write_line(std::string(2000, '[') + std::string(2000, ']'));
  Json error = read_message();
  EXPECT_EQ(error["error"]["code"], rpc::kInvalidRequest);
  EXPECT_NE(error["error"]["message"].get<std::string>().find("nested deeper than 64 levels"),
            std::string::npos);
  write_line(R"({"jsonrpc":"2.0","id":"after","method":"ping"})");
  EXPECT_EQ(read_message()["id"], "after");
}

TEST_F(StdioTest, EofWithoutTrailingNewlineStillAnswers) {
  write_raw(R"({"jsonrpc":"2.0","id":5,"method":"ping"})");
  close_input();
  EXPECT_EQ(read_message()["id"], 5);
}

}  // namespace
}  // namespace weft::server
