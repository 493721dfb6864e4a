// Loro binary FastUpdates (mode 4): change blocks decoded into weft changes
// and the op log encoded as change blocks (docs/encoding.md §6-§10). The
// mapping of ops is the Loro JSON codec's (json_codec.cc): the same
// positions, signed delete lengths and mark ends.
#include <algorithm>
#include <deque>
#include <iterator>
#include <unordered_map>

#include "crdt/core.h"
#include "crdt/loro_binary.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

using loro::Reader;

// Loro's container kind bytes.
constexpr uint8_t kKindMap = 0, kKindList = 1, kKindText = 2, kKindTree = 3, kKindMovable = 4,
                  kKindCounter = 5;

Result<ContainerType> type_of_kind(uint8_t kind) {
  switch (kind) {
    case kKindMap:
      return ContainerType::kMap;
    case kKindList:
      return ContainerType::kList;
    case kKindText:
      return ContainerType::kText;
    case kKindTree:
      return ContainerType::kTree;
    case kKindMovable:
      return ContainerType::kMovableList;
    case kKindCounter:
      return ContainerType::kCounter;
    default:
      return unimplemented("Loro container kind " + std::to_string(kind) +
                           " is unknown to weft");
  }
}

uint8_t kind_of_type(ContainerType t) {
  switch (t) {
    case ContainerType::kMap:
      return kKindMap;
    case ContainerType::kList:
      return kKindList;
    case ContainerType::kText:
      return kKindText;
    case ContainerType::kTree:
      return kKindTree;
    case ContainerType::kMovableList:
      return kKindMovable;
    case ContainerType::kCounter:
      return kKindCounter;
  }
  return kKindMap;
}

Status refuse_type(ContainerType t) {
  return unimplemented("weft does not implement " + std::string(container_type_name(t)) +
                       " containers yet");
}

// Value kinds of the ops' `values` section (encoding.md §10).
enum ValueKind : uint8_t {
  kVNull = 0,
  kVTrue = 1,
  kVFalse = 2,
  kVI64 = 3,
  kVF64 = 4,
  kVStr = 5,
  kVBinary = 6,
  kVDeleteOnce = 8,
  kVDeleteSeq = 9,
  kVLoroValue = 11,
  kVMarkStart = 12,
};
// Nested LoroValue tags (§10.1).
enum NestedKind : uint8_t {
  kNNull = 0,
  kNTrue = 1,
  kNFalse = 2,
  kNI64 = 3,
  kNF64 = 4,
  kNStr = 5,
  kNBinary = 6,
  kNList = 7,
  kNMap = 8,
  kNContainer = 9,
};

// ---------------------------------------------------------------- decoding

struct BlockTables {
  std::vector<PeerId> peers;
  std::vector<std::string> keys;
};

// Reads one nested LoroValue; `id` is the contextual id of a container in it.
Status read_value(Reader& r, const BlockTables& t, ID id, size_t depth, Value& out) {
  const uint8_t tag = r.u8();
  switch (tag) {
    case kNNull:
      out = Value();
      break;
    case kNTrue:
      out = Value(true);
      break;
    case kNFalse:
      out = Value(false);
      break;
    case kNI64:
      out = Value(r.sleb());
      break;
    case kNF64:
      out = Value(r.f64be());
      break;
    case kNStr: {
      std::string_view s = r.bytes();
      if (!is_valid_utf8(s)) return loro::corrupt("a string value is not valid UTF-8");
      out = Value(s);
      break;
    }
    case kNBinary: {
      std::string_view s = r.bytes();
      out = Value(Binary{std::vector<uint8_t>(s.begin(), s.end())});
      break;
    }
    case kNList:
    case kNMap: {
      if (depth >= kMaxValueDepth) return loro::corrupt("a value nests too deep");
      // Every element takes at least one byte (a map entry two).
      const uint64_t n = r.count(tag == kNList ? r.remaining() : r.remaining() / 2,
                                 "collection size");
      if (tag == kNList) {
        ValueList list;
        list.reserve(n);
        for (uint64_t k = 0; k < n && r.ok(); ++k) {
          list.emplace_back();
          WEFT_RETURN_IF_ERROR(read_value(r, t, id, depth + 1, list.back()));
        }
        out = Value(std::move(list));
      } else {
        ValueMap map;
        for (uint64_t k = 0; k < n && r.ok(); ++k) {
          const uint64_t key = r.uleb();
          if (r.ok() && key >= t.keys.size()) return loro::corrupt("map key index out of range");
          Value v;
          WEFT_RETURN_IF_ERROR(read_value(r, t, id, depth + 1, v));
          if (r.ok()) map.insert_or_assign(t.keys[key], std::move(v));
        }
        out = Value(std::move(map));
      }
      break;
    }
    case kNContainer: {
      const uint8_t kind = r.u8();
      if (!r.ok()) break;
      WEFT_ASSIGN_OR_RETURN(ContainerType type, type_of_kind(kind));
      if (type == ContainerType::kMovableList || type == ContainerType::kTree)
        return refuse_type(type);
      out = Value(ContainerId::child(id, type));
      break;
    }
    default:
      return loro::corrupt("unknown value tag " + std::to_string(tag));
  }
  return r.status();
}

// What a style end needs of its style start.
struct MarkRef {
  Counter counter;
  uint32_t container;
  int32_t end;
};

struct DeleteRow {
  uint64_t peer;
  int64_t counter, len;
};

