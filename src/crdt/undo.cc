// UndoManager: inverse ops computed by element id at undo time, so that an
// undo applies to wherever the elements are now (concurrent remote edits are
// kept, never undone).
#include "weft/crdt/undo.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>

#include "crdt/core.h"

namespace weft::crdt {

using detail::CommitRecord;
using detail::DocCore;
using detail::Op;
using detail::OpKind;

namespace {

constexpr std::string_view kUndoOrigin = "weft:undo";
constexpr std::string_view kRedoOrigin = "weft:redo";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Step {
  std::vector<CommitRecord> records;
  int64_t time_ms = 0;
};

// Fills a fresh child container with a (deep) value; nested children come
// back as plain values.
Status fill(const std::shared_ptr<DocCore>& core, const ContainerId& id, const Value& v) {
  switch (id.type()) {
    case ContainerType::kText:
      return v.kind() == Value::Kind::kString ? TextRef(core, id).insert(0, v.as_string())
                                              : Status();
    case ContainerType::kCounter:
      return v.kind() == Value::Kind::kF64 && v.as_f64() != 0
                 ? CounterRef(core, id).increment(v.as_f64())
                 : Status();
    case ContainerType::kList:
      if (v.kind() == Value::Kind::kList) {
        for (const auto& e : v.as_list()) WEFT_RETURN_IF_ERROR(ListRef(core, id).push(e));
      }
      return Status();
    case ContainerType::kMap:
      if (v.kind() == Value::Kind::kMap) {
        for (const auto& [k, e] : v.as_map()) WEFT_RETURN_IF_ERROR(MapRef(core, id).set(k, e));
      }
      return Status();
    default:
      return Status();
  }
}

// The deep value of a (possibly invisible) child container.
Value deep_value(DocCore& core, const ContainerId& id) {
  uint32_t idx = core.intern_container(id);
  return core.container_value(core.live(), idx, true);
}

// Writes the inverse of `rec` as local ops (not committed).
Status invert(const std::shared_ptr<DocCore>& core_ptr, const CommitRecord& rec) {
  DocCore& core = *core_ptr;
  // Children are revived last, so that they copy their content after the
  // rest of the inverse (which may restore that content) is written.
  std::vector<std::function<Status()>> revive;
  const std::optional<uint32_t> author_idx = core.find_peer(rec.peer);
  if (!author_idx) return Status();
  const uint32_t author = *author_idx;
  for (size_t oi = rec.ops.size(); oi-- > 0;) {
    const Op& op = rec.ops[oi];
    auto& cs = core.container_state(core.live(), op.container);
    // Undo finds a Text/List op's elements by id, tombstones included: it
    // needs the tracker (materialize keeps `cs` in place).
    if (cs.plain()) WEFT_RETURN_IF_ERROR(core.materialize(core.live()));
    switch (op.kind) {
      case OpKind::kTextInsert:
      case OpKind::kListInsert:
        for (Counter k = op.atom_len(); k-- > 0;) {
          auto idx = cs.tracker()->find(author, op.counter + k);
          if (!idx || cs.tracker()->is_deleted(*idx)) continue;
          Op d;
          d.kind = OpKind::kSeqDelete;
          d.container = op.container;
          d.pos = static_cast<int32_t>(cs.tracker()->entity_before(*idx));
          d.len = 1;
          d.start_id = ID{rec.peer, op.counter + k};
          WEFT_RETURN_IF_ERROR(core.local_op(std::move(d)));
        }
        break;
      case OpKind::kSeqDelete: {
        const Counter n = op.atom_len();
        const std::optional<uint32_t> tp = core.find_peer(op.start_id.peer);
        if (!tp) break;
        for (Counter k = 0; k < n; ++k) {
          auto idx = cs.tracker()->find(*tp, op.start_id.counter + k);
          if (!idx || !cs.tracker()->is_deleted(*idx)) continue;
          const detail::Elem& e = cs.tracker()->elem(*idx);
          Op ins;
          ins.container = op.container;
          ins.pos = static_cast<int32_t>(cs.tracker()->reinsert_pos(*idx));
          if (cs.type() == ContainerType::kText) {
            if (e.content >= detail::kStartAnchor) continue;
            ins.kind = OpKind::kTextInsert;
            ins.text.push_back(static_cast<char32_t>(e.content));
          } else {
            const Value& v = cs.sequence().values()[e.content];
            if (v.is_container()) {
              // A deleted child comes back as a new child with the same content.
              const ContainerId list_id = core.container_table()[op.container];
              const ContainerId old = v.as_container();
              detail::Seq* seq = cs.tracker();
              const uint32_t tomb = *idx;
              revive.push_back([&core, core_ptr, list_id, old, seq, tomb]() -> Status {
                Value content = deep_value(core, old);
                auto child = ListRef(core_ptr, list_id)
                                 .insert_container(seq->reinsert_pos(tomb), old.type());
                WEFT_RETURN_IF_ERROR(child.status());
                seq->mark_clone(static_cast<uint32_t>(seq->arena_size() - 1), tomb);
                return fill(core_ptr, *child, content);
              });
              continue;
            }
            ins.kind = OpKind::kListInsert;
            ins.mutable_values().push_back(v);
          }
          WEFT_RETURN_IF_ERROR(core.local_op(std::move(ins)));
          cs.tracker()->mark_clone(static_cast<uint32_t>(cs.tracker()->arena_size() - 1), *idx);
        }
        break;
      }
      case OpKind::kMapSet:
      case OpKind::kMapDelete: {
        const std::optional<Value>& prev =
            oi < rec.map_prev.size() ? rec.map_prev[oi] : std::nullopt;
        Op m;
        m.container = op.container;
        m.set_key(op.key());
        if (prev && !prev->is_container()) {
          m.kind = OpKind::kMapSet;
          m.set_value(*prev);
        } else if (!prev) {
          const detail::MapEntry* e = cs.map().find(op.key());
          if (!e || !e->value) break;
          m.kind = OpKind::kMapDelete;
        } else {
          const ContainerId map_id = core.container_table()[op.container];
          const ContainerId old = prev->as_container();
          const std::string key = op.key();
          revive.push_back([&core, core_ptr, map_id, old, key]() -> Status {
            Value content = deep_value(core, old);
            auto child = MapRef(core_ptr, map_id).set_container(key, old.type());
            WEFT_RETURN_IF_ERROR(child.status());
            return fill(core_ptr, *child, content);
          });
          break;
        }
        WEFT_RETURN_IF_ERROR(core.local_op(std::move(m)));
        break;
      }
      case OpKind::kCounter: {
        Op c;
        c.kind = OpKind::kCounter;
        c.container = op.container;
        c.set_number(-op.number());
        WEFT_RETURN_IF_ERROR(core.local_op(std::move(c)));
        break;
      }
      case OpKind::kMark:
      case OpKind::kMarkEnd:
        break;  // style anchors stay
    }
  }
  for (auto it = revive.rbegin(); it != revive.rend(); ++it) WEFT_RETURN_IF_ERROR((*it)());
  return Status();
}

}  // namespace

struct UndoManager::Impl {
  std::shared_ptr<DocCore> core;
  uint64_t hook_id = 0;
  std::deque<Step> undo, redo;
  int64_t merge_ms = 0;
  size_t max_steps = 100;
  std::vector<std::string> excluded;
  std::vector<std::string> included;  // empty: every origin not excluded
  bool group_open = false;
  bool group_has_step = false;
  enum class Mode { kNormal, kUndo, kRedo } mode = Mode::kNormal;

