// Live sync's updates that arrive before the changes they depend on (on
// another connection): held by the kernel backend with what they need, applied
// once the block has it and published to every member; expired and freed when
// it never comes; refused past the bounds; hostile bytes refused, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crdt/loro_binary.h"
#include "support/test_support.h"
#include "weft/crdt/doc.h"
#include "weft/server/sync_kernel_backend.h"
#include "weft/server/sync_protocol.h"
#include "weft/server/sync_rooms.h"
#include "weft/server/workspace_server.h"

namespace weft::server::held_updates_test {
namespace {

using ::testing::HasSubstr;
using sync::Ack;
using sync::ConnectionId;
using sync::ConnectionInfo;
using sync::CrdtType;
using sync::DocUpdate;
using sync::JoinRequest;
using sync::Message;
using sync::Permission;
using sync::RoomKey;
using sync::SyncConnection;
using sync::SyncOptions;
using sync::SyncRooms;
using sync::UpdateStatus;

constexpr char kRoom[] = "file:notes.txt";
constexpr char kToken[] = "secret";

// One editor's connection: keeps the updates and Ack statuses it is sent.
class Editor : public SyncConnection {
 public:
  void send_binary(std::string frame) override {
    auto m = sync::decode(frame);
    ASSERT_TRUE(m.ok()) << m.status();
    std::lock_guard lock(mu_);
    if (const auto* u = std::get_if<DocUpdate>(&m->body)) {
      received_.insert(received_.end(), u->updates.begin(), u->updates.end());
    } else if (const auto* a = std::get_if<Ack>(&m->body)) {
      acks_.push_back(a->status);
    }
  }
  void send_text(std::string) override {}
  void close(uint16_t, std::string_view) override {}
  // An update this editor sent (it has its own changes).
  void sent(std::string update) {
    std::lock_guard lock(mu_);
    received_.push_back(std::move(update));
  }

  // A doc holding everything this editor sent and received.
  std::string received_text() {
    std::lock_guard lock(mu_);
    crdt::Doc doc;
    for (const auto& u : received_) EXPECT_TRUE(doc.import(u).ok());
    return doc.get_text("content").to_string();
  }
  std::vector<UpdateStatus> acks() {
    std::lock_guard lock(mu_);
    return acks_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> received_;
  std::vector<UpdateStatus> acks_;
};

class SyncHeldUpdatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto root = tmp_.path() / "ws";
    std::filesystem::create_directories(root);
    std::ofstream(root / "notes.txt") << "hello\n";
    setenv("XDG_STATE_HOME", (tmp_.path() / "state").c_str(), 1);
    WorkspaceServerOptions options;
    options.root = root.string();
    auto built = make_workspace_server(options);
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
    ASSERT_NE(kernel(), nullptr);
    // The block's history as editors start from it.
    auto joined = kernel()->sync_join(kRoom, "setup", "");
    ASSERT_TRUE(joined.ok()) << joined.status();
    ASSERT_TRUE(doc_.import(joined->updates).ok());
  }
  void TearDown() override {
    rooms_.reset();
    backend_.reset();
  }

