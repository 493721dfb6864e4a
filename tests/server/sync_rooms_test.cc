// The sync core with a fake backend and recording sinks: joins, fan-out,
// permissions, fragments, ephemeral rooms, caps and slow consumers.
#include "weft/server/sync_rooms.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "weft/server/sync_auth.h"

namespace weft::server::sync {
namespace {

using namespace std::chrono_literals;

// A document store whose "document" is the list of updates applied, and whose
// version is how many there are. Update "bad" is invalid; repeats change nothing.
class FakeBackend : public SyncBackend {
 public:
  Result<JoinGrant> join(const RoomKey& room, std::string_view identity,
                         std::string_view version) override {
    std::lock_guard lk(mu_);
    if (room.room_id == "missing") return not_found("no block named 'missing'");
    if (version == "garbage") return invalid_argument("unreadable version");
    joins_.push_back(std::string(identity));
    const auto& log = docs_[room.room_id];
    size_t from = version.empty() ? 0 : std::stoul(std::string(version));
    JoinGrant g;
    g.permission = room.room_id.starts_with("ro:") ? Permission::kRead : Permission::kWrite;
    for (size_t i = std::min(from, log.size()); i < log.size(); ++i) g.updates.push_back(log[i]);
    g.version = std::to_string(log.size());
    return g;
  }
  Result<bool> apply(const RoomKey& room, std::string_view update, std::string_view) override {
    std::lock_guard lk(mu_);
    if (update == "bad") return invalid_argument("not a Loro update");
    auto& log = docs_[room.room_id];
    for (const auto& u : log) {
      if (u == update) return false;
    }
    log.emplace_back(update);
    return true;
  }
  std::vector<std::string> doc(const std::string& room) {
    std::lock_guard lk(mu_);
    return docs_[room];
  }
  void seed(const std::string& room, std::vector<std::string> updates) {
    std::lock_guard lk(mu_);
    docs_[room] = std::move(updates);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::string>> docs_;
  std::vector<std::string> joins_;
};

// A FakeBackend whose apply of "slow" waits until released, and which
// records the size of each batch it is given.
class GatedBackend : public FakeBackend {
 public:
  Result<bool> apply(const RoomKey& room, std::string_view update,
                     std::string_view identity) override {
    if (update == "slow") {
      std::unique_lock lk(gate_mu_);
      entered_ = true;
      gate_cv_.notify_all();
      gate_cv_.wait(lk, [&] { return released_; });
    }
    return FakeBackend::apply(room, update, identity);
  }
  std::vector<Result<bool>> apply_batch(const RoomKey& room,
                                        const std::vector<Incoming>& updates) override {
    {
      std::lock_guard lk(gate_mu_);
      batch_sizes_.push_back(updates.size());
    }
    return SyncBackend::apply_batch(room, updates);
  }
  void wait_entered() {
    std::unique_lock lk(gate_mu_);
    gate_cv_.wait(lk, [&] { return entered_; });
  }
  void release() {
    std::lock_guard lk(gate_mu_);
    released_ = true;
    gate_cv_.notify_all();
  }
  std::vector<size_t> batch_sizes() {
    std::lock_guard lk(gate_mu_);
    return batch_sizes_;
  }

 private:
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool entered_ = false, released_ = false;
  std::vector<size_t> batch_sizes_;
};

// Records what the core sends; decodes binary frames.
class Sink : public SyncConnection {
 public:
  void send_binary(std::string frame) override {
    std::lock_guard lk(mu_);
    bytes_ += frame.size();
    auto m = decode(frame);
    ASSERT_TRUE(m.ok()) << m.status();
    messages_.push_back(std::move(m).value());
  }
  void send_text(std::string text) override {
    std::lock_guard lk(mu_);
    texts_.push_back(std::move(text));
  }
  void close(uint16_t code, std::string_view reason) override {
    std::lock_guard lk(mu_);
    close_code_ = code;
    close_reason_ = std::string(reason);
  }
  std::vector<Message> take() {
    std::lock_guard lk(mu_);
    return std::exchange(messages_, {});
  }
  std::vector<std::string> texts() {
    std::lock_guard lk(mu_);
    return texts_;
  }
  uint16_t close_code() {
    std::lock_guard lk(mu_);
    return close_code_;
  }
  size_t bytes() {
    std::lock_guard lk(mu_);
    return bytes_;
  }

 private:
  std::mutex mu_;
  std::vector<Message> messages_;
  std::vector<std::string> texts_;
  uint16_t close_code_ = 0;
  std::string close_reason_;
  size_t bytes_ = 0;
};

BatchId id_of(uint8_t n) { return BatchId{n, 1, 2, 3, 4, 5, 6, 7}; }

class SyncRoomsTest : public ::testing::Test {
 protected:
  // `windowed`: most tests expect each relay at once; the tests of the relay
  // window pass true and set it themselves.
  // Updates apply on the thread that feeds them unless a test sets
  // `threaded` (and waits for what it expects).
  void make(SyncOptions o = {}, bool windowed = false, bool threaded = false) {
    if (!windowed) o.relay_window = std::chrono::milliseconds(0);
    if (!threaded) o.apply_threads = 0;
    o.clock = [this] { return std::chrono::steady_clock::time_point(now_.load()); };
    rooms_ = std::make_unique<SyncRooms>(std::move(o), backend_);
  }

  struct Client {
    ConnectionId id;
    std::shared_ptr<Sink> sink;
  };