// A change block's frame and header (encoding.md §7-§8): the spans it
// carries and each change's length, dependencies and lamport, without its
// ops. What the decoder reads first, and all that inspect_loro_update reads.
struct BlockHead {
  uint32_t counter_start = 0, counter_len = 0, lamport_start = 0, lamport_len = 0;
  uint32_t n = 0;                 // changes
  std::string_view fields[8];     // header, meta, containers, keys, positions, ops, deletes, values
  std::vector<PeerId> peers;      // peers[0] is the block's author
  std::vector<Counter> lens;      // per change
  std::vector<SmallVec<ID, 2>> deps;
  std::vector<Lamport> lamports;
};

Status read_head_columns(std::string_view header, BlockHead& b) {
  Reader h(header);
  const uint64_t npeers = h.count(h.remaining() / 8, "peer count");
  if (h.ok() && npeers == 0) return loro::corrupt("empty peer table");
  b.peers.resize(npeers);
  for (auto& p : b.peers) p = h.u64le();
  if (b.peers.empty() || b.peers[0] == kReservedPeer)
    return h.ok() ? loro::corrupt("reserved block peer") : h.status();
  // n - 1 change lengths, each at least one byte.
  if (b.n - 1 > h.remaining()) return loro::corrupt("more changes than the header holds");
  b.lens.resize(b.n);
  uint64_t sum = 0;
  for (uint32_t k = 0; k + 1 < b.n; ++k) {
    const uint64_t len = h.count(b.counter_len, "change length");
    if (len == 0 && h.ok()) return loro::corrupt("a change of length 0");
    b.lens[k] = static_cast<Counter>(len);
    sum += len;
  }
  if (!h.ok()) return h.status();
  if (sum >= b.counter_len) return loro::corrupt("change lengths exceed the block's counter span");
  b.lens[b.n - 1] = static_cast<Counter>(b.counter_len - sum);

  std::vector<uint8_t> dep_self;
  loro::read_bool_rle(h, b.n, dep_self);
  std::vector<uint64_t> dep_counts;
  loro::read_any_rle(h, b.n, dep_counts);
  // Each dependency takes at least one bit of the counter column.
  const uint64_t most = uint64_t{h.remaining()} * 8 + 8;
  uint64_t total = 0;
  for (uint64_t c : dep_counts) {
    if (c > most || (total += c) > most) return loro::corrupt("too many dependencies");
  }
  std::vector<uint64_t> dep_peers;
  loro::read_any_rle(h, total, dep_peers);
  std::vector<int64_t> dep_counters;
  loro::read_delta_of_delta(h, total, dep_counters);
  std::vector<int64_t> lamports;
  loro::read_delta_of_delta(h, b.n - 1, lamports);
  if (!h.ok()) return h.status();
  if (!h.at_end()) return loro::corrupt("trailing bytes after the block header");

  b.deps.resize(b.n);
  b.lamports.resize(b.n);
  size_t d = 0;
  Counter at = static_cast<Counter>(b.counter_start);
  for (uint32_t k = 0; k < b.n; ++k) {
    if (dep_self[k]) {
      if (at == 0) return loro::corrupt("the first change of a peer depends on itself");
      b.deps[k].push_back(ID{b.peers[0], at - 1});
    }
    for (uint64_t j = 0; j < dep_counts[k]; ++j, ++d) {
      if (dep_peers[d] >= b.peers.size()) return loro::corrupt("dependency peer out of range");
      if (dep_counters[d] < 0 || dep_counters[d] > INT32_MAX)
        return loro::corrupt("dependency counter out of range");
      const ID dep{b.peers[dep_peers[d]], static_cast<Counter>(dep_counters[d])};
      if (dep.peer == b.peers[0] && dep.counter >= at)
        return loro::corrupt("a change depends on its own future op");
      b.deps[k].push_back(dep);
    }
    if (k + 1 < b.n) {
      if (lamports[k] < 0 || lamports[k] > UINT32_MAX) return loro::corrupt("bad lamport");
      b.lamports[k] = static_cast<Lamport>(lamports[k]);
    }
    at += b.lens[k];
  }
  const uint64_t last = uint64_t{b.lamport_start} + b.lamport_len;
  if (last < static_cast<uint64_t>(b.lens[b.n - 1])) return loro::corrupt("bad lamport span");
  b.lamports[b.n - 1] = static_cast<Lamport>(last - b.lens[b.n - 1]);
  return Status();
}


Status read_block_head(std::string_view block, BlockHead& b) {
  Reader r(block);
  const uint64_t cs = r.uleb(), cl = r.uleb(), ls = r.uleb(), ll = r.uleb(), n = r.uleb();
  for (auto& f : b.fields) f = r.bytes();
  if (!r.ok()) return r.status();
  if (!r.at_end()) return loro::corrupt("trailing bytes after a change block");
  if (cs > INT32_MAX || cl == 0 || cl > INT32_MAX - cs)
    return loro::corrupt("block counter span out of range");
  if (ls > UINT32_MAX || ll > UINT32_MAX - ls) return loro::corrupt("block lamport span out of range");
  if (n == 0 || n > cl) return loro::corrupt("bad change count");
  b.counter_start = static_cast<uint32_t>(cs);
  b.counter_len = static_cast<uint32_t>(cl);
  b.lamport_start = static_cast<uint32_t>(ls);
  b.lamport_len = static_cast<uint32_t>(ll);
  b.n = static_cast<uint32_t>(n);
  return read_head_columns(b.fields[0], b);
}

class BlockDecoder {
 public:
  BlockDecoder(DocCore& core, size_t* row_budget, std::unordered_map<ID, MarkRef>* tail_marks)
      : core_(core), row_budget_(row_budget), tail_marks_(tail_marks) {}

