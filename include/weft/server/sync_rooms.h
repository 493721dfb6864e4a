// The live-sync server core behind ws://HOST:PORT/sync, independent of the
// transport: connections join rooms keyed by (CRDT type, room id) and exchange
// loro-protocol frames (sync_protocol.h).
//
//   - %LOR rooms carry a document through a SyncBackend (the kernel): join
//     asks it for the updates the client lacks, each client update is applied
//     through it and then fanned out to the other members, and the backend
//     pushes changes from any other source (agent, disk, rollback, approval)
//     with SyncRooms::publish().
//   - %EPH rooms relay ephemeral presence to the other members; nothing is kept.
//   - %EPS rooms relay too, and keep the room's recent ephemeral updates
//     (bounded in bytes) to send to each joiner, so it sees the latest state.
//   - Other CRDT types are refused at join (JoinError unknown).
//
// A transport creates a SyncConnection sink per WebSocket, registers it with
// connect(), feeds it every frame received (on_binary / on_text), reports
// bytes written (on_frame_written), calls tick() about once a second, and
// calls disconnect() when the socket ends.
//
// Caps and what answers them:
//   frame over 256 KiB                      close kCloseMessageTooLarge
//   undecodable frame                       Ack(invalid_update) when its room and
//                                           batch are readable, else ignored; the
//                                           max_malformed_frames-th closes
//                                           kCloseProtocolError
//   message rate (token bucket)             Ack(rate_limited) for updates, else
//                                           dropped; max_rate_strikes closes
//                                           kCloseRateLimited
//   connections                             connect() fails; transport closes
//                                           kCloseTooManyConnections
//   rooms per connection / rooms in total   JoinError(app_error, "too_many_rooms")
//   update size, fragment bytes             Ack(payload_too_large)
//   unfinished fragment batch               Ack(fragment_timeout), bytes freed
//   outbound bytes not yet written          close kCloseSlowConsumer (the client
//                                           reconnects and rejoins with its version);
//                                           a join's reply may exceed the cap
//
// Thread safety: every public method may be called from any thread,
// concurrently. It applies updates on threads of its own (apply_threads)
// and, with a relay window, sends the rooms' waiting relays from another
// when their windows end. Frames of one connection must be fed in order and
// not concurrently (one reader per socket). Locks: one for the registry, one
// per room (held across backend calls and the fan-out, so a room's updates
// reach every member in the order they were applied), one per connection (held while
// its sink is called, so its frames are sent in order). SyncConnection and
// SyncBackend methods are called with these locks held: they must not block
// for long and must not call back into SyncRooms on the same thread.
#ifndef WEFT_SERVER_SYNC_ROOMS_H_
#define WEFT_SERVER_SYNC_ROOMS_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "weft/base/status.h"
#include "weft/server/sync_protocol.h"

