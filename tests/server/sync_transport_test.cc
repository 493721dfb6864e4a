// Live sync end to end in process: `weft serve`'s HTTP server with the
// kernel's blocks behind /sync, driven by a Beast WebSocket client speaking
// loro-protocol frames (join, updates, acks) on a temporary workspace.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "server/server_test_util.h"
#include "support/test_support.h"
#include "weft/crdt/doc.h"
#include "weft/server/http_transport.h"
#include "weft/server/sync_kernel_backend.h"
#include "weft/server/sync_protocol.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace stdfs = std::filesystem;
using namespace sync;
using sync::Message;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

class Client {
 public:
  Client(uint16_t port, const std::string& target, const std::string& origin = "")
      : ws_(ioc_) {
    ws_.next_layer().connect({net::ip::make_address("127.0.0.1"), port});
    if (!origin.empty()) {
      ws_.set_option(websocket::stream_base::decorator(
          [origin](websocket::request_type& req) { req.set("Origin", origin); }));
    }
    ws_.handshake("127.0.0.1", target, ec_);
    ws_.binary(true);
  }
  bool open() const { return !ec_; }

  void send(const Message& m) {
    auto frame = encode(m);
    ASSERT_TRUE(frame.ok()) << frame.status();
    ws_.write(net::buffer(*frame));
  }
  void send_raw(const std::string& bytes) { ws_.write(net::buffer(bytes)); }

  // The next frame (nullopt when the socket closed or timed out).
  std::optional<Message> next(int timeout_ms = 5000) {
    beast::flat_buffer buf;
    beast::get_lowest_layer(ws_).native_handle();
    struct timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(ws_.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    beast::error_code ec;
    ws_.read(buf, ec);
    if (ec) {
      closed_ = ws_.reason().code;
      return std::nullopt;
    }
    auto m = decode(beast::buffers_to_string(buf.data()));
    if (!m.ok()) return std::nullopt;
    return *m;
  }
  // The next frame of type T, skipping others.
  template <typename T>
  std::optional<T> next_of(int timeout_ms = 5000) {
    for (int i = 0; i < 20; ++i) {
      auto m = next(timeout_ms);
      if (!m) return std::nullopt;
      if (auto* body = std::get_if<T>(&m->body)) return *body;
    }
    return std::nullopt;
  }
  uint16_t closed_code() const { return closed_; }

 private:
  net::io_context ioc_;
  websocket::stream<net::ip::tcp::socket> ws_;
  beast::error_code ec_;
  uint16_t closed_ = 0;
};

Message join(const std::string& room, const std::string& auth = kToken) {
  return Message{CrdtType::kLoro, room, JoinRequest{auth, ""}};
}
Message update(const std::string& room, std::string bytes, uint8_t batch) {
  DocUpdate u;
  u.updates.push_back(std::move(bytes));
  u.batch_id[7] = batch;
  return Message{CrdtType::kLoro, room, u};
}

std::string doc_text(crdt::Doc& doc) { return doc.get_text("content").to_string(); }

class SyncTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() / "ws";
    stdfs::create_directories(root_ / "locked");
    std::ofstream(root_ / "a.txt") << "hello\n";
    std::ofstream(root_ / "locked" / "b.txt") << "frozen\n";
    std::ofstream(root_ / "weft.toml")
        << "[permissions]\nrules = [\n  { glob = \"locked/**\", level = \"read_only\" },\n]\n";
    auto built = testing::make_live_workspace(root_, tmp_.path() / "state");
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
    ASSERT_NE(built_.sync, nullptr);
    ASSERT_NE(built_.workspace->kernel(), nullptr);
    HttpOptions http;
    http.port = 0;
    http.sync = built_.sync;
    http.token = kToken;
    http.sync_person = "nobody";
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
  std::string target(const std::string& token = kToken) const {
    return "/sync?token=" + token + "&name=amy";
  }
  std::string disk(const std::string& path) const {
    return weft::testing::read_file(root_ / path);
  }
  // Joins `room`, returning the client's doc holding what the server sent.
  crdt::Doc joined(Client& c, const std::string& room, Permission* permission) {
    c.send(join(room));
    crdt::Doc doc;
    auto ok = c.next_of<JoinResponseOk>();
    EXPECT_TRUE(ok.has_value());
    if (ok) *permission = ok->permission;
    auto initial = c.next_of<DocUpdate>();
    EXPECT_TRUE(initial.has_value());
    if (initial) {
      for (const auto& u : initial->updates) EXPECT_TRUE(doc.import(u).ok());
    }
    return doc;
  }

  weft::testing::TempDir tmp_;
  stdfs::path root_;
  WorkspaceServer built_;
  std::unique_ptr<HttpServer> http_;
  std::thread runner_;
};

