// Loro JSON updates (schema_version 1): decoding into changes and encoding
// the op log (see loro-json.md §2).
#include <algorithm>

#include "crdt/core.h"
#include "crdt/json_value.h"
#include "weft/base/json_depth.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

using nlohmann::json;

struct Ctx {
  const std::vector<PeerId>* table = nullptr;  // nullptr: real peer ids
  Status bad(const std::string& what) const {
    return invalid_argument("invalid Loro JSON updates: " + what);
  }
};

Result<PeerId> map_peer(const Ctx& ctx, PeerId raw) {
  if (!ctx.table) return raw;
  if (raw >= ctx.table->size()) {
    return ctx.bad("peer index " + std::to_string(raw) + " is outside the peer table");
  }
  return (*ctx.table)[raw];
}

Result<ID> read_id(const Ctx& ctx, const json& j) {
  if (!j.is_string()) return ctx.bad("an op id must be a string \"counter@peer\"");
  WEFT_ASSIGN_OR_RETURN(ID id, parse_id(j.get_ref<const std::string&>()));
  WEFT_ASSIGN_OR_RETURN(id.peer, map_peer(ctx, id.peer));
  return id;
}

Result<ContainerId> read_cid(const Ctx& ctx, const std::string& s) {
  WEFT_ASSIGN_OR_RETURN(ContainerId c, ContainerId::parse(s));
  if (!c.is_root()) {
    WEFT_ASSIGN_OR_RETURN(PeerId p, map_peer(ctx, c.id().peer));
    c = ContainerId::child({p, c.id().counter}, c.type());
  }
  return c;
}

Result<int64_t> read_int(const Ctx& ctx, const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    return ctx.bad(std::string("field '") + key + "' must be an integer");
  }
  int64_t v = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(INT64_MAX)
                  ? INT64_MAX
                  : it->get<int64_t>();
  if (v > INT32_MAX || v < INT32_MIN)
    return ctx.bad(std::string("field '") + key + "' is out of range");
  return v;
}

Result<const std::string*> read_str(const Ctx& ctx, const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return ctx.bad(std::string("field '") + key + "' must be a string");
  }
  return &it->get_ref<const std::string&>();
}

// A container value must be the op's own id (loro-json.md §2.6).
Status check_child(const Ctx& ctx, const Value& v, ID expected) {
  if (!v.is_container()) return Status();
  const ContainerId& c = v.as_container();
  if (c.is_root() || !(c.id() == expected)) {
    return ctx.bad("container value " + c.to_string() + " does not match its op id " +
                   expected.to_string());
  }
  if (c.type() == ContainerType::kMovableList || c.type() == ContainerType::kTree) {
    return unimplemented("weft does not implement " + std::string(container_type_name(c.type())) +
                         " containers yet");
  }
  return Status();
}

Status read_delete(const Ctx& ctx, const json& c, Op& op) {
  WEFT_ASSIGN_OR_RETURN(int64_t pos, read_int(ctx, c, "pos"));
  WEFT_ASSIGN_OR_RETURN(int64_t len, read_int(ctx, c, "len"));
  if (pos < 0 || len == 0) return ctx.bad("delete needs pos >= 0 and len != 0");
  if (len < 0 && pos + len + 1 < 0) return ctx.bad("backspace delete runs below position 0");
  auto sid = c.find("start_id");
  if (sid == c.end()) return ctx.bad("delete without start_id");
  WEFT_ASSIGN_OR_RETURN(op.start_id, read_id(ctx, *sid));
  op.kind = OpKind::kSeqDelete;
  op.pos = static_cast<int32_t>(pos);
  op.len = static_cast<int32_t>(len);
  return Status();
}