  // The updates of the DocUpdates among `ms`, in order.
  static std::vector<std::string> updates_of(const std::vector<Message>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms) {
      if (m.type() != MessageType::kDocUpdate) continue;
      for (const auto& u : std::get<DocUpdate>(m.body).updates) out.push_back(u);
    }
    return out;
  }

  // What `m` receives next, waiting up to 2 s (relays due at a window's end
  // go out on the flusher's thread).
  static std::vector<Message> wait_for(Client& m) {
    for (int i = 0; i < 400; ++i) {
      auto got = m.sink->take();
      if (!got.empty()) return got;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return {};
  }

  Client open(Permission p = Permission::kWrite, std::string token = "secret") {
    auto sink = std::make_shared<Sink>();
    auto id = rooms_->connect(ConnectionInfo{"user", token_permission(std::move(token), p), sink});
    EXPECT_TRUE(id.ok()) << id.status();
    return Client{id.ok() ? *id : 0, sink};
  }

  void send(const Client& c, const Message& m) {
    auto f = encode(m);
    ASSERT_TRUE(f.ok()) << f.status();
    rooms_->on_binary(c.id, *f);
  }

  // Joins and returns the join's answers.
  std::vector<Message> join(const Client& c, CrdtType crdt, const std::string& room,
                            std::string version = "", std::string auth = "secret") {
    send(c, Message{crdt, room, JoinRequest{std::move(auth), std::move(version)}});
    return c.sink->take();
  }

  void update(const Client& c, CrdtType crdt, const std::string& room, std::vector<std::string> u,
              uint8_t batch) {
    send(c, Message{crdt, room, DocUpdate{std::move(u), id_of(batch)}});
  }

  static std::optional<Ack> only_ack(const std::vector<Message>& ms) {
    if (ms.size() != 1 || ms[0].type() != MessageType::kAck) return std::nullopt;
    return std::get<Ack>(ms[0].body);
  }

  void advance(std::chrono::milliseconds d) { now_.store(now_.load() + d); }

  std::atomic<std::chrono::steady_clock::duration> now_{std::chrono::hours(1)};
  std::shared_ptr<FakeBackend> backend_ = std::make_shared<FakeBackend>();
  std::unique_ptr<SyncRooms> rooms_;
};

TEST_F(SyncRoomsTest, JoinAcksAndFansOutUpdates) {
  make();
  auto a = open(), b = open();
  auto ja = join(a, CrdtType::kLoro, "file:notes/a.md");
  ASSERT_EQ(ja.size(), 1u);
  const auto& ok = std::get<JoinResponseOk>(ja[0].body);
  EXPECT_EQ(ok.permission, Permission::kWrite);
  EXPECT_EQ(ok.version, "0");
  join(b, CrdtType::kLoro, "file:notes/a.md");

  update(a, CrdtType::kLoro, "file:notes/a.md", {"u1"}, 1);
  auto ack = only_ack(a.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, UpdateStatus::kOk);
  EXPECT_EQ(ack->ref_id, id_of(1));
  auto got = b.sink->take();
  ASSERT_EQ(got.size(), 1u);
  const auto& du = std::get<DocUpdate>(got[0].body);
  EXPECT_EQ(du.updates, std::vector<std::string>{"u1"});
  EXPECT_EQ(du.batch_id, id_of(1));
  EXPECT_EQ(backend_->doc("file:notes/a.md"), std::vector<std::string>{"u1"});

  // A repeat changes nothing: acked, not fanned out.
  update(b, CrdtType::kLoro, "file:notes/a.md", {"u1"}, 2);
  EXPECT_EQ(only_ack(b.sink->take())->status, UpdateStatus::kOk);
  EXPECT_TRUE(a.sink->take().empty());
}

TEST_F(SyncRoomsTest, JoinSendsWhatTheClientLacks) {
  make();
  backend_->seed("r", {"a", "b", "c"});
  auto c = open();
  auto got = join(c, CrdtType::kLoro, "r", "1");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(std::get<JoinResponseOk>(got[0].body).version, "3");
  EXPECT_EQ(std::get<DocUpdate>(got[1].body).updates, (std::vector<std::string>{"b", "c"}));
}

TEST_F(SyncRoomsTest, LargeBackfillIsFragmented) {
  make();
  std::string big(700000, 'x');
  backend_->seed("r", {"small", big});
  auto c = open();
  auto got = join(c, CrdtType::kLoro, "r");
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(std::get<DocUpdate>(got[1].body).updates, std::vector<std::string>{"small"});
  const auto& h = std::get<FragmentHeader>(got[2].body);
  EXPECT_EQ(h.total_size, big.size());
  ASSERT_EQ(got.size(), 3u + h.fragment_count);
  std::string joined;
  for (size_t i = 3; i < got.size(); ++i) joined += std::get<Fragment>(got[i].body).data;
  EXPECT_EQ(joined, big);
}

TEST_F(SyncRoomsTest, ReadersCannotWrite) {
  make();
  auto reader = open(Permission::kRead), writer = open();
  auto j = join(reader, CrdtType::kLoro, "r");
  EXPECT_EQ(std::get<JoinResponseOk>(j[0].body).permission, Permission::kRead);
  join(writer, CrdtType::kLoro, "r");
  update(reader, CrdtType::kLoro, "r", {"x"}, 1);
  auto ack = only_ack(reader.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, UpdateStatus::kPermissionDenied);
  EXPECT_TRUE(writer.sink->take().empty());
  EXPECT_TRUE(backend_->doc("r").empty());

  // Fragments from a reader are refused at the header, once.
  auto frames = encode_update_frames(CrdtType::kLoro, "r", std::string(300000, 'y'), id_of(2));
  for (const auto& f : *frames) rooms_->on_binary(reader.id, f);
  ack = only_ack(reader.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, UpdateStatus::kPermissionDenied);
  EXPECT_TRUE(backend_->doc("r").empty());

  // The backend can make a room read-only whatever the token allows.
  auto j2 = join(writer, CrdtType::kLoro, "ro:r");
  EXPECT_EQ(std::get<JoinResponseOk>(j2[0].body).permission, Permission::kRead);

  // A connection that never joined cannot write either.
  auto stranger = open();
  update(stranger, CrdtType::kLoro, "r", {"x"}, 3);
  EXPECT_EQ(only_ack(stranger.sink->take())->status, UpdateStatus::kPermissionDenied);
}

TEST_F(SyncRoomsTest, BadTokenFailsTheJoin) {
  make();
  auto c = open();
  auto got = join(c, CrdtType::kLoro, "r", "", "wrong");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::get<JoinError>(got[0].body).code, JoinErrorCode::kAuthFailed);
  EXPECT_EQ(rooms_->stats().rooms, 0u);
}

TEST_F(SyncRoomsTest, BackendJoinErrorsMapToJoinErrors) {
  make();
  auto c = open();
  auto v = join(c, CrdtType::kLoro, "r", "garbage");
  EXPECT_EQ(std::get<JoinError>(v[0].body).code, JoinErrorCode::kVersionUnknown);
  auto m = join(c, CrdtType::kLoro, "missing");
  EXPECT_EQ(std::get<JoinError>(m[0].body).code, JoinErrorCode::kUnknown);
  EXPECT_NE(std::get<JoinError>(m[0].body).message.find("missing"), std::string::npos);
  auto y = join(c, CrdtType::kYjs, "r");
  EXPECT_EQ(std::get<JoinError>(y[0].body).code, JoinErrorCode::kUnknown);
  EXPECT_EQ(rooms_->stats().rooms, 0u);
}

TEST_F(SyncRoomsTest, InvalidUpdatesLeaveTheRoomUnchanged) {
  make();
  auto a = open(), b = open();
  join(a, CrdtType::kLoro, "r");
  join(b, CrdtType::kLoro, "r");
  update(a, CrdtType::kLoro, "r", {"bad"}, 1);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kInvalidUpdate);
  EXPECT_TRUE(b.sink->take().empty());
  EXPECT_TRUE(backend_->doc("r").empty());