  Status decode(std::string_view block, std::vector<Change>& out);

 private:
  Status read_meta(std::string_view meta);
  Status read_keys(std::string_view keys);
  Status read_cids(std::string_view cids);
  Status read_ops(std::string_view ops, std::string_view dels);
  Status read_op(Reader& vals, size_t row, Op& op, const std::optional<MarkRef>& prev);

  DocCore& core_;
  size_t* row_budget_;
  std::unordered_map<ID, MarkRef>* tail_marks_;

  uint32_t counter_start_ = 0, counter_len_ = 0;
  uint32_t n_ = 0;
  BlockTables t_;
  std::vector<Counter> lens_;
  std::vector<Lamport> lamports_;
  std::vector<SmallVec<ID, 2>> deps_;
  std::vector<int64_t> timestamps_;
  std::vector<std::optional<std::string>> msgs_;
  struct Cid {
    ContainerType type;
    uint32_t index;  // interned (UINT32_MAX: a refused type)
  };
  std::vector<Cid> cids_;
  std::vector<int64_t> col_cid_, col_prop_;
  std::vector<uint8_t> col_kind_;
  std::vector<uint64_t> col_len_;
  std::vector<DeleteRow> dels_;
  size_t next_del_ = 0;
};

Status BlockDecoder::read_meta(std::string_view meta) {
  Reader m(meta);
  loro::read_delta_of_delta(m, n_, timestamps_);
  std::vector<uint64_t> lens;
  loro::read_any_rle(m, n_, lens);
  if (!m.ok()) return m.status();
  std::string_view text = m.rest();
  msgs_.assign(n_, std::nullopt);
  size_t at = 0;
  for (uint32_t k = 0; k < n_; ++k) {
    if (lens[k] > text.size() - at) return loro::corrupt("commit messages are truncated");
    if (lens[k] == 0) continue;
    std::string_view msg = text.substr(at, lens[k]);
    if (!is_valid_utf8(msg)) return loro::corrupt("a commit message is not valid UTF-8");
    msgs_[k] = std::string(msg);
    at += lens[k];
  }
  if (at != text.size()) return loro::corrupt("trailing bytes after the commit messages");
  return Status();
}

Status BlockDecoder::read_keys(std::string_view keys) {
  Reader r(keys);
  while (!r.at_end()) {
    std::string_view k = r.bytes();
    if (!r.ok()) return r.status();
    if (!is_valid_utf8(k)) return loro::corrupt("a key is not valid UTF-8");
    t_.keys.emplace_back(k);
  }
  return Status();
}

Status BlockDecoder::read_cids(std::string_view cids) {
  Reader r(cids);
  const uint64_t n = r.count(r.remaining() / 5, "container count");
  cids_.reserve(n);
  for (uint64_t k = 0; k < n && r.ok(); ++k) {
    if (r.uleb() != 4 && r.ok()) return loro::corrupt("a container row must have 4 fields");
    const uint8_t is_root = r.u8();
    const uint8_t kind = r.u8();
    const uint64_t peer = r.uleb();
    const int64_t key = r.zigzag();
    if (!r.ok()) break;
    if (is_root > 1) return loro::corrupt("bad container root flag");
    WEFT_ASSIGN_OR_RETURN(ContainerType type, type_of_kind(kind));
    ContainerId cid;
    if (is_root) {
      if (key < 0 || static_cast<uint64_t>(key) >= t_.keys.size())
        return loro::corrupt("root container name index out of range");
      if (!is_valid_root_name(t_.keys[key])) return loro::corrupt("invalid root container name");
      cid = ContainerId::root(t_.keys[key], type);
    } else {
      if (peer >= t_.peers.size()) return loro::corrupt("container peer index out of range");
      if (key < 0 || key > INT32_MAX) return loro::corrupt("container counter out of range");
      if (t_.peers[peer] == kReservedPeer) return loro::corrupt("reserved container peer");
      cid = ContainerId::child(ID{t_.peers[peer], static_cast<Counter>(key)}, type);
    }
    const bool refused = type == ContainerType::kMovableList || type == ContainerType::kTree;
    cids_.push_back({type, refused ? UINT32_MAX : core_.intern_container(cid)});
  }
  if (!r.ok()) return r.status();
  if (!r.at_end()) return loro::corrupt("trailing bytes after the containers");
  return Status();
}

// Opens a columnar vector: outer field count 1, then `ncols` columns.
Status open_columns(std::string_view bytes, size_t ncols, std::vector<std::string_view>& cols) {
  Reader r(bytes);
  if (r.uleb() != 1 && r.ok()) return loro::corrupt("a column set must have one field");
  if (r.uleb() != ncols && r.ok()) return loro::corrupt("unexpected column count");
  cols.clear();
  for (size_t k = 0; k < ncols; ++k) cols.push_back(r.bytes());
  if (!r.ok()) return r.status();
  if (!r.at_end()) return loro::corrupt("trailing bytes after the columns");
  return Status();
}

