// The state section of a version-2 snapshot: every container's current value
// in a plain form, so a snapshot can be loaded into an empty doc by
// installing the history and this state instead of replaying the history.
#include <algorithm>
#include <cstring>

#include "crdt/binary_codec.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {

void write_state_section(const DocCore& core, const std::vector<uint32_t>& containers,
                         BinaryTables& tables, std::string& out) {
  put_uvarint(out, containers.size());
  for (uint32_t idx : containers) {
    put_uvarint(out, tables.cid(core.container_table()[idx]));
    const ContainerState* cs =
        idx < core.live().containers.size() ? core.live().containers[idx].get() : nullptr;
    switch (core.container_table()[idx].type()) {
      case ContainerType::kText: {
        Value v = core.container_value(core.live(), idx, false);
        put_bytes(out, v.kind() == Value::Kind::kString ? v.as_string() : std::string());
        break;
      }
      case ContainerType::kList: {
        Value v = core.container_value(core.live(), idx, false);
        const ValueList empty;
        const ValueList& l = v.kind() == Value::Kind::kList ? v.as_list() : empty;
        put_uvarint(out, l.size());
        for (const Value& e : l) write_value(out, e, tables);
        break;
      }
      case ContainerType::kMap: {
        size_t n = 0;
        if (cs) {
          for (const auto& [key, e] : cs->map().entries()) n += e.written ? 1 : 0;
        }
        put_uvarint(out, n);
        if (!cs) break;
        for (const auto& [key, e] : cs->map().entries()) {
          if (!e.written) continue;
          put_bytes(out, key);
          put_uvarint(out, tables.peer(e.peer));
          put_uvarint(out, e.lamport);
          out.push_back(e.value ? 1 : 0);
          if (e.value) write_value(out, *e.value, tables);
        }
        break;
      }
      case ContainerType::kCounter: {
        double d = cs ? cs->counter().value() : 0;
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        put_fixed64(out, bits);
        break;
      }
      case ContainerType::kMovableList:
      case ContainerType::kTree:
        break;  // never written: the encoder has no ops for them
    }
  }
}

Result<SnapshotState> read_state_section(ByteReader& r, const DecodedTables& t,
                                         const std::vector<uint32_t>& local_cid) {
  SnapshotState out;
  // Every entry takes at least two bytes (container index, a length or value).
  WEFT_ASSIGN_OR_RETURN(uint64_t n, r.read_count(r.remaining() / 2, "state entry count"));
  std::vector<bool> seen(t.cids.size(), false);
  out.entries.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    WEFT_ASSIGN_OR_RETURN(uint64_t ci, r.read_uvarint());
    if (ci >= t.cids.size() || seen[ci]) return corrupt("bad state container index");
    seen[ci] = true;
    SnapshotState::Entry e;
    e.container = local_cid[ci];
    e.type = t.cids[ci].type();
    switch (e.type) {
      case ContainerType::kText: {
        WEFT_ASSIGN_OR_RETURN(std::string_view s, r.read_bytes());
        if (!is_valid_utf8(s)) return corrupt("invalid UTF-8 in a text state");
        e.text = std::string(s);
        break;
      }
      case ContainerType::kList: {
        WEFT_ASSIGN_OR_RETURN(uint64_t len, r.read_count(r.remaining(), "list state length"));
        e.list.reserve(len);
        for (uint64_t k = 0; k < len; ++k) {
          WEFT_ASSIGN_OR_RETURN(Value v, read_value(r, t.cids, true));
          if (v.is_container() && v.as_container().is_root()) {
            return corrupt("a root container inside a list state");
          }
          e.list.push_back(std::move(v));
        }
        break;
      }
      case ContainerType::kMap: {
        WEFT_ASSIGN_OR_RETURN(uint64_t len, r.read_count(r.remaining() / 4, "map state size"));
        for (uint64_t k = 0; k < len; ++k) {
          WEFT_ASSIGN_OR_RETURN(std::string_view key, r.read_bytes());
          if (!is_valid_utf8(key)) return corrupt("invalid UTF-8 in a map state key");
          MapEntry m;
          m.written = true;
          WEFT_ASSIGN_OR_RETURN(uint64_t pi, r.read_uvarint());
          if (pi >= t.peers.size()) return corrupt("peer index out of range");
          m.peer = t.peers[pi];
          WEFT_ASSIGN_OR_RETURN(uint64_t lamport, r.read_count(UINT32_MAX, "lamport"));
          m.lamport = static_cast<Lamport>(lamport);
          WEFT_ASSIGN_OR_RETURN(uint8_t present, r.read_u8());
          if (present > 1) return corrupt("bad map state flag");
          if (present) {
            WEFT_ASSIGN_OR_RETURN(Value v, read_value(r, t.cids, true));
            if (v.is_container() && v.as_container().is_root()) {
              return corrupt("a root container inside a map state");
            }
            m.value = std::move(v);
          }
          if (!e.map.empty() && !(e.map.back().first < key)) {
            return corrupt("map state keys out of order");
          }
          e.map.emplace_back(std::string(key), std::move(m));
        }
        break;
      }
      case ContainerType::kCounter: {
        WEFT_ASSIGN_OR_RETURN(uint64_t bits, r.read_fixed64());
        std::memcpy(&e.counter, &bits, 8);
        break;
      }
      case ContainerType::kMovableList:
      case ContainerType::kTree:
        return unimplemented("weft does not implement " + std::string(container_type_name(e.type)) +
                             " containers yet");
    }
    out.entries.push_back(std::move(e));
  }
  return out;
}

