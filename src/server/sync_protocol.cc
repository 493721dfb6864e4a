// Encoder and strict decoder of loro-protocol frames.
#include "weft/server/sync_protocol.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "weft/base/utf.h"
#include "weft/base/varint.h"

namespace weft::server::sync {
namespace {

constexpr std::array<std::string_view, 7> kMagics = {"%LOR", "%EPH", "%EPS", "%YJS",
                                                     "%YAW", "%ELO", "%FLO"};

JoinErrorCode join_error_code_from(uint8_t b) {
  switch (b) {
    case 0x00: case 0x01: case 0x02: case 0x7F: return static_cast<JoinErrorCode>(b);
    default: return JoinErrorCode::kUnknown;
  }
}

RoomErrorCode room_error_code_from(uint8_t b) {
  switch (b) {
    case 0x01: case 0x02: case 0x7F: return static_cast<RoomErrorCode>(b);
    default: return RoomErrorCode::kUnknown;
  }
}

UpdateStatus update_status_from(uint8_t b) {
  switch (b) {
    case 0x00: case 0x01: case 0x03: case 0x04: case 0x05: case 0x06: case 0x07: case 0x7F:
      return static_cast<UpdateStatus>(b);
    default: return UpdateStatus::kUnknown;
  }
}

// A bounds-checked cursor whose errors name the message being read.
class Reader {
 public:
  Reader(std::string_view data, std::string_view what) : in_(data), what_(what) {}

  size_t remaining() const { return in_.remaining(); }

  Status fail(std::string_view detail) const {
    return invalid_argument("sync frame: " + std::string(what_) + ": " + std::string(detail));
  }

  Result<uint8_t> byte(std::string_view field) {
    auto b = in_.read_u8();
    if (!b.ok()) return fail("truncated " + std::string(field));
    return *b;
  }

  // A LEB128 number that must fit in 32 bits (loro-protocol's limit).
  Result<uint32_t> u32(std::string_view field) {
    auto v = in_.read_uvarint();
    if (!v.ok()) return fail("truncated or overlong " + std::string(field));
    if (*v > std::numeric_limits<uint32_t>::max()) return fail(std::string(field) + " exceeds 32 bits");
    return static_cast<uint32_t>(*v);
  }

  Result<std::string_view> var_bytes(std::string_view field) {
    WEFT_ASSIGN_OR_RETURN(uint32_t n, u32(std::string(field) + " length"));
    if (n > in_.remaining()) {
      return fail(std::string(field) + " length " + std::to_string(n) + " exceeds the " +
                  std::to_string(in_.remaining()) + " bytes left");
    }
    auto raw = in_.read_raw(n);
    if (!raw.ok()) return fail("truncated " + std::string(field));
    return *raw;
  }

  Result<std::string> var_string(std::string_view field) {
    WEFT_ASSIGN_OR_RETURN(std::string_view s, var_bytes(field));
    if (!is_valid_utf8(s)) return fail(std::string(field) + " is not valid UTF-8");
    return std::string(s);
  }

  Result<BatchId> batch_id(std::string_view field) {
    auto raw = in_.read_raw(8);
    if (!raw.ok()) return fail("missing 8-byte " + std::string(field));
    BatchId id;
    std::copy(raw->begin(), raw->end(), id.begin());
    return id;
  }

  Status finish() const {
    if (in_.remaining() != 0) {
      return fail(std::to_string(in_.remaining()) + " unexpected trailing bytes");
    }
    return Status();
  }