namespace weft::server::sync {

// WebSocket close codes. loro-websocket treats 4400-4499 as fatal (it does
// not reconnect); kCloseSlowConsumer is outside that range on purpose, so the
// client reconnects and catches up through its join version.
inline constexpr uint16_t kCloseGoingAway = 1001;           // server shutting down
inline constexpr uint16_t kCloseSlowConsumer = 1013;        // "try again later"
inline constexpr uint16_t kCloseProtocolError = 4400;       // repeated malformed frames
inline constexpr uint16_t kCloseUnauthorized = 4401;        // bad or missing token (transport)
inline constexpr uint16_t kCloseMessageTooLarge = 4413;     // a frame over 256 KiB
inline constexpr uint16_t kCloseRateLimited = 4429;         // kept sending over the rate
inline constexpr uint16_t kCloseTooManyConnections = 4409;  // max_connections reached

// A room: (CRDT type, room id). Room ids are block ids: "file:notes/a.md", a
// conversation id, a memory id.
struct RoomKey {
  CrdtType crdt = CrdtType::kLoro;
  std::string room_id;
  friend auto operator<=>(const RoomKey&, const RoomKey&) = default;
  friend bool operator==(const RoomKey&, const RoomKey&) = default;
};
// "%LOR:file:notes/a.md", for messages and logs.
std::string room_key_name(const RoomKey& key);

using ConnectionId = uint64_t;

// Where the core sends a connection's frames; the WebSocket transport
// implements it. Calls must not block: queue the frame and return. After
// close() the core sends nothing more on this connection.
class SyncConnection {
 public:
  virtual ~SyncConnection() = default;
  virtual void send_binary(std::string frame) = 0;
  virtual void send_text(std::string text) = 0;
  virtual void close(uint16_t code, std::string_view reason) = 0;
};

// Decides a connection's access to a room from the JoinRequest's auth
// payload: the permission, or nullopt to refuse (JoinError auth_failed).
using PermissionCallback =
    std::function<std::optional<Permission>(const RoomKey& room, std::string_view auth)>;

// A callback that grants `grant` when the auth payload equals `token`
// (constant-time) and refuses otherwise. An empty token refuses everything.
PermissionCallback token_permission(std::string token, Permission grant);

// What the backend answers to a join.
struct JoinGrant {
  Permission permission = Permission::kWrite;  // combined with the connection's: the lower wins
  std::vector<std::string> updates;            // what the client lacks, in order
  std::string version;                         // the server's version, for JoinResponseOk
};

// The document store behind %LOR rooms; the kernel implements it. Calls for
// one room are serialised (the room's lock is held); calls for different
// rooms may run concurrently. Updates that reach a room while it applies
// others wait in its intake and go to apply_batch together.
class SyncBackend {
 public:
  virtual ~SyncBackend() = default;
  // A connection joins `room` with its version. Errors: kPermissionDenied ->
  // JoinError auth_failed; kInvalidArgument / kDataLoss (unreadable version)
  // -> JoinError version_unknown (the client retries with an empty version);
  // anything else -> JoinError unknown with the status message.
  virtual Result<JoinGrant> join(const RoomKey& room, std::string_view identity,
                                 std::string_view client_version) = 0;
  // Applies one client update. Returns whether it changed the document (an
  // update already known is not fanned out again). Errors: kInvalidArgument /
  // kDataLoss -> Ack invalid_update; kPermissionDenied -> permission_denied;
  // kResourceExhausted -> payload_too_large; anything else -> unknown. On
  // error the document must be unchanged.
  virtual Result<bool> apply(const RoomKey& room, std::string_view update,
                             std::string_view identity) = 0;
  // Applies updates that arrived while the room was busy, in order (each with
  // its sender's identity): result i is what apply would answer for update i
  // after the ones before it. A backend may import several at once (one
  // replay of what they are concurrent with); the default applies them one
  // by one.
  struct Incoming {
    std::string_view update;
    std::string_view identity;
  };
  virtual std::vector<Result<bool>> apply_batch(const RoomKey& room,
                                                const std::vector<Incoming>& updates) {
    std::vector<Result<bool>> out;
    out.reserve(updates.size());
    for (const auto& u : updates) out.push_back(apply(room, u.update, u.identity));
    return out;
  }
};

struct SyncOptions {
  size_t max_connections = 256;
  size_t max_rooms = 10000;                 // rooms alive at once (idle %EPS rooms included)
  size_t max_rooms_per_connection = 64;
  size_t max_update_bytes = 64u << 20;      // one update, reassembled from fragments
  size_t max_fragment_bytes_per_connection = 64u << 20;  // partial batches of one connection
  size_t max_fragment_bytes_total = 256u << 20;          // partial batches of everyone
  size_t max_fragment_batches_per_connection = 8;
  std::chrono::milliseconds fragment_timeout{10000};
  size_t max_outbound_bytes = 32u << 20;    // sent but not yet written, per connection
  double messages_per_second = 200;         // token bucket: refill rate ...
  double message_burst = 1000;              // ... and capacity (fragments count too)
  size_t max_rate_strikes = 200;            // frames refused for rate before closing
  size_t max_malformed_frames = 16;         // undecodable frames before closing
  size_t eps_state_max_bytes = 1u << 20;    // kept per %EPS room (oldest updates dropped)
  size_t max_idle_eps_rooms = 1000;         // %EPS rooms kept with no member
  // Relays of a room that arrive within this long after its last relay wait
  // for the window's end and go out together, in one DocUpdate per member
  // (each without the member's own updates). A quiet room relays at once;
  // a busy one sends each member a message per window, not one per update
  // (loro-adaptors imports a message's updates in one importBatch). Zero
  // relays every update at once.
  std::chrono::milliseconds relay_window{16};
  // A room whose window ends with at least `relay_window_busy_updates`
  // updates doubles its window, up to this; one with a quarter of them or
  // fewer halves it, down to relay_window. A client's import costs it about
  // the same whatever a message holds, so under heavy load fewer, larger
  // messages keep its editors up to date; people typing never reach it.
  std::chrono::milliseconds relay_window_max{64};
  size_t relay_window_busy_updates = 8;
  // Threads of its own that apply the rooms' waiting updates (a busy room's
  // in batches, busy rooms in turn). 0: the thread of the frame that finds a
  // room idle applies, and keeps applying while updates come (tests).
  size_t apply_threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  // The clock (tests inject one).
  std::function<std::chrono::steady_clock::time_point()> clock;
};

struct ConnectionInfo {
  std::string identity;           // who: passed to the backend, shown in logs
  PermissionCallback permission;  // required
  std::shared_ptr<SyncConnection> sink;  // required
};

struct SyncStats {
  size_t connections = 0;
  size_t rooms = 0;
  size_t fragment_bytes = 0;    // held in partial batches
  uint64_t frames_in = 0;
  uint64_t frames_out = 0;
  uint64_t updates_applied = 0;
  uint64_t slow_consumer_closes = 0;
};

class SyncRooms {
 public:
  // `backend` carries %LOR rooms; null refuses %LOR joins (JoinError unknown).
  SyncRooms(SyncOptions options, std::shared_ptr<SyncBackend> backend);
  ~SyncRooms();
  SyncRooms(const SyncRooms&) = delete;
  SyncRooms& operator=(const SyncRooms&) = delete;

