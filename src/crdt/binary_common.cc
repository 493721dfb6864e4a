// Pieces of the weft binary format shared by every version: the 16-byte
// header (magic, version, kind, flags, raw size, checksum) with optional zstd,
// the peer and container tables, and tagged values.
#include <zstd.h>

#include <cstring>
#include <memory>

#include "crdt/binary_codec.h"
#include "weft/base/hash.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

constexpr uint8_t kFlagZstd = 1;
// The checksum covers the stored (compressed) body, so a reader verifies it
// before decompressing: a corrupt frame never reaches zstd, and the hash
// reads a third as many bytes. Set by every writer with kFlagZstd; without it
// a compressed body's checksum is of the decompressed body (older writers).
constexpr uint8_t kFlagStoredChecksum = 2;
constexpr size_t kHeaderSize = 16;  // magic, version/kind/flags/reserved, raw size, checksum
constexpr uint64_t kMaxRawSize = 1ull << 31;
// Bodies smaller than this stay raw: zstd's frame overhead would eat the gain.
constexpr size_t kCompressMin = 256;
// zstd levels. Updates (sent and persisted often) use 9: ~10% smaller than 3
// at tens of MB/s. Snapshots (written at compaction, kept for the long run)
// spend more: 19 for small bodies, 16 (most of 19's gain at a third of its
// time) up to 4 MiB, then 9 to bound the cost. `fast` (frequent snapshot
// writes such as a store's compaction) takes level 3: a few ms on a 100 KB
// doc where 19 takes ~100 ms, for ~20% more bytes.
int zstd_level(uint8_t kind, size_t raw_size, bool fast) {
  if (fast) return 3;
  if (kind != kKindSnapshot) return 9;
  if (raw_size <= (256u << 10)) return 19;
  if (raw_size <= (4u << 20)) return 16;
  return 9;
}

// Compresses `raw` into `out` (of ZSTD_compressBound size); returns the
// frame's size or a zstd error code. Updates (level 9) take matches of at
// least 6 bytes: about the same size as zstd's default of 5 at that level,
// and fewer instructions to decompress (fewer, longer sequences). Snapshots keep the default, which is a little
// smaller at their higher levels, and their size is what they are for.
// (A context per call, as ZSTD_compress makes one: a kept one would hold the
// tables of the largest snapshot it ever compressed, tens of MB at level 19.)
size_t compress_body(const std::string& raw, std::string& out, uint8_t kind, bool fast) {
  struct Free {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  const std::unique_ptr<ZSTD_CCtx, Free> cctx(ZSTD_createCCtx());
  const int level = zstd_level(kind, raw.size(), fast);
  if (!cctx) return ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
  if (kind != kKindSnapshot && !fast) ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_minMatch, 6);
  return ZSTD_compress2(cctx.get(), out.data(), out.size(), raw.data(), raw.size());
}

// This thread's zstd decompression context, reused across imports:
// ZSTD_decompress would allocate (and for its ~160 KiB, map) a new one each
// time. nullptr when it cannot be allocated (the next call tries again).
ZSTD_DCtx* thread_dctx() {
  struct Free {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, Free> dctx;
  if (!dctx) dctx.reset(ZSTD_createDCtx());
  return dctx.get();
}

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

}  // namespace

Status corrupt(std::string_view what) {
  return data_loss("corrupt weft binary data: " + std::string(what));
}

uint32_t BinaryTables::peer(PeerId p) {
  auto [it, inserted] = peers.emplace(p, static_cast<uint32_t>(peer_list.size()));
  if (inserted) peer_list.push_back(p);
  return it->second;
}

uint32_t BinaryTables::cid(const ContainerId& c) {
  auto [it, inserted] = cids.emplace(c, static_cast<uint32_t>(cid_list.size()));
  if (inserted) {
    cid_list.push_back(c);
    if (!c.is_root()) peer(c.id().peer);
  }
  return it->second;
}

void BinaryTables::write(std::string& out) const {
  put_uvarint(out, peer_list.size());
  for (PeerId p : peer_list) put_fixed64(out, p);
  put_uvarint(out, cid_list.size());
  for (const ContainerId& c : cid_list) {
    out.push_back(static_cast<char>(c.type()));
    out.push_back(c.is_root() ? 1 : 0);
    if (c.is_root()) {
      put_bytes(out, c.name());
    } else {
      put_uvarint(out, peers.at(c.id().peer));
      put_uvarint(out, static_cast<uint64_t>(c.id().counter));
    }
  }
}