Status read_op(const Ctx& ctx, DocCore& core, const json& j, PeerId author, Op& op) {
  if (!j.is_object()) return ctx.bad("an op must be an object");
  WEFT_ASSIGN_OR_RETURN(const std::string* cs, read_str(ctx, j, "container"));
  WEFT_ASSIGN_OR_RETURN(ContainerId cid, read_cid(ctx, *cs));
  WEFT_ASSIGN_OR_RETURN(int64_t counter, read_int(ctx, j, "counter"));
  if (counter < 0) return ctx.bad("negative op counter");
  op.counter = static_cast<Counter>(counter);
  auto cit = j.find("content");
  if (cit == j.end() || !cit->is_object()) return ctx.bad("op without a content object");
  const json& c = *cit;
  WEFT_ASSIGN_OR_RETURN(const std::string* type, read_str(ctx, c, "type"));
  switch (cid.type()) {
    case ContainerType::kText:
      if (*type == "insert") {
        WEFT_ASSIGN_OR_RETURN(int64_t pos, read_int(ctx, c, "pos"));
        WEFT_ASSIGN_OR_RETURN(const std::string* text, read_str(ctx, c, "text"));
        if (pos < 0) return ctx.bad("negative text position");
        WEFT_RETURN_IF_ERROR(validate_utf8(*text));
        op.kind = OpKind::kTextInsert;
        op.pos = static_cast<int32_t>(pos);
        op.text.assign_utf8(*text, count_unicode_unchecked(*text));
        if (op.text.empty()) return ctx.bad("empty text insert");
      } else if (*type == "delete") {
        WEFT_RETURN_IF_ERROR(read_delete(ctx, c, op));
      } else if (*type == "mark") {
        WEFT_ASSIGN_OR_RETURN(int64_t start, read_int(ctx, c, "start"));
        WEFT_ASSIGN_OR_RETURN(int64_t end, read_int(ctx, c, "end"));
        WEFT_ASSIGN_OR_RETURN(const std::string* key, read_str(ctx, c, "style_key"));
        if (start < 0 || end < start) return ctx.bad("mark needs 0 <= start <= end");
        op.kind = OpKind::kMark;
        op.pos = static_cast<int32_t>(start);
        op.len = static_cast<int32_t>(end);
        op.set_key(*key);
        auto sv = c.find("style_value");
        if (sv != c.end()) {
          WEFT_ASSIGN_OR_RETURN(Value style, value_from_json(*sv, nullptr));
          if (style.is_container()) return ctx.bad("a style value cannot be a container");
          op.set_value(std::move(style));
        }
        auto info = c.find("info");
        if (info != c.end() && info->is_number_integer()) op.info = info->get<int64_t>() & 0xFF;
      } else if (*type == "mark_end") {
        op.kind = OpKind::kMarkEnd;
      } else {
        return ctx.bad("unknown text op '" + *type + "'");
      }
      break;
    case ContainerType::kList:
      if (*type == "insert") {
        WEFT_ASSIGN_OR_RETURN(int64_t pos, read_int(ctx, c, "pos"));
        auto v = c.find("value");
        if (pos < 0 || v == c.end() || !v->is_array() || v->empty()) {
          return ctx.bad("list insert needs pos >= 0 and a non-empty value array");
        }
        op.kind = OpKind::kListInsert;
        op.pos = static_cast<int32_t>(pos);
        for (const auto& e : *v) {
          WEFT_ASSIGN_OR_RETURN(Value val, value_from_json(e, ctx.table));
          WEFT_RETURN_IF_ERROR(check_child(
              ctx, val, ID{author, op.counter + static_cast<Counter>(op.values().size())}));
          op.mutable_values().push_back(std::move(val));
        }
      } else if (*type == "delete") {
        WEFT_RETURN_IF_ERROR(read_delete(ctx, c, op));
      } else {
        return ctx.bad("unknown list op '" + *type + "'");
      }
      break;
    case ContainerType::kMap: {
      WEFT_ASSIGN_OR_RETURN(const std::string* key, read_str(ctx, c, "key"));
      op.set_key(*key);
      if (*type == "insert") {
        auto v = c.find("value");
        if (v == c.end()) return ctx.bad("map insert without value");
        op.kind = OpKind::kMapSet;
        WEFT_ASSIGN_OR_RETURN(Value val, value_from_json(*v, ctx.table));
        WEFT_RETURN_IF_ERROR(check_child(ctx, val, ID{author, op.counter}));
        op.set_value(std::move(val));
      } else if (*type == "delete") {
        op.kind = OpKind::kMapDelete;
      } else {
        return ctx.bad("unknown map op '" + *type + "'");
      }
      break;
    }
    case ContainerType::kCounter: {
      auto v = c.find("value");
      if (v == c.end() || !v->is_number()) return ctx.bad("counter op needs a numeric value");
      op.kind = OpKind::kCounter;
      op.set_number(v->get<double>());
      break;
    }
    case ContainerType::kMovableList:
    case ContainerType::kTree:
      return unimplemented("weft does not implement " +
                           std::string(container_type_name(cid.type())) +
                           " containers yet (op on " + cid.to_string() + ")");
  }
  op.container = core.intern_container(cid);
  return Status();
}

}  // namespace

