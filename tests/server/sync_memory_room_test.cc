// A memory block's %LOR room in `weft serve`'s live sync (the sync core over
// the kernel backend, without sockets): a person with a write token joins it
// as a reader, receives the memory doc, and an update is answered
// permission_denied and leaves the block unchanged; the kernel backend also
// refuses an update handed to it directly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/server_test_util.h"
#include "support/test_support.h"
#include "weft/crdt/doc.h"
#include "weft/server/sync_kernel_backend.h"
#include "weft/server/sync_protocol.h"
#include "weft/server/sync_rooms.h"

namespace weft::server {
namespace {

using namespace sync;
using sync::Message;
using ::testing::HasSubstr;

constexpr char kRoom[] = "memory:claude/notes";
constexpr char kMemoryRoomToken[] = "secret";

// The frames the core sends to one connection, decoded when taken.
class FrameLog : public SyncConnection {
 public:
  void send_binary(std::string frame) override {
    std::lock_guard lock(mu_);
    frames_.push_back(std::move(frame));
  }
  void send_text(std::string) override {}
  void close(uint16_t, std::string_view) override {}
  std::vector<Message> take() {
    std::vector<std::string> frames;
    {
      std::lock_guard lock(mu_);
      frames.swap(frames_);
    }
    std::vector<Message> out;
    for (const auto& f : frames) {
      auto m = decode(f);
      EXPECT_TRUE(m.ok()) << m.status();
      if (m.ok()) out.push_back(std::move(*m));
    }
    return out;
  }
  // Waits (at most 2 s) for at least one message: updates apply on the sync
  // core's own threads.
  std::vector<Message> wait_take() {
    for (int i = 0; i < 400; ++i) {
      auto got = take();
      if (!got.empty()) return got;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return {};
  }

 private:
  std::mutex mu_;
  std::vector<std::string> frames_;
};

// The bodies of type T among `messages`.
template <typename T>
std::vector<T> bodies(const std::vector<Message>& messages) {
  std::vector<T> out;
  for (const auto& m : messages) {
    if (const auto* body = std::get_if<T>(&m.body)) out.push_back(*body);
  }
  return out;
}

class SyncMemoryRoomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(tmp_.path() / "ws");
    auto built = testing::make_live_workspace(tmp_.path() / "ws", tmp_.path() / "state");
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
    ASSERT_NE(built_.sync, nullptr);
    ASSERT_NE(kernel(), nullptr);
    kernel::MemoryCreate m;
    m.label = "notes";
    m.initial_text = "remember the milk\n";
    ASSERT_TRUE(kernel()->blocks().memory_create({"agent:claude", "memory_create", {}}, m).ok());
  }
  kernel::Kernel* kernel() { return built_.workspace->kernel(); }
  std::string text() {
    auto c = kernel()->blocks().read(kRoom, kernel::ReadOptions{false, std::nullopt});
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->content : "";
  }
  void send(ConnectionId id, Message m) {
    auto frame = encode(m);
    ASSERT_TRUE(frame.ok()) << frame.status();
    built_.sync->on_binary(id, *frame);
  }

  weft::testing::TempDir tmp_;
  WorkspaceServer built_;
};

TEST_F(SyncMemoryRoomTest, AJoinedMemoryRoomIsReadAndRefusesUpdates) {
  auto log = std::make_shared<FrameLog>();
  auto id = built_.sync->connect(
      ConnectionInfo{"amy", token_permission(kMemoryRoomToken, Permission::kWrite), log});
  ASSERT_TRUE(id.ok()) << id.status();

  send(*id, Message{CrdtType::kLoro, kRoom, JoinRequest{kMemoryRoomToken, ""}});
  const std::vector<Message> answers = log->take();
  auto joined = bodies<JoinResponseOk>(answers);
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0].permission, Permission::kRead);  // the kernel's answer, not the token's
  auto backfill = bodies<DocUpdate>(answers);
  ASSERT_EQ(backfill.size(), 1u);
  crdt::Doc editor(7);
  for (const auto& u : backfill[0].updates) ASSERT_TRUE(editor.import(u).ok());
  EXPECT_EQ(editor.get_text("content").to_string(), "remember the milk\n");

  const crdt::VersionVector before = editor.oplog_version();
  ASSERT_TRUE(editor.get_text("content").insert(0, "forget ", PosUnit::kBytes).ok());
  ASSERT_TRUE(editor.commit().ok());
  const auto version = kernel()->blocks().read(kRoom);
  ASSERT_TRUE(version.ok());
  DocUpdate u;
  u.updates.push_back(editor.export_loro_updates(before));
  u.batch_id[7] = 9;
  send(*id, Message{CrdtType::kLoro, kRoom, u});
  auto acks = bodies<Ack>(log->wait_take());
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].status, UpdateStatus::kPermissionDenied);
  EXPECT_EQ(acks[0].ref_id, u.batch_id);
  EXPECT_EQ(text(), "remember the milk\n");
  EXPECT_EQ(kernel()->blocks().read(kRoom)->version, version->version);
  built_.sync->disconnect(*id);
}

TEST_F(SyncMemoryRoomTest, TheKernelBackendRefusesAMemoryUpdate) {
  KernelSyncBackend backend([this] { return kernel(); });
  const RoomKey room{CrdtType::kLoro, kRoom};
  auto grant = backend.join(room, "amy", "");
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ(grant->permission, Permission::kRead);
  crdt::Doc editor(8);
  for (const auto& u : grant->updates) ASSERT_TRUE(editor.import(u).ok());
  const crdt::VersionVector before = editor.oplog_version();
  ASSERT_TRUE(editor.get_text("content").insert(0, "x", PosUnit::kBytes).ok());
  ASSERT_TRUE(editor.commit().ok());
  auto applied = backend.apply(room, editor.export_loro_updates(before), "amy");
  EXPECT_EQ(applied.status().code(), StatusCode::kPermissionDenied) << applied.status();
  EXPECT_THAT(std::string(applied.status().message()), HasSubstr("read-only"));
  EXPECT_EQ(text(), "remember the milk\n");
}

}  // namespace
}  // namespace weft::server