  void on_commit(const CommitRecord& rec) {
    if (mode == Mode::kUndo) {
      redo.push_back({{rec}, now_ms()});
      return;
    }
    if (mode == Mode::kRedo) {
      undo.push_back({{rec}, now_ms()});
      return;
    }
    for (const auto& p : excluded) {
      if (rec.origin.rfind(p, 0) == 0) return;
    }
    if (!included.empty() && std::none_of(included.begin(), included.end(), [&](const auto& p) {
          return rec.origin.rfind(p, 0) == 0;
        })) {
      return;
    }
    redo.clear();
    int64_t t = now_ms();
    if (!undo.empty() && ((group_open && group_has_step) ||
                          (!group_open && merge_ms > 0 && t - undo.back().time_ms <= merge_ms))) {
      undo.back().records.push_back(rec);
      undo.back().time_ms = t;
    } else {
      undo.push_back({{rec}, t});
      if (group_open) group_has_step = true;
    }
    while (undo.size() > max_steps) undo.pop_front();
  }

  Result<bool> apply(std::deque<Step>& from, Mode m, std::string_view origin) {
    if (core->is_detached()) return failed_precondition("cannot undo/redo while the doc is detached");
    WEFT_RETURN_IF_ERROR(core->commit({}));
    if (from.empty()) return false;
    Step step = std::move(from.back());
    from.pop_back();
    mode = m;
    Status st;
    const bool ac = core->set_auto_commit(false);
    for (size_t i = step.records.size(); i-- > 0 && st.ok();) st = invert(core, step.records[i]);
    core->set_auto_commit(ac);
    if (st.ok()) {
      CommitOptions opts;
      opts.origin = std::string(origin);
      st = core->commit(opts);
    }
    mode = Mode::kNormal;
    WEFT_RETURN_IF_ERROR(st);
    return true;
  }
};

UndoManager::UndoManager(Doc& doc) : impl_(std::make_unique<Impl>()) {
  impl_->core = doc.core();  // (flushes the typing buffer: commit hooks stop it)
  Impl* impl = impl_.get();
  impl_->hook_id =
      impl_->core->add_commit_hook([impl](const CommitRecord& r) { impl->on_commit(r); });
}

UndoManager::~UndoManager() {
  impl_->core->remove_commit_hook(impl_->hook_id);
}

// Each method flushes the doc's typing buffer first (see DocCore::typing;
// none can be open while the manager's commit hook is registered, but a
// flush is cheap when empty).
Result<bool> UndoManager::undo() {
  impl_->core->settled();
  return impl_->apply(impl_->undo, Impl::Mode::kUndo, kUndoOrigin);
}
Result<bool> UndoManager::redo() {
  impl_->core->settled();
  return impl_->apply(impl_->redo, Impl::Mode::kRedo, kRedoOrigin);
}
bool UndoManager::can_undo() const { return !impl_->undo.empty(); }
bool UndoManager::can_redo() const { return !impl_->redo.empty(); }
size_t UndoManager::undo_count() const { return impl_->undo.size(); }
size_t UndoManager::redo_count() const { return impl_->redo.size(); }
void UndoManager::set_merge_interval(int64_t ms) { impl_->merge_ms = ms; }
void UndoManager::set_max_undo_steps(size_t steps) {
  impl_->max_steps = steps;
  while (impl_->undo.size() > steps) impl_->undo.pop_front();
}
void UndoManager::add_exclude_origin_prefix(std::string_view prefix) {
  impl_->excluded.emplace_back(prefix);
}

void UndoManager::add_include_origin_prefix(std::string_view prefix) {
  impl_->included.emplace_back(prefix);
}
Status UndoManager::group_start() {
  impl_->core->settled();
  if (impl_->group_open) return failed_precondition("an undo group is already open");
  WEFT_RETURN_IF_ERROR(impl_->core->commit({}));
  impl_->group_open = true;
  impl_->group_has_step = false;
  return Status();
}
void UndoManager::group_end() {
  impl_->core->settled();
  impl_->core->commit({}).ignore_error();
  impl_->group_open = false;
  impl_->group_has_step = false;
}
void UndoManager::clear() {
  impl_->undo.clear();
  impl_->redo.clear();
}

}  // namespace weft::crdt