  // A DocUpdate whose body does not decode: Ack(invalid_update) to its batch.
  std::string broken = *encode(Message{CrdtType::kLoro, "r", DocUpdate{{"abc"}, id_of(9)}});
  broken[4 + 2 + 1] = 0x7f;  // update count far past the frame
  rooms_->on_binary(a.id, broken);
  auto ack = only_ack(a.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, UpdateStatus::kInvalidUpdate);
  EXPECT_EQ(ack->ref_id, id_of(9));
  EXPECT_TRUE(backend_->doc("r").empty());
}

TEST_F(SyncRoomsTest, FragmentsAreReassembledAndFannedOut) {
  make();
  auto a = open(), b = open();
  join(a, CrdtType::kLoro, "r");
  join(b, CrdtType::kLoro, "r");
  std::string big(600000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i % 251);
  auto frames = encode_update_frames(CrdtType::kLoro, "r", big, id_of(4));
  ASSERT_TRUE(frames.ok());
  // Fragments may arrive in any order.
  rooms_->on_binary(a.id, (*frames)[0]);
  for (size_t i = frames->size() - 1; i >= 1; --i) rooms_->on_binary(a.id, (*frames)[i]);
  auto ack = only_ack(a.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, UpdateStatus::kOk);
  EXPECT_EQ(backend_->doc("r"), std::vector<std::string>{big});
  auto got = b.sink->take();
  ASSERT_EQ(got.size(), frames->size());
  std::string joined;
  for (size_t i = 1; i < got.size(); ++i) joined += std::get<Fragment>(got[i].body).data;
  EXPECT_EQ(joined, big);
  EXPECT_EQ(rooms_->stats().fragment_bytes, 0u);
}

TEST_F(SyncRoomsTest, UnfinishedFragmentsTimeOutAndAreFreed) {
  make();
  auto a = open();
  join(a, CrdtType::kLoro, "r");
  auto frames = encode_update_frames(CrdtType::kLoro, "r", std::string(600000, 'z'), id_of(5));
  rooms_->on_binary(a.id, (*frames)[0]);
  rooms_->on_binary(a.id, (*frames)[1]);
  EXPECT_GT(rooms_->stats().fragment_bytes, 200000u);
  advance(5s);
  rooms_->tick();
  EXPECT_TRUE(a.sink->take().empty());
  advance(6s);
  rooms_->tick();
  auto ack = only_ack(a.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, UpdateStatus::kFragmentTimeout);
  EXPECT_EQ(ack->ref_id, id_of(5));
  EXPECT_EQ(rooms_->stats().fragment_bytes, 0u);
  // A late fragment of the expired batch asks for a resend.
  rooms_->on_binary(a.id, (*frames)[2]);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kFragmentTimeout);
  EXPECT_TRUE(backend_->doc("r").empty());
}

