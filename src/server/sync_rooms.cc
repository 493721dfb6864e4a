// The transport-independent live-sync core: connections, rooms, fragments,
// caps and fan-out. Lock order: registry (Impl::mu) -> room -> connection.
#include "weft/server/sync_rooms.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "weft/server/sync_auth.h"

namespace weft::server::sync {
namespace {

using Clock = std::chrono::steady_clock;

// Room for the envelope when packing several updates into one DocUpdate frame.
constexpr size_t kEnvelopeSlack = 4 + 2 + kMaxRoomIdBytes + 1 + 5 + 8;
// A room's waiting relays go out before the window ends once they reach this.
constexpr size_t kMaxOutboxBytes = 1u << 20;
// Refused fragment batches remembered per connection, so their remaining
// fragments are dropped quietly instead of each drawing an Ack.
constexpr size_t kRefusedBatchMemory = 16;

BatchId fresh_batch_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t v = rng();
  BatchId id;
  for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(v >> (8 * i));
  return id;
}

bool served(CrdtType crdt) {
  return crdt == CrdtType::kLoro || crdt == CrdtType::kEphemeral ||
         crdt == CrdtType::kEphemeralPersisted;
}

UpdateStatus status_for_apply_error(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kDataLoss: return UpdateStatus::kInvalidUpdate;
    case StatusCode::kPermissionDenied: return UpdateStatus::kPermissionDenied;
    case StatusCode::kResourceExhausted: return UpdateStatus::kPayloadTooLarge;
    default: return UpdateStatus::kUnknown;
  }
}

JoinError join_error_for(const Status& s) {
  JoinError e;
  e.message = std::string(s.message());
  switch (s.code()) {
    case StatusCode::kPermissionDenied: e.code = JoinErrorCode::kAuthFailed; break;
    case StatusCode::kInvalidArgument:
    case StatusCode::kDataLoss: e.code = JoinErrorCode::kVersionUnknown; break;
    default: e.code = JoinErrorCode::kUnknown; break;
  }
  return e;
}

std::string must_encode(const Message& m) {
  // Callers only build frames that fit (room ids come from decoded frames).
  auto r = encode(m);
  return r.ok() ? std::move(r).value() : std::string();
}

// Frames for a list of updates: consecutive small updates share a DocUpdate
// frame; an update too large for a frame goes as fragments. A frame carries
// the batch id of its first update from `ids` (one per update) when given,
// else a fresh one.
std::vector<std::string> pack_updates(const RoomKey& key, const std::vector<std::string>& updates,
                                      const std::vector<BatchId>* ids = nullptr) {
  std::vector<std::string> frames;
  DocUpdate pending;
  size_t pending_bytes = 0;
  auto flush = [&] {
    if (pending.updates.empty()) return;
    frames.push_back(must_encode(Message{key.crdt, key.room_id, std::move(pending)}));
    pending = DocUpdate{};
    pending_bytes = 0;
  };
  auto id_of = [&](size_t i) { return ids ? (*ids)[i] : fresh_batch_id(); };
  for (size_t i = 0; i < updates.size(); ++i) {
    const std::string& u = updates[i];
    if (u.empty()) continue;
    if (u.size() > kFragmentBytes) {
      flush();
      auto fs = encode_update_frames(key.crdt, key.room_id, u, id_of(i));
      if (fs.ok()) {
        for (auto& f : *fs) frames.push_back(std::move(f));
      }
      continue;
    }
    if (pending_bytes + u.size() + 5 + kEnvelopeSlack > kMaxMessageBytes) flush();
    if (pending.updates.empty()) pending.batch_id = id_of(i);
    pending.updates.push_back(u);
    pending_bytes += u.size() + 5;
  }
  flush();
  return frames;
}

struct PendingBatch {
  RoomKey room;
  BatchId id{};
  uint32_t count = 0;
  uint32_t total = 0;
  std::map<uint32_t, std::string> parts;
  size_t bytes = 0;
  Clock::time_point deadline;
};

}  // namespace

std::string room_key_name(const RoomKey& key) {
  return std::string(crdt_magic(key.crdt)) + ":" + key.room_id;
}

PermissionCallback token_permission(std::string token, Permission grant) {
  return [token = std::move(token), grant](const RoomKey&,
                                           std::string_view auth) -> std::optional<Permission> {
    if (token_matches(token, auth)) return grant;
    return std::nullopt;
  };
}

namespace {

struct Conn {
  ConnectionId id = 0;
  std::string identity;
  PermissionCallback permission;
  std::shared_ptr<SyncConnection> sink;

  std::mutex mu;  // guards everything below
  bool closed = false;
  std::set<RoomKey> rooms;
  std::vector<PendingBatch> batches;
  std::deque<std::pair<RoomKey, BatchId>> refused;
  size_t fragment_bytes = 0;
  size_t outbound = 0;  // sent to the sink, not yet reported written
  size_t exempt = 0;    // part of `outbound` that join replies may hold beyond the cap
  double tokens = 0;
  Clock::time_point refilled;
  size_t rate_strikes = 0;
  size_t malformed = 0;
};

struct Member {
  std::shared_ptr<Conn> conn;
  Permission permission = Permission::kRead;
};

// An update waiting in a room's outbox, with the connection it came from
// (0: another source) and the batch id it came with.
struct Outgoing {
  ConnectionId from = 0;
  std::string update;
  BatchId batch_id{};
};

// A DocUpdate (or a reassembled fragmented one) waiting for its room.
struct Intake {
  std::shared_ptr<Conn> conn;
  std::vector<std::string> updates;
  BatchId batch_id{};
  bool fragmented = false;  // one update, fanned out in fragments again
};

// The updates a room's intake holds at most before senders wait: what
// arrives while the room applies is applied next, as one batch.
constexpr size_t kMaxIntakeBytes = 64u << 20;

struct Room {
  explicit Room(RoomKey k) : key(std::move(k)) {}
  const RoomKey key;

