// Container handles: local edits go through DocCore::local_op (see handles.h).
#include "weft/crdt/handles.h"

#include <cmath>

#include "crdt/core.h"
#include "weft/base/diff.h"
#include "weft/base/utf.h"

namespace weft::crdt {

using detail::DocCore;
using detail::Op;
using detail::OpKind;

namespace {

int unit_kind(PosUnit unit) {
  switch (unit) {
    case PosUnit::kUnicode:
      return 0;
    case PosUnit::kUtf16:
      return 1;
    case PosUnit::kBytes:
      return 2;
  }
  return 0;
}

Status gone() { return failed_precondition("the handle is empty or its doc is gone"); }

// `cached`: the handle's cached index (ContainerRef::cached_index), which
// spares hashing the id on every read.
const detail::ContainerState* cstate_if(const DocCore& core, const ContainerId& id,
                                        uint32_t cached) {
  uint32_t idx = cached;
  if (idx == UINT32_MAX) {
    auto it = core.find_container(id);
    if (!it) return nullptr;
    idx = *it;
  }
  if (idx >= core.live().containers.size()) return nullptr;
  return core.live().containers[idx].get();
}

// Out of line: building the default CommitOptions is most of a call site.
[[gnu::noinline]] Status commit_now(DocCore& core) { return core.commit({}); }

// Auto-commits after a successful edit (inline: every keystroke passes here).
inline Status finish(DocCore& core, Status st) {
  if (st.ok() && core.auto_commits()) return commit_now(core);
  return st;
}

// container_state of the live state without its out-of-line call when the
// container's state exists (the keystroke case).
detail::ContainerState& live_state(DocCore& core, uint32_t idx) {
  const auto& slots = core.live().containers;
  if (idx < slots.size() && slots[idx]) return *slots[idx];
  return core.container_state(core.live(), idx);
}

// OK when `v` can be stored as a plain value: no container reference in it
// (`container_error` otherwise), and lists and maps nested at most
// kMaxValueDepth deep, which the importers would refuse. `depth`: the lists
// and maps around `v`.
Status check_plain_value(const Value& v, std::string_view container_error, size_t depth = 0) {
  if (v.is_container()) return invalid_argument(container_error);
  const bool list = v.kind() == Value::Kind::kList;
  if (!list && v.kind() != Value::Kind::kMap) return Status();
  if (depth >= kMaxValueDepth) {
    return invalid_argument("value nested deeper than " + std::to_string(kMaxValueDepth) +
                            " levels");
  }
  if (list) {
    for (const auto& e : v.as_list()) {
      WEFT_RETURN_IF_ERROR(check_plain_value(e, container_error, depth + 1));
    }
  } else {
    for (const auto& [k, e] : v.as_map()) {
      WEFT_RETURN_IF_ERROR(check_plain_value(e, container_error, depth + 1));
    }
  }
  return Status();
}

// Deletes unicode units [from, to) of a text or list, right to left so that
// each op's position is valid after the previous ones. `runs`: a scratch list.
Status delete_units_using(DocCore& core, uint32_t idx, size_t from, size_t to,
                          std::vector<detail::Seq::Run>& runs) {
  detail::ContainerState* cs = &core.container_state(core.live(), idx);
  if (cs->plain() && !cs->plain()->ids_known()) {
    // Set from a snapshot's state section or replayed without ids: they
    // come from the op log.
    WEFT_RETURN_IF_ERROR(core.recover_ids(core.live()));
    cs = &core.container_state(core.live(), idx);
  }
  cs->unit_runs(from, to, runs);
  // A plain state without events or observers (and fast_commit, which the
  // tests clear to compare with the general path) drops the whole range in one
  // erase (one chunk walk and memmove, not one per run); each run is then
  // recorded as local_delete_run would (the range stays valid: unit_runs
  // checked it, and recording does not read the plain state).
  bool erased = false;
  detail::PlainSeq* const plain = cs->plain();
  if (plain && runs.size() > 1 && core.test_options().fast_commit && !core.gathering_events() &&
      !core.has_subscribers() && to - from <= UINT32_MAX) {
    WEFT_RETURN_IF_ERROR(
        plain->erase(static_cast<uint32_t>(from), static_cast<uint32_t>(to - from)));
    erased = true;
  }
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (plain) {  // ids known here: the plain delete path, no generic op
      WEFT_RETURN_IF_ERROR(core.local_delete_run(idx, *cs, static_cast<int32_t>(it->entity),
                                                 static_cast<int32_t>(it->len), it->peer,
                                                 it->counter, !erased));
      continue;
    }
    Op op;
    op.kind = OpKind::kSeqDelete;
    op.container = idx;
    op.pos = static_cast<int32_t>(it->entity);
    op.len = static_cast<int32_t>(it->len);
    op.start_id = ID{core.peer_table()[it->peer], it->counter};
    WEFT_RETURN_IF_ERROR(core.local_op(std::move(op)));
  }
  return Status();
}

// The same with the doc's scratch run list, taken out while in use (so a
// nested delete would start a list of its own) and given back with its
// capacity (up to kKeptRuns: one huge delete does not pin its list): a
// delete allocates no run list of its own.
Status delete_units(DocCore& core, uint32_t idx, size_t from, size_t to) {
  constexpr size_t kKeptRuns = 1024;
  std::vector<detail::Seq::Run> runs = std::move(core.delete_runs_scratch());
  Status st = delete_units_using(core, idx, from, to, runs);
  if (runs.capacity() <= kKeptRuns) core.delete_runs_scratch() = std::move(runs);
  return st;
}

}  // namespace