TEST_F(SyncRoomsTest, FragmentCapsAnswerPayloadTooLarge) {
  SyncOptions o;
  o.max_update_bytes = 500000;
  o.max_fragment_bytes_per_connection = 450000;
  make(o);
  auto a = open();
  join(a, CrdtType::kLoro, "r");
  auto too_big = encode_update_frames(CrdtType::kLoro, "r", std::string(600000, 'q'), id_of(6));
  for (const auto& f : *too_big) rooms_->on_binary(a.id, f);
  auto got = a.sink->take();
  ASSERT_EQ(got.size(), 1u);  // refused once, at the header
  EXPECT_EQ(std::get<Ack>(got[0].body).status, UpdateStatus::kPayloadTooLarge);

  // Two batches in flight that together pass the connection's cap.
  auto b1 = encode_update_frames(CrdtType::kLoro, "r", std::string(400000, '1'), id_of(7));
  auto b2 = encode_update_frames(CrdtType::kLoro, "r", std::string(400000, '2'), id_of(8));
  rooms_->on_binary(a.id, (*b1)[0]);
  rooms_->on_binary(a.id, (*b2)[0]);
  rooms_->on_binary(a.id, (*b1)[1]);
  rooms_->on_binary(a.id, (*b2)[1]);
  auto ack = only_ack(a.sink->take());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->ref_id, id_of(8));
  EXPECT_EQ(ack->status, UpdateStatus::kPayloadTooLarge);
  rooms_->on_binary(a.id, (*b1)[2]);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kOk);
  EXPECT_EQ(backend_->doc("r").size(), 1u);
  EXPECT_EQ(rooms_->stats().fragment_bytes, 0u);
}

TEST_F(SyncRoomsTest, EphemeralRoomsRelayAndKeepNothing) {
  make();
  auto a = open(), b = open();
  join(a, CrdtType::kEphemeral, "conv:1");
  join(b, CrdtType::kEphemeral, "conv:1");
  update(a, CrdtType::kEphemeral, "conv:1", {"cursor@3"}, 1);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kOk);
  auto got = b.sink->take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::get<DocUpdate>(got[0].body).updates, std::vector<std::string>{"cursor@3"});
  EXPECT_TRUE(backend_->doc("conv:1").empty());
  auto c = open();
  EXPECT_EQ(join(c, CrdtType::kEphemeral, "conv:1").size(), 1u);  // JoinResponseOk only
  // The same room id as %LOR is a different room.
  auto d = open();
  join(d, CrdtType::kLoro, "conv:1");
  update(a, CrdtType::kEphemeral, "conv:1", {"cursor@4"}, 2);
  EXPECT_TRUE(d.sink->take().empty());
}

TEST_F(SyncRoomsTest, PersistedEphemeralRoomsSendTheLatestStateOnJoin) {
  SyncOptions o;
  o.eps_state_max_bytes = 10;
  make(o);
  auto a = open();
  join(a, CrdtType::kEphemeralPersisted, "memory:7");
  update(a, CrdtType::kEphemeralPersisted, "memory:7", {"s1"}, 1);
  update(a, CrdtType::kEphemeralPersisted, "memory:7", {"s2"}, 2);
  a.sink->take();
  send(a, Message{CrdtType::kEphemeralPersisted, "memory:7", Leave{}});
  EXPECT_EQ(rooms_->stats().rooms, 1u);  // kept with its state

  auto c = open();
  auto got = join(c, CrdtType::kEphemeralPersisted, "memory:7");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(std::get<DocUpdate>(got[1].body).updates, (std::vector<std::string>{"s1", "s2"}));

  // Bounded: the oldest updates go first.
  update(c, CrdtType::kEphemeralPersisted, "memory:7", {"s3-long!"}, 3);
  auto d = open();
  got = join(d, CrdtType::kEphemeralPersisted, "memory:7");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(std::get<DocUpdate>(got[1].body).updates, (std::vector<std::string>{"s2", "s3-long!"}));
}

TEST_F(SyncRoomsTest, SlowConsumerIsDisconnectedWithoutSlowingOthers) {
  SyncOptions o;
  o.max_outbound_bytes = 4096;
  make(o);
  auto writer = open(), fast = open(), slow = open();
  for (auto* c : {&writer, &fast, &slow}) join(*c, CrdtType::kLoro, "r");
  for (auto* c : {&writer, &fast, &slow}) rooms_->on_frame_written(c->id, 1 << 20);
  const std::string payload(500, 'p');
  for (int i = 0; i < 20; ++i) {
    update(writer, CrdtType::kLoro, "r", {payload + std::to_string(i)}, static_cast<uint8_t>(i));
    // The fast client's transport keeps writing; the slow one never does.
    rooms_->on_frame_written(fast.id, 1 << 20);
    rooms_->on_frame_written(writer.id, 1 << 20);
  }
  EXPECT_EQ(slow.sink->close_code(), kCloseSlowConsumer);
  EXPECT_LE(slow.sink->bytes(), 4096u + 1024u);
  EXPECT_EQ(fast.sink->take().size(), 20u);
  EXPECT_EQ(writer.sink->take().size(), 20u);
  EXPECT_EQ(fast.sink->close_code(), 0);
  EXPECT_EQ(rooms_->stats().slow_consumer_closes, 1u);
  rooms_->tick();  // forgets the closed connection
  EXPECT_EQ(rooms_->stats().connections, 2u);
}