 private:
  ByteReader in_;
  std::string_view what_;
};

void put_var(std::string& out, std::string_view bytes) {
  put_uvarint(out, bytes.size());
  out.append(bytes);
}

void put_batch(std::string& out, const BatchId& id) {
  out.append(reinterpret_cast<const char*>(id.data()), id.size());
}

Status check_utf8(std::string_view s, std::string_view field) {
  if (!is_valid_utf8(s)) return invalid_argument("sync frame: " + std::string(field) + " is not valid UTF-8");
  return Status();
}

std::string_view type_name(MessageType t) {
  switch (t) {
    case MessageType::kJoinRequest: return "JoinRequest";
    case MessageType::kJoinResponseOk: return "JoinResponseOk";
    case MessageType::kJoinError: return "JoinError";
    case MessageType::kDocUpdate: return "DocUpdate";
    case MessageType::kDocUpdateFragmentHeader: return "DocUpdateFragmentHeader";
    case MessageType::kDocUpdateFragment: return "DocUpdateFragment";
    case MessageType::kRoomError: return "RoomError";
    case MessageType::kLeave: return "Leave";
    case MessageType::kAck: return "Ack";
  }
  return "message";
}

// Reads magic, room id and type byte.
struct Envelope {
  CrdtType crdt;
  std::string room_id;
  MessageType type;
};

Result<Envelope> read_envelope(Reader& r, std::string_view frame) {
  if (frame.size() < 4) return r.fail("shorter than the 4-byte CRDT magic");
  auto crdt = crdt_from_magic(frame.substr(0, 4));
  if (!crdt) return r.fail("unknown CRDT magic (expected %LOR, %EPH, %EPS, %YJS, %YAW, %ELO or %FLO)");
  for (int i = 0; i < 4; ++i) (void)r.byte("magic");
  WEFT_ASSIGN_OR_RETURN(std::string_view room, r.var_bytes("room id"));
  if (room.size() > kMaxRoomIdBytes) {
    return r.fail("room id is " + std::to_string(room.size()) + " bytes; the limit is 128");
  }
  if (!is_valid_utf8(room)) return r.fail("room id is not valid UTF-8");
  WEFT_ASSIGN_OR_RETURN(uint8_t type, r.byte("message type"));
  if (type > static_cast<uint8_t>(MessageType::kAck)) {
    return r.fail("unknown message type " + std::to_string(type));
  }
  return Envelope{*crdt, std::string(room), static_cast<MessageType>(type)};
}

Result<MessageBody> read_body(Reader& r, MessageType type) {
  switch (type) {
    case MessageType::kJoinRequest: {
      JoinRequest m;
      WEFT_ASSIGN_OR_RETURN(std::string_view auth, r.var_bytes("auth"));
      WEFT_ASSIGN_OR_RETURN(std::string_view version, r.var_bytes("version"));
      m.auth = auth;
      m.version = version;
      return MessageBody(std::move(m));
    }
    case MessageType::kJoinResponseOk: {
      JoinResponseOk m;
      WEFT_ASSIGN_OR_RETURN(std::string perm, r.var_string("permission"));
      if (perm == "read") {
        m.permission = Permission::kRead;
      } else if (perm == "write") {
        m.permission = Permission::kWrite;
      } else {
        return r.fail("permission must be \"read\" or \"write\"");
      }
      WEFT_ASSIGN_OR_RETURN(std::string_view version, r.var_bytes("version"));
      WEFT_ASSIGN_OR_RETURN(std::string_view extra, r.var_bytes("extra"));
      m.version = version;
      m.extra = extra;
      return MessageBody(std::move(m));
    }
    case MessageType::kJoinError: {
      JoinError m;
      WEFT_ASSIGN_OR_RETURN(uint8_t code, r.byte("error code"));
      m.code = join_error_code_from(code);
      WEFT_ASSIGN_OR_RETURN(m.message, r.var_string("message"));
      if (m.code == JoinErrorCode::kVersionUnknown && r.remaining() > 0) {
        WEFT_ASSIGN_OR_RETURN(std::string_view v, r.var_bytes("receiver version"));
        m.receiver_version = std::string(v);
      } else if (m.code == JoinErrorCode::kAppError && r.remaining() > 0) {
        WEFT_ASSIGN_OR_RETURN(std::string app, r.var_string("app code"));
        m.app_code = std::move(app);
      }
      return MessageBody(std::move(m));
    }
    case MessageType::kDocUpdate: {
      DocUpdate m;
      WEFT_ASSIGN_OR_RETURN(uint32_t count, r.u32("update count"));
      // Each update takes at least its 1-byte length, and 8 bytes of batch id follow.
      if (r.remaining() < 8 || count > r.remaining() - 8) {
        return r.fail("update count " + std::to_string(count) + " exceeds what the frame holds");
      }
      m.updates.reserve(count);
      for (uint32_t i = 0; i < count; ++i) {
        WEFT_ASSIGN_OR_RETURN(std::string_view u, r.var_bytes("update"));
        m.updates.emplace_back(u);
      }
      WEFT_ASSIGN_OR_RETURN(m.batch_id, r.batch_id("batch id"));
      return MessageBody(std::move(m));
    }
    case MessageType::kDocUpdateFragmentHeader: {
      FragmentHeader m;
      WEFT_ASSIGN_OR_RETURN(m.batch_id, r.batch_id("batch id"));
      WEFT_ASSIGN_OR_RETURN(m.fragment_count, r.u32("fragment count"));
      WEFT_ASSIGN_OR_RETURN(m.total_size, r.u32("total size"));
      return MessageBody(std::move(m));
    }
    case MessageType::kDocUpdateFragment: {
      Fragment m;
      WEFT_ASSIGN_OR_RETURN(m.batch_id, r.batch_id("batch id"));
      WEFT_ASSIGN_OR_RETURN(m.index, r.u32("fragment index"));
      WEFT_ASSIGN_OR_RETURN(std::string_view data, r.var_bytes("fragment"));
      m.data = data;
      return MessageBody(std::move(m));
    }
    case MessageType::kRoomError: {
      RoomError m;
      WEFT_ASSIGN_OR_RETURN(uint8_t code, r.byte("error code"));
      m.code = room_error_code_from(code);
      WEFT_ASSIGN_OR_RETURN(m.message, r.var_string("message"));
      return MessageBody(std::move(m));
    }
    case MessageType::kLeave:
      return MessageBody(Leave{});
    case MessageType::kAck: {
      Ack m;
      WEFT_ASSIGN_OR_RETURN(m.ref_id, r.batch_id("ref id"));
      WEFT_ASSIGN_OR_RETURN(uint8_t status, r.byte("status"));
      m.status = update_status_from(status);
      return MessageBody(std::move(m));
    }
  }
  return r.fail("unknown message type");
}

Status write_body(std::string& out, const MessageBody& body) {
  return std::visit(
      [&out](const auto& m) -> Status {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, JoinRequest>) {
          put_var(out, m.auth);
          put_var(out, m.version);
        } else if constexpr (std::is_same_v<M, JoinResponseOk>) {
          put_var(out, permission_name(m.permission));
          put_var(out, m.version);
          put_var(out, m.extra);
        } else if constexpr (std::is_same_v<M, JoinError>) {
          WEFT_RETURN_IF_ERROR(check_utf8(m.message, "message"));
          out.push_back(static_cast<char>(m.code));
          put_var(out, m.message);
          if (m.code == JoinErrorCode::kVersionUnknown && m.receiver_version) {
            put_var(out, *m.receiver_version);
          }
          if (m.code == JoinErrorCode::kAppError && m.app_code) {
            WEFT_RETURN_IF_ERROR(check_utf8(*m.app_code, "app code"));
            put_var(out, *m.app_code);
          }
        } else if constexpr (std::is_same_v<M, DocUpdate>) {
          put_uvarint(out, m.updates.size());
          for (const auto& u : m.updates) put_var(out, u);
          put_batch(out, m.batch_id);
        } else if constexpr (std::is_same_v<M, FragmentHeader>) {
          put_batch(out, m.batch_id);
          put_uvarint(out, m.fragment_count);
          put_uvarint(out, m.total_size);
        } else if constexpr (std::is_same_v<M, Fragment>) {
          put_batch(out, m.batch_id);
          put_uvarint(out, m.index);
          put_var(out, m.data);
        } else if constexpr (std::is_same_v<M, RoomError>) {
          WEFT_RETURN_IF_ERROR(check_utf8(m.message, "message"));
          out.push_back(static_cast<char>(m.code));
          put_var(out, m.message);
        } else if constexpr (std::is_same_v<M, Leave>) {
        } else if constexpr (std::is_same_v<M, Ack>) {
          put_batch(out, m.ref_id);
          out.push_back(static_cast<char>(m.status));
        }
        return Status();
      },
      body);
}

// Bytes a body takes, to size the output once (the envelope adds at most 4 + 2 + 128 + 1).
size_t body_size_hint(const MessageBody& body) {
  if (const auto* u = std::get_if<DocUpdate>(&body)) {
    size_t n = 5 + 8;
    for (const auto& x : u->updates) n += x.size() + 5;
    return n;
  }
  if (const auto* f = std::get_if<Fragment>(&body)) return f->data.size() + 32;
  return 64;
}

}  // namespace