Status DecodedTables::read(ByteReader& r) {
  WEFT_ASSIGN_OR_RETURN(uint64_t np, r.read_count(r.remaining() / 8, "peer count"));
  peers.reserve(np);
  for (uint64_t i = 0; i < np; ++i) {
    WEFT_ASSIGN_OR_RETURN(uint64_t p, r.read_fixed64());
    if (p == kReservedPeer) return corrupt("reserved peer id");
    peers.push_back(p);
  }
  WEFT_ASSIGN_OR_RETURN(uint64_t nc, r.read_count(r.remaining() / 2, "container count"));
  cids.reserve(nc);
  for (uint64_t i = 0; i < nc; ++i) {
    WEFT_ASSIGN_OR_RETURN(uint8_t t, r.read_u8());
    if (t > static_cast<uint8_t>(ContainerType::kCounter)) return corrupt("bad container type");
    WEFT_ASSIGN_OR_RETURN(uint8_t is_root, r.read_u8());
    if (is_root > 1) return corrupt("bad container flag");
    if (is_root) {
      WEFT_ASSIGN_OR_RETURN(std::string_view name, r.read_bytes());
      if (!is_valid_root_name(name) || !is_valid_utf8(name)) return corrupt("bad root name");
      cids.push_back(ContainerId::root(std::string(name), ContainerType(t)));
    } else {
      WEFT_ASSIGN_OR_RETURN(uint64_t pi, r.read_uvarint());
      if (pi >= peers.size()) return corrupt("peer index out of range");
      WEFT_ASSIGN_OR_RETURN(uint64_t c, r.read_count(INT32_MAX, "counter"));
      cids.push_back(ContainerId::child({peers[pi], static_cast<Counter>(c)}, ContainerType(t)));
    }
  }
  return Status();
}

void write_value(std::string& o, const Value& v, BinaryTables& t) {
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
      for (const auto& e : v.as_list()) write_value(o, e, t);
      break;
    case Value::Kind::kMap:
      o.push_back(kTagMap);
      put_uvarint(o, v.as_map().size());
      for (const auto& [k, e] : v.as_map()) {
        put_bytes(o, k);
        write_value(o, e, t);
      }
      break;
    case Value::Kind::kContainer:
      o.push_back(kTagContainer);
      put_uvarint(o, t.cid(v.as_container()));
      break;
  }
}

namespace {

// `depth`: the lists and maps around the value being read.
Result<Value> read_value_at(ByteReader& r, const std::vector<ContainerId>& cids,
                            bool allow_container, size_t depth) {
  WEFT_ASSIGN_OR_RETURN(uint8_t tag, r.read_u8());
  if ((tag == kTagList || tag == kTagMap) && depth >= kMaxValueDepth) {
    return corrupt("a value nests lists and maps deeper than " + std::to_string(kMaxValueDepth) +
                   " levels");
  }
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
      // Every element takes at least one byte, which bounds the count.
      WEFT_ASSIGN_OR_RETURN(uint64_t n, r.read_count(r.remaining(), "list length"));
      ValueList l;
      l.reserve(n);
      for (uint64_t i = 0; i < n; ++i) {
        WEFT_ASSIGN_OR_RETURN(Value e, read_value_at(r, cids, false, depth + 1));
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
        WEFT_ASSIGN_OR_RETURN(Value e, read_value_at(r, cids, false, depth + 1));
        m.emplace(std::string(k), std::move(e));
      }
      return Value(std::move(m));
    }
    case kTagContainer: {
      if (!allow_container) return corrupt("a container reference nested inside a value");
      WEFT_ASSIGN_OR_RETURN(uint64_t i, r.read_uvarint());
      if (i >= cids.size()) return corrupt("container index out of range");
      return Value(cids[i]);
    }
    default:
      return corrupt("unknown value tag");
  }
}

}  // namespace

Result<Value> read_value(ByteReader& r, const std::vector<ContainerId>& cids,
                         bool allow_container) {
  return read_value_at(r, cids, allow_container, 0);
}