// The relay window: a busy room sends each member one message per window,
// without the member's own updates; a quiet room relays at once.
TEST_F(SyncRoomsTest, RelayWindowSendsABusyRoomsUpdatesTogether) {
  SyncOptions o;
  o.relay_window = std::chrono::milliseconds(30);
  make(o, /*windowed=*/true);
  auto a = open(), b = open(), c = open();
  for (auto* m : {&a, &b, &c}) join(*m, CrdtType::kLoro, "r");
  // Quiet: at once.
  update(a, CrdtType::kLoro, "r", {"u1"}, 1);
  EXPECT_EQ(updates_of(b.sink->take()), std::vector<std::string>{"u1"});
  EXPECT_EQ(updates_of(c.sink->take()), std::vector<std::string>{"u1"});
  a.sink->take();
  // Within the window (the test clock stands still): they wait ...
  update(a, CrdtType::kLoro, "r", {"u2"}, 2);
  update(b, CrdtType::kLoro, "r", {"u3"}, 3);
  EXPECT_EQ(rooms_->publish(RoomKey{CrdtType::kLoro, "r"}, "agent"), 3u);
  EXPECT_TRUE(updates_of(c.sink->take()).empty());
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kOk);  // Acks never wait
  EXPECT_EQ(only_ack(b.sink->take())->status, UpdateStatus::kOk);
  // ... and each member gets one message, in order, without its own.
  auto got_c = wait_for(c);
  ASSERT_EQ(got_c.size(), 1u);
  EXPECT_EQ(updates_of(got_c), (std::vector<std::string>{"u2", "u3", "agent"}));
  auto got_a = wait_for(a);
  ASSERT_EQ(got_a.size(), 1u);
  EXPECT_EQ(updates_of(got_a), (std::vector<std::string>{"u3", "agent"}));
  auto got_b = wait_for(b);
  ASSERT_EQ(got_b.size(), 1u);
  EXPECT_EQ(updates_of(got_b), (std::vector<std::string>{"u2", "agent"}));
  // A relay too large for one message does not wait: the waiting ones go
  // first, then its fragments.
  update(a, CrdtType::kLoro, "r", {"u4"}, 4);
  EXPECT_EQ(rooms_->publish(RoomKey{CrdtType::kLoro, "r"}, std::string(300000, 'L')), 3u);
  auto now_c = c.sink->take();
  ASSERT_GE(now_c.size(), 2u);
  EXPECT_EQ(updates_of({now_c[0]}), std::vector<std::string>{"u4"});
  EXPECT_EQ(now_c[1].type(), MessageType::kDocUpdateFragmentHeader);
  // Once the window has passed, the room is quiet again: at once.
  advance(std::chrono::milliseconds(100));
  a.sink->take();
  b.sink->take();
  update(a, CrdtType::kLoro, "r", {"u5"}, 5);
  EXPECT_EQ(updates_of(b.sink->take()), std::vector<std::string>{"u5"});
  // A room with relays still waiting can go away with its server.
  update(a, CrdtType::kLoro, "r", {"u6"}, 6);
  rooms_.reset();
}

// A window that ends with many updates doubles the room's window (up to
// relay_window_max); a quiet one halves it again.
TEST_F(SyncRoomsTest, ABusyRoomsRelayWindowGrowsAndShrinksAgain) {
  SyncOptions o;
  o.relay_window = std::chrono::milliseconds(20);
  o.relay_window_max = std::chrono::milliseconds(80);
  o.relay_window_busy_updates = 4;
  make(o, /*windowed=*/true);
  auto a = open(), b = open();
  for (auto* m : {&a, &b}) join(*m, CrdtType::kLoro, "r");
  update(a, CrdtType::kLoro, "r", {"u1"}, 1);
  EXPECT_EQ(updates_of(b.sink->take()), std::vector<std::string>{"u1"});
  // Four updates within the window go out together, and the window doubles.
  for (uint8_t i = 2; i <= 5; ++i) update(a, CrdtType::kLoro, "r", {"u" + std::to_string(i)}, i);
  EXPECT_TRUE(updates_of(b.sink->take()).empty());
  EXPECT_EQ(updates_of(wait_for(b)), (std::vector<std::string>{"u2", "u3", "u4", "u5"}));
  // 30 ms after that relay the room is still within its 40 ms window: it waits.
  advance(std::chrono::milliseconds(30));
  update(a, CrdtType::kLoro, "r", {"u6"}, 6);
  EXPECT_TRUE(updates_of(b.sink->take()).empty());
  EXPECT_EQ(updates_of(wait_for(b)), std::vector<std::string>{"u6"});
  // That window held one update: back to 20 ms, and 30 ms later at once.
  advance(std::chrono::milliseconds(30));
  update(a, CrdtType::kLoro, "r", {"u7"}, 7);
  EXPECT_EQ(updates_of(b.sink->take()), std::vector<std::string>{"u7"});
}

TEST_F(SyncRoomsTest, JoinRepliesMayExceedTheOutboundCap) {
  SyncOptions o;
  o.max_outbound_bytes = 1000;
  make(o);
  backend_->seed("r", {std::string(5000, 'd')});
  auto a = open();
  EXPECT_EQ(join(a, CrdtType::kLoro, "r").size(), 2u);
  update(a, CrdtType::kLoro, "r", {"u"}, 1);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kOk);
  EXPECT_EQ(a.sink->close_code(), 0);
  // Acks count too: a client that sends but never reads is closed in the end.
  for (int i = 0; i < 100; ++i) update(a, CrdtType::kLoro, "r", {"v" + std::to_string(i)}, 2);
  EXPECT_EQ(a.sink->close_code(), kCloseSlowConsumer);
}

