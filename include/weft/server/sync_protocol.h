// The loro-protocol wire format (npm loro-protocol@0.3.0, protocol version 1),
// as loro-websocket@0.6.2 speaks it on ws://HOST:PORT/sync.
//
// A binary frame is one message: 4 magic bytes naming the CRDT ("%LOR",
// "%EPH", "%EPS", ...), a varBytes room id (at most 128 bytes, UTF-8), a type
// byte, and a payload. Frames are at most 256 KiB; a larger update travels as
// a DocUpdateFragmentHeader followed by DocUpdateFragments. Keepalive is the
// text frames "ping" / "pong", outside this envelope.
//
// Version 1 of the protocol (what the npm packages send) appends an 8-byte
// batch id to DocUpdate, answers each client batch with Ack (0x08) carrying an
// update status code, and uses 0x06 for RoomError (eviction). The version-0
// UpdateError message no longer exists: update failures are Ack statuses.
//
// decode() is strict: every length is checked against the bytes that remain,
// counts cannot exceed what the frame could hold, trailing bytes are an error,
// and what it allocates is bounded by the frame's size (the bytes it copies,
// plus one empty string object per update when a DocUpdate lists many empty
// updates). Unknown error/status
// codes decode to their "unknown" value, as loro-protocol does.
//
// Thread safety: all functions are stateless; values are plain data.
#ifndef WEFT_SERVER_SYNC_PROTOCOL_H_
#define WEFT_SERVER_SYNC_PROTOCOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "weft/base/status.h"