  // Updates that arrived while a thread (the drainer) applies the room's:
  // it takes them all at once after its batch. Never locked inside `mu`.
  std::mutex intake_mu;  // guards the four below
  std::condition_variable intake_room;  // intake_bytes went down
  std::vector<Intake> intake;
  size_t intake_bytes = 0;
  bool draining = false;

  std::mutex mu;  // guards everything below; held across backend calls and fan-out
  bool dead = false;  // removed from the registry; a joiner retries
  std::map<ConnectionId, Member> members;
  std::deque<std::string> eps_log;  // %EPS: recent updates, oldest first
  size_t eps_bytes = 0;
  // Relays waiting for the relay window to end, oldest first; see
  // Impl::relay_updates.
  std::vector<Outgoing> outbox;
  size_t outbox_bytes = 0;
  Clock::time_point last_relay{};
  Clock::duration window{};  // the relay window now: relay_window at first, see relay_window_max
  bool flush_scheduled = false;
};

}  // namespace

struct SyncRooms::Impl {
  ~Impl() {
    {
      std::lock_guard lk(apply_mu);
      apply_stop = true;
    }
    apply_cv.notify_all();
    for (auto& t : appliers) t.join();
    {
      std::lock_guard lk(flush_mu);
      flush_stop = true;
    }
    flush_cv.notify_all();
    if (flusher.joinable()) flusher.join();
  }

  SyncOptions opt;
  std::shared_ptr<SyncBackend> backend;

  // Rooms with updates in their intake, and the threads that apply them.
  std::mutex apply_mu;
  std::condition_variable apply_cv;
  std::deque<std::shared_ptr<Room>> apply_queue;
  std::vector<std::thread> appliers;
  bool apply_stop = false;

  // The rooms whose relay windows end, by when (steady clock), and the
  // thread that sends their outboxes then.
  std::mutex flush_mu;
  std::condition_variable flush_cv;
  std::multimap<Clock::time_point, std::weak_ptr<Room>> flush_due;
  bool flush_stop = false;
  std::thread flusher;

  mutable std::mutex mu;  // guards conns, rooms, idle_eps, next_id
  std::unordered_map<ConnectionId, std::shared_ptr<Conn>> conns;
  std::map<RoomKey, std::shared_ptr<Room>> rooms;
  std::map<RoomKey, Clock::time_point> idle_eps;  // %EPS rooms with state and no member
  ConnectionId next_id = 1;

  std::atomic<size_t> fragment_bytes_total{0};
  std::atomic<uint64_t> frames_in{0}, frames_out{0}, updates_applied{0}, slow_closes{0};

  Clock::time_point now() const { return opt.clock ? opt.clock() : Clock::now(); }

  std::shared_ptr<Conn> find_conn(ConnectionId id) {
    std::lock_guard lk(mu);
    auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second;
  }

  std::shared_ptr<Room> find_room(const RoomKey& key) {
    std::lock_guard lk(mu);
    auto it = rooms.find(key);
    return it == rooms.end() ? nullptr : it->second;
  }

  // ---- sending -------------------------------------------------------------

  void close_conn_locked(Conn& c, uint16_t code, std::string_view reason) {
    if (c.closed) return;
    c.closed = true;
    c.sink->close(code, reason);
  }

  void close_conn(Conn& c, uint16_t code, std::string_view reason) {
    std::lock_guard lk(c.mu);
    close_conn_locked(c, code, reason);
  }

  // Checks the outbound cap for `bytes` more and counts them; closes the
  // connection (false) when a client has stopped reading. A join reply
  // (`join_reply`) is never refused: a document may be larger than the cap.
  bool admit_locked(Conn& c, size_t bytes, bool join_reply) {
    if (c.closed) return false;
    if (join_reply) {
      c.exempt += bytes;
    } else if (c.outbound + bytes > opt.max_outbound_bytes + c.exempt) {
      slow_closes.fetch_add(1, std::memory_order_relaxed);
      close_conn_locked(c, kCloseSlowConsumer, "slow consumer: too many unsent bytes");
      return false;
    }
    c.outbound += bytes;
    return true;
  }

  // Sends frames in order; false when the connection is (now) closed.
  bool deliver(Conn& c, std::vector<std::string> frames, bool join_reply = false) {
    size_t total = 0;
    for (const auto& f : frames) total += f.size();
    std::lock_guard lk(c.mu);
    if (!admit_locked(c, total, join_reply)) return false;
    frames_out.fetch_add(frames.size(), std::memory_order_relaxed);
    for (auto& f : frames) c.sink->send_binary(std::move(f));
    return true;
  }

  bool deliver_one(Conn& c, const Message& m) {
    std::vector<std::string> frames;
    frames.push_back(must_encode(m));
    return deliver(c, std::move(frames));
  }

  void ack(Conn& c, const RoomKey& key, const BatchId& id, UpdateStatus status) {
    deliver_one(c, Message{key.crdt, key.room_id, Ack{id, status}});
  }

  void join_error(Conn& c, const RoomKey& key, JoinError e) {
    deliver_one(c, Message{key.crdt, key.room_id, std::move(e)});
  }

  // Sends frames to every member but `except`. Caller holds room.mu.
  size_t fan_out(Room& room, const std::vector<std::string>& frames, ConnectionId except) {
    size_t reached = 0;
    for (auto it = room.members.begin(); it != room.members.end();) {
      if (it->first == except) {
        ++it;
        continue;
      }
      if (deliver(*it->second.conn, frames)) {
        ++reached;
        ++it;
      } else {
        it = room.members.erase(it);  // closed: it gets nothing more
      }
    }
    return reached;
  }