TEST_F(SyncRoomsTest, ConnectionAndRoomCaps) {
  SyncOptions o;
  o.max_connections = 2;
  o.max_rooms_per_connection = 2;
  make(o);
  auto a = open();
  open();
  auto third = rooms_->connect(ConnectionInfo{"x", token_permission("secret", Permission::kWrite),
                                              std::make_shared<Sink>()});
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  join(a, CrdtType::kLoro, "r1");
  join(a, CrdtType::kEphemeral, "r1");
  auto got = join(a, CrdtType::kLoro, "r3");
  ASSERT_EQ(got.size(), 1u);
  const auto& e = std::get<JoinError>(got[0].body);
  EXPECT_EQ(e.code, JoinErrorCode::kAppError);
  EXPECT_EQ(e.app_code, "too_many_rooms");
  // Rejoining a room it is in is not a new room.
  EXPECT_EQ(join(a, CrdtType::kLoro, "r1")[0].type(), MessageType::kJoinResponseOk);
}

TEST_F(SyncRoomsTest, TotalRoomCapEvictsIdleEphemeralStateFirst) {
  SyncOptions o;
  o.max_rooms = 2;
  make(o);
  auto a = open();
  join(a, CrdtType::kEphemeralPersisted, "p");
  update(a, CrdtType::kEphemeralPersisted, "p", {"state"}, 1);
  send(a, Message{CrdtType::kEphemeralPersisted, "p", Leave{}});
  join(a, CrdtType::kLoro, "r1");
  a.sink->take();
  EXPECT_EQ(join(a, CrdtType::kLoro, "r2")[0].type(), MessageType::kJoinResponseOk);
  auto b = open();
  auto got = join(b, CrdtType::kLoro, "r3");
  EXPECT_EQ(std::get<JoinError>(got[0].body).app_code, "too_many_rooms");
}

TEST_F(SyncRoomsTest, OversizeFramesAndMalformedFloodsClose) {
  make();
  auto a = open(), b = open();
  rooms_->on_binary(a.id, std::string(kMaxMessageBytes + 1, 'x'));
  EXPECT_EQ(a.sink->close_code(), kCloseMessageTooLarge);
  for (int i = 0; i < 16; ++i) rooms_->on_binary(b.id, "junk");
  EXPECT_EQ(b.sink->close_code(), kCloseProtocolError);
  EXPECT_TRUE(b.sink->take().empty());
}

TEST_F(SyncRoomsTest, MessageRateIsLimited) {
  SyncOptions o;
  o.messages_per_second = 10;
  o.message_burst = 3;
  o.max_rate_strikes = 3;
  make(o);
  auto a = open();
  join(a, CrdtType::kLoro, "r");  // token 1
  update(a, CrdtType::kLoro, "r", {"1"}, 1);
  update(a, CrdtType::kLoro, "r", {"2"}, 2);
  update(a, CrdtType::kLoro, "r", {"3"}, 3);  // over the burst
  auto got = a.sink->take();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(std::get<Ack>(got[2].body).status, UpdateStatus::kRateLimited);
  EXPECT_EQ(backend_->doc("r").size(), 2u);
  advance(1s);  // refills
  update(a, CrdtType::kLoro, "r", {"3"}, 4);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kOk);
  for (int i = 0; i < 10; ++i) rooms_->on_text(a.id, "ping");
  EXPECT_EQ(a.sink->close_code(), kCloseRateLimited);
}

TEST_F(SyncRoomsTest, PingIsAnsweredPong) {
  make();
  auto a = open();
  rooms_->on_text(a.id, "ping");
  rooms_->on_text(a.id, "pong");
  rooms_->on_text(a.id, "hello");
  EXPECT_EQ(a.sink->texts(), std::vector<std::string>{"pong"});
}

TEST_F(SyncRoomsTest, PublishReachesEveryMember) {
  make();
  auto a = open(), b = open();
  join(a, CrdtType::kLoro, "r");
  join(b, CrdtType::kLoro, "r");
  EXPECT_EQ(rooms_->publish(RoomKey{CrdtType::kLoro, "r"}, "from-agent"), 2u);
  for (auto* c : {&a, &b}) {
    auto got = c->sink->take();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(std::get<DocUpdate>(got[0].body).updates, std::vector<std::string>{"from-agent"});
  }
  EXPECT_EQ(rooms_->publish(RoomKey{CrdtType::kLoro, "nobody"}, "x"), 0u);
  EXPECT_EQ(rooms_->publish(RoomKey{CrdtType::kLoro, "r"}, std::string(300000, 'L')), 2u);
  EXPECT_EQ(a.sink->take()[0].type(), MessageType::kDocUpdateFragmentHeader);
}

TEST_F(SyncRoomsTest, EvictSendsRoomErrorAndRemovesMembers) {
  make();
  auto a = open();
  join(a, CrdtType::kLoro, "r");
  EXPECT_EQ(rooms_->evict(RoomKey{CrdtType::kLoro, "r"}, RoomErrorCode::kEvicted, "block deleted"), 1u);
  auto got = a.sink->take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::get<RoomError>(got[0].body).code, RoomErrorCode::kEvicted);
  update(a, CrdtType::kLoro, "r", {"x"}, 1);
  EXPECT_EQ(only_ack(a.sink->take())->status, UpdateStatus::kPermissionDenied);
  EXPECT_EQ(rooms_->stats().rooms, 0u);
}

TEST_F(SyncRoomsTest, FailedClientAckSuggestsRejoin) {
  make();
  auto a = open();
  join(a, CrdtType::kLoro, "r");
  send(a, Message{CrdtType::kLoro, "r", Ack{id_of(1), UpdateStatus::kInvalidUpdate}});
  auto got = a.sink->take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::get<RoomError>(got[0].body).code, RoomErrorCode::kRejoinSuggested);
}