// Every handle method starts from settled() (see DocCore::settled): it sees
// the doc as if the buffered keystrokes were applied. TextRef::insert feeds
// the buffer.

detail::DocCore* ContainerRef::settled() const { return core_ ? &core_->settled() : nullptr; }

uint32_t ContainerRef::doc_index() const {
  // A doc never renumbers its containers, so the first lookup stays valid.
  if (index_ == kNoIndex) index_ = core_->intern_container(id_);
  return index_;
}

bool ContainerRef::is_attached_to_root() const {
  detail::DocCore* core = settled();
  if (!core) return false;
  if (id_.is_root()) return true;
  // A child is attached when some visible value of the doc references it.
  std::function<bool(const Value&)> find = [&](const Value& v) -> bool {
    if (v.is_container()) {
      if (v.as_container() == id_) return true;
      auto it = core->find_container(v.as_container());
      if (!it) return false;
      return find(core->container_value(core->live(), *it, false));
    }
    if (v.kind() == Value::Kind::kList) {
      for (const auto& e : v.as_list())
        if (find(e)) return true;
    }
    if (v.kind() == Value::Kind::kMap) {
      for (const auto& [k, e] : v.as_map())
        if (find(e)) return true;
    }
    return false;
  };
  for (uint32_t i = 0; i < core->container_table().size(); ++i) {
    if (core->container_table()[i].is_root() && find(core->container_value(core->live(), i, false))) {
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- TextRef

Status TextRef::insert(size_t pos, std::string_view text, PosUnit unit) {
  // An ASCII key typed on at the typing buffer's end is one store, checked
  // before anything else and without a call (the general path lives in
  // insert_general, so this one saves no registers).
  if (text.size() == 1 && unit == PosUnit::kUnicode && core_ &&
      core_->type_on_end(cached_index(), pos, text[0])) {
    return Status();
  }
  return insert_general(pos, text, unit);
}

Status TextRef::insert_general(size_t pos, std::string_view text, PosUnit unit) {
  // One ASCII character typed on: the typing buffer (see DocCore::type_on),
  // else the typing lane (see lane_insert). (ASCII checked first: invalid
  // UTF-8 is refused before the container is interned.)
  if (text.size() == 1 && static_cast<unsigned char>(text[0]) < 0x80 && unit == PosUnit::kUnicode &&
      core_) {
    const uint32_t idx = doc_index();
    if (core_->type_on(idx, pos, text[0]) || core_->lane_insert(idx, pos, text[0]))
      return core_->auto_commits() ? commit_now(*core_) : Status();
  }
  detail::DocCore* core = settled();
  if (!core) return gone();
  // The op and the plain state both keep UTF-8: only the code point count is
  // needed. ASCII text (the keystroke case) skips the full validation.
  size_t n = text.size();
  if (!detail::is_all_ascii(text)) {
    WEFT_RETURN_IF_ERROR(validate_utf8(text));
    n = count_unicode_unchecked(text);
  }
  const uint32_t idx = doc_index();
  auto& cs = live_state(*core, idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  size_t entity = pos;
  // A plain state holds no style anchors: a unicode position is its entity
  // position (the keystroke path skips the unit conversion).
  if (unit != PosUnit::kUnicode || !cs.plain() || pos > cs.plain()->visible_units()) {
    WEFT_ASSIGN_OR_RETURN(auto b, cs.locate(pos, unit_kind(unit)));
    entity = b.entity;
  }
  if (text.empty()) return Status();
  return finish(*core, core->local_text_insert(idx, cs, static_cast<int32_t>(entity), text, n));
}

Status TextRef::erase(size_t pos, size_t len, PosUnit unit) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  // The typing lane first: backspace or forward delete (see lane_erase).
  if (len == 1 && unit == PosUnit::kUnicode && core->lane_erase(doc_index(), pos)) {
    return core->auto_commits() ? commit_now(*core) : Status();
  }
  const uint32_t idx = doc_index();
  auto& cs = live_state(*core, idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  if (len > SIZE_MAX - pos) return out_of_range("delete range end overflows");
  size_t from = pos, to = pos + len;  // unicode units
  // Plain state and unicode positions: no conversion (see insert).
  if (unit != PosUnit::kUnicode || !cs.plain() || to > cs.plain()->visible_units()) {
    WEFT_ASSIGN_OR_RETURN(auto a, cs.locate(pos, unit_kind(unit)));
    WEFT_ASSIGN_OR_RETURN(auto b, cs.locate(pos + len, unit_kind(unit)));
    from = a.units;
    to = b.units;
  }
  if (len == 0) return Status();
  if (detail::PlainSeq* plain = cs.plain();
      plain && plain->ids_known() && to > from && to - from <= INT32_MAX) {
    // The common case: the range's ids are one run (no run list, no generic op).
    // One unit in an open many-op transaction (lane_erase did not apply):
    // found and dropped in one step when the plain state's lane can.
    if (Status st; to - from == 1 && core->local_erase_one(idx, cs, from, &st))
      return finish(*core, std::move(st));
    uint32_t id_peer = 0;
    int32_t id_counter = 0;
    if (plain->id_at(from, &id_peer, &id_counter) >= to - from) {
      return finish(*core,
                    core->local_delete_run(idx, cs, static_cast<int32_t>(from),
                                            static_cast<int32_t>(to - from), id_peer, id_counter));
    }
  }
  return finish(*core, delete_units(*core, idx, from, to));
}

Status TextRef::splice(size_t pos, size_t len, std::string_view text, PosUnit unit) {
  WEFT_RETURN_IF_ERROR(validate_utf8(text));
  detail::DocCore* core = settled();
  if (!core) return gone();
  const bool ac = core->set_auto_commit(false);
  Status st = erase(pos, len, unit);
  if (st.ok()) st = insert(pos, text, unit);
  core->set_auto_commit(ac);
  return finish(*core, st);
}

Status TextRef::update(std::string_view new_text) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  WEFT_RETURN_IF_ERROR(validate_utf8(new_text));
  std::string old = to_string();
  auto reps = diff_text(old, new_text);
  const bool ac = core->set_auto_commit(false);
  Status st;
  // Back to front: earlier byte offsets stay valid.
  for (auto it = reps.rbegin(); it != reps.rend() && st.ok(); ++it) {
    if (it->old_length) st = erase(it->old_offset, it->old_length, PosUnit::kBytes);
    if (st.ok() && it->new_length) {
      st = insert(it->old_offset, new_text.substr(it->new_offset, it->new_length), PosUnit::kBytes);
    }
  }
  core->set_auto_commit(ac);
  return finish(*core, st);
}

Status TextRef::mark(size_t start, size_t end, std::string_view key, const Value& value,
                     PosUnit unit, int expand) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  if (start >= end) return invalid_argument("mark needs start < end");
  WEFT_RETURN_IF_ERROR(check_plain_value(value, "a style value cannot hold a container"));
  const uint32_t idx = doc_index();
  auto& cs = core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  WEFT_ASSIGN_OR_RETURN(auto a, cs.locate(start, unit_kind(unit)));
  WEFT_ASSIGN_OR_RETURN(auto b, cs.locate(end, unit_kind(unit)));
  Op op;
  op.kind = OpKind::kMark;
  op.container = idx;
  op.pos = static_cast<int32_t>(a.entity);
  op.len = static_cast<int32_t>(b.entity);
  op.set_key(std::string(key));
  op.set_value(value);
  op.info = 0x80 | ((expand & 1) ? 0x04 : 0) | ((expand & 2) ? 0x02 : 0);
  const bool ac = core->set_auto_commit(false);
  Status st = core->local_op(std::move(op));
  if (st.ok()) {
    Op end_op;
    end_op.kind = OpKind::kMarkEnd;
    end_op.container = idx;
    end_op.len = static_cast<int32_t>(b.entity) + 1;
    st = core->local_op(std::move(end_op));
  }
  core->set_auto_commit(ac);
  return finish(*core, st);
}

size_t TextRef::len(PosUnit unit) const {
  detail::DocCore* core = settled();
  if (!core) return 0;
  const auto* cs = cstate_if(*core, id_, cached_index());
  if (!cs) return 0;
  switch (unit) {
    case PosUnit::kUnicode:
      return cs->units();
    case PosUnit::kUtf16:
      return cs->utf16_len();
    case PosUnit::kBytes:
      return cs->utf8_len();
  }
  return 0;
}

std::string TextRef::to_string() const {
  detail::DocCore* core = settled();
  if (!core) return "";
  const auto* cs = cstate_if(*core, id_, cached_index());
  return cs ? cs->text() : "";
}

Result<size_t> TextRef::convert_pos(size_t pos, PosUnit from, PosUnit to) const {
  detail::DocCore* core = settled();
  if (!core) return gone();
  const auto* cs = cstate_if(*core, id_, cached_index());
  if (!cs) {
    if (pos == 0) return size_t{0};
    return out_of_range("position past the end of an empty text");
  }
  WEFT_ASSIGN_OR_RETURN(auto b, cs->locate(pos, unit_kind(from)));
  switch (to) {
    case PosUnit::kUnicode:
      return b.units;
    case PosUnit::kUtf16:
      return b.u16;
    case PosUnit::kBytes:
      return b.u8;
  }
  return b.units;
}

// ---------------------------------------------------------------- ListRef

Status ListRef::insert(size_t index, const Value& value) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  WEFT_RETURN_IF_ERROR(check_plain_value(
      value, "list values cannot hold container references; use insert_container"));
  const uint32_t idx = doc_index();
  auto& cs = core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  if (index > cs.units()) {
    return out_of_range("list index " + std::to_string(index) + " is past the end (length " +
                        std::to_string(cs.units()) + ")");
  }
  Op op;
  op.kind = OpKind::kListInsert;
  op.container = idx;
  op.pos = static_cast<int32_t>(index);
  op.mutable_values().push_back(value);
  return finish(*core, core->local_op(std::move(op)));
}

Status ListRef::erase(size_t index, size_t count) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  const uint32_t idx = doc_index();
  auto& cs = core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  if (index + count > cs.units()) {
    return out_of_range("list range [" + std::to_string(index) + ", " +
                        std::to_string(index + count) + ") is past the end (length " +
                        std::to_string(cs.units()) + ")");
  }
  return finish(*core, delete_units(*core, idx, index, index + count));
}

