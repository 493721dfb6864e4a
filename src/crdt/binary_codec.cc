// weft binary updates/snapshots: header (magic, version, kind, flags, sizes,
// checksum) + a varint body, zstd-compressed when that makes it smaller.
#include "crdt/binary_codec.h"

#include <zstd.h>

#include <cstring>

#include "crdt/core.h"
#include "weft/base/hash.h"
#include "weft/base/utf.h"
#include "weft/base/varint.h"

namespace weft::crdt::detail {
namespace {

constexpr uint8_t kFlagZstd = 1;
constexpr size_t kHeaderSize =
    4 + 4 + 4 + 4;  // magic, version/kind/flags/reserved, raw size, checksum
constexpr uint64_t kMaxRawSize = 1ull << 31;

enum ValueTag : uint8_t {
  kTagNull,
  kTagFalse,
  kTagTrue,
  kTagI64,
  kTagF64,
  kTagString,
  kTagBinary,
  kTagList,
  kTagMap,
  kTagContainer
};

struct Writer {
  std::string out;
  std::unordered_map<PeerId, uint32_t> peers;
  std::vector<PeerId> peer_list;
  std::unordered_map<ContainerId, uint32_t> cids;
  std::vector<ContainerId> cid_list;
  uint32_t peer(PeerId p) {
    auto [it, ins] = peers.emplace(p, peer_list.size());
    if (ins) peer_list.push_back(p);
    return it->second;
  }
  uint32_t cid(const ContainerId& c) {
    auto [it, ins] = cids.emplace(c, cid_list.size());
    if (ins) {
      cid_list.push_back(c);
      if (!c.is_root()) peer(c.id().peer);
    }
    return it->second;
  }
  void value(std::string& o, const Value& v) {
    switch (v.kind()) {
      case Value::Kind::kNull:
        o.push_back(kTagNull);
        break;
      case Value::Kind::kBool:
        o.push_back(v.as_bool() ? kTagTrue : kTagFalse);
        break;
      case Value::Kind::kI64:
        o.push_back(kTagI64);
        put_svarint(o, v.as_i64());
        break;
      case Value::Kind::kF64: {
        o.push_back(kTagF64);
        uint64_t bits;
        double d = v.as_f64();
        std::memcpy(&bits, &d, 8);
        put_fixed64(o, bits);
        break;
      }
      case Value::Kind::kString:
        o.push_back(kTagString);
        put_bytes(o, v.as_string());
        break;
      case Value::Kind::kBinary: {
        o.push_back(kTagBinary);
        const auto& b = v.as_binary().bytes;
        put_bytes(o, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
        break;
      }
      case Value::Kind::kList:
        o.push_back(kTagList);
        put_uvarint(o, v.as_list().size());
        for (const auto& e : v.as_list()) value(o, e);
        break;
      case Value::Kind::kMap:
        o.push_back(kTagMap);
        put_uvarint(o, v.as_map().size());
        for (const auto& [k, e] : v.as_map()) {
          put_bytes(o, k);
          value(o, e);
        }
        break;
      case Value::Kind::kContainer:
        o.push_back(kTagContainer);
        put_uvarint(o, cid(v.as_container()));
        break;
    }
  }
};

Status corrupt(std::string_view what) {
  return data_loss("corrupt weft binary data: " + std::string(what));
}

struct Reader {
  ByteReader r;
  std::vector<PeerId> peers;
  std::vector<ContainerId> cids;
  Result<PeerId> peer() {
    WEFT_ASSIGN_OR_RETURN(uint64_t i,
                          r.read_count(peers.size() ? peers.size() - 1 : 0, "peer index"));
    if (i >= peers.size()) return corrupt("peer index out of range");
    return peers[i];
  }
  Result<Counter> counter() {
    WEFT_ASSIGN_OR_RETURN(uint64_t c, r.read_count(INT32_MAX, "counter"));
    return static_cast<Counter>(c);
  }
  Result<Value> value(int depth) {
    if (depth > 64) return corrupt("values nested too deeply");
    WEFT_ASSIGN_OR_RETURN(uint8_t tag, r.read_u8());
    switch (tag) {
      case kTagNull:
        return Value();
      case kTagFalse:
        return Value(false);
      case kTagTrue:
        return Value(true);
      case kTagI64: {
        WEFT_ASSIGN_OR_RETURN(int64_t v, r.read_svarint());
        return Value(v);
      }
      case kTagF64: {
        WEFT_ASSIGN_OR_RETURN(uint64_t bits, r.read_fixed64());
        double d;
        std::memcpy(&d, &bits, 8);
        return Value(d);
      }
      case kTagString: {
        WEFT_ASSIGN_OR_RETURN(std::string_view s, r.read_bytes());
        if (!is_valid_utf8(s)) return corrupt("invalid UTF-8 in a string value");
        return Value(std::string(s));
      }
      case kTagBinary: {
        WEFT_ASSIGN_OR_RETURN(std::string_view s, r.read_bytes());
        return Value(Binary{std::vector<uint8_t>(s.begin(), s.end())});
      }
      case kTagList: {
        WEFT_ASSIGN_OR_RETURN(uint64_t n, r.read_count(r.remaining(), "list length"));
        ValueList l;
        for (uint64_t i = 0; i < n; ++i) {
          WEFT_ASSIGN_OR_RETURN(Value e, value(depth + 1));
          l.push_back(std::move(e));
        }
        return Value(std::move(l));
      }
      case kTagMap: {
        WEFT_ASSIGN_OR_RETURN(uint64_t n, r.read_count(r.remaining(), "map size"));
        ValueMap m;
        for (uint64_t i = 0; i < n; ++i) {
          WEFT_ASSIGN_OR_RETURN(std::string_view k, r.read_bytes());
          if (!is_valid_utf8(k)) return corrupt("invalid UTF-8 in a map key");
          WEFT_ASSIGN_OR_RETURN(Value e, value(depth + 1));
          m.emplace(std::string(k), std::move(e));
        }
        return Value(std::move(m));
      }
      case kTagContainer: {
        if (depth > 0) return corrupt("a container reference nested inside a value");
        WEFT_ASSIGN_OR_RETURN(uint64_t i,
                              r.read_count(cids.size() ? cids.size() - 1 : 0, "container index"));
        if (i >= cids.size()) return corrupt("container index out of range");
        return Value(cids[i]);
      }
      default:
        return corrupt("unknown value tag");
    }
  }
};

}  // namespace

std::string DocCore::export_binary(const VersionVector& from, bool snapshot) const {
  Writer w;
  std::string body;
  std::vector<const Change*> list;
  for (const Change& ch : changes) {
    if (ch.end() > from.get(peer_ids[ch.peer])) list.push_back(&ch);
  }
  put_uvarint(body, list.size());
  for (const Change* orig : list) {
    Change ch = slice_change(*orig, from.get(peer_ids[orig->peer]));
    put_uvarint(body, w.peer(peer_ids[ch.peer]));
    put_uvarint(body, static_cast<uint64_t>(ch.counter));
    put_svarint(body, ch.timestamp);
    body.push_back(ch.msg ? 1 : 0);
    if (ch.msg) put_bytes(body, *ch.msg);
    put_uvarint(body, ch.deps.size());
    for (const ID& d : ch.deps) {
      put_uvarint(body, w.peer(d.peer));
      put_uvarint(body, static_cast<uint64_t>(d.counter));
    }
    put_uvarint(body, ch.ops.size());
    for (const Op& op : ch.ops) {
      body.push_back(static_cast<char>(op.kind));
      put_uvarint(body, w.cid(containers[op.container]));
      switch (op.kind) {
        case OpKind::kTextInsert: {
          put_uvarint(body, op.pos);
          std::string s;
          for (char32_t c : op.text) append_utf8(s, c);
          put_bytes(body, s);
          break;
        }
        case OpKind::kListInsert:
          put_uvarint(body, op.pos);
          put_uvarint(body, op.values.size());
          for (const Value& v : op.values) w.value(body, v);
          break;
        case OpKind::kSeqDelete:
          put_uvarint(body, op.pos);
          put_svarint(body, op.len);
          put_uvarint(body, w.peer(op.start_id.peer));
          put_uvarint(body, static_cast<uint64_t>(op.start_id.counter));
          break;
        case OpKind::kMark:
          put_uvarint(body, op.pos);
          put_uvarint(body, op.len);
          put_bytes(body, op.key);
          w.value(body, op.value);
          body.push_back(static_cast<char>(op.info));
          break;
        case OpKind::kMarkEnd:
          put_uvarint(body, op.len);
          break;
        case OpKind::kMapSet:
          put_bytes(body, op.key);
          w.value(body, op.value);
          break;
        case OpKind::kMapDelete:
          put_bytes(body, op.key);
          break;
        case OpKind::kCounter: {
          uint64_t bits;
          std::memcpy(&bits, &op.number, 8);
          put_fixed64(body, bits);
          break;
        }
      }
    }
  }
  // Tables go first so the decoder can resolve indexes as it reads.
  std::string raw;
  put_uvarint(raw, w.peer_list.size());
  for (PeerId p : w.peer_list) put_fixed64(raw, p);
  put_uvarint(raw, w.cid_list.size());
  for (const ContainerId& c : w.cid_list) {
    raw.push_back(static_cast<char>(c.type()));
    raw.push_back(c.is_root() ? 1 : 0);
    if (c.is_root()) {
      put_bytes(raw, c.name());
    } else {
      put_uvarint(raw, w.peers.at(c.id().peer));
      put_uvarint(raw, static_cast<uint64_t>(c.id().counter));
    }
  }
  raw += body;

  std::string out(kBinaryMagic);
  out.push_back(static_cast<char>(kBinaryFormatVersion));
  out.push_back(static_cast<char>(snapshot ? kKindSnapshot : kKindUpdates));
  uint8_t flags = 0;
  std::string payload = raw;
  if (raw.size() > 256) {
    std::string z(ZSTD_compressBound(raw.size()), '\0');
    size_t n = ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 3);
    if (!ZSTD_isError(n) && n < raw.size()) {
      z.resize(n);
      payload = std::move(z);
      flags |= kFlagZstd;
    }
  }
  out.push_back(static_cast<char>(flags));
  out.push_back(0);
  put_fixed32(out, static_cast<uint32_t>(raw.size()));
  put_fixed32(out, checksum32(raw));
  out += payload;
  return out;
}

Result<std::vector<Change>> DocCore::decode_binary(std::string_view data) {
  if (data.size() < kHeaderSize || !is_weft_binary(data)) return corrupt("truncated header");
  ByteReader h(data.substr(4));
  WEFT_ASSIGN_OR_RETURN(uint8_t version, h.read_u8());
  if (version != kBinaryFormatVersion) {
    return invalid_argument("weft binary format version " + std::to_string(version) +
                            " is not supported (this build reads version 1)");
  }
  WEFT_ASSIGN_OR_RETURN(uint8_t kind, h.read_u8());
  if (kind != kKindUpdates && kind != kKindSnapshot) return corrupt("unknown payload kind");
  WEFT_ASSIGN_OR_RETURN(uint8_t flags, h.read_u8());
  WEFT_ASSIGN_OR_RETURN(uint8_t reserved, h.read_u8());
  if (reserved != 0 || (flags & ~kFlagZstd) != 0) return corrupt("unknown header flags");
  WEFT_ASSIGN_OR_RETURN(uint32_t raw_size, h.read_fixed32());
  WEFT_ASSIGN_OR_RETURN(uint32_t sum, h.read_fixed32());
  if (raw_size > kMaxRawSize) return corrupt("payload too large");
  std::string_view payload = data.substr(kHeaderSize);
  std::string raw;
  if (flags & kFlagZstd) {
    unsigned long long content = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (content != raw_size) return corrupt("compressed size mismatch");
    raw.resize(raw_size);
    size_t n = ZSTD_decompress(raw.data(), raw.size(), payload.data(), payload.size());
    if (ZSTD_isError(n) || n != raw_size) return corrupt("zstd decompression failed");
  } else {
    if (payload.size() != raw_size) return corrupt("payload size mismatch");
    raw.assign(payload);
  }
  if (checksum32(raw) != sum) return corrupt("checksum mismatch");

  Reader rd{ByteReader(raw), {}, {}};
  WEFT_ASSIGN_OR_RETURN(uint64_t np, rd.r.read_count(rd.r.remaining() / 8, "peer count"));
  for (uint64_t i = 0; i < np; ++i) {
    WEFT_ASSIGN_OR_RETURN(uint64_t p, rd.r.read_fixed64());
    if (p == kReservedPeer) return corrupt("reserved peer id");
    rd.peers.push_back(p);
  }
  WEFT_ASSIGN_OR_RETURN(uint64_t nc, rd.r.read_count(rd.r.remaining(), "container count"));
  for (uint64_t i = 0; i < nc; ++i) {
    WEFT_ASSIGN_OR_RETURN(uint8_t t, rd.r.read_u8());
    if (t > static_cast<uint8_t>(ContainerType::kCounter)) return corrupt("bad container type");
    WEFT_ASSIGN_OR_RETURN(uint8_t is_root, rd.r.read_u8());
    if (is_root) {
      WEFT_ASSIGN_OR_RETURN(std::string_view name, rd.r.read_bytes());
      if (!is_valid_root_name(name) || !is_valid_utf8(name)) return corrupt("bad root name");
      rd.cids.push_back(ContainerId::root(std::string(name), ContainerType(t)));
    } else {
      WEFT_ASSIGN_OR_RETURN(PeerId p, rd.peer());
      WEFT_ASSIGN_OR_RETURN(Counter c, rd.counter());
      rd.cids.push_back(ContainerId::child({p, c}, ContainerType(t)));
    }
  }
  WEFT_ASSIGN_OR_RETURN(uint64_t nch, rd.r.read_count(rd.r.remaining(), "change count"));
  std::vector<Change> out;
  for (uint64_t i = 0; i < nch; ++i) {
    Change ch;
    WEFT_ASSIGN_OR_RETURN(PeerId author, rd.peer());
    ch.peer = intern_peer(author);
    WEFT_ASSIGN_OR_RETURN(ch.counter, rd.counter());
    WEFT_ASSIGN_OR_RETURN(ch.timestamp, rd.r.read_svarint());
    WEFT_ASSIGN_OR_RETURN(uint8_t has_msg, rd.r.read_u8());
    if (has_msg) {
      WEFT_ASSIGN_OR_RETURN(std::string_view m, rd.r.read_bytes());
      if (!is_valid_utf8(m)) return corrupt("invalid UTF-8 in a commit message");
      ch.msg = std::string(m);
    }
    WEFT_ASSIGN_OR_RETURN(uint64_t nd, rd.r.read_count(rd.r.remaining(), "dep count"));
    for (uint64_t k = 0; k < nd; ++k) {
      WEFT_ASSIGN_OR_RETURN(PeerId p, rd.peer());
      WEFT_ASSIGN_OR_RETURN(Counter c, rd.counter());
      if (p == author && c >= ch.counter) return corrupt("a change depends on its own future");
      ch.deps.push_back({p, c});
    }
    WEFT_ASSIGN_OR_RETURN(uint64_t nops, rd.r.read_count(rd.r.remaining(), "op count"));
    if (nops == 0) return corrupt("a change without ops");
    Counter next = ch.counter;
    for (uint64_t k = 0; k < nops; ++k) {
      Op op;
      WEFT_ASSIGN_OR_RETURN(uint8_t kind, rd.r.read_u8());
      if (kind > static_cast<uint8_t>(OpKind::kCounter)) return corrupt("unknown op kind");
      op.kind = OpKind(kind);
      WEFT_ASSIGN_OR_RETURN(uint64_t ci, rd.r.read_count(rd.cids.empty() ? 0 : rd.cids.size() - 1,
                                                         "container index"));
      if (ci >= rd.cids.size()) return corrupt("container index out of range");
      const ContainerId& cid = rd.cids[ci];
      op.counter = next;
      bool seq_op = op.kind == OpKind::kListInsert || op.kind == OpKind::kSeqDelete;
      bool text_op = op.kind == OpKind::kTextInsert || op.kind == OpKind::kMark ||
                     op.kind == OpKind::kMarkEnd || op.kind == OpKind::kSeqDelete;
      bool ok = cid.type() == ContainerType::kText   ? text_op
                : cid.type() == ContainerType::kList ? seq_op
                : cid.type() == ContainerType::kMap
                    ? (op.kind == OpKind::kMapSet || op.kind == OpKind::kMapDelete)
                : cid.type() == ContainerType::kCounter ? op.kind == OpKind::kCounter
                                                        : false;
      if (!ok) {
        if (cid.type() == ContainerType::kMovableList || cid.type() == ContainerType::kTree) {
          return unimplemented("weft does not implement " +
                               std::string(container_type_name(cid.type())) + " containers yet");
        }
        return corrupt("op kind does not match its container type");
      }
      auto read_pos = [&]() -> Result<int32_t> {
        WEFT_ASSIGN_OR_RETURN(uint64_t p, rd.r.read_count(INT32_MAX, "position"));
        return static_cast<int32_t>(p);
      };
      switch (op.kind) {
        case OpKind::kTextInsert: {
          WEFT_ASSIGN_OR_RETURN(op.pos, read_pos());
          WEFT_ASSIGN_OR_RETURN(std::string_view s, rd.r.read_bytes());
          if (s.empty() || !is_valid_utf8(s)) return corrupt("bad text insert");
          for (size_t x = 0; x < s.size();) op.text.push_back(decode_utf8_unchecked(s, x));
          break;
        }
        case OpKind::kListInsert: {
          WEFT_ASSIGN_OR_RETURN(op.pos, read_pos());
          WEFT_ASSIGN_OR_RETURN(uint64_t n, rd.r.read_count(rd.r.remaining(), "value count"));
          if (n == 0) return corrupt("empty list insert");
          for (uint64_t x = 0; x < n; ++x) {
            WEFT_ASSIGN_OR_RETURN(Value v, rd.value(0));
            if (v.is_container() && (v.as_container().is_root() ||
                                     !(v.as_container().id() == ID{author, next + Counter(x)}))) {
              return corrupt("a container value does not match its op id");
            }
            op.values.push_back(std::move(v));
          }
          break;
        }
        case OpKind::kSeqDelete: {
          WEFT_ASSIGN_OR_RETURN(op.pos, read_pos());
          WEFT_ASSIGN_OR_RETURN(int64_t len, rd.r.read_svarint());
          if (len == 0 || len > INT32_MAX || len < -INT32_MAX ||
              (len < 0 && op.pos + len + 1 < 0)) {
            return corrupt("bad delete length");
          }
          op.len = static_cast<int32_t>(len);
          WEFT_ASSIGN_OR_RETURN(op.start_id.peer, rd.peer());
          WEFT_ASSIGN_OR_RETURN(op.start_id.counter, rd.counter());
          break;
        }
        case OpKind::kMark: {
          WEFT_ASSIGN_OR_RETURN(op.pos, read_pos());
          WEFT_ASSIGN_OR_RETURN(op.len, read_pos());
          WEFT_ASSIGN_OR_RETURN(std::string_view key, rd.r.read_bytes());
          if (!is_valid_utf8(key)) return corrupt("bad style key");
          op.key = std::string(key);
          WEFT_ASSIGN_OR_RETURN(op.value, rd.value(1));
          WEFT_ASSIGN_OR_RETURN(op.info, rd.r.read_u8());
          break;
        }
        case OpKind::kMarkEnd: {
          WEFT_ASSIGN_OR_RETURN(op.len, read_pos());
          break;
        }
        case OpKind::kMapSet:
        case OpKind::kMapDelete: {
          WEFT_ASSIGN_OR_RETURN(std::string_view key, rd.r.read_bytes());
          if (!is_valid_utf8(key)) return corrupt("bad map key");
          op.key = std::string(key);
          if (op.kind == OpKind::kMapSet) {
            WEFT_ASSIGN_OR_RETURN(op.value, rd.value(0));
            if (op.value.is_container() && (op.value.as_container().is_root() ||
                                            !(op.value.as_container().id() == ID{author, next}))) {
              return corrupt("a container value does not match its op id");
            }
          }
          break;
        }
        case OpKind::kCounter: {
          WEFT_ASSIGN_OR_RETURN(uint64_t bits, rd.r.read_fixed64());
          std::memcpy(&op.number, &bits, 8);
          break;
        }
      }
      op.container = intern_container(cid);
      if (int64_t(next) + op.atom_len() > INT32_MAX) return corrupt("op counter overflow");
      next += op.atom_len();
      ch.ops.push_back(std::move(op));
    }
    ch.len = next - ch.counter;
    out.push_back(std::move(ch));
  }
  if (!rd.r.at_end()) return corrupt("trailing bytes after the last change");
  return out;
}

}  // namespace weft::crdt::detail