namespace weft::server::sync {

// Largest binary frame either side may send.
inline constexpr size_t kMaxMessageBytes = 256 * 1024;
// Largest room id, in bytes.
inline constexpr size_t kMaxRoomIdBytes = 128;
// Fragment payload size used when splitting an update (what loro-websocket
// uses: the frame limit minus room for the envelope).
inline constexpr size_t kFragmentBytes = 240 * 1024;

// The CRDT a room carries, from the frame's 4 magic bytes.
enum class CrdtType : uint8_t {
  kLoro,                  // "%LOR": a Loro document
  kEphemeral,             // "%EPH": Loro ephemeral store (presence), relayed only
  kEphemeralPersisted,    // "%EPS": ephemeral store whose latest state the server keeps
  kYjs,                   // "%YJS"
  kYjsAwareness,          // "%YAW"
  kElo,                   // "%ELO": end-to-end encrypted Loro
  kFlock,                 // "%FLO"
};
// "%LOR", "%EPH", ...
std::string_view crdt_magic(CrdtType type);
// The type for 4 magic bytes; nullopt for anything else.
std::optional<CrdtType> crdt_from_magic(std::string_view magic);

enum class MessageType : uint8_t {
  kJoinRequest = 0x00,
  kJoinResponseOk = 0x01,
  kJoinError = 0x02,
  kDocUpdate = 0x03,
  kDocUpdateFragmentHeader = 0x04,
  kDocUpdateFragment = 0x05,
  kRoomError = 0x06,
  kLeave = 0x07,
  kAck = 0x08,
};

enum class JoinErrorCode : uint8_t {
  kUnknown = 0x00,
  kVersionUnknown = 0x01,  // the requester's version could not be read; it retries empty
  kAuthFailed = 0x02,
  kAppError = 0x7F,        // carries an app_code string
};

enum class RoomErrorCode : uint8_t {
  kRejoinSuggested = 0x01,  // the client rejoins once, immediately
  kEvicted = 0x02,          // the client stays out until the application rejoins
  kUnknown = 0x7F,
};

// Ack status byte (the protocol's "update status codes").
enum class UpdateStatus : uint8_t {
  kOk = 0x00,
  kUnknown = 0x01,
  kPermissionDenied = 0x03,
  kInvalidUpdate = 0x04,
  kPayloadTooLarge = 0x05,
  kRateLimited = 0x06,
  kFragmentTimeout = 0x07,
  kAppError = 0x7F,
};
// "ok", "permission_denied", ... (the client's reason strings).
std::string_view update_status_name(UpdateStatus status);

enum class Permission : uint8_t { kRead, kWrite };
// "read" / "write".
std::string_view permission_name(Permission permission);

// 8 bytes chosen by the sender of a DocUpdate or fragment batch; Acks refer to it.
using BatchId = std::array<uint8_t, 8>;
// 16 lower-case hex digits (loro-protocol shows them with a "0x" prefix).
std::string batch_id_hex(const BatchId& id);

struct JoinRequest {
  std::string auth;     // opaque authentication payload (weft: the access token)
  std::string version;  // the requester's document version (Loro: encoded version vector)
  friend bool operator==(const JoinRequest&, const JoinRequest&) = default;
};
struct JoinResponseOk {
  Permission permission = Permission::kWrite;
  std::string version;  // the receiver's version
  std::string extra;    // extra metadata (empty when unused)
  friend bool operator==(const JoinResponseOk&, const JoinResponseOk&) = default;
};
struct JoinError {
  JoinErrorCode code = JoinErrorCode::kUnknown;
  std::string message;
  // Only with kVersionUnknown: the receiver's version.
  std::optional<std::string> receiver_version;
  // Only with kAppError: a machine-readable code such as "too_many_rooms".
  std::optional<std::string> app_code;
  friend bool operator==(const JoinError&, const JoinError&) = default;
};
struct DocUpdate {
  std::vector<std::string> updates;
  BatchId batch_id{};
  friend bool operator==(const DocUpdate&, const DocUpdate&) = default;
};
struct FragmentHeader {
  BatchId batch_id{};
  uint32_t fragment_count = 0;
  uint32_t total_size = 0;  // bytes of the reassembled update
  friend bool operator==(const FragmentHeader&, const FragmentHeader&) = default;
};
struct Fragment {
  BatchId batch_id{};
  uint32_t index = 0;
  std::string data;
  friend bool operator==(const Fragment&, const Fragment&) = default;
};
struct RoomError {
  RoomErrorCode code = RoomErrorCode::kUnknown;
  std::string message;
  friend bool operator==(const RoomError&, const RoomError&) = default;
};
struct Leave {
  friend bool operator==(const Leave&, const Leave&) = default;
};
struct Ack {
  BatchId ref_id{};  // the DocUpdate's or the fragment batch's id
  UpdateStatus status = UpdateStatus::kOk;
  friend bool operator==(const Ack&, const Ack&) = default;
};

// Alternatives are in MessageType order, so body.index() == type value.
using MessageBody = std::variant<JoinRequest, JoinResponseOk, JoinError, DocUpdate,
                                 FragmentHeader, Fragment, RoomError, Leave, Ack>;

struct Message {
  CrdtType crdt = CrdtType::kLoro;
  std::string room_id;
  MessageBody body;
  MessageType type() const { return static_cast<MessageType>(body.index()); }
  friend bool operator==(const Message&, const Message&) = default;
};

// Encodes one frame.
// Errors: kInvalidArgument when the room id is over 128 bytes or not UTF-8, or
// a string field is not UTF-8; kResourceExhausted when the frame would exceed
// kMaxMessageBytes (send the update as fragments instead).
Result<std::string> encode(const Message& message);

// Decodes one binary frame.
// Errors: kInvalidArgument naming what is wrong (unknown magic or type,
// truncated field, room id too long, trailing bytes, frame over
// kMaxMessageBytes, ...). Never crashes on any input.
Result<Message> decode(std::string_view frame);

// What decode() could read of a frame's envelope even when its body is
// malformed: lets a server answer Ack(invalid_update) to the right room and
// batch. Fields are set as far as the frame is readable.
struct FrameEnvelope {
  std::optional<CrdtType> crdt;
  std::optional<std::string> room_id;
  std::optional<MessageType> type;
  // For DocUpdate: the frame's last 8 bytes; for fragment header / fragment:
  // the 8 bytes after the type byte.
  std::optional<BatchId> batch_id;
};
FrameEnvelope peek_envelope(std::string_view frame);

// Frames carrying one update to a room: a single DocUpdate when it fits in a
// frame, else a DocUpdateFragmentHeader and ceil(size / fragment_bytes)
// fragments, all with `batch_id`. `fragment_bytes` is clamped to
// [1, kFragmentBytes]. Errors as encode().
Result<std::vector<std::string>> encode_update_frames(CrdtType crdt, std::string_view room_id,
                                                      std::string_view update,
                                                      const BatchId& batch_id,
                                                      size_t fragment_bytes = kFragmentBytes);

// Keepalive text frames.
inline constexpr std::string_view kPing = "ping";
inline constexpr std::string_view kPong = "pong";
enum class Keepalive : uint8_t { kPing, kPong };
// The keepalive a text frame is, or nullopt (other text frames are ignored).
std::optional<Keepalive> parse_keepalive(std::string_view text);

}  // namespace weft::server::sync

#endif  // WEFT_SERVER_SYNC_PROTOCOL_H_