Status BlockDecoder::read_ops(std::string_view ops, std::string_view dels) {
  std::vector<std::string_view> cols;
  WEFT_RETURN_IF_ERROR(open_columns(ops, 4, cols));
  // Every op covers at least one counter; the import's budget bounds what
  // run-length columns may expand to.
  const size_t max = std::min<size_t>(counter_len_, *row_budget_);
  {
    Reader r(cols[0]);
    loro::read_delta_rle_all(r, max, 0, UINT32_MAX, col_cid_);
    WEFT_RETURN_IF_ERROR(r.status());
  }
  {
    Reader r(cols[1]);
    loro::read_delta_rle_all(r, max, INT32_MIN, INT32_MAX, col_prop_);
    WEFT_RETURN_IF_ERROR(r.status());
  }
  {
    Reader r(cols[2]);
    loro::read_any_rle_u8_all(r, max, col_kind_);
    WEFT_RETURN_IF_ERROR(r.status());
  }
  {
    Reader r(cols[3]);
    loro::read_any_rle_all(r, max, col_len_);
    WEFT_RETURN_IF_ERROR(r.status());
  }
  const size_t rows = col_cid_.size();
  if (col_prop_.size() != rows || col_kind_.size() != rows || col_len_.size() != rows)
    return loro::corrupt("op columns differ in length");
  *row_budget_ -= rows;
  if (!dels.empty()) {
    WEFT_RETURN_IF_ERROR(open_columns(dels, 3, cols));
    std::vector<int64_t> peer, counter, len;
    Reader a(cols[0]), b(cols[1]), c(cols[2]);
    loro::read_delta_rle_all(a, rows, 0, INT64_MAX, peer);
    loro::read_delta_rle_all(b, rows, 0, INT32_MAX, counter);
    loro::read_delta_rle_all(c, rows, -INT32_MAX, INT32_MAX, len);
    WEFT_RETURN_IF_ERROR(a.status());
    WEFT_RETURN_IF_ERROR(b.status());
    WEFT_RETURN_IF_ERROR(c.status());
    if (peer.size() != counter.size() || peer.size() != len.size())
      return loro::corrupt("delete columns differ in length");
    dels_.resize(peer.size());
    for (size_t k = 0; k < peer.size(); ++k)
      dels_[k] = {static_cast<uint64_t>(peer[k]), counter[k], len[k]};
  }
  return Status();
}

Status BlockDecoder::read_op(Reader& vals, size_t row, Op& op,
                             const std::optional<MarkRef>& prev) {
  const uint64_t ci = static_cast<uint64_t>(col_cid_[row]);
  if (ci >= cids_.size()) return loro::corrupt("op container index out of range");
  const Cid& cid = cids_[ci];
  if (cid.index == UINT32_MAX) return refuse_type(cid.type);
  op.container = cid.index;
  const int64_t prop = col_prop_[row];
  const uint8_t kind = col_kind_[row] & 0x7F;
  const PeerId author = t_.peers[0];
  auto bad_kind = [&] {
    return loro::corrupt("value kind " + std::to_string(kind) + " does not fit a " +
                         std::string(container_type_name(cid.type)) + " op");
  };
  auto read_delete = [&]() -> Status {
    if (next_del_ >= dels_.size()) return loro::corrupt("missing delete start id");
    const DeleteRow& d = dels_[next_del_++];
    if (d.peer >= t_.peers.size()) return loro::corrupt("delete peer index out of range");
    if (prop < 0 || d.len == 0) return loro::corrupt("delete needs pos >= 0 and len != 0");
    if (d.len < 0 && prop + d.len + 1 < 0)
      return loro::corrupt("backspace delete runs below position 0");
    op.kind = OpKind::kSeqDelete;
    op.pos = static_cast<int32_t>(prop);
    op.len = static_cast<int32_t>(d.len);
    op.start_id = ID{t_.peers[d.peer], static_cast<Counter>(d.counter)};
    return Status();
  };
  switch (cid.type) {
    case ContainerType::kText:
      if (kind == kVStr) {
        std::string_view s = vals.bytes();
        if (!vals.ok()) return vals.status();
        if (prop < 0) return loro::corrupt("negative text position");
        if (s.empty()) return loro::corrupt("empty text insert");
        // ASCII (most typing) is valid and counts a character per byte.
        size_t ascii = 0;
        while (ascii < s.size() && static_cast<uint8_t>(s[ascii]) < 0x80) ++ascii;
        if (ascii < s.size() && !is_valid_utf8(s.substr(ascii)))
          return loro::corrupt("inserted text is not valid UTF-8");
        op.kind = OpKind::kTextInsert;
        op.pos = static_cast<int32_t>(prop);
        op.text.init_utf8(s, ascii + count_unicode_unchecked(s.substr(ascii)),
                          core_.op_text_pool());
      } else if (kind == kVDeleteSeq) {
        WEFT_RETURN_IF_ERROR(read_delete());
      } else if (kind == kVMarkStart) {
        const uint8_t info = vals.u8();
        const uint64_t len = vals.uleb();
        const uint64_t key = vals.uleb();
        if (!vals.ok()) return vals.status();
        if (prop < 0 || len > uint64_t{INT32_MAX} - static_cast<uint64_t>(prop))
          return loro::corrupt("mark range out of bounds");
        if (key >= t_.keys.size()) return loro::corrupt("style key index out of range");
        Value style;
        WEFT_RETURN_IF_ERROR(read_value(vals, t_, ID{author, op.counter}, 0, style));
        if (style.is_container()) return loro::corrupt("a style value cannot be a container");
        op.kind = OpKind::kMark;
        op.info = info;
        op.pos = static_cast<int32_t>(prop);
        op.len = static_cast<int32_t>(prop + static_cast<int64_t>(len));
        op.set_key(t_.keys[key]);
        op.set_value(std::move(style));
      } else if (kind == kVNull) {
        // The style end anchor goes in at the mark's end + 1.
        std::optional<MarkRef> mark;
        if (prev && prev->counter + 1 == op.counter) {
          mark = prev;
        } else if (auto it = tail_marks_->find(ID{author, op.counter - 1});
                   it != tail_marks_->end()) {
          mark = it->second;
        } else if (const Change* pc = core_.find_change(author, op.counter - 1)) {
          for (const Op& o : pc->ops)
            if (o.counter == op.counter - 1 && o.kind == OpKind::kMark)
              mark = MarkRef{o.counter, o.container, o.len};
        }
        if (!mark || mark->container != op.container)
          return loro::corrupt("a style end does not follow its style start");
        op.kind = OpKind::kMarkEnd;
        op.len = mark->end + 1;
      } else {
        return bad_kind();
      }
      break;
    case ContainerType::kList:
      if (kind == kVLoroValue) {
        if (prop < 0) return loro::corrupt("negative list position");
        // The list's elements are read in place, each with its own id.
        if (vals.u8() != kNList && vals.ok()) return loro::corrupt("list insert of a non-list");
        const uint64_t n = vals.count(vals.remaining(), "list insert length");
        if (!vals.ok()) return vals.status();
        if (n == 0) return loro::corrupt("empty list insert");
        op.kind = OpKind::kListInsert;
        op.pos = static_cast<int32_t>(prop);
        auto& values = op.mutable_values();
        values.resize(n);
        for (uint64_t k = 0; k < n; ++k) {
          WEFT_RETURN_IF_ERROR(read_value(vals, t_, ID{author, op.counter + static_cast<Counter>(k)},
                                          1, values[k]));
        }
      } else if (kind == kVDeleteSeq) {
        WEFT_RETURN_IF_ERROR(read_delete());
      } else {
        return bad_kind();
      }
      break;
    case ContainerType::kMap:
      if (prop < 0 || static_cast<uint64_t>(prop) >= t_.keys.size())
        return loro::corrupt("map key index out of range");
      op.set_key(t_.keys[prop]);
      if (kind == kVLoroValue) {
        Value v;
        WEFT_RETURN_IF_ERROR(read_value(vals, t_, ID{author, op.counter}, 0, v));
        op.kind = OpKind::kMapSet;
        op.set_value(std::move(v));
      } else if (kind == kVDeleteOnce) {
        op.kind = OpKind::kMapDelete;
      } else {
        return bad_kind();
      }
      break;
    case ContainerType::kCounter:
      op.kind = OpKind::kCounter;
      if (kind == kVI64) {
        op.set_number(static_cast<double>(vals.sleb()));
      } else if (kind == kVF64) {
        op.set_number(vals.f64be());
      } else {
        return bad_kind();
      }
      break;
    case ContainerType::kMovableList:
    case ContainerType::kTree:
      return refuse_type(cid.type);
  }
  if (!vals.ok()) return vals.status();
  if (static_cast<uint64_t>(op.atom_len()) != col_len_[row])
    return loro::corrupt("an op's length does not match its content");
  return Status();
}

