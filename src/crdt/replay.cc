// Rebuilding states from the op log: a state at a version (build_state),
// the Fugue tracker of a plain Text / List (materialize), its ids again
// (recover_ids), and a snapshot's values set without replay (see core.h).
#include <algorithm>
#include <utility>

#include "crdt/core.h"
#include "crdt/dcheck.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {

Result<std::unique_ptr<State>> DocCore::build_state(const DenseVv& vv, bool plain, PlainIds ids) {
  auto s = std::make_unique<State>();
  s->plain = plain;
  s->plain_ids = ids == PlainIds::kTracked;
  FoldScope scope(*this);
  for (const Change& ch : changes) {
    Counter to = std::min(ch.end(), vv.get(ch.peer));
    if (to <= ch.counter) continue;
    WEFT_RETURN_IF_ERROR(apply_change(*s, ch, to));
  }
  WEFT_RETURN_IF_ERROR(fold_trackers(*s));
  return s;
}

Result<std::unique_ptr<State>> DocCore::replay_state(const State& s, bool plain) {
  WEFT_DCHECK(&s != state.get() || (!edit_.direct() && !edit_.typing()));  // settled
  // The replay goes into a scratch state: no events for it.
  const bool was_gathering = gathering;
  gathering = false;
  auto scratch = build_state(s.vv, plain);
  Status st = scratch.status();
  if (st.ok() && &s == state.get()) {
    // The open transaction's ops are in the state but not yet in the op log;
    // they follow everything else, so they replay on the fast path.
    for (const Op& op : edit_.ops()) {
      st = apply_op(**scratch, op, self, 0, op.atom_len(), nullptr);
      if (!st.ok()) break;
    }
  }
  gathering = was_gathering;
  if (!st.ok()) return st;
  return scratch;
}

Status DocCore::materialize(State& s) {
  settle();  // the replay reads the open transaction's ops
  // (A partial tracker is replaced by the whole one too.)
  const auto needs = [](const ContainerState* cs) {
    const SeqState* seq = cs ? cs->seq_if() : nullptr;
    return seq && (seq->is_plain() || seq->is_partial());
  };
  if (std::none_of(s.containers.begin(), s.containers.end(),
                   [&](const auto& c) { return needs(c.get()); })) {
    return Status();
  }
  auto scratch = replay_state(s, /*plain=*/false);
  if (!scratch.ok())
    return scratch.status().with_context("building the sequence tracker from the op log");
  for (uint32_t i = 0; i < s.containers.size(); ++i) {
    ContainerState* cs = s.containers[i].get();
    if (!needs(cs)) continue;
    // Inside an import or a replay it folds back into a plain state at the end.
    cs->sequence().materialize(std::move(container_state(**scratch, i).sequence()),
                               /*temporary=*/fold_scope > 0);
  }
  return Status();
}

bool DocCore::history_is_linear() const {
  // Linear: each change's deps hold everything before it in the log.
  int64_t before = 0;
  for (const Change& ch : changes) {
    if (ch.deps_total != before) return false;
    before += ch.len;
  }
  return true;
}

Status DocCore::recover_ids(State& s) {
  settle();  // the replay reads the open transaction's ops
  const auto lacks_ids = [](const ContainerState* cs) {
    const SeqState* seq = cs ? cs->seq_if() : nullptr;
    return seq && seq->mode() == SeqState::Mode::kPlainNoIds;
  };
  if (std::none_of(s.containers.begin(), s.containers.end(),
                   [&](const auto& c) { return lacks_ids(c.get()); })) {
    return Status();
  }
  // A history with concurrent edits: the whole tracker (a plain replay would
  // build it at the first of them, from the start again), folded back into
  // plain states, which then have every id.
  if (!history_is_linear()) {
    FoldScope scope(*this);
    WEFT_RETURN_IF_ERROR(materialize(s));
    return fold_trackers(s);
  }
  // A plain replay keeps ids (build_state's default).
  auto scratch = replay_state(s, /*plain=*/true);
  if (!scratch.ok()) return scratch.status().with_context("rebuilding the ids from the op log");
  for (uint32_t i = 0; i < s.containers.size(); ++i) {
    ContainerState* cs = s.containers[i].get();
    if (!lacks_ids(cs)) continue;
    cs->sequence().recover_ids(std::move(container_state(**scratch, i).sequence()));
  }
  return Status();
}

Status DocCore::set_plain_text(State& s, uint32_t container, std::string_view utf8) {
  if (container >= containers.size() || containers[container].type() != ContainerType::kText)
    return invalid_argument("set_plain_text: container " + std::to_string(container) +
                            " is not a Text");
  WEFT_RETURN_IF_ERROR(validate_utf8(utf8));
  auto plain = std::make_unique<PlainSeq>(true);
  plain->assign_utf8(utf8);
  container_state(s, container).sequence().set_plain(std::move(plain));
  return Status();
}

Status DocCore::set_plain_list(State& s, uint32_t container, std::vector<Value> values) {
  if (container >= containers.size() || containers[container].type() != ContainerType::kList)
    return invalid_argument("set_plain_list: container " + std::to_string(container) +
                            " is not a List");
  auto plain = std::make_unique<PlainSeq>(false);
  std::vector<uint32_t> idx(values.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<uint32_t>(k);
  WEFT_RETURN_IF_ERROR(plain->insert(kNone, 0, 0, idx.data(), idx.size()));
  plain->set_ids_unknown();
  container_state(s, container).sequence().set_plain(std::move(plain), std::move(values));
  return Status();
}


}  // namespace weft::crdt::detail