Result<ContainerId> ListRef::insert_container(size_t index, ContainerType type) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  if (type == ContainerType::kMovableList || type == ContainerType::kTree) {
    return unimplemented("weft does not implement " + std::string(container_type_name(type)) +
                         " yet");
  }
  const uint32_t idx = doc_index();
  auto& cs = core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  if (index > cs.units()) return out_of_range("list index past the end");
  ContainerId child = ContainerId::child(ID{core->local_peer(), core->next_counter()}, type);
  core->intern_container(child);
  Op op;
  op.kind = OpKind::kListInsert;
  op.container = idx;
  op.pos = static_cast<int32_t>(index);
  op.mutable_values().push_back(Value(child));
  WEFT_RETURN_IF_ERROR(finish(*core, core->local_op(std::move(op))));
  return child;
}

size_t ListRef::len() const {
  detail::DocCore* core = settled();
  if (!core) return 0;
  const auto* cs = cstate_if(*core, id_, cached_index());
  return cs ? cs->units() : 0;
}

Result<Value> ListRef::get(size_t index) const {
  detail::DocCore* core = settled();
  if (!core) return gone();
  const auto* cs = cstate_if(*core, id_, cached_index());
  if (!cs || index >= cs->units()) {
    return out_of_range("list index " + std::to_string(index) + " is past the end");
  }
  return cs->sequence().values()[cs->contents()[index]];
}