Status BlockDecoder::decode(std::string_view block, std::vector<Change>& out) {
  BlockHead b;
  WEFT_RETURN_IF_ERROR(read_block_head(block, b));
  counter_start_ = b.counter_start;
  counter_len_ = b.counter_len;
  n_ = b.n;
  t_.peers = std::move(b.peers);
  lens_ = std::move(b.lens);
  deps_ = std::move(b.deps);
  lamports_ = std::move(b.lamports);
  const std::string_view* fields = b.fields;
  WEFT_RETURN_IF_ERROR(read_meta(fields[1]));
  WEFT_RETURN_IF_ERROR(read_keys(fields[3]));
  WEFT_RETURN_IF_ERROR(read_cids(fields[2]));
  // fields[4]: Tree positions (Tree ops are refused).
  WEFT_RETURN_IF_ERROR(read_ops(fields[5], fields[6]));

  const uint32_t peer = core_.intern_peer(t_.peers[0]);
  const size_t first = out.size();
  // Each change's op count, so that its op array is allocated once (a
  // malformed block's counts are only a hint: the loop below checks it).
  std::vector<uint32_t> ops_in(n_, 0);
  {
    uint32_t k = 0;
    uint64_t end = lens_.empty() ? 0 : static_cast<uint64_t>(lens_[0]), at = 0;
    for (size_t row = 0; row < col_len_.size() && k < n_; ++row) {
      ++ops_in[k];
      at += col_len_[row];
      while (k < n_ && at >= end) {
        if (++k < n_) end += static_cast<uint64_t>(lens_[k]);
      }
    }
  }
  Counter at = static_cast<Counter>(counter_start_);
  for (uint32_t k = 0; k < n_; ++k) {
    Change& ch = out.emplace_back();
    ch.ops.reserve(ops_in[k]);
    ch.peer = peer;
    ch.counter = at;
    ch.len = lens_[k];
    ch.lamport = lamports_[k];
    ch.timestamp = timestamps_[k];
    ch.msg = std::move(msgs_[k]);
    ch.deps = std::move(deps_[k]);
    at += lens_[k];
  }
  Reader vals(fields[7]);
  size_t ci = first;
  Counter counter = static_cast<Counter>(counter_start_);
  std::optional<MarkRef> prev;  // the last op, when a style start
  for (size_t row = 0; row < col_len_.size(); ++row) {
    if (ci == out.size()) return loro::corrupt("more ops than the changes hold");
    Change& ch = out[ci];
    if (col_len_[row] == 0 || col_len_[row] > static_cast<uint64_t>(ch.end() - counter))
      return loro::corrupt("an op crosses its change's end");
    Op& op = ch.ops.emplace_back();
    op.counter = counter;
    WEFT_RETURN_IF_ERROR(read_op(vals, row, op, prev));
    counter += static_cast<Counter>(col_len_[row]);
    prev.reset();
    if (op.kind == OpKind::kMark) prev = MarkRef{op.counter, op.container, op.len};
    if (counter == ch.end()) ++ci;
  }
  if (ci != out.size()) return loro::corrupt("the ops do not cover the block's changes");
  if (next_del_ != dels_.size()) return loro::corrupt("unused delete start ids");
  if (!vals.at_end()) return loro::corrupt("trailing bytes after the op values");
  if (prev) tail_marks_->emplace(ID{t_.peers[0], prev->counter}, *prev);
  return Status();
}