  // Whether the room relays at once: it relayed nothing within the window.
  bool relays_now_locked(const Room& room, Clock::time_point t) const {
    return opt.relay_window.count() <= 0 ||
           (room.outbox.empty() && t - room.last_relay >= room.window);
  }

  // After a window that ended with `updates` relayed: a busy room's window
  // doubles (up to relay_window_max), a quiet one's halves (down to
  // relay_window). Caller holds room.mu.
  void adapt_window_locked(Room& room, size_t updates) const {
    const auto least = std::chrono::duration_cast<Clock::duration>(opt.relay_window);
    const auto most = std::max(
        least, std::chrono::duration_cast<Clock::duration>(opt.relay_window_max));
    if (updates >= opt.relay_window_busy_updates) {
      room.window = std::min(most, room.window * 2);
    } else if (updates * 4 <= opt.relay_window_busy_updates) {
      room.window = std::max(least, room.window / 2);
    }
  }

  // Relays `updates` of `room` from connection `from` (0: another source) to
  // the other members: at once when the room relayed nothing within the
  // relay window, else at the window's end with the room's other waiting
  // updates. Returns how many members they go to. Caller holds room->mu.
  size_t relay_updates(const std::shared_ptr<Room>& room, ConnectionId from,
                       const std::vector<std::string>& updates, const BatchId& batch_id) {
    const Clock::time_point t = now();
    const bool at_once = relays_now_locked(*room, t);
    for (const auto& u : updates) add_to_outbox_locked(*room, from, u, batch_id);
    const size_t to = room->members.size() - room->members.count(from);
    release_outbox_locked(room, t, at_once);
    return to;
  }

  // Sends the outbox now (`at_once`, from relays_now_locked before it
  // grew) or at its window's end.
  void release_outbox_locked(const std::shared_ptr<Room>& room, Clock::time_point t,
                             bool at_once) {
    if (at_once) {
      flush_outbox_locked(*room);
    } else {
      schedule_outbox_locked(room, t);
    }
  }

  void add_to_outbox_locked(Room& room, ConnectionId from, std::string update, const BatchId& id) {
    room.outbox_bytes += update.size();
    room.outbox.push_back(Outgoing{from, std::move(update), id});
  }

  // The outbox goes out at the end of the window that began at the room's
  // last relay (`t`: now), or at once once it holds kMaxOutboxBytes.
  void schedule_outbox_locked(const std::shared_ptr<Room>& room, Clock::time_point t) {
    if (room->outbox_bytes >= kMaxOutboxBytes) return flush_outbox_locked(*room);
    if (room->flush_scheduled || room->outbox.empty()) return;
    room->flush_scheduled = true;
    const Clock::duration window = room->window;
    const auto left = std::clamp<Clock::duration>(window - (t - room->last_relay),
                                                  Clock::duration::zero(), window);
    {
      std::lock_guard lk(flush_mu);
      if (!flusher.joinable()) flusher = std::thread([this] { run_flusher(); });
      flush_due.emplace(Clock::now() + left, room);
    }
    flush_cv.notify_all();
  }

  // Frames for the outbox's updates but those from `skip` (0: none), in
  // order, each frame with the batch id its first update came with.
  std::vector<std::string> outbox_frames(const Room& room, const std::vector<Outgoing>& out,
                                         ConnectionId skip) {
    std::vector<std::string> updates;
    std::vector<BatchId> ids;
    for (const auto& o : out) {
      if (skip != 0 && o.from == skip) continue;
      updates.push_back(o.update);
      ids.push_back(o.batch_id);
    }
    return pack_updates(room.key, updates, &ids);
  }

  // Sends the room's waiting relays: to each member one DocUpdate (or as few
  // as fit) with the updates that did not come from it. Caller holds room.mu.
  void flush_outbox_locked(Room& room) {
    if (room.outbox.empty()) return;
    room.last_relay = now();
    std::vector<Outgoing> out = std::move(room.outbox);
    room.outbox.clear();
    room.outbox_bytes = 0;
    if (opt.relay_window.count() > 0) adapt_window_locked(room, out.size());
    std::set<ConnectionId> senders;
    for (const auto& o : out) senders.insert(o.from);
    std::optional<std::vector<std::string>> shared;  // for the members who sent none
    for (auto it = room.members.begin(); it != room.members.end();) {
      bool alive = true;
      if (!senders.count(it->first)) {
        if (!shared) shared = outbox_frames(room, out, 0);
        alive = deliver(*it->second.conn, *shared);
      } else if (auto own = outbox_frames(room, out, it->first); !own.empty()) {
        alive = deliver(*it->second.conn, std::move(own));
      }
      it = alive ? std::next(it) : room.members.erase(it);  // closed: it gets nothing more
    }
  }

  // Sends an update too large for one frame, as `fragments`, to the members
  // but `from`: it cannot wait for the window, so what waits goes first and
  // the room's order holds. Returns how many members it goes to. Caller
  // holds room.mu.
  size_t send_fragments_locked(Room& room, const std::vector<std::string>& fragments,
                               ConnectionId from) {
    flush_outbox_locked(room);
    return fan_out(room, fragments, from);
  }

  void run_flusher() {
    std::unique_lock lk(flush_mu);
    while (!flush_stop) {
      if (flush_due.empty()) {
        flush_cv.wait(lk);
        continue;
      }
      auto first = flush_due.begin();
      if (first->first > Clock::now()) {
        flush_cv.wait_until(lk, first->first);
        continue;
      }
      std::shared_ptr<Room> room = first->second.lock();
      flush_due.erase(first);
      if (!room) continue;
      lk.unlock();
      {
        std::lock_guard rk(room->mu);
        room->flush_scheduled = false;
        if (!room->dead) flush_outbox_locked(*room);
      }
      lk.lock();
    }
  }