std::string_view crdt_magic(CrdtType type) {
  return kMagics[static_cast<size_t>(type)];
}

std::optional<CrdtType> crdt_from_magic(std::string_view magic) {
  for (size_t i = 0; i < kMagics.size(); ++i) {
    if (kMagics[i] == magic) return static_cast<CrdtType>(i);
  }
  return std::nullopt;
}

std::string_view update_status_name(UpdateStatus status) {
  switch (status) {
    case UpdateStatus::kOk: return "ok";
    case UpdateStatus::kUnknown: return "unknown";
    case UpdateStatus::kPermissionDenied: return "permission_denied";
    case UpdateStatus::kInvalidUpdate: return "invalid_update";
    case UpdateStatus::kPayloadTooLarge: return "payload_too_large";
    case UpdateStatus::kRateLimited: return "rate_limited";
    case UpdateStatus::kFragmentTimeout: return "fragment_timeout";
    case UpdateStatus::kAppError: return "app_error";
  }
  return "unknown";
}

std::string_view permission_name(Permission permission) {
  return permission == Permission::kRead ? "read" : "write";
}

std::string batch_id_hex(const BatchId& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(16);
  for (uint8_t b : id) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

Result<std::string> encode(const Message& message) {
  if (message.room_id.size() > kMaxRoomIdBytes) {
    return invalid_argument("sync frame: room id is " + std::to_string(message.room_id.size()) +
                            " bytes; the limit is 128");
  }
  WEFT_RETURN_IF_ERROR(check_utf8(message.room_id, "room id"));
  std::string out;
  out.reserve(4 + 2 + message.room_id.size() + 1 + body_size_hint(message.body));
  out.append(crdt_magic(message.crdt));
  put_var(out, message.room_id);
  out.push_back(static_cast<char>(message.body.index()));
  WEFT_RETURN_IF_ERROR(write_body(out, message.body));
  if (out.size() > kMaxMessageBytes) {
    return resource_exhausted("sync frame: " + std::string(type_name(message.type())) + " is " +
                              std::to_string(out.size()) +
                              " bytes; frames are at most 262144 (send fragments)");
  }
  return out;
}

Result<Message> decode(std::string_view frame) {
  Reader r(frame, "message");
  if (frame.size() > kMaxMessageBytes) {
    return r.fail("frame is " + std::to_string(frame.size()) + " bytes; the limit is 262144");
  }
  WEFT_ASSIGN_OR_RETURN(Envelope env, read_envelope(r, frame));
  Reader typed(frame.substr(frame.size() - r.remaining()), type_name(env.type));
  WEFT_ASSIGN_OR_RETURN(MessageBody body, read_body(typed, env.type));
  WEFT_RETURN_IF_ERROR(typed.finish());
  return Message{env.crdt, std::move(env.room_id), std::move(body)};
}

FrameEnvelope peek_envelope(std::string_view frame) {
  FrameEnvelope out;
  if (frame.size() < 4) return out;
  out.crdt = crdt_from_magic(frame.substr(0, 4));
  if (!out.crdt) return out;
  ByteReader r(frame.substr(4));
  auto len = r.read_uvarint();
  if (!len.ok() || *len > kMaxRoomIdBytes || *len > r.remaining()) return out;
  auto room = r.read_raw(*len);
  if (!room.ok() || !is_valid_utf8(*room)) return out;
  out.room_id = std::string(*room);
  auto type = r.read_u8();
  if (!type.ok() || *type > static_cast<uint8_t>(MessageType::kAck)) return out;
  out.type = static_cast<MessageType>(*type);
  std::string_view id_bytes;
  if (*out.type == MessageType::kDocUpdate && r.remaining() >= 8) {
    id_bytes = frame.substr(frame.size() - 8);
  } else if ((*out.type == MessageType::kDocUpdateFragmentHeader ||
              *out.type == MessageType::kDocUpdateFragment) &&
             r.remaining() >= 8) {
    id_bytes = frame.substr(frame.size() - r.remaining(), 8);
  }
  if (id_bytes.size() == 8) {
    BatchId id;
    std::copy(id_bytes.begin(), id_bytes.end(), id.begin());
    out.batch_id = id;
  }
  return out;
}

Result<std::vector<std::string>> encode_update_frames(CrdtType crdt, std::string_view room_id,
                                                      std::string_view update,
                                                      const BatchId& batch_id,
                                                      size_t fragment_bytes) {
  fragment_bytes = std::clamp<size_t>(fragment_bytes, 1, kFragmentBytes);
  std::vector<std::string> frames;
  if (update.size() <= fragment_bytes) {
    Message m{crdt, std::string(room_id), DocUpdate{{std::string(update)}, batch_id}};
    WEFT_ASSIGN_OR_RETURN(std::string frame, encode(m));
    frames.push_back(std::move(frame));
    return frames;
  }
  if (update.size() > std::numeric_limits<uint32_t>::max()) {
    return resource_exhausted("sync: an update of " + std::to_string(update.size()) +
                              " bytes is over the protocol's 4 GiB limit");
  }
  const size_t count = (update.size() + fragment_bytes - 1) / fragment_bytes;
  frames.reserve(count + 1);
  Message header{crdt, std::string(room_id),
                 FragmentHeader{batch_id, static_cast<uint32_t>(count),
                                static_cast<uint32_t>(update.size())}};
  WEFT_ASSIGN_OR_RETURN(std::string h, encode(header));
  frames.push_back(std::move(h));
  for (size_t i = 0; i < count; ++i) {
    Message frag{crdt, std::string(room_id),
                 Fragment{batch_id, static_cast<uint32_t>(i),
                          std::string(update.substr(i * fragment_bytes, fragment_bytes))}};
    WEFT_ASSIGN_OR_RETURN(std::string f, encode(frag));
    frames.push_back(std::move(f));
  }
  return frames;
}

std::optional<Keepalive> parse_keepalive(std::string_view text) {
  if (text == kPing) return Keepalive::kPing;
  if (text == kPong) return Keepalive::kPong;
  return std::nullopt;
}

}  // namespace weft::server::sync