// ---------------------------------------------------------------- encoding

// First-registration-order index of values (Loro's ValueRegister).
template <typename T>
struct Register {
  std::vector<T> items;
  std::unordered_map<T, uint32_t> index;
  uint32_t add(const T& v) {
    auto [it, inserted] = index.emplace(v, static_cast<uint32_t>(items.size()));
    if (inserted) items.push_back(v);
    return it->second;
  }
};

class BlockEncoder {
 public:
  explicit BlockEncoder(const DocCore& core) : core_(core) {}
  // One Loro change: weft changes joined by the commit-merge rule.
  struct LChange {
    Counter counter = 0, len = 0;
    Lamport lamport = 0;
    int64_t timestamp = 0;
    const std::optional<std::string>* msg = nullptr;
    const SmallVec<ID, 2>* deps = nullptr;
    std::vector<Op> ops;
  };
  // The change block of `changes` (one peer, counter-contiguous).
  std::string encode(PeerId peer, const std::vector<LChange>& changes);

 private:
  void write_value(const Value& v);
  const DocCore& core_;
  Register<PeerId> peers_;
  Register<std::string> keys_;
  Register<uint32_t> cids_;
  std::string values_;
};

void BlockEncoder::write_value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      values_.push_back(kNNull);
      break;
    case Value::Kind::kBool:
      values_.push_back(v.as_bool() ? kNTrue : kNFalse);
      break;
    case Value::Kind::kI64:
      values_.push_back(kNI64);
      loro::put_sleb(values_, v.as_i64());
      break;
    case Value::Kind::kF64:
      values_.push_back(kNF64);
      loro::put_f64be(values_, v.as_f64());
      break;
    case Value::Kind::kString:
      values_.push_back(kNStr);
      loro::put_bytes(values_, v.as_string());
      break;
    case Value::Kind::kBinary: {
      values_.push_back(kNBinary);
      const auto& b = v.as_binary().bytes;
      loro::put_bytes(values_,
                      std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
      break;
    }
    case Value::Kind::kList:
      values_.push_back(kNList);
      loro::put_uleb(values_, v.as_list().size());
      for (const Value& e : v.as_list()) write_value(e);
      break;
    case Value::Kind::kMap:
      values_.push_back(kNMap);
      loro::put_uleb(values_, v.as_map().size());
      for (const auto& [k, e] : v.as_map()) {
        loro::put_uleb(values_, keys_.add(k));
        write_value(e);
      }
      break;
    case Value::Kind::kContainer:
      values_.push_back(kNContainer);
      values_.push_back(static_cast<char>(kind_of_type(v.as_container().type())));
      break;
  }
}