Result<std::vector<Change>> DocCore::decode_json(std::string_view text) {
  // A value sits at most 7 levels down (top object, changes, change, ops, op,
  // content, a list insert's value array), and nests kMaxValueDepth itself.
  constexpr size_t kEnvelopeDepth = 7;
  WEFT_RETURN_IF_ERROR(
      check_json_depth(text, kEnvelopeDepth + kMaxValueDepth).with_context("Loro JSON updates"));
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded()) return invalid_argument("malformed JSON (not Loro JSON updates)");
  Ctx ctx;
  if (!root.is_object()) return ctx.bad("the top level must be an object");
  auto sv = root.find("schema_version");
  if (sv == root.end() || !sv->is_number_integer() || sv->get<int64_t>() != 1) {
    return ctx.bad("schema_version must be 1");
  }
  std::vector<PeerId> table;
  auto peers = root.find("peers");
  if (peers != root.end() && !peers->is_null()) {
    if (!peers->is_array()) return ctx.bad("peers must be an array or null");
    for (const auto& p : *peers) {
      if (!p.is_string()) return ctx.bad("peer ids must be decimal strings");
      WEFT_ASSIGN_OR_RETURN(PeerId id, parse_peer(p.get_ref<const std::string&>()));
      if (id == kReservedPeer) return ctx.bad("peer id u64::MAX is reserved");
      table.push_back(id);
    }
    ctx.table = &table;
  }
  auto svv = root.find("start_version");
  if (svv != root.end() && svv->is_object()) {
    for (const auto& [k, v] : svv->items()) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) return ctx.bad("bad start_version");
    }
  }
  auto chs = root.find("changes");
  if (chs == root.end() || !chs->is_array()) return ctx.bad("changes must be an array");
  std::vector<Change> out;
  out.reserve(chs->size());
  for (const auto& jc : *chs) {
    if (!jc.is_object()) return ctx.bad("a change must be an object");
    auto idj = jc.find("id");
    if (idj == jc.end()) return ctx.bad("change without id");
    WEFT_ASSIGN_OR_RETURN(ID id, read_id(ctx, *idj));
    if (id.peer == kReservedPeer) return ctx.bad("peer id u64::MAX is reserved");
    Change ch;
    ch.peer = intern_peer(id.peer);
    ch.counter = id.counter;
    auto ts = jc.find("timestamp");
    if (ts != jc.end() && ts->is_number_integer()) ch.timestamp = ts->get<int64_t>();
    auto lam = jc.find("lamport");
    if (lam != jc.end() && lam->is_number_unsigned()) {
      ch.lamport = static_cast<Lamport>(std::min<uint64_t>(lam->get<uint64_t>(), UINT32_MAX));
    }
    auto msg = jc.find("msg");
    if (msg != jc.end() && msg->is_string()) ch.msg = msg->get<std::string>();
    auto deps = jc.find("deps");
    if (deps == jc.end() || !deps->is_array()) return ctx.bad("change without a deps array");
    for (const auto& d : *deps) {
      WEFT_ASSIGN_OR_RETURN(ID dep, read_id(ctx, d));
      if (dep.peer == id.peer && dep.counter >= id.counter) {
        return ctx.bad("change " + id.to_string() + " depends on its own future op");
      }
      ch.deps.push_back(dep);
    }
    auto ops = jc.find("ops");
    if (ops == jc.end() || !ops->is_array() || ops->empty()) {
      return ctx.bad("change " + id.to_string() + " has no ops");
    }
    Counter next = id.counter;
    const Op* prev = nullptr;
    for (const auto& jo : *ops) {
      Op op;
      WEFT_RETURN_IF_ERROR(read_op(ctx, *this, jo, id.peer, op));
      if (op.counter != next) {
        return ctx.bad("op counters of change " + id.to_string() + " are not contiguous");
      }
      if (op.kind == OpKind::kMarkEnd) {
        // The anchor goes in at the mark's end + 1 (its start anchor is before it).
        const Op* mark = prev;
        Op found;
        if (!mark) {
          const Change* pc = find_change(id.peer, op.counter - 1);
          if (pc) {
            for (const Op& o : pc->ops) {
              if (o.counter == op.counter - 1) found = o;
            }
            if (found.kind == OpKind::kMark) mark = &found;
          }
        }
        if (!mark || mark->kind != OpKind::kMark || mark->container != op.container) {
          return ctx.bad("mark_end at " + ID{id.peer, op.counter}.to_string() +
                         " does not follow a mark");
        }
        op.len = mark->len + 1;
      }
      if (int64_t(next) + op.atom_len() > INT32_MAX) return ctx.bad("op counter overflow");
      next += op.atom_len();
      ch.ops.push_back(std::move(op));
      prev = &ch.ops.back();
    }
    ch.len = next - id.counter;
    out.push_back(std::move(ch));
  }
  return out;
}