ValueList ListRef::values() const {
  detail::DocCore* core = settled();
  if (!core) return {};
  auto it = core->find_container(id_);
  if (!it) return {};
  return core->container_value(core->live(), *it, false).as_list();
}

// ---------------------------------------------------------------- MapRef

Status MapRef::set(std::string_view key, const Value& value) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  WEFT_RETURN_IF_ERROR(
      check_plain_value(value, "map values cannot hold container references; use set_container"));
  WEFT_RETURN_IF_ERROR(validate_utf8(key));
  const uint32_t idx = doc_index();
  core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  Op op;
  op.kind = OpKind::kMapSet;
  op.container = idx;
  op.set_key(std::string(key));
  op.set_value(value);
  return finish(*core, core->local_op(std::move(op)));
}

Status MapRef::erase(std::string_view key) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  const uint32_t idx = doc_index();
  auto& cs = core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  const detail::MapEntry* e = cs.map().find(key);
  if (!e || !e->value) return Status();
  Op op;
  op.kind = OpKind::kMapDelete;
  op.container = idx;
  op.set_key(std::string(key));
  return finish(*core, core->local_op(std::move(op)));
}

Result<ContainerId> MapRef::set_container(std::string_view key, ContainerType type) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  if (type == ContainerType::kMovableList || type == ContainerType::kTree) {
    return unimplemented("weft does not implement " + std::string(container_type_name(type)) +
                         " yet");
  }
  WEFT_RETURN_IF_ERROR(validate_utf8(key));
  const uint32_t idx = doc_index();
  core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  ContainerId child = ContainerId::child(ID{core->local_peer(), core->next_counter()}, type);
  core->intern_container(child);
  Op op;
  op.kind = OpKind::kMapSet;
  op.container = idx;
  op.set_key(std::string(key));
  op.set_value(Value(child));
  WEFT_RETURN_IF_ERROR(finish(*core, core->local_op(std::move(op))));
  return child;
}