std::string BlockEncoder::encode(PeerId peer, const std::vector<LChange>& changes) {
  peers_.add(peer);
  std::vector<int64_t> col_cid, col_prop, del_peer, del_counter, del_len;
  std::vector<uint8_t> col_kind;
  std::vector<uint64_t> col_len;
  for (const LChange& ch : changes) {
    for (const Op& op : ch.ops) {
      col_cid.push_back(cids_.add(op.container));
      int64_t prop = 0;
      uint8_t kind = kVNull;
      switch (op.kind) {
        case OpKind::kTextInsert:
          prop = op.pos;
          kind = kVStr;
          loro::put_bytes(values_, op.text.utf8());
          break;
        case OpKind::kListInsert: {
          prop = op.pos;
          kind = kVLoroValue;
          values_.push_back(kNList);
          loro::put_uleb(values_, op.values().size());
          for (const Value& v : op.values()) write_value(v);
          break;
        }
        case OpKind::kSeqDelete:
          prop = op.pos;
          kind = kVDeleteSeq;
          del_peer.push_back(peers_.add(op.start_id.peer));
          del_counter.push_back(op.start_id.counter);
          del_len.push_back(op.len);
          break;
        case OpKind::kMark:
          prop = op.pos;
          kind = kVMarkStart;
          values_.push_back(static_cast<char>(op.info));
          loro::put_uleb(values_, static_cast<uint64_t>(op.len - op.pos));
          loro::put_uleb(values_, keys_.add(op.key()));
          write_value(op.value());
          break;
        case OpKind::kMarkEnd:
          break;
        case OpKind::kMapSet:
          prop = keys_.add(op.key());
          kind = kVLoroValue;
          write_value(op.value());
          break;
        case OpKind::kMapDelete:
          prop = keys_.add(op.key());
          kind = kVDeleteOnce;
          break;
        case OpKind::kCounter: {
          const double d = op.number();
          const double a = d < 0 ? -d : d;
          // Loro's rule: integral and below 2^27 as I64, else F64.
          if (a - static_cast<double>(static_cast<int64_t>(a)) < 2.220446049250313e-16 &&
              a < static_cast<double>(2 << 26)) {
            kind = kVI64;
            loro::put_sleb(values_, static_cast<int64_t>(d));
          } else {
            kind = kVF64;
            loro::put_f64be(values_, d);
          }
          break;
        }
      }
      col_prop.push_back(prop);
      col_kind.push_back(kind);
      col_len.push_back(static_cast<uint64_t>(op.atom_len()));
    }
  }
  // Containers (names and peers register after the ops', as Loro's writer).
  std::string cids;
  loro::put_uleb(cids, cids_.items.size());
  for (uint32_t idx : cids_.items) {
    const ContainerId& c = core_.container_table()[idx];
    cids.push_back(4);
    cids.push_back(c.is_root() ? 1 : 0);
    cids.push_back(static_cast<char>(kind_of_type(c.type())));
    if (c.is_root()) {
      loro::put_uleb(cids, 0);
      loro::put_zigzag(cids, keys_.add(c.name()));
    } else {
      loro::put_uleb(cids, peers_.add(c.id().peer));
      loro::put_zigzag(cids, c.id().counter);
    }
  }
  // Change header and meta.
  std::string lengths;
  std::vector<uint8_t> dep_self;
  std::vector<uint64_t> dep_counts, dep_peers;
  std::vector<int64_t> dep_counters, lamports, timestamps;
  std::vector<uint64_t> msg_lens;
  std::string msgs;
  for (size_t k = 0; k < changes.size(); ++k) {
    const LChange& ch = changes[k];
    if (k + 1 < changes.size()) {
      loro::put_uleb(lengths, static_cast<uint64_t>(ch.len));
      lamports.push_back(ch.lamport);
    }
    timestamps.push_back(ch.timestamp);
    const std::optional<std::string>& msg = *ch.msg;
    msg_lens.push_back(msg ? msg->size() : 0);
    if (msg) msgs += *msg;
    bool self = false;
    uint64_t others = 0;
    std::vector<ID> deps(ch.deps->begin(), ch.deps->end());
    std::sort(deps.begin(), deps.end());
    for (const ID& d : deps) {
      if (d.peer == peer) {
        self = true;
        continue;
      }
      ++others;
      dep_peers.push_back(peers_.add(d.peer));
      dep_counters.push_back(d.counter);
    }
    dep_self.push_back(self);
    dep_counts.push_back(others);
  }
  std::string header;
  loro::put_uleb(header, peers_.items.size());
  for (PeerId p : peers_.items) loro::put_u64le(header, p);
  header += lengths;
  loro::write_bool_rle(header, dep_self);
  loro::write_any_rle(header, dep_counts);
  loro::write_any_rle(header, dep_peers);
  loro::write_delta_of_delta(header, dep_counters);
  loro::write_delta_of_delta(header, lamports);
  std::string meta;
  loro::write_delta_of_delta(meta, timestamps);
  loro::write_any_rle(meta, msg_lens);
  meta += msgs;

  std::string keys;
  for (const std::string& k : keys_.items) loro::put_bytes(keys, k);
  // A column set: outer field count 1, the column count, each column's bytes.
  auto column = [](std::string& out, auto write, const auto& values) {
    std::string col;
    write(col, values);
    loro::put_bytes(out, col);
  };
  auto delta = [](std::string& o, const std::vector<int64_t>& v) { loro::write_delta_rle(o, v); };
  std::string ops = {1, 4};
  column(ops, delta, col_cid);
  column(ops, delta, col_prop);
  column(ops, [](std::string& o, const auto& v) { loro::write_any_rle_u8(o, v); }, col_kind);
  column(ops, [](std::string& o, const auto& v) { loro::write_any_rle(o, v); }, col_len);
  std::string dels;
  if (!del_peer.empty()) {
    dels = {1, 3};
    column(dels, delta, del_peer);
    column(dels, delta, del_counter);
    column(dels, delta, del_len);
  }

  const LChange& last = changes.back();
  std::string block;
  loro::put_uleb(block, static_cast<uint64_t>(changes.front().counter));
  loro::put_uleb(block, static_cast<uint64_t>(last.counter + last.len - changes.front().counter));
  loro::put_uleb(block, changes.front().lamport);
  loro::put_uleb(block, last.lamport + static_cast<Lamport>(last.len) - changes.front().lamport);
  loro::put_uleb(block, changes.size());
  loro::put_bytes(block, header);
  loro::put_bytes(block, meta);
  loro::put_bytes(block, cids);
  loro::put_bytes(block, keys);
  loro::put_bytes(block, "");  // positions: no Tree ops
  loro::put_bytes(block, ops);
  loro::put_bytes(block, dels);
  loro::put_bytes(block, values_);
  return block;
}

// A block holds at most this many ops (Loro splits near 4 KB of content;
// larger blocks only save header bytes).
constexpr size_t kBlockOps = 8192;

// The change blocks of a FastUpdates or FastSnapshot (decompressed blocks
// are kept in `storage`).
Status body_blocks(std::string_view data, std::deque<std::string>& storage,
                   std::vector<std::string_view>& blocks) {
  std::string_view body;
  WEFT_ASSIGN_OR_RETURN(uint16_t mode, loro::unwrap(data, &body));
  if (mode == loro::kModeFastSnapshot) return loro::snapshot_blocks(body, storage, blocks);
  Reader r(body);
  while (!r.at_end()) {
    std::string_view b = r.bytes();
    if (!r.ok()) return r.status();
    blocks.push_back(b);
  }
  return Status();
}

}  // namespace

Result<std::vector<Change>> DocCore::decode_loro_binary(std::string_view data) {
  std::vector<std::string_view> blocks;
  std::deque<std::string> storage;
  WEFT_RETURN_IF_ERROR(body_blocks(data, storage, blocks));
  // Run-length columns may expand: all blocks together may hold at most this
  // many op rows.
  size_t budget = 256 * data.size() + 4096;
  std::unordered_map<ID, MarkRef> tail_marks;
  std::vector<Change> out;
  for (std::string_view b : blocks) {
    BlockDecoder dec(*this, &budget, &tail_marks);
    WEFT_RETURN_IF_ERROR(dec.decode(b, out));
  }
  return out;
}