  kernel::Kernel* kernel() { return built_.workspace->kernel(); }
  void start(HeldUpdateLimits limits = {}) {
    backend_ = std::make_shared<KernelSyncBackend>([this] { return kernel(); }, limits);
    SyncOptions options;
    options.relay_window = std::chrono::milliseconds(0);  // each relay at once
    options.apply_threads = 0;                            // applied as fed
    rooms_ = std::make_shared<SyncRooms>(options, backend_);
    backend_->set_rooms(rooms_);
  }
  std::string text() {
    auto delta = kernel()->sync_export_since(kRoom, "");
    EXPECT_TRUE(delta.ok()) << delta.status();
    crdt::Doc doc;
    if (delta.ok()) {
      EXPECT_TRUE(doc.import(delta->updates).ok());
    }
    return doc.get_text("content").to_string();
  }
  // The next change to the shared history, by `peer`: its Loro update.
  std::string edit(crdt::PeerId peer, std::string_view inserted) {
    EXPECT_TRUE(doc_.set_peer_id(peer).ok());
    const crdt::VersionVector before = doc_.oplog_version();
    EXPECT_TRUE(doc_.get_text("content").insert(0, inserted).ok());
    EXPECT_TRUE(doc_.commit().ok());
    return doc_.export_loro_updates(before);
  }
  // A connection joined to the room.
  std::pair<ConnectionId, std::shared_ptr<Editor>> join(const std::string& who) {
    auto e = std::make_shared<Editor>();
    auto id = rooms_->connect(ConnectionInfo{who, sync::token_permission(kToken, Permission::kWrite), e});
    EXPECT_TRUE(id.ok()) << id.status();
    send(*id, Message{CrdtType::kLoro, kRoom, JoinRequest{kToken, ""}});
    return {*id, e};
  }
  void send(ConnectionId id, const Message& m) {
    auto frame = sync::encode(m);
    ASSERT_TRUE(frame.ok()) << frame.status();
    rooms_->on_binary(id, *frame);
  }
  void send_update(ConnectionId id, std::string update, uint8_t batch) {
    DocUpdate u;
    u.updates.push_back(std::move(update));
    u.batch_id[0] = batch;
    send(id, Message{CrdtType::kLoro, kRoom, u});
  }
  // Waits (at most 5 s) until nothing is held.
  bool none_held() {
    for (int i = 0; i < 500; ++i) {
      if (backend_->held().updates == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  weft::testing::TempDir tmp_;
  WorkspaceServer built_;
  crdt::Doc doc_{1};  // the editors' shared history (each edit by its own peer)
  std::shared_ptr<KernelSyncBackend> backend_;
  std::shared_ptr<SyncRooms> rooms_;
};

TEST_F(SyncHeldUpdatesTest, ReverseDependencyOrderOnFourConnectionsAllAppliesAndReachesEveryone) {
  start();
  std::vector<std::pair<ConnectionId, std::shared_ptr<Editor>>> editors;
  for (const char* who : {"amy", "bob", "cat", "dan"}) editors.push_back(join(who));
  // A chain of 600 updates, each on the one before it, by four editors in
  // turn: more than a bound of a few hundred would hold.
  constexpr int kUpdates = 600;
  std::vector<std::string> chain;
  for (int i = 0; i < kUpdates; ++i) chain.push_back(edit(11 + i % 4, std::to_string(i % 10)));
  for (int i = kUpdates - 1; i >= 0; --i) {
    editors[i % 4].second->sent(chain[i]);
    send_update(editors[i % 4].first, chain[i], static_cast<uint8_t>(i));
  }
  backend_->drain();
  const std::string want = doc_.get_text("content").to_string();
  EXPECT_EQ(text(), want);
  EXPECT_EQ(backend_->held().updates, 0u);
  EXPECT_EQ(backend_->held().bytes, 0u);
  for (auto& [id, e] : editors) {
    const auto acks = e->acks();
    EXPECT_EQ(acks.size(), kUpdates / 4u);
    for (UpdateStatus s : acks) EXPECT_EQ(s, UpdateStatus::kOk);
    EXPECT_EQ(e->received_text(), want);
  }
}

// One person on several connections (tabs, or the bench's clients): the
// update that lets the held ones apply goes in with them, and everything
// reaches the other members through the publisher.
TEST_F(SyncHeldUpdatesTest, OneEditorsChainOnManyConnectionsReachesEveryone) {
  start();
  std::vector<std::pair<ConnectionId, std::shared_ptr<Editor>>> tabs;
  for (int i = 0; i < 3; ++i) tabs.push_back(join("amy"));
  auto [reader_id, reader] = join("bob");
  std::vector<std::string> chain;
  for (int i = 0; i < 30; ++i) chain.push_back(edit(21 + i % 3, std::string(1, static_cast<char>('a' + i % 26))));
  // Each link after the one it depends on, but the first link last.
  for (int i = 1; i < 30; ++i) send_update(tabs[i % 3].first, chain[i], static_cast<uint8_t>(i));
  EXPECT_EQ(backend_->held().updates, 29u);
  send_update(tabs[0].first, chain[0], 0);
  backend_->drain();
  EXPECT_EQ(backend_->held().updates, 0u);
  const std::string want = doc_.get_text("content").to_string();
  EXPECT_EQ(text(), want);
  EXPECT_EQ(reader->received_text(), want);
  for (auto& [id, tab] : tabs) {
    for (UpdateStatus s : tab->acks()) EXPECT_EQ(s, UpdateStatus::kOk);
  }
}

TEST_F(SyncHeldUpdatesTest, AHeldUpdateWhoseDependencyNeverComesExpiresAndIsFreed) {
  HeldUpdateLimits limits;
  limits.held_for = std::chrono::milliseconds(200);
  start(limits);
  const std::string first = edit(11, "never sent ");
  const std::string second = edit(12, "waits ");
  auto [id, e] = join("bob");
  send_update(id, second, 1);
  EXPECT_EQ(e->acks(), std::vector<UpdateStatus>{UpdateStatus::kOk});
  const HeldUpdates now = backend_->held();
  EXPECT_EQ(now.updates, 1u);
  EXPECT_EQ(now.bytes, second.size());
  // Freed by the backend itself, with no other traffic.
  EXPECT_TRUE(none_held());
  EXPECT_EQ(backend_->held().bytes, 0u);
  // Its dependency, now: the expired update is not applied.
  auto applied = backend_->apply(RoomKey{CrdtType::kLoro, kRoom}, first, "amy");
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(text(), "never sent hello\n");
}

TEST_F(SyncHeldUpdatesTest, AHeldUpdateTheBlockAlreadyHasIsDropped) {
  start();
  const crdt::VersionVector base = doc_.oplog_version();
  edit(11, "one ");
  const std::string second = edit(12, "two ");
  const RoomKey room{CrdtType::kLoro, kRoom};
  ASSERT_TRUE(backend_->apply(room, second, "bob").ok());
  EXPECT_EQ(backend_->held().updates, 1u);
  // Both changes in one update from someone else: the held one is in it.
  auto both = backend_->apply(room, doc_.export_loro_updates(base), "amy");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(*both);
  EXPECT_EQ(backend_->held().updates, 0u);
  EXPECT_EQ(text(), "two one hello\n");
}

TEST_F(SyncHeldUpdatesTest, TheBoundsRefuseWithTheError) {
  HeldUpdateLimits limits;
  limits.per_room = 3;
  start(limits);
  const RoomKey room{CrdtType::kLoro, kRoom};
  const std::string missing = edit(11, "missing ");
  std::vector<std::string> chain;
  for (int i = 0; i < 4; ++i) chain.push_back(edit(12, "x"));
  for (int i = 0; i < 3; ++i) {
    auto r = backend_->apply(room, chain[i], "bob");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(*r);
  }
  auto refused = backend_->apply(room, chain[3], "bob");
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("too many updates already wait for theirs; rejoin to catch up"));
  EXPECT_EQ(backend_->held().updates, 3u);
  // Through the room: the Ack says invalid_update.
  auto [id, e] = join("bob");
  send_update(id, chain[3], 7);
  EXPECT_EQ(e->acks(), std::vector<UpdateStatus>{UpdateStatus::kInvalidUpdate});
  // The missing change arrives: the held ones apply.
  ASSERT_TRUE(backend_->apply(room, missing, "amy").ok());
  EXPECT_EQ(backend_->held().updates, 0u);
  EXPECT_EQ(text(), "xxxmissing hello\n");
}

TEST_F(SyncHeldUpdatesTest, TheByteBoundsRefuse) {
  edit(11, "missing ");
  const std::string a = edit(12, "a");
  const std::string b = edit(13, "b");
  const RoomKey room{CrdtType::kLoro, kRoom};
  for (bool total : {false, true}) {
    HeldUpdateLimits limits;
    (total ? limits.bytes_total : limits.bytes_per_room) = a.size() + b.size() - 1;
    start(limits);
    ASSERT_TRUE(backend_->apply(room, a, "bob").ok());
    auto refused = backend_->apply(room, b, "cat");
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << total;
    EXPECT_EQ(backend_->held().bytes, a.size());
  }
}

TEST_F(SyncHeldUpdatesTest, HostileUpdatesAreRefusedWithoutACrash) {
  HeldUpdateLimits limits;
  limits.per_room = 64;
  start(limits);
  const RoomKey room{CrdtType::kLoro, kRoom};
  edit(11, "missing ");
  const std::string waits = edit(12, "waiting ");
  const std::string body = waits.substr(crdt::detail::loro::kHeaderSize);
  std::vector<std::string> hostile = {"", "loro", std::string(64, '\xff'),
                                      R"({"schema_version":1})", waits.substr(0, waits.size() - 1)};
  // Every byte of the body flipped, behind a fresh checksum.
  for (size_t k = 0; k < body.size(); ++k) {
    std::string b = body;
    b[k] = static_cast<char>(b[k] ^ 0x5A);
    hostile.push_back(crdt::detail::loro::wrap(crdt::detail::loro::kModeFastUpdates, b));
  }
  for (const std::string& h : hostile) {
    auto r = backend_->apply(room, h, "mallory");
    if (!r.ok()) {
      EXPECT_TRUE(r.status().code() == StatusCode::kInvalidArgument ||
                  r.status().code() == StatusCode::kDataLoss)
          << r.status();
    }
  }
  EXPECT_LE(backend_->held().updates, 64u);
  EXPECT_THAT(text(), HasSubstr("hello\n"));
  // Through the room: an Ack of invalid_update, and the room still works.
  auto [id, e] = join("mallory");
  send_update(id, std::string(64, '\xff'), 1);
  send_update(id, edit(13, "fine "), 2);
  EXPECT_EQ(e->acks(), (std::vector<UpdateStatus>{UpdateStatus::kInvalidUpdate,
                                                  UpdateStatus::kOk}));
}

// Updates that reached a busy room together (SyncRooms' intake): one
// person's run goes in as one import, each answered as apply would answer it.
TEST_F(SyncHeldUpdatesTest, ABatchAnswersEachUpdateAsApplyWould) {
  start();
  std::vector<std::string> chain;
  for (int i = 0; i < 20; ++i) chain.push_back(edit(31 + i % 2, std::to_string(i % 10)));
  std::vector<sync::SyncBackend::Incoming> batch;
  for (const auto& u : chain) batch.push_back({u, "amy"});
  batch.push_back({chain[3], "amy"});  // a repeat changes nothing
  auto answers = backend_->apply_batch(RoomKey{CrdtType::kLoro, kRoom}, batch);
  ASSERT_EQ(answers.size(), batch.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status();
    EXPECT_TRUE(*answers[i]) << i;
  }
  ASSERT_TRUE(answers.back().ok());
  EXPECT_FALSE(*answers.back());
  EXPECT_EQ(text(), doc_.get_text("content").to_string());
}

TEST_F(SyncHeldUpdatesTest, ABadUpdateInABatchIsRefusedAloneAndTheOthersApply) {
  start();
  const std::string first = edit(41, "a"), second = edit(42, "b"), third = edit(41, "c");
  std::vector<sync::SyncBackend::Incoming> batch = {
      {first, "amy"}, {"not a loro update", "amy"}, {second, "amy"}, {third, "bob"}};
  auto answers = backend_->apply_batch(RoomKey{CrdtType::kLoro, kRoom}, batch);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_TRUE(answers[0].ok() && *answers[0]);
  EXPECT_FALSE(answers[1].ok());
  EXPECT_TRUE(answers[2].ok() && *answers[2]);
  EXPECT_TRUE(answers[3].ok() && *answers[3]);
  EXPECT_EQ(text(), doc_.get_text("content").to_string());
}

}  // namespace
}  // namespace weft::server::held_updates_test