  // ---- rooms ---------------------------------------------------------------

  // Removes `room` from the registry when it has no member and nothing to keep.
  void maybe_drop(const std::shared_ptr<Room>& room) {
    std::lock_guard lk(mu);
    std::unique_lock rk(room->mu);
    if (room->dead || !room->members.empty()) return;
    auto it = rooms.find(room->key);
    if (it == rooms.end() || it->second != room) return;
    if (room->key.crdt == CrdtType::kEphemeralPersisted && room->eps_bytes > 0) {
      idle_eps.emplace(room->key, now());
      rk.unlock();  // trimming may pick this very room
      trim_idle_eps_locked();
      return;
    }
    room->dead = true;
    rooms.erase(it);
  }

  // Drops the longest-idle %EPS room that is still empty; false when there is
  // none. Caller holds mu and no room lock.
  bool evict_idle_eps_locked() {
    while (!idle_eps.empty()) {
      auto oldest = std::min_element(idle_eps.begin(), idle_eps.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
      RoomKey key = oldest->first;
      idle_eps.erase(oldest);
      auto it = rooms.find(key);
      if (it == rooms.end()) continue;
      std::shared_ptr<Room> room = it->second;  // outlives the erase below, and its lock
      std::lock_guard rk(room->mu);
      if (!room->members.empty()) continue;
      room->dead = true;
      rooms.erase(it);
      return true;
    }
    return false;
  }

  void trim_idle_eps_locked() {
    while (idle_eps.size() > opt.max_idle_eps_rooms) {
      if (!evict_idle_eps_locked()) break;
    }
  }

  Result<std::shared_ptr<Room>> get_or_create(const RoomKey& key) {
    std::lock_guard lk(mu);
    idle_eps.erase(key);
    auto it = rooms.find(key);
    if (it != rooms.end()) return it->second;
    if (rooms.size() >= opt.max_rooms && !evict_idle_eps_locked()) {
      return resource_exhausted("the server has " + std::to_string(opt.max_rooms) +
                                " rooms open, its limit");
    }
    auto room = std::make_shared<Room>(key);
    room->window = std::chrono::duration_cast<Clock::duration>(opt.relay_window);
    rooms.emplace(key, room);
    return room;
  }

  void remember_eps(Room& room, std::string_view update) {
    if (update.size() > opt.eps_state_max_bytes) {
      room.eps_log.clear();
      room.eps_bytes = 0;
      return;
    }
    room.eps_log.emplace_back(update);
    room.eps_bytes += update.size();
    while (room.eps_bytes > opt.eps_state_max_bytes && !room.eps_log.empty()) {
      room.eps_bytes -= room.eps_log.front().size();
      room.eps_log.pop_front();
    }
  }

  // ---- messages ------------------------------------------------------------

  void handle_join(const std::shared_ptr<Conn>& c, const RoomKey& key, const JoinRequest& req) {
    if (!served(key.crdt)) {
      join_error(*c, key, JoinError{JoinErrorCode::kUnknown,
                                    "weft serves %LOR, %EPH and %EPS rooms, not " +
                                        std::string(crdt_magic(key.crdt)),
                                    std::nullopt, std::nullopt});
      return;
    }
    if (key.crdt == CrdtType::kLoro && !backend) {
      join_error(*c, key, JoinError{JoinErrorCode::kUnknown, "this server has no document store",
                                    std::nullopt, std::nullopt});
      return;
    }
    size_t joined_count;
    bool already;
    {
      std::lock_guard lk(c->mu);
      already = c->rooms.count(key) > 0;
      joined_count = c->rooms.size();
    }
    if (!already && joined_count >= opt.max_rooms_per_connection) {
      join_error(*c, key, JoinError{JoinErrorCode::kAppError,
                                    "a connection may join at most " +
                                        std::to_string(opt.max_rooms_per_connection) + " rooms",
                                    std::nullopt, "too_many_rooms"});
      return;
    }
    std::optional<Permission> permission = c->permission(key, req.auth);
    if (!permission) {
      join_error(*c, key, JoinError{JoinErrorCode::kAuthFailed,
                                    "the join's token does not grant access to " + room_key_name(key),
                                    std::nullopt, std::nullopt});
      return;
    }
    for (;;) {
      auto room_or = get_or_create(key);
      if (!room_or.ok()) {
        join_error(*c, key, JoinError{JoinErrorCode::kAppError, std::string(room_or.status().message()),
                                      std::nullopt, "too_many_rooms"});
        return;
      }
      std::shared_ptr<Room> room = *room_or;
      std::unique_lock rk(room->mu);
      if (room->dead) continue;  // dropped between lookup and lock: look again
      const bool joined = join_locked(c, *room, req, *permission);
      const bool empty = room->members.empty();
      rk.unlock();
      if (!joined && empty) maybe_drop(room);
      return;
    }
  }

  // The join proper, under the room's lock. False when the connection did not join.
  bool join_locked(const std::shared_ptr<Conn>& c, Room& room, const JoinRequest& req,
                   Permission permission) {
    const RoomKey& key = room.key;
    JoinGrant grant;
    if (key.crdt == CrdtType::kLoro) {
      auto g = backend->join(key, c->identity, req.version);
      if (!g.ok()) {
        join_error(*c, key, join_error_for(g.status()));
        return false;
      }
      grant = std::move(g).value();
      if (grant.permission == Permission::kRead) permission = Permission::kRead;
    } else if (key.crdt == CrdtType::kEphemeralPersisted) {
      grant.updates.assign(room.eps_log.begin(), room.eps_log.end());
    }
    {
      std::lock_guard lk(c->mu);
      if (c->closed) return false;
      c->rooms.insert(key);
    }
    room.members[c->id] = Member{c, permission};
    std::vector<std::string> frames;
    frames.push_back(must_encode(
        Message{key.crdt, key.room_id, JoinResponseOk{permission, std::move(grant.version), ""}}));
    for (auto& f : pack_updates(key, grant.updates)) frames.push_back(std::move(f));
    deliver(*c, std::move(frames), /*join_reply=*/true);
    return true;
  }

  // Applies updates from `c` to the room, Acks them and relays them.
  // `fragmented`: the single update came in fragments and goes out the same
  // way. Updates wait in the room's intake; a thread of the applier pool
  // takes what is there as one batch, so that the backend can import them
  // together (apply_batch): a busy room's imports grow instead of queueing,
  // and no connection's reader is kept applying the others' updates.
  void apply_updates(const std::shared_ptr<Conn>& c, const RoomKey& key,
                     std::vector<std::string> updates, const BatchId& batch_id, bool fragmented) {
    std::shared_ptr<Room> room = find_room(key);
    if (!room) {
      ack(*c, key, batch_id, UpdateStatus::kPermissionDenied);  // never joined
      return;
    }
    size_t bytes = 0;
    for (const auto& u : updates) bytes += u.size();
    {
      std::unique_lock ik(room->intake_mu);
      room->intake_room.wait(ik, [&] {
        return room->intake.empty() || room->intake_bytes + bytes <= kMaxIntakeBytes;
      });
      room->intake.push_back(Intake{c, std::move(updates), batch_id, fragmented});
      room->intake_bytes += bytes;
      if (room->draining) return;  // the thread applying takes it next
      room->draining = true;
    }
    if (opt.apply_threads == 0) {
      drain(room, /*once=*/false);
      return;
    }
    {
      std::lock_guard lk(apply_mu);
      while (appliers.size() < opt.apply_threads) appliers.emplace_back([this] { run_applier(); });
      apply_queue.push_back(std::move(room));
    }
    apply_cv.notify_one();
  }

  // Applies the room's intake, batch by batch until it is empty, or with
  // `once` one batch; true when more wait then (the caller queues the room
  // again, so that busy rooms take turns).
  bool drain(const std::shared_ptr<Room>& room, bool once) {
    for (;;) {
      std::vector<Intake> batch;
      {
        std::lock_guard ik(room->intake_mu);
        if (room->intake.empty()) {
          room->draining = false;
          return false;
        }
        batch.swap(room->intake);
        room->intake_bytes = 0;
      }
      room->intake_room.notify_all();
      {
        std::lock_guard rk(room->mu);
        apply_intake_locked(room, room->key, batch);
      }
      if (once) {
        std::lock_guard ik(room->intake_mu);
        if (!room->intake.empty()) return true;
        room->draining = false;
        return false;
      }
    }
  }

  void run_applier() {
    std::unique_lock lk(apply_mu);
    while (!apply_stop) {
      if (apply_queue.empty()) {
        apply_cv.wait(lk);
        continue;
      }
      std::shared_ptr<Room> room = std::move(apply_queue.front());
      apply_queue.pop_front();
      lk.unlock();
      const bool more = drain(room, /*once=*/true);
      lk.lock();
      if (more) apply_queue.push_back(std::move(room));
    }
  }

  // Applies a batch of DocUpdates in arrival order, then Acks each and relays
  // what changed the document. Caller holds room->mu.
  void apply_intake_locked(const std::shared_ptr<Room>& room, const RoomKey& key,
                           std::vector<Intake>& batch) {
    std::vector<UpdateStatus> status(batch.size(), UpdateStatus::kOk);
    std::vector<SyncBackend::Incoming> incoming;
    std::vector<std::pair<size_t, size_t>> origin;  // incoming[k] is batch[i].updates[j]
    for (size_t i = 0; i < batch.size(); ++i) {
      const Intake& in = batch[i];
      auto m = room->members.find(in.conn->id);
      if (room->dead || m == room->members.end() || m->second.permission != Permission::kWrite) {
        status[i] = UpdateStatus::kPermissionDenied;
        continue;
      }
      for (size_t j = 0; j < in.updates.size(); ++j) {
        const std::string& u = in.updates[j];
        if (u.empty()) continue;
        if (u.size() > opt.max_update_bytes) {
          status[i] = UpdateStatus::kPayloadTooLarge;
          break;
        }
        incoming.push_back(SyncBackend::Incoming{u, in.conn->identity});
        origin.emplace_back(i, j);
      }
    }
    std::vector<std::vector<std::string>> accepted(batch.size());
    if (key.crdt == CrdtType::kLoro) {
      std::vector<Result<bool>> applied;
      if (!incoming.empty()) applied = backend->apply_batch(key, incoming);
      for (size_t k = 0; k < applied.size() && k < origin.size(); ++k) {
        const auto [i, j] = origin[k];
        if (!applied[k].ok()) {
          if (status[i] == UpdateStatus::kOk) {
            status[i] = status_for_apply_error(applied[k].status());
          }
          continue;
        }
        updates_applied.fetch_add(1, std::memory_order_relaxed);
        // What changed the document goes out even after an error in the same
        // DocUpdate: the backend counts it as relayed.
        if (*applied[k]) accepted[i].push_back(batch[i].updates[j]);
      }
    } else {
      for (const auto& [i, j] : origin) {
        if (key.crdt == CrdtType::kEphemeralPersisted) remember_eps(*room, batch[i].updates[j]);
        accepted[i].push_back(batch[i].updates[j]);
      }
    }
    // The Acks go first, as loro-websocket's SimpleServer does.
    for (size_t i = 0; i < batch.size(); ++i) {
      ack(*batch[i].conn, key, batch[i].batch_id, status[i]);
    }
    // A batch's updates go out together: each member gets those it did not
    // send in one message, at once or at the relay window's end.
    const Clock::time_point t = now();
    const bool at_once = relays_now_locked(*room, t);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (accepted[i].empty()) continue;
      Intake& in = batch[i];
      if (!in.fragmented) {
        for (auto& u : accepted[i]) {
          add_to_outbox_locked(*room, in.conn->id, std::move(u), in.batch_id);
        }
      } else if (auto fs = encode_update_frames(key.crdt, key.room_id, accepted[i].front(),
                                                in.batch_id);
                 fs.ok()) {
        send_fragments_locked(*room, *fs, in.conn->id);
      }
    }
    release_outbox_locked(room, t, at_once);
  }