std::vector<std::pair<ID, std::string>> DocCore::encode_loro_blocks(
    const VersionVector& from) const {
  std::vector<std::pair<ID, std::string>> out;
  for (uint32_t p = 0; p < by_peer.size(); ++p) {
    const PeerId real = peer_ids[p];
    const Counter start = from.get(real);
    std::vector<BlockEncoder::LChange> block;
    std::vector<Change> sliced;  // keeps sliced changes alive while referenced
    sliced.reserve(by_peer[p].size());
    size_t nops = 0;
    const Change* prev = nullptr;
    auto flush = [&] {
      if (block.empty()) return;
      BlockEncoder enc(*this);
      out.emplace_back(ID{real, block.front().counter}, enc.encode(real, block));
      block.clear();
      nops = 0;
    };
    for (uint32_t idx : by_peer[p]) {
      const Change* ch = &changes[idx];
      if (ch->end() <= start) continue;
      if (ch->counter < start) {
        sliced.push_back(slice_change(*ch, start));
        ch = &sliced.back();
      }
      const bool join = prev && !block.empty() && nops < kBlockOps &&
                        continues(*prev, *ch, block.back().timestamp, *block.back().msg);
      if (!join) {
        if (nops >= kBlockOps) flush();
        BlockEncoder::LChange& lc = block.emplace_back();
        lc.counter = ch->counter;
        lc.lamport = ch->lamport;
        lc.timestamp = ch->timestamp;
        lc.msg = &ch->msg;
        lc.deps = &ch->deps;
      }
      BlockEncoder::LChange& lc = block.back();
      lc.len += ch->len;
      for (const Op& op : ch->ops) {
        if (!lc.ops.empty() && extend_op(lc.ops.back(), op)) continue;
        lc.ops.push_back(op);
        ++nops;
      }
      prev = ch;
    }
    flush();
  }
  return out;
}

std::string DocCore::export_loro_binary(const VersionVector& from, bool snapshot) const {
  auto blocks = encode_loro_blocks(snapshot ? VersionVector() : from);
  if (snapshot) {
    return loro::wrap(loro::kModeFastSnapshot,
                      loro::snapshot_body(blocks, encode_loro_version_vector(to_public(oplog_vv)),
                                          encode_loro_frontiers(oplog_frontiers)));
  }
  std::string body;
  for (const auto& [id, block] : blocks) loro::put_bytes(body, block);
  return loro::wrap(loro::kModeFastUpdates, body);
}

}  // namespace weft::crdt::detail

namespace weft::crdt {

Result<LoroUpdateInfo> inspect_loro_update(std::string_view data) {
  std::vector<std::string_view> blocks;
  std::deque<std::string> storage;
  WEFT_RETURN_IF_ERROR(detail::body_blocks(data, storage, blocks));
  std::vector<IdSpan> raw;
  std::vector<ID> deps;
  raw.reserve(blocks.size());
  for (std::string_view block : blocks) {
    detail::BlockHead b;
    WEFT_RETURN_IF_ERROR(detail::read_block_head(block, b));
    raw.push_back(IdSpan{b.peers[0], static_cast<Counter>(b.counter_start),
                         static_cast<Counter>(b.counter_start + b.counter_len)});
    for (const auto& d : b.deps) deps.insert(deps.end(), d.begin(), d.end());
  }
  std::sort(raw.begin(), raw.end(), [](const IdSpan& a, const IdSpan& b) {
    return a.peer != b.peer ? a.peer < b.peer : a.start < b.start;
  });
  LoroUpdateInfo info;
  // Per peer: the doc must reach the first span's start, and across a gap
  // between spans the next one's start.
  for (const IdSpan& sp : raw) {
    if (!info.spans.empty() && info.spans.back().peer == sp.peer &&
        sp.start <= info.spans.back().end) {
      info.spans.back().end = std::max(info.spans.back().end, sp.end);
      continue;
    }
    info.needs.extend(sp.peer, sp.start);
    info.spans.push_back(sp);
  }
  for (const IdSpan& sp : info.spans) info.end.extend(sp.peer, sp.end);
  // A dependency inside a span is the update's own; any other one is needed.
  for (const ID& d : deps) {
    auto it = std::upper_bound(info.spans.begin(), info.spans.end(), d,
                               [](const ID& id, const IdSpan& sp) {
                                 return id.peer != sp.peer ? id.peer < sp.peer
                                                           : id.counter < sp.start;
                               });
    if (it != info.spans.begin()) {
      const IdSpan& sp = *std::prev(it);
      if (sp.peer == d.peer && d.counter < sp.end) continue;
    }
    if (d.counter >= INT32_MAX) return detail::loro::corrupt("dependency counter out of range");
    info.needs.extend(d.peer, d.counter + 1);
  }
  return info;
}

Result<std::string> join_loro_updates(const std::vector<std::string_view>& updates) {
  std::string body;
  for (std::string_view u : updates) {
    std::string_view b;
    WEFT_ASSIGN_OR_RETURN(uint16_t mode, detail::loro::unwrap(u, &b));
    if (mode != detail::loro::kModeFastUpdates)
      return unimplemented("only Loro FastUpdates (mode 4) can be joined, not a FastSnapshot");
    body.append(b);
  }
  return detail::loro::wrap(detail::loro::kModeFastUpdates, body);
}

}  // namespace weft::crdt