Status check_op_target(OpKind kind, const ContainerId& cid) {
  const bool seq_op = kind == OpKind::kListInsert || kind == OpKind::kSeqDelete;
  const bool text_op = kind == OpKind::kTextInsert || kind == OpKind::kMark ||
                       kind == OpKind::kMarkEnd || kind == OpKind::kSeqDelete;
  bool ok = false;
  switch (cid.type()) {
    case ContainerType::kText:
      ok = text_op;
      break;
    case ContainerType::kList:
      ok = seq_op;
      break;
    case ContainerType::kMap:
      ok = kind == OpKind::kMapSet || kind == OpKind::kMapDelete;
      break;
    case ContainerType::kCounter:
      ok = kind == OpKind::kCounter;
      break;
    case ContainerType::kMovableList:
    case ContainerType::kTree:
      return unimplemented("weft does not implement " +
                           std::string(container_type_name(cid.type())) + " containers yet");
  }
  if (!ok) return corrupt("op kind does not match its container type");
  return Status();
}

std::string seal_payload(const std::string& raw, uint8_t kind, bool fast) {
  std::string out(kBinaryMagic);
  out.push_back(static_cast<char>(kBinaryFormatVersion));
  out.push_back(static_cast<char>(kind));
  uint8_t flags = 0;
  std::string compressed;
  if (raw.size() > kCompressMin) {
    compressed.resize(ZSTD_compressBound(raw.size()));
    size_t n = compress_body(raw, compressed, kind, fast);
    if (!ZSTD_isError(n) && n < raw.size()) {
      compressed.resize(n);
      flags |= kFlagZstd | kFlagStoredChecksum;
    }
  }
  const std::string& body = (flags & kFlagZstd) ? compressed : raw;
  out.push_back(static_cast<char>(flags));
  out.push_back(0);
  put_fixed32(out, static_cast<uint32_t>(raw.size()));
  put_fixed32(out, checksum32(body));
  out += body;
  return out;
}

Result<OpenedPayload> open_payload(std::string_view data) {
  if (data.size() < kHeaderSize || !is_weft_binary(data)) return corrupt("truncated header");
  ByteReader h(data.substr(4));
  OpenedPayload out;
  WEFT_ASSIGN_OR_RETURN(out.version, h.read_u8());
  if (out.version != kBinaryFormatVersion && out.version != kBinaryFormatV1) {
    return invalid_argument("weft binary format version " + std::to_string(out.version) +
                            " is not supported (this build reads versions 1 and 2)");
  }
  WEFT_ASSIGN_OR_RETURN(out.kind, h.read_u8());
  if (out.kind != kKindUpdates && out.kind != kKindSnapshot) return corrupt("unknown payload kind");
  WEFT_ASSIGN_OR_RETURN(uint8_t flags, h.read_u8());
  WEFT_ASSIGN_OR_RETURN(uint8_t reserved, h.read_u8());
  if (reserved != 0 || (flags & ~(kFlagZstd | kFlagStoredChecksum)) != 0 ||
      flags == kFlagStoredChecksum) {
    return corrupt("unknown header flags");
  }
  WEFT_ASSIGN_OR_RETURN(uint32_t raw_size, h.read_fixed32());
  WEFT_ASSIGN_OR_RETURN(uint32_t sum, h.read_fixed32());
  if (raw_size > kMaxRawSize) return corrupt("payload too large");
  std::string_view payload = data.substr(kHeaderSize);
  if ((flags & kFlagStoredChecksum) && checksum32(payload) != sum) {
    return corrupt("checksum mismatch");
  }
  if (flags & kFlagZstd) {
    unsigned long long content = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (content != raw_size) return corrupt("compressed size mismatch");
    // The frame must fill the payload exactly (no trailing bytes).
    size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
    if (ZSTD_isError(frame) || frame != payload.size()) return corrupt("bad zstd frame");
    ZSTD_DCtx* dctx = thread_dctx();
    if (!dctx) return unavailable("out of memory for a zstd decompression context; retry later");
    // Not zeroed first: zstd writes every byte it reports.
    out.buffer = std::make_unique_for_overwrite<char[]>(raw_size);
    size_t n =
        ZSTD_decompressDCtx(dctx, out.buffer.get(), raw_size, payload.data(), payload.size());
    if (ZSTD_isError(n) || n != raw_size) return corrupt("zstd decompression failed");
    out.raw = std::string_view(out.buffer.get(), raw_size);
  } else {
    if (payload.size() != raw_size) return corrupt("payload size mismatch");
    out.raw = payload;
  }
  if (!(flags & kFlagStoredChecksum) && checksum32(out.raw) != sum) {
    return corrupt("checksum mismatch");
  }
  return out;
}

}  // namespace weft::crdt::detail
