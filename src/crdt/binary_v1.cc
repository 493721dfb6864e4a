// Decoder for version 1 of the weft binary format (row-wise: each change,
// then each op, in full). Nothing writes it any more, but stores written
// before version 2 keep v1 snapshots and updates, so it stays readable.
#include <cstring>

#include "crdt/binary_codec.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

struct V1Reader {
  ByteReader r;
  DecodedTables t;

  Result<PeerId> peer() {
    WEFT_ASSIGN_OR_RETURN(uint64_t i, r.read_uvarint());
    if (i >= t.peers.size()) return corrupt("peer index out of range");
    return t.peers[i];
  }
  Result<Counter> counter() {
    WEFT_ASSIGN_OR_RETURN(uint64_t c, r.read_count(INT32_MAX, "counter"));
    return static_cast<Counter>(c);
  }
  Result<int32_t> pos() {
    WEFT_ASSIGN_OR_RETURN(uint64_t p, r.read_count(INT32_MAX, "position"));
    return static_cast<int32_t>(p);
  }
  // Reads the kind-specific fields of `op`, authored by `author` at `next`.
  Status op_fields(Op& op, PeerId author, Counter next);
};

Status V1Reader::op_fields(Op& op, PeerId author, Counter next) {
  switch (op.kind) {
    case OpKind::kTextInsert: {
      WEFT_ASSIGN_OR_RETURN(op.pos, pos());
      WEFT_ASSIGN_OR_RETURN(std::string_view s, r.read_bytes());
      if (s.empty() || !is_valid_utf8(s)) return corrupt("bad text insert");
      op.text.assign_utf8(s, count_unicode_unchecked(s));
      return Status();
    }
    case OpKind::kListInsert: {
      WEFT_ASSIGN_OR_RETURN(op.pos, pos());
      WEFT_ASSIGN_OR_RETURN(uint64_t n, r.read_count(r.remaining(), "value count"));
      if (n == 0) return corrupt("empty list insert");
      for (uint64_t x = 0; x < n; ++x) {
        WEFT_ASSIGN_OR_RETURN(Value v, read_value(r, t.cids, true));
        if (v.is_container() && (v.as_container().is_root() ||
                                 !(v.as_container().id() == ID{author, next + Counter(x)}))) {
          return corrupt("a container value does not match its op id");
        }
        op.mutable_values().push_back(std::move(v));
      }
      return Status();
    }
    case OpKind::kSeqDelete: {
      WEFT_ASSIGN_OR_RETURN(op.pos, pos());
      WEFT_ASSIGN_OR_RETURN(int64_t len, r.read_svarint());
      if (len == 0 || len > INT32_MAX || len < -INT32_MAX || (len < 0 && op.pos + len + 1 < 0)) {
        return corrupt("bad delete length");
      }
      op.len = static_cast<int32_t>(len);
      WEFT_ASSIGN_OR_RETURN(op.start_id.peer, peer());
      WEFT_ASSIGN_OR_RETURN(op.start_id.counter, counter());
      return Status();
    }
    case OpKind::kMark: {
      WEFT_ASSIGN_OR_RETURN(op.pos, pos());
      WEFT_ASSIGN_OR_RETURN(op.len, pos());
      WEFT_ASSIGN_OR_RETURN(std::string_view key, r.read_bytes());
      if (!is_valid_utf8(key)) return corrupt("bad style key");
      op.set_key(std::string(key));
      WEFT_ASSIGN_OR_RETURN(Value v, read_value(r, t.cids, false));
      op.set_value(std::move(v));
      WEFT_ASSIGN_OR_RETURN(op.info, r.read_u8());
      return Status();
    }
    case OpKind::kMarkEnd: {
      WEFT_ASSIGN_OR_RETURN(op.len, pos());
      return Status();
    }
    case OpKind::kMapSet:
    case OpKind::kMapDelete: {
      WEFT_ASSIGN_OR_RETURN(std::string_view key, r.read_bytes());
      if (!is_valid_utf8(key)) return corrupt("bad map key");
      op.set_key(std::string(key));
      if (op.kind == OpKind::kMapSet) {
        WEFT_ASSIGN_OR_RETURN(Value v, read_value(r, t.cids, true));
        if (v.is_container() &&
            (v.as_container().is_root() || !(v.as_container().id() == ID{author, next}))) {
          return corrupt("a container value does not match its op id");
        }
        op.set_value(std::move(v));
      }
      return Status();
    }
    case OpKind::kCounter: {
      WEFT_ASSIGN_OR_RETURN(uint64_t bits, r.read_fixed64());
      double number = 0;
      std::memcpy(&number, &bits, 8);
      op.set_number(number);
      return Status();
    }
  }
  return corrupt("unknown op kind");
}

}  // namespace

Result<std::vector<Change>> decode_body_v1(DocCore& core, std::string_view raw) {
  V1Reader rd{ByteReader(raw), {}};
  WEFT_RETURN_IF_ERROR(rd.t.read(rd.r));
  WEFT_ASSIGN_OR_RETURN(uint64_t nch, rd.r.read_count(rd.r.remaining(), "change count"));
  std::vector<Change> out;
  for (uint64_t i = 0; i < nch; ++i) {
    Change ch;
    WEFT_ASSIGN_OR_RETURN(PeerId author, rd.peer());
    ch.peer = core.intern_peer(author);
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
      WEFT_ASSIGN_OR_RETURN(uint64_t ci, rd.r.read_uvarint());
      if (ci >= rd.t.cids.size()) return corrupt("container index out of range");
      const ContainerId& cid = rd.t.cids[ci];
      WEFT_RETURN_IF_ERROR(check_op_target(op.kind, cid));
      op.counter = next;
      WEFT_RETURN_IF_ERROR(rd.op_fields(op, author, next));
      op.container = core.intern_container(cid);
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