std::optional<Value> MapRef::get(std::string_view key) const {
  detail::DocCore* core = settled();
  if (!core) return std::nullopt;
  const auto* cs = cstate_if(*core, id_, cached_index());
  if (!cs) return std::nullopt;
  const detail::MapEntry* e = cs->map().find(key);
  if (!e) return std::nullopt;
  return e->value;
}

size_t MapRef::size() const {
  detail::DocCore* core = settled();
  if (!core) return 0;
  const auto* cs = cstate_if(*core, id_, cached_index());
  if (!cs) return 0;
  size_t n = 0;
  for (const auto& [k, e] : cs->map().entries()) n += e.value.has_value();
  return n;
}

ValueMap MapRef::values() const {
  ValueMap out;
  detail::DocCore* core = settled();
  if (!core) return out;
  const auto* cs = cstate_if(*core, id_, cached_index());
  if (!cs) return out;
  for (const auto& [k, e] : cs->map().entries()) {
    if (e.value) out.emplace(k, *e.value);
  }
  return out;
}

// ---------------------------------------------------------------- CounterRef

Status CounterRef::increment(double delta) {
  detail::DocCore* core = settled();
  if (!core) return gone();
  if (!std::isfinite(delta)) return invalid_argument("counter delta must be finite");
  const uint32_t idx = doc_index();
  core->container_state(core->live(), idx);
  WEFT_RETURN_IF_ERROR(core->check_editable(idx));
  Op op;
  op.kind = OpKind::kCounter;
  op.container = idx;
  op.set_number(delta);
  return finish(*core, core->local_op(std::move(op)));
}

double CounterRef::value() const {
  detail::DocCore* core = settled();
  if (!core) return 0;
  const auto* cs = cstate_if(*core, id_, cached_index());
  return cs ? cs->counter().value() : 0;
}

}  // namespace weft::crdt