TEST_F(SyncTransportTest, ClientEditLandsOnDiskAndInHistoryAsThePerson) {
  Client c(http_->port(), target());
  ASSERT_TRUE(c.open());
  Permission permission = Permission::kRead;
  crdt::Doc doc = joined(c, "file:a.txt", &permission);
  EXPECT_EQ(permission, Permission::kWrite);
  ASSERT_EQ(doc_text(doc), "hello\n");

  crdt::VersionVector before = doc.oplog_version();
  ASSERT_TRUE(doc.get_text("content").insert(5, ", world").ok());
  ASSERT_TRUE(doc.commit().ok());
  c.send(update("file:a.txt", doc.export_loro_updates(before), 1));
  auto ack = c.next_of<Ack>();
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->status, UpdateStatus::kOk);
  EXPECT_EQ(disk("a.txt"), "hello, world\n");

  auto history = built_.workspace->kernel()->history("a.txt", 1);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_FALSE(history->empty());
  EXPECT_EQ(history->front().author, "human:amy");
}

TEST_F(SyncTransportTest, AgentChangeReachesTheClient) {
  Client c(http_->port(), target());
  Permission permission;
  crdt::Doc doc = joined(c, "file:a.txt", &permission);
  auto changed = built_.workspace->kernel()->change_text(
      "a.txt", source::Attribution{"agent:bot", "edit", std::nullopt},
      source::FileOp::kOverwrite,
      [](const std::optional<std::string>&) -> Result<std::string> { return "hello agent\n"; });
  ASSERT_TRUE(changed.ok()) << changed.status();
  auto pushed = c.next_of<DocUpdate>();
  ASSERT_TRUE(pushed.has_value());
  for (const auto& u : pushed->updates) ASSERT_TRUE(doc.import(u).ok());
  EXPECT_EQ(doc_text(doc), "hello agent\n");
}

TEST_F(SyncTransportTest, ReadOnlyRoomRefusesUpdates) {
  Client c(http_->port(), target());
  Permission permission = Permission::kWrite;
  crdt::Doc doc = joined(c, "file:locked/b.txt", &permission);
  EXPECT_EQ(permission, Permission::kRead);
  crdt::VersionVector before = doc.oplog_version();
  ASSERT_TRUE(doc.get_text("content").insert(0, "x").ok());
  ASSERT_TRUE(doc.commit().ok());
  c.send(update("file:locked/b.txt", doc.export_loro_updates(before), 2));
  auto ack = c.next_of<Ack>();
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->status, UpdateStatus::kPermissionDenied);
  EXPECT_EQ(disk("locked/b.txt"), "frozen\n");
}

TEST_F(SyncTransportTest, MalformedUpdateIsRefusedAndChangesNothing) {
  Client c(http_->port(), target());
  Permission permission;
  crdt::Doc doc = joined(c, "file:a.txt", &permission);
  auto version = built_.workspace->kernel()->sync_export_since("file:a.txt", "");
  ASSERT_TRUE(version.ok());
  c.send(update("file:a.txt", "loro\x01\x02not really", 3));
  auto ack = c.next_of<Ack>();
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->status, UpdateStatus::kInvalidUpdate);
  EXPECT_EQ(disk("a.txt"), "hello\n");
  auto after = built_.workspace->kernel()->sync_export_since("file:a.txt", "");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->version, version->version);
}

TEST_F(SyncTransportTest, WrongTokenIsClosed4401) {
  Client c(http_->port(), target("not-the-token"));
  ASSERT_TRUE(c.open());
  EXPECT_FALSE(c.next(3000).has_value());
  EXPECT_EQ(c.closed_code(), kCloseUnauthorized);
}

TEST_F(SyncTransportTest, JoinWithWrongAuthIsRefused) {
  Client c(http_->port(), target());
  c.send(join("file:a.txt", "wrong"));
  auto error = c.next_of<JoinError>();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, JoinErrorCode::kAuthFailed);
}

TEST_F(SyncTransportTest, ForeignOriginIsRefused) {
  Client c(http_->port(), target(), "http://evil.example");
  EXPECT_FALSE(c.open());
}

TEST_F(SyncTransportTest, OversizeMessageIsClosed4413) {
  Client c(http_->port(), target());
  c.send_raw(std::string(300u << 10, 'x'));
  EXPECT_FALSE(c.next(3000).has_value());
  EXPECT_EQ(c.closed_code(), kCloseMessageTooLarge);
}

TEST_F(SyncTransportTest, PingIsAnsweredPong) {
  net::io_context ioc;
  websocket::stream<net::ip::tcp::socket> ws(ioc);
  ws.next_layer().connect({net::ip::make_address("127.0.0.1"), http_->port()});
  ws.handshake("127.0.0.1", target());
  ws.text(true);
  ws.write(net::buffer(std::string("ping")));
  beast::flat_buffer buf;
  ws.read(buf);
  EXPECT_TRUE(ws.got_text());
  EXPECT_EQ(beast::buffers_to_string(buf.data()), "pong");
}

}  // namespace
}  // namespace weft::server