  void refuse_batch_locked(Conn& c, const RoomKey& key, const BatchId& id) {
    c.refused.emplace_back(key, id);
    while (c.refused.size() > kRefusedBatchMemory) c.refused.pop_front();
  }

  void drop_batch_locked(Conn& c, size_t index) {
    fragment_bytes_total.fetch_sub(c.batches[index].bytes, std::memory_order_relaxed);
    c.fragment_bytes -= c.batches[index].bytes;
    c.batches.erase(c.batches.begin() + static_cast<ptrdiff_t>(index));
  }

  void handle_header(const std::shared_ptr<Conn>& c, const RoomKey& key, const FragmentHeader& h) {
    UpdateStatus refuse = UpdateStatus::kOk;
    if (h.total_size > opt.max_update_bytes) {
      refuse = UpdateStatus::kPayloadTooLarge;
    } else if (h.fragment_count == 0 || h.total_size == 0 || h.fragment_count > h.total_size) {
      refuse = UpdateStatus::kInvalidUpdate;
    } else {
      std::shared_ptr<Room> room = find_room(key);
      if (!room) {
        refuse = UpdateStatus::kPermissionDenied;
      } else {
        std::lock_guard rk(room->mu);
        auto m = room->members.find(c->id);
        if (m == room->members.end() || m->second.permission != Permission::kWrite) {
          refuse = UpdateStatus::kPermissionDenied;
        }
      }
    }
    {
      std::lock_guard lk(c->mu);
      if (c->closed) return;
      for (size_t i = 0; i < c->batches.size(); ++i) {
        if (c->batches[i].id == h.batch_id && c->batches[i].room == key) {
          drop_batch_locked(*c, i);  // a resend replaces the earlier attempt
          break;
        }
      }
      if (refuse == UpdateStatus::kOk && c->batches.size() >= opt.max_fragment_batches_per_connection) {
        refuse = UpdateStatus::kPayloadTooLarge;
      }
      if (refuse != UpdateStatus::kOk) {
        refuse_batch_locked(*c, key, h.batch_id);
      } else {
        PendingBatch b;
        b.room = key;
        b.id = h.batch_id;
        b.count = h.fragment_count;
        b.total = h.total_size;
        b.deadline = now() + opt.fragment_timeout;
        c->batches.push_back(std::move(b));
      }
    }
    if (refuse != UpdateStatus::kOk) ack(*c, key, h.batch_id, refuse);
  }