namespace {

struct PeerTable {
  bool compress;
  std::vector<PeerId> peers;
  std::unordered_map<PeerId, size_t> index;
  std::string peer(PeerId p) {
    if (!compress) return std::to_string(p);
    auto [it, inserted] = index.emplace(p, peers.size());
    if (inserted) peers.push_back(p);
    return std::to_string(it->second);
  }
  std::string id(ID i) { return std::to_string(i.counter) + "@" + peer(i.peer); }
  std::string cid(const ContainerId& c) {
    if (c.is_root()) return c.to_string();
    return "cid:" + id(c.id()) + ":" + std::string(container_type_name(c.type()));
  }
};

}  // namespace

std::string DocCore::export_json(const VersionVector& from, bool compress) const {
  std::vector<const Change*> order;
  for (const Change& ch : changes) {
    if (ch.end() > from.get(peer_ids[ch.peer])) order.push_back(&ch);
  }
  std::stable_sort(order.begin(), order.end(), [&](const Change* a, const Change* b) {
    Lamport la = a->lamport + std::max<Counter>(0, from.get(peer_ids[a->peer]) - a->counter);
    Lamport lb = b->lamport + std::max<Counter>(0, from.get(peer_ids[b->peer]) - b->counter);
    return la < lb;
  });
  PeerTable table{compress, {}, {}};
  std::function<std::string(const ContainerId&)> cw = [&](const ContainerId& c) {
    return table.cid(c);
  };
  json jchanges = json::array();
  for (const Change* orig : order) {
    Change ch = slice_change(*orig, from.get(peer_ids[orig->peer]));
    PeerId author = peer_ids[ch.peer];
    json jops = json::array();
    for (const Op& op : ch.ops) {
      json jo = json::object();
      jo["container"] = table.cid(containers[op.container]);
      json c = json::object();
      switch (op.kind) {
        case OpKind::kTextInsert:
          c = {{"type", "insert"}, {"pos", op.pos}, {"text", std::string(op.text.utf8())}};
          break;
        case OpKind::kListInsert: {
          json vals = json::array();
          for (const Value& v : op.values()) vals.push_back(value_to_json(v, &cw));
          c = {{"type", "insert"}, {"pos", op.pos}, {"value", std::move(vals)}};
          break;
        }
        case OpKind::kSeqDelete:
          c = {{"type", "delete"},
               {"pos", op.pos},
               {"len", op.len},
               {"start_id", table.id(op.start_id)}};
          break;
        case OpKind::kMark:
          c = {{"type", "mark"},
               {"start", op.pos},
               {"end", op.len},
               {"style_key", op.key()},
               {"style_value", value_to_json(op.value())},
               {"info", op.info}};
          break;
        case OpKind::kMarkEnd:
          c = {{"type", "mark_end"}};
          break;
        case OpKind::kMapSet:
          c = {{"type", "insert"}, {"key", op.key()}, {"value", value_to_json(op.value(), &cw)}};
          break;
        case OpKind::kMapDelete:
          c = {{"type", "delete"}, {"key", op.key()}};
          break;
        case OpKind::kCounter:
          c = {{"type", "counter"}, {"value_type", "f64"}, {"value", op.number()}, {"prop", 0}};
          break;
      }
      jo["content"] = std::move(c);
      jo["counter"] = op.counter;
      jops.push_back(std::move(jo));
    }
    json jc = json::object();
    jc["id"] = table.id(ID{author, ch.counter});
    jc["timestamp"] = ch.timestamp;
    std::vector<ID> deps = ch.deps;
    std::sort(deps.begin(), deps.end());
    json jd = json::array();
    for (const ID& d : deps) jd.push_back(table.id(d));
    jc["deps"] = std::move(jd);
    jc["lamport"] = ch.lamport;
    jc["msg"] = ch.msg ? json(*ch.msg) : json(nullptr);
    jc["ops"] = std::move(jops);
    jchanges.push_back(std::move(jc));
  }
  json root = json::object();
  root["schema_version"] = 1;
  json sv = json::object();
  DenseVv start;
  for (const auto& [p, c] : from.entries()) {
    auto it = peer_index.find(p);
    if (it != peer_index.end()) start.set(it->second, std::min(c, oplog_vv.get(it->second)));
  }
  const Frontiers start_frontiers = dense_to_frontiers(start);
  for (const ID& id : start_frontiers.ids()) sv[std::to_string(id.peer)] = id.counter;
  root["start_version"] = std::move(sv);
  if (compress) {
    json jp = json::array();
    for (PeerId p : table.peers) jp.push_back(std::to_string(p));
    root["peers"] = std::move(jp);
  } else {
    root["peers"] = nullptr;
  }
  root["changes"] = std::move(jchanges);
  std::string out;
  write_json(root, out);
  return out;
}

}  // namespace weft::crdt::detail
