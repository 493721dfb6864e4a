// Applying ops to container states, and reading values back (see core.h).
#include <algorithm>

#include "crdt/core.h"

namespace weft::crdt::detail {

ContainerState& DocCore::container_state(State& s, uint32_t idx) {
  if (s.containers.size() <= idx) s.containers.resize(idx + 1);
  auto& slot = s.containers[idx];
  if (!slot) {
    slot = std::make_unique<ContainerState>();
    slot->type = containers[idx].type();
    if (slot->type == ContainerType::kText || slot->type == ContainerType::kList) {
      slot->seq = std::make_unique<Seq>(&peer_ids, slot->type == ContainerType::kText);
    }
  }
  return *slot;
}

Status DocCore::apply_op(State& s, const Op& op, uint32_t peer, Lamport lamport, Counter n,
                         DenseVv* vv) {
  if (gathering) touch(op.container);
  ContainerState& cs = container_state(s, op.container);
  Status st;
  switch (op.kind) {
    case OpKind::kTextInsert: {
      uint32_t small[64];
      std::vector<uint32_t> big;
      uint32_t* contents = small;
      if (n > 64) {
        big.resize(n);
        contents = big.data();
      }
      for (Counter k = 0; k < n; ++k) contents[k] = static_cast<uint32_t>(op.text[k]);
      st = cs.seq->insert(peer, op.counter, op.pos, contents, n, vv);
      break;
    }
    case OpKind::kListInsert: {
      std::vector<uint32_t> contents(n);
      for (Counter k = 0; k < n; ++k) {
        contents[k] = static_cast<uint32_t>(cs.list_values.size());
        cs.list_values.push_back(op.values[k]);
      }
      st = cs.seq->insert(peer, op.counter, op.pos, contents.data(), n, vv);
      break;
    }
    case OpKind::kSeqDelete:
      if (op.len > 0) {
        st = cs.seq->erase_forward(peer, op.counter, static_cast<uint32_t>(op.pos), n, vv);
        break;
      }
      for (Counter k = 0; k < n && st.ok(); ++k) {
        int32_t pos = op.len > 0 ? op.pos : op.pos - k;
        if (pos < 0) {
          st = out_of_range("delete position below 0");
          break;
        }
        st = cs.seq->erase_one(peer, op.counter + k, static_cast<uint32_t>(pos), vv);
      }
      break;
    case OpKind::kMark: {
      uint32_t c = kStartAnchor;
      st = cs.seq->insert(peer, op.counter, op.pos, &c, 1, vv);
      break;
    }
    case OpKind::kMarkEnd: {
      uint32_t c = kEndAnchor;
      st = cs.seq->insert(peer, op.counter, op.len, &c, 1, vv);
      break;
    }
    case OpKind::kMapSet:
    case OpKind::kMapDelete: {
      const PeerId author = peer_ids[peer];
      MapEntry& e = cs.map[op.key];
      bool wins = !e.written || e.lamport < lamport || (e.lamport == lamport && e.peer < author);
      if (wins) {
        e.written = true;
        e.lamport = lamport;
        e.peer = author;
        if (op.kind == OpKind::kMapSet)
          e.value = op.value;
        else
          e.value.reset();
      }
      if (vv) vv->extend(peer, op.counter + 1);
      break;
    }
    case OpKind::kCounter:
      cs.counter += op.number;
      if (vv) vv->extend(peer, op.counter + 1);
      break;
  }
  if (!st.ok()) {
    return st.with_context("op " + ID{peer_ids[peer], op.counter}.to_string() + " on " +
                           containers[op.container].to_string());
  }
  Counter end = op.counter + n;
  int32_t before = s.vv.get(peer);
  if (end > before) {
    s.vv.set(peer, end);
    s.vv_total += end - before;
  }
  return Status();
}

Status DocCore::apply_change(State& s, const Change& ch, Counter to) {
  // Fast path: the change's version is everything the state holds, so
  // positions resolve on the current visible elements.
  const bool fast = s.vv_total == ch.deps_total;
  DenseVv vv_storage;
  if (!fast) vv_storage = ch.deps_vv;
  DenseVv* vv = fast ? nullptr : &vv_storage;
  for (const Op& op : ch.ops) {
    if (op.counter >= to) break;
    Counter n = std::min(op.atom_len(), to - op.counter);
    Lamport lamport = ch.lamport + static_cast<Lamport>(op.counter - ch.counter);
    WEFT_RETURN_IF_ERROR(apply_op(s, op, ch.peer, lamport, n, vv));
  }
  return Status();
}

Result<std::unique_ptr<State>> DocCore::build_state(const DenseVv& vv) {
  auto s = std::make_unique<State>();
  for (const Change& ch : changes) {
    Counter to = std::min(ch.end(), vv.get(ch.peer));
    if (to <= ch.counter) continue;
    WEFT_RETURN_IF_ERROR(apply_change(*s, ch, to));
  }
  return s;
}

Value DocCore::container_value(const State& s, uint32_t idx, bool deep) const {
  const ContainerState* cs = idx < s.containers.size() ? s.containers[idx].get() : nullptr;
  auto resolve = [&](const Value& v) -> Value {
    if (!deep || !v.is_container()) return v;
    auto it = container_index.find(v.as_container());
    if (it == container_index.end()) {
      switch (v.as_container().type()) {
        case ContainerType::kText:
          return Value(std::string());
        case ContainerType::kList:
        case ContainerType::kMovableList:
          return Value(ValueList{});
        case ContainerType::kCounter:
          return Value(0.0);
        default:
          return Value(ValueMap{});
      }
    }
    return container_value(s, it->second, true);
  };
  switch (containers[idx].type()) {
    case ContainerType::kText:
      return Value(cs ? cs->seq->to_utf8() : std::string());
    case ContainerType::kList: {
      ValueList l;
      if (cs) {
        for (uint32_t vi : cs->seq->visible_contents()) l.push_back(resolve(cs->list_values[vi]));
      }
      return Value(std::move(l));
    }
    case ContainerType::kCounter:
      return Value(cs ? cs->counter : 0.0);
    case ContainerType::kMap: {
      ValueMap m;
      if (cs) {
        for (const auto& [k, e] : cs->map) {
          if (e.value) m.emplace(k, resolve(*e.value));
        }
      }
      return Value(std::move(m));
    }
    default:
      return Value();
  }
}

Value DocCore::doc_value(const State& s) const {
  ValueMap out;
  for (uint32_t i = 0; i < containers.size(); ++i) {
    if (!containers[i].is_root()) continue;
    bool present = (i < s.containers.size() && s.containers[i]) || local_roots[i];
    if (present) out.emplace(containers[i].name(), container_value(s, i, true));
  }
  return Value(std::move(out));
}

}  // namespace weft::crdt::detail