  // Registers a connection. Errors: kResourceExhausted at max_connections
  // (close the socket with kCloseTooManyConnections); kInvalidArgument when
  // the sink or permission callback is missing.
  Result<ConnectionId> connect(ConnectionInfo info);
  // The socket ended (or the core closed it): leaves every room, frees its
  // fragments. Unknown ids are ignored.
  void disconnect(ConnectionId id);

  // A binary frame from the connection.
  void on_binary(ConnectionId id, std::string_view frame);
  // A text frame: "ping" is answered "pong"; anything else is ignored.
  void on_text(ConnectionId id, std::string_view text);
  // The transport wrote `bytes` of this connection's frames to the socket.
  void on_frame_written(ConnectionId id, size_t bytes);
  // Expires fragment batches past fragment_timeout (Ack fragment_timeout) and
  // forgets connections the core closed. Call about once a second.
  void tick();

  // Pushes an update from another source to every member of `room` (a fresh
  // batch id; fragments when large), within the relay window like the
  // members' updates. For %EPS rooms it is also kept. Returns how many
  // members it goes to.
  size_t publish(const RoomKey& room, std::string_view update);
  // Sends RoomError(code, message) to every member and removes them from the
  // room (permission changed, block deleted). Returns how many were evicted.
  size_t evict(const RoomKey& room, RoomErrorCode code, std::string_view message);
  // Closes every connection with kCloseGoingAway.
  void close_all(std::string_view reason);

  SyncStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::server::sync

#endif  // WEFT_SERVER_SYNC_ROOMS_H_