namespace {

// Whether a container of `type` can be set from its plain value (Text and
// List need the plain sequence state, which tests may switch off).
bool installable(const DocCore& core, ContainerType type) {
  switch (type) {
    case ContainerType::kMap:
    case ContainerType::kCounter:
      return true;
    case ContainerType::kText:
    case ContainerType::kList:
      return core.test_options().plain_enabled && core.live().plain;
    default:
      return false;
  }
}

}  // namespace

bool can_install_snapshot(const DocCore& core, const DecodedBody& body) {
  if (!body.state || !core.changes.empty() || !core.pending.empty() || core.detached ||
      core.has_subscribers() || core.txn_open()) {
    return false;
  }
  for (const SnapshotState::Entry& e : body.state->entries) {
    if (!installable(core, e.type)) return false;
  }
  // The history must be appendable as it stands: each change continues its
  // author's counters and depends only on what precedes it.
  std::vector<Counter> end(core.peer_ids.size(), 0);
  for (const Change& ch : body.changes) {
    if (ch.peer >= end.size() || ch.counter != end[ch.peer]) return false;
    for (const ID& d : ch.deps) {
      auto it = core.peer_index.find(d.peer);
      if (it == core.peer_index.end() || it->second >= end.size() || d.counter >= end[it->second])
        return false;
    }
    end[ch.peer] = ch.end();
  }
  return true;
}

ImportStatus install_snapshot(DocCore& core, DecodedBody& body) {
  ImportStatus status;
  for (Change& ch : body.changes) {
    const IdSpan span{core.real_peer(ch.peer), ch.counter, ch.end()};
    core.append_change(std::move(ch));
    auto it = std::find_if(status.success.begin(), status.success.end(),
                           [&](const IdSpan& s) { return s.peer == span.peer; });
    if (it != status.success.end()) {
      it->end = span.end;  // a snapshot holds each peer's history from 0, in order
    } else {
      status.success.push_back(span);
    }
  }
  State& s = *core.state;
  s.vv = core.oplog_vv;
  s.vv_total = s.vv.total();
  for (SnapshotState::Entry& e : body.state->entries) {
    ContainerState& cs = core.container_state(s, e.container);
    switch (e.type) {
      case ContainerType::kMap:
        for (auto& [key, entry] : e.map) cs.map().install(std::move(key), std::move(entry));
        break;
      case ContainerType::kCounter:
        cs.counter().install(e.counter);
        break;
      case ContainerType::kText:
        // Cannot fail: the text was validated as UTF-8 and the type checked.
        core.set_plain_text(s, e.container, e.text).ignore_error();
        break;
      case ContainerType::kList:
        core.set_plain_list(s, e.container, std::move(e.list)).ignore_error();
        break;
      default:
        break;  // excluded by can_install_snapshot
    }
  }
  core.state_frontiers = core.oplog_frontiers;
  return status;
}

}  // namespace weft::crdt::detail