  void handle_fragment(const std::shared_ptr<Conn>& c, const RoomKey& key, Fragment f) {
    UpdateStatus refuse = UpdateStatus::kOk;
    std::string whole;
    bool complete = false;
    {
      std::lock_guard lk(c->mu);
      if (c->closed) return;
      size_t i = 0;
      while (i < c->batches.size() && !(c->batches[i].id == f.batch_id && c->batches[i].room == key)) ++i;
      if (i == c->batches.size()) {
        for (const auto& r : c->refused) {
          if (r.first == key && r.second == f.batch_id) return;  // already answered
        }
        refuse = UpdateStatus::kFragmentTimeout;  // unknown or expired batch: resend it all
      } else {
        PendingBatch& b = c->batches[i];
        const size_t old = b.parts.count(f.index) ? b.parts[f.index].size() : 0;
        const size_t grow = f.data.size() > old ? f.data.size() - old : 0;
        if (f.index >= b.count || b.bytes - old + f.data.size() > b.total) {
          refuse = UpdateStatus::kInvalidUpdate;
        } else if (c->fragment_bytes + grow > opt.max_fragment_bytes_per_connection ||
                   fragment_bytes_total.load(std::memory_order_relaxed) + grow >
                       opt.max_fragment_bytes_total) {
          refuse = UpdateStatus::kPayloadTooLarge;
        }
        if (refuse != UpdateStatus::kOk) {
          drop_batch_locked(*c, i);
          refuse_batch_locked(*c, key, f.batch_id);
        } else {
          b.bytes = b.bytes - old + f.data.size();
          c->fragment_bytes = c->fragment_bytes - old + f.data.size();
          fragment_bytes_total.fetch_add(f.data.size(), std::memory_order_relaxed);
          fragment_bytes_total.fetch_sub(old, std::memory_order_relaxed);
          b.parts[f.index] = std::move(f.data);
          if (b.parts.size() == b.count) {
            if (b.bytes != b.total) {
              refuse = UpdateStatus::kInvalidUpdate;
            } else {
              whole.reserve(b.total);
              for (auto& [idx, part] : b.parts) whole.append(part);
              complete = true;
            }
            drop_batch_locked(*c, i);
          }
        }
      }
    }
    if (refuse != UpdateStatus::kOk) {
      ack(*c, key, f.batch_id, refuse);
      return;
    }
    if (complete) {
      std::vector<std::string> one;
      one.push_back(std::move(whole));
      apply_updates(c, key, std::move(one), f.batch_id, true);
    }
  }