TEST_F(SyncRoomsTest, LeaveAndDisconnectCleanUp) {
  make();
  auto a = open(), b = open();
  join(a, CrdtType::kLoro, "r");
  join(b, CrdtType::kLoro, "r");
  send(a, Message{CrdtType::kLoro, "r", Leave{}});
  update(b, CrdtType::kLoro, "r", {"after-leave"}, 1);
  EXPECT_TRUE(a.sink->take().empty());
  EXPECT_EQ(rooms_->stats().rooms, 1u);
  rooms_->disconnect(b.id);
  EXPECT_EQ(rooms_->stats().rooms, 0u);
  EXPECT_EQ(rooms_->stats().connections, 1u);
  rooms_->on_binary(b.id, "ignored");  // an unknown id is ignored
  rooms_->disconnect(b.id);
}

TEST_F(SyncRoomsTest, ConcurrentWritersAllConverge) {
  make();
  constexpr int kWriters = 4, kUpdates = 50;
  std::vector<Client> clients;
  for (int i = 0; i < kWriters; ++i) {
    clients.push_back(open());
    join(clients.back(), CrdtType::kLoro, "r");
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kUpdates; ++i) {
        auto f = encode(Message{CrdtType::kLoro, "r",
                                DocUpdate{{std::to_string(w) + ":" + std::to_string(i)},
                                          id_of(static_cast<uint8_t>(i))}});
        rooms_->on_binary(clients[w].id, *f);
        rooms_->on_frame_written(clients[w].id, 1 << 20);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(backend_->doc("r").size(), size_t{kWriters * kUpdates});
  for (int w = 0; w < kWriters; ++w) {
    size_t acks = 0, updates = 0;
    for (const auto& m : clients[w].sink->take()) {
      if (m.type() == MessageType::kAck) ++acks;
      // Updates that arrived together may come in one DocUpdate.
      if (m.type() == MessageType::kDocUpdate) {
        updates += std::get<DocUpdate>(m.body).updates.size();
      }
    }
    EXPECT_EQ(acks, size_t{kUpdates});
    EXPECT_EQ(updates, size_t{(kWriters - 1) * kUpdates});
  }
}

// Every DocUpdate's updates, in order, as one list per message.
std::vector<std::vector<std::string>> doc_updates(const std::vector<Message>& messages) {
  std::vector<std::vector<std::string>> out;
  for (const auto& m : messages) {
    if (m.type() == MessageType::kDocUpdate) out.push_back(std::get<DocUpdate>(m.body).updates);
  }
  return out;
}

TEST_F(SyncRoomsTest, UpdatesArrivingWhileTheRoomAppliesGoInAndOutTogether) {
  auto gated = std::make_shared<GatedBackend>();
  backend_ = gated;
  make();
  Client a = open(), b = open(), c = open(), watcher = open();
  for (const Client* x : {&a, &b, &c, &watcher}) join(*x, CrdtType::kLoro, "r");
  std::thread slow([&] { send(a, Message{CrdtType::kLoro, "r", DocUpdate{{"slow"}, id_of(1)}}); });
  gated->wait_entered();
  // The room is busy with "slow": these wait in its intake, and return at once.
  send(b, Message{CrdtType::kLoro, "r", DocUpdate{{"b1"}, id_of(2)}});
  send(c, Message{CrdtType::kLoro, "r", DocUpdate{{"c1"}, id_of(3)}});
  send(b, Message{CrdtType::kLoro, "r", DocUpdate{{"b2"}, id_of(4)}});
  EXPECT_TRUE(doc_updates(watcher.sink->take()).empty());
  gated->release();
  slow.join();
  EXPECT_EQ(gated->batch_sizes(), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(backend_->doc("r"), (std::vector<std::string>{"slow", "b1", "c1", "b2"}));
  using Lists = std::vector<std::vector<std::string>>;
  EXPECT_EQ(doc_updates(watcher.sink->take()), (Lists{{"slow"}, {"b1", "c1", "b2"}}));
  // A sender gets the others' updates, not its own, and an Ack for each message.
  auto to_b = b.sink->take();
  EXPECT_EQ(doc_updates(to_b), (Lists{{"slow"}, {"c1"}}));
  size_t acks = 0;
  for (const auto& m : to_b) {
    if (m.type() == MessageType::kAck) {
      ++acks;
      EXPECT_EQ(std::get<Ack>(m.body).status, UpdateStatus::kOk);
    }
  }
  EXPECT_EQ(acks, 2u);
  EXPECT_EQ(doc_updates(a.sink->take()), (Lists{{"b1", "c1", "b2"}}));
}

// With applier threads, a frame only queues its updates: the connection
// whose update found the room idle is not kept applying everyone else's.
TEST_F(SyncRoomsTest, AppliersKeepEveryReaderFreeWhileARoomIsBusy) {
  auto gated = std::make_shared<GatedBackend>();
  backend_ = gated;
  SyncOptions o;
  o.apply_threads = 1;
  make(o, /*windowed=*/false, /*threaded=*/true);
  Client a = open(), b = open(), watcher = open();
  for (const Client* x : {&a, &b, &watcher}) join(*x, CrdtType::kLoro, "r");
  // Each send returns at once, though "slow" holds the room.
  send(a, Message{CrdtType::kLoro, "r", DocUpdate{{"slow"}, id_of(1)}});
  gated->wait_entered();
  send(a, Message{CrdtType::kLoro, "r", DocUpdate{{"a2"}, id_of(2)}});
  send(b, Message{CrdtType::kLoro, "r", DocUpdate{{"b1"}, id_of(3)}});
  gated->release();
  std::vector<std::string> seen;
  for (int i = 0; i < 400 && seen.size() < 3; ++i) {
    for (const auto& list : doc_updates(watcher.sink->take()))
      seen.insert(seen.end(), list.begin(), list.end());
    if (seen.size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"slow", "a2", "b1"}));
  EXPECT_EQ(backend_->doc("r"), (std::vector<std::string>{"slow", "a2", "b1"}));
  EXPECT_EQ(gated->batch_sizes(), (std::vector<size_t>{1, 2}));
}

TEST_F(SyncRoomsTest, ABatchIsAckedPerMessageWhenOneOfItsUpdatesIsBad) {
  auto gated = std::make_shared<GatedBackend>();
  backend_ = gated;
  make();
  Client a = open(), b = open(), watcher = open();
  for (const Client* x : {&a, &b, &watcher}) join(*x, CrdtType::kLoro, "r");
  std::thread slow([&] { send(a, Message{CrdtType::kLoro, "r", DocUpdate{{"slow"}, id_of(1)}}); });
  gated->wait_entered();
  send(b, Message{CrdtType::kLoro, "r", DocUpdate{{"bad"}, id_of(2)}});
  send(a, Message{CrdtType::kLoro, "r", DocUpdate{{"a2"}, id_of(3)}});
  gated->release();
  slow.join();
  EXPECT_EQ(backend_->doc("r"), (std::vector<std::string>{"slow", "a2"}));
  std::vector<UpdateStatus> b_acks;
  for (const auto& m : b.sink->take()) {
    if (m.type() == MessageType::kAck) b_acks.push_back(std::get<Ack>(m.body).status);
  }
  EXPECT_EQ(b_acks, std::vector<UpdateStatus>{UpdateStatus::kInvalidUpdate});
  using Lists = std::vector<std::vector<std::string>>;
  EXPECT_EQ(doc_updates(watcher.sink->take()), (Lists{{"slow"}, {"a2"}}));
}

TEST_F(SyncRoomsTest, ChurnFromManyThreadsStaysConsistent) {
  SyncOptions o;
  o.max_rooms = 6;
  o.max_idle_eps_rooms = 2;
  make(o);
  constexpr int kThreads = 4;
  const int rounds = 300;
  std::atomic<bool> stop{false};
  std::vector<Client> clients;
  for (int i = 0; i < kThreads; ++i) clients.push_back(open());
  std::thread background([&] {
    while (!stop.load()) {
      rooms_->publish(RoomKey{CrdtType::kLoro, "r0"}, "pub");
      rooms_->publish(RoomKey{CrdtType::kEphemeralPersisted, "p1"}, "eps");
      rooms_->evict(RoomKey{CrdtType::kLoro, "r2"}, RoomErrorCode::kRejoinSuggested, "again");
      rooms_->tick();
      (void)rooms_->stats();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const auto& c = clients[t];
      for (int i = 0; i < rounds; ++i) {
        const CrdtType crdt = (i % 3 == 0) ? CrdtType::kEphemeralPersisted : CrdtType::kLoro;
        const std::string room = (crdt == CrdtType::kLoro ? "r" : "p") + std::to_string((i + t) % 4);
        rooms_->on_binary(c.id, *encode(Message{crdt, room, JoinRequest{"secret", ""}}));
        rooms_->on_binary(c.id, *encode(Message{crdt, room,
                                                DocUpdate{{std::to_string(t) + "/" + std::to_string(i)},
                                                          id_of(static_cast<uint8_t>(i))}}));
        if (i % 2 == 0) rooms_->on_binary(c.id, *encode(Message{crdt, room, Leave{}}));
        rooms_->on_frame_written(c.id, 1 << 30);
        if (i % 50 == 0) c.sink->take();
      }
    });
  }
  for (auto& th : threads) th.join();
  stop = true;
  background.join();
  for (const auto& c : clients) rooms_->disconnect(c.id);
  rooms_->tick();
  auto s = rooms_->stats();
  EXPECT_EQ(s.connections, 0u);
  EXPECT_EQ(s.fragment_bytes, 0u);
  EXPECT_LE(s.rooms, 2u);  // only idle %EPS rooms with state remain
}

TEST(SyncAuth, TokensAreRandomHexAndCheckedExactly) {
  auto t1 = generate_token(), t2 = generate_token();
  ASSERT_TRUE(t1.ok());
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t1->size(), 64u);
  EXPECT_NE(*t1, *t2);
  EXPECT_EQ(t1->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(token_matches(*t1, *t1));
  EXPECT_FALSE(token_matches(*t1, *t2));
  EXPECT_FALSE(token_matches(*t1, t1->substr(0, 63)));
  EXPECT_FALSE(token_matches(*t1, *t1 + *t1));
  EXPECT_FALSE(token_matches("", ""));
  EXPECT_FALSE(token_matches("abc", ""));
  EXPECT_TRUE(token_matches("abc", "abc"));
  EXPECT_FALSE(token_matches("abc", "abd"));
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("  bearer   abc  "), "abc");
  EXPECT_EQ(bearer_token("Basic abc"), "");
  EXPECT_EQ(bearer_token("Bearer"), "");
  EXPECT_EQ(bearer_token("Bearerabc"), "");
}

}  // namespace
}  // namespace weft::server::sync