  void leave_room(const std::shared_ptr<Conn>& c, const RoomKey& key) {
    std::shared_ptr<Room> room = find_room(key);
    if (room) {
      std::lock_guard rk(room->mu);
      room->members.erase(c->id);
    }
    {
      std::lock_guard lk(c->mu);
      c->rooms.erase(key);
      for (size_t i = c->batches.size(); i-- > 0;) {
        if (c->batches[i].room == key) drop_batch_locked(*c, i);
      }
    }
    if (room) maybe_drop(room);
  }

  void handle_message(const std::shared_ptr<Conn>& c, Message msg) {
    RoomKey key{msg.crdt, std::move(msg.room_id)};
    switch (msg.type()) {
      case MessageType::kJoinRequest:
        handle_join(c, key, std::get<JoinRequest>(msg.body));
        break;
      case MessageType::kDocUpdate: {
        auto& u = std::get<DocUpdate>(msg.body);
        apply_updates(c, key, std::move(u.updates), u.batch_id, false);
        break;
      }
      case MessageType::kDocUpdateFragmentHeader:
        handle_header(c, key, std::get<FragmentHeader>(msg.body));
        break;
      case MessageType::kDocUpdateFragment:
        handle_fragment(c, key, std::move(std::get<Fragment>(msg.body)));
        break;
      case MessageType::kLeave:
        leave_room(c, key);
        break;
      case MessageType::kJoinError:
        // loro-websocket sends this when it could not use a JoinResponseOk.
        leave_room(c, key);
        break;
      case MessageType::kAck: {
        // A client failed to apply what the server sent: it rejoins to catch up.
        const auto& a = std::get<Ack>(msg.body);
        if (a.status == UpdateStatus::kOk) break;
        bool member = false;
        if (auto room = find_room(key)) {
          std::lock_guard rk(room->mu);
          member = room->members.erase(c->id) > 0;
        }
        if (member) {
          {
            std::lock_guard lk(c->mu);
            c->rooms.erase(key);
          }
          deliver_one(*c, Message{key.crdt, key.room_id,
                                  RoomError{RoomErrorCode::kRejoinSuggested,
                                            "the update could not be applied; rejoin to resync"}});
        }
        break;
      }
      case MessageType::kJoinResponseOk:
      case MessageType::kRoomError:
        break;  // server-to-client messages: ignored
    }
  }

  // Takes a token from the connection's bucket; false when it is empty.
  bool take_token(Conn& c, bool& close) {
    std::lock_guard lk(c.mu);
    const auto t = now();
    if (c.refilled != Clock::time_point{}) {
      const double secs = std::chrono::duration<double>(t - c.refilled).count();
      c.tokens = std::min(opt.message_burst, c.tokens + std::max(0.0, secs) * opt.messages_per_second);
    }
    c.refilled = t;
    if (c.tokens >= 1) {
      c.tokens -= 1;
      return true;
    }
    close = ++c.rate_strikes >= opt.max_rate_strikes;
    return false;
  }
};

SyncRooms::SyncRooms(SyncOptions options, std::shared_ptr<SyncBackend> backend)
    : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  impl_->backend = std::move(backend);
}

SyncRooms::~SyncRooms() = default;

Result<ConnectionId> SyncRooms::connect(ConnectionInfo info) {
  if (!info.sink) return invalid_argument("sync: a connection needs a sink");
  if (!info.permission) return invalid_argument("sync: a connection needs a permission callback");
  auto c = std::make_shared<Conn>();
  c->identity = std::move(info.identity);
  c->permission = std::move(info.permission);
  c->sink = std::move(info.sink);
  c->tokens = impl_->opt.message_burst;
  std::lock_guard lk(impl_->mu);
  if (impl_->conns.size() >= impl_->opt.max_connections) {
    return resource_exhausted("sync: " + std::to_string(impl_->opt.max_connections) +
                              " connections are open, the server's limit");
  }
  c->id = impl_->next_id++;
  impl_->conns.emplace(c->id, c);
  return c->id;
}

void SyncRooms::disconnect(ConnectionId id) {
  std::shared_ptr<Conn> c;
  {
    std::lock_guard lk(impl_->mu);
    auto it = impl_->conns.find(id);
    if (it == impl_->conns.end()) return;
    c = it->second;
    impl_->conns.erase(it);
  }
  std::set<RoomKey> rooms;
  {
    std::lock_guard lk(c->mu);
    c->closed = true;  // from here on nothing joins it to a room or sends to it
    rooms = c->rooms;
    c->rooms.clear();
    while (!c->batches.empty()) impl_->drop_batch_locked(*c, c->batches.size() - 1);
  }
  for (const auto& key : rooms) {
    if (auto room = impl_->find_room(key)) {
      {
        std::lock_guard rk(room->mu);
        room->members.erase(id);
      }
      impl_->maybe_drop(room);
    }
  }
}

void SyncRooms::on_binary(ConnectionId id, std::string_view frame) {
  auto c = impl_->find_conn(id);
  if (!c) return;
  impl_->frames_in.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lk(c->mu);
    if (c->closed) return;
  }
  if (frame.size() > kMaxMessageBytes) {
    impl_->close_conn(*c, kCloseMessageTooLarge, "a sync frame is at most 262144 bytes");
    return;
  }
  bool close = false;
  if (!impl_->take_token(*c, close)) {
    FrameEnvelope env = peek_envelope(frame);
    if (close) {
      impl_->close_conn(*c, kCloseRateLimited, "too many messages");
    } else if (env.crdt && env.room_id && env.batch_id && env.type &&
               *env.type != MessageType::kDocUpdateFragment) {
      impl_->ack(*c, RoomKey{*env.crdt, *env.room_id}, *env.batch_id, UpdateStatus::kRateLimited);
    }
    return;
  }
  auto msg = decode(frame);
  if (!msg.ok()) {
    size_t malformed;
    {
      std::lock_guard lk(c->mu);
      malformed = ++c->malformed;
    }
    if (malformed >= impl_->opt.max_malformed_frames) {
      impl_->close_conn(*c, kCloseProtocolError, "too many malformed sync frames");
      return;
    }
    FrameEnvelope env = peek_envelope(frame);
    if (env.crdt && env.room_id && env.batch_id && env.type) {
      RoomKey key{*env.crdt, *env.room_id};
      {
        std::lock_guard lk(c->mu);
        for (size_t i = 0; i < c->batches.size(); ++i) {
          if (c->batches[i].id == *env.batch_id && c->batches[i].room == key) {
            impl_->drop_batch_locked(*c, i);
            break;
          }
        }
        impl_->refuse_batch_locked(*c, key, *env.batch_id);
      }
      impl_->ack(*c, key, *env.batch_id, UpdateStatus::kInvalidUpdate);
    }
    return;
  }
  impl_->handle_message(c, std::move(msg).value());
}

void SyncRooms::on_text(ConnectionId id, std::string_view text) {
  auto c = impl_->find_conn(id);
  if (!c) return;
  impl_->frames_in.fetch_add(1, std::memory_order_relaxed);
  bool close = false;
  if (!impl_->take_token(*c, close)) {
    if (close) impl_->close_conn(*c, kCloseRateLimited, "too many messages");
    return;
  }
  if (parse_keepalive(text) != Keepalive::kPing) return;
  std::lock_guard lk(c->mu);
  if (!impl_->admit_locked(*c, kPong.size(), false)) return;
  impl_->frames_out.fetch_add(1, std::memory_order_relaxed);
  c->sink->send_text(std::string(kPong));
}

void SyncRooms::on_frame_written(ConnectionId id, size_t bytes) {
  auto c = impl_->find_conn(id);
  if (!c) return;
  std::lock_guard lk(c->mu);
  c->outbound -= std::min(bytes, c->outbound);
  c->exempt = std::min(c->exempt, c->outbound);
}

void SyncRooms::tick() {
  std::vector<std::shared_ptr<Conn>> all;
  {
    std::lock_guard lk(impl_->mu);
    all.reserve(impl_->conns.size());
    for (auto& [id, c] : impl_->conns) all.push_back(c);
  }
  const auto t = impl_->now();
  std::vector<ConnectionId> closed;
  for (auto& c : all) {
    std::vector<std::pair<RoomKey, BatchId>> expired;
    {
      std::lock_guard lk(c->mu);
      if (c->closed) {
        closed.push_back(c->id);
        continue;
      }
      for (size_t i = c->batches.size(); i-- > 0;) {
        if (c->batches[i].deadline <= t) {
          expired.emplace_back(c->batches[i].room, c->batches[i].id);
          impl_->drop_batch_locked(*c, i);
        }
      }
    }
    for (auto& [key, id] : expired) impl_->ack(*c, key, id, UpdateStatus::kFragmentTimeout);
  }
  for (ConnectionId id : closed) disconnect(id);
}

size_t SyncRooms::publish(const RoomKey& key, std::string_view update) {
  if (update.empty()) return 0;
  std::shared_ptr<Room> room = impl_->find_room(key);
  if (!room) return 0;
  // Fragments when too large for a frame; else within the relay window.
  std::vector<std::string> fragments;
  if (update.size() > kFragmentBytes) {
    auto frames = encode_update_frames(key.crdt, key.room_id, update, fresh_batch_id());
    if (!frames.ok()) return 0;
    fragments = std::move(frames).value();
  }
  std::lock_guard rk(room->mu);
  if (room->dead) return 0;
  if (key.crdt == CrdtType::kEphemeralPersisted) impl_->remember_eps(*room, update);
  if (fragments.empty()) {
    return impl_->relay_updates(room, 0, {std::string(update)}, fresh_batch_id());
  }
  return impl_->send_fragments_locked(*room, fragments, 0);
}

size_t SyncRooms::evict(const RoomKey& key, RoomErrorCode code, std::string_view message) {
  std::shared_ptr<Room> room = impl_->find_room(key);
  if (!room) return 0;
  size_t evicted = 0;
  {
    std::lock_guard rk(room->mu);
    for (auto& [id, m] : room->members) {
      {
        std::lock_guard lk(m.conn->mu);
        m.conn->rooms.erase(key);
      }
      impl_->deliver_one(*m.conn, Message{key.crdt, key.room_id, RoomError{code, std::string(message)}});
      ++evicted;
    }
    room->members.clear();
  }
  impl_->maybe_drop(room);
  return evicted;
}

void SyncRooms::close_all(std::string_view reason) {
  std::vector<std::shared_ptr<Conn>> all;
  {
    std::lock_guard lk(impl_->mu);
    for (auto& [id, c] : impl_->conns) all.push_back(c);
  }
  for (auto& c : all) impl_->close_conn(*c, kCloseGoingAway, reason);
}

SyncStats SyncRooms::stats() const {
  SyncStats s;
  {
    std::lock_guard lk(impl_->mu);
    s.connections = impl_->conns.size();
    s.rooms = impl_->rooms.size();
  }
  s.fragment_bytes = impl_->fragment_bytes_total.load();
  s.frames_in = impl_->frames_in.load();
  s.frames_out = impl_->frames_out.load();
  s.updates_applied = impl_->updates_applied.load();
  s.slow_consumer_closes = impl_->slow_closes.load();
  return s;
}

}  // namespace weft::server::sync
