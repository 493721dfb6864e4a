// Doc: the public face of DocCore (see weft/crdt/doc.h).
#include "weft/crdt/doc.h"

#include <random>

#include "crdt/binary_codec.h"
#include "crdt/core.h"
#include "crdt/loro_binary.h"

namespace weft::crdt {

using detail::DocCore;

namespace {

PeerId random_peer() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t(rd()) << 32) ^ rd());
  PeerId p;
  do {
    p = gen();
  } while (p == kReservedPeer);
  return p;
}

}  // namespace

Doc::Doc() : Doc(random_peer()) {}
Doc::Doc(PeerId peer) : core_(std::make_shared<DocCore>(peer == kReservedPeer ? 0 : peer)) {}
Doc::Doc(std::shared_ptr<DocCore> core) : core_(std::move(core)) {}
Doc::~Doc() = default;
Doc::Doc(Doc&&) noexcept = default;
Doc& Doc::operator=(Doc&&) noexcept = default;

// Every public method flushes the typing buffer first (DocCore::typing):
// it sees the doc as if the buffered keystrokes were applied.
PeerId Doc::peer_id() const {
  core_->flush_typing();
  return core_->peer;
}

Status Doc::set_peer_id(PeerId peer) {
  core_->flush_typing();
  if (peer == kReservedPeer) return invalid_argument("peer id u64::MAX is reserved");
  WEFT_RETURN_IF_ERROR(core_->commit({}));
  core_->peer = peer;
  core_->self = core_->intern_peer(peer);
  return Status();
}

namespace {
template <typename Ref>
Ref root_ref(const std::shared_ptr<DocCore>& core, std::string_view name, ContainerType type) {
  ContainerId id = ContainerId::root(std::string(name), type);
  uint32_t idx = core->intern_container(id);
  core->local_roots[idx] = true;
  return Ref(core, std::move(id));
}
template <typename Ref>
Result<Ref> any_ref(const std::shared_ptr<DocCore>& core, const ContainerId& id,
                    ContainerType type) {
  if (id.type() != type) {
    return invalid_argument("container " + id.to_string() + " is not a " +
                            std::string(container_type_name(type)));
  }
  if (id.is_root()) {
    if (!is_valid_root_name(id.name())) return invalid_argument("invalid root container name");
    core->intern_container(id);
  } else if (!core->container_index.count(id)) {
    return not_found("container " + id.to_string() + " does not exist in this doc");
  }
  return Ref(core, id);
}
}  // namespace

TextRef Doc::get_text(std::string_view name) {
  core_->flush_typing();
  return root_ref<TextRef>(core_, name, ContainerType::kText);
}
ListRef Doc::get_list(std::string_view name) {
  core_->flush_typing();
  return root_ref<ListRef>(core_, name, ContainerType::kList);
}
MapRef Doc::get_map(std::string_view name) {
  core_->flush_typing();
  return root_ref<MapRef>(core_, name, ContainerType::kMap);
}
CounterRef Doc::get_counter(std::string_view name) {
  core_->flush_typing();
  return root_ref<CounterRef>(core_, name, ContainerType::kCounter);
}
Result<TextRef> Doc::text(const ContainerId& id) {
  core_->flush_typing();
  return any_ref<TextRef>(core_, id, ContainerType::kText);
}
Result<ListRef> Doc::list(const ContainerId& id) {
  core_->flush_typing();
  return any_ref<ListRef>(core_, id, ContainerType::kList);
}
Result<MapRef> Doc::map(const ContainerId& id) {
  core_->flush_typing();
  return any_ref<MapRef>(core_, id, ContainerType::kMap);
}
Result<CounterRef> Doc::counter(const ContainerId& id) {
  core_->flush_typing();
  return any_ref<CounterRef>(core_, id, ContainerType::kCounter);
}

Result<Value> Doc::get_value(const ContainerId& id) const {
  core_->flush_typing();
  auto it = core_->container_index.find(id);
  if (it == core_->container_index.end()) {
    if (id.is_root())
      return core_->container_value(*core_->state, core_->intern_container(id), true);
    return not_found("container " + id.to_string() + " does not exist in this doc");
  }
  return core_->container_value(*core_->state, it->second, true);
}

namespace {
// Doc::commit's every case but buffered keystrokes, out of line: the two
// commit calls then save no registers for their keystroke case.
[[gnu::noinline]] Status commit_unbuffered(detail::DocCore& core, const CommitOptions& options) {
  // The keystroke commits without the general path's call frame.
  if (core.direct && core.commit_direct(options)) return Status();
  if (core.txn_ops.size() == 1 && core.commit_in_place(options)) return Status();
  return core.commit(options);
}

// commit()'s options (at namespace scope: no guard on the way in; not
// constinit, as clang's libstdc++ std::string is not constant-initializable).
const CommitOptions kDefaultCommit{};
}  // namespace

Status Doc::commit() {
  if (core_->typing.n != 0) {  // commit_typing's default-options case
    core_->typing.committed = core_->typing.n;
    return Status();
  }
  return commit_unbuffered(*core_, kDefaultCommit);
}
Status Doc::commit(const CommitOptions& options) {
  // Buffered keystrokes: a default commit is a count (see DocCore::typing).
  if (core_->typing.n != 0 && core_->commit_typing(options)) return Status();
  return commit_unbuffered(*core_, options);
}
void Doc::set_auto_commit(bool on) {
  core_->flush_typing();
  core_->auto_commit = on;
}
void Doc::set_record_timestamp(bool on) {
  core_->flush_typing();
  core_->record_timestamp = on;
}
void Doc::set_change_merge_interval(int64_t seconds) {
  core_->flush_typing();
  core_->merge_interval = seconds;
}

Result<ImportStatus> Doc::import(std::string_view data, std::string_view origin) {
  core_->flush_typing();
  WEFT_RETURN_IF_ERROR(core_->commit({}));
  Result<ImportStatus> result = ImportStatus();
  core_->import_origin = std::string(origin);
  if (detail::is_weft_binary(data)) {
    result = core_->import_binary(data);
  } else if (detail::loro::is_loro_binary(data)) {
    auto changes = core_->decode_loro_binary(data);
    result = changes.ok() ? core_->import_changes(std::move(*changes)) : changes.status();
  } else {
    auto changes = core_->decode_json(data);
    result = changes.ok() ? core_->import_changes(std::move(*changes)) : changes.status();
  }
  core_->import_origin.clear();
  return result;
}

// Readers of the op log settle a direct keystroke first (see DocCore::direct).
std::string Doc::export_json_updates(const VersionVector& from, bool peer_compression) const {
  core_->settle();
  return core_->export_json(from, peer_compression);
}
std::string Doc::export_updates(const VersionVector& from) const {
  core_->settle();
  return core_->export_binary(from, false);
}
std::string Doc::export_loro_updates(const VersionVector& from) const {
  core_->settle();
  return core_->export_loro_binary(from, false);
}
std::string Doc::export_loro_snapshot() const {
  core_->settle();
  return core_->export_loro_binary({}, true);
}
std::string Doc::export_snapshot(SnapshotCompression compression) const {
  core_->settle();
  return core_->export_binary({}, true, compression == SnapshotCompression::kFast);
}

VersionVector Doc::version() const {
  core_->flush_typing();
  return core_->to_public(core_->state->vv);
}
VersionVector Doc::oplog_version() const {
  core_->flush_typing();
  return core_->to_public(core_->oplog_vv);
}
Frontiers Doc::frontiers() const {
  core_->flush_typing();
  return core_->state_frontiers;
}
Frontiers Doc::oplog_frontiers() const {
  core_->flush_typing();
  return core_->oplog_frontiers;
}

Result<VersionVector> Doc::frontiers_to_vv(const Frontiers& frontiers) const {
  core_->settle();
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv vv, core_->frontiers_to_dense(frontiers));
  return core_->to_public(vv);
}

Frontiers Doc::vv_to_frontiers(const VersionVector& vv) const {
  core_->settle();
  detail::DenseVv d;
  for (const auto& [p, c] : vv.entries()) {
    auto it = core_->peer_index.find(p);
    if (it != core_->peer_index.end())
      d.set(it->second, std::min(c, core_->oplog_vv.get(it->second)));
  }
  return core_->dense_to_frontiers(d);
}

Result<VersionOrder> Doc::compare(const Frontiers& a, const Frontiers& b) const {
  core_->flush_typing();
  WEFT_ASSIGN_OR_RETURN(VersionVector va, frontiers_to_vv(a));
  WEFT_ASSIGN_OR_RETURN(VersionVector vb, frontiers_to_vv(b));
  return va.compare(vb);
}

size_t Doc::change_count() const { return changes().size(); }
size_t Doc::op_count() const {
  core_->flush_typing();
  return static_cast<size_t>(core_->oplog_vv.total());
}

std::vector<ChangeMeta> Doc::changes() const {
  core_->settle();
  std::vector<ChangeMeta> out;
  const auto& changes = core_->changes;
  for (size_t i = 0; i < changes.size(); ++i) {
    const detail::Change& ch = changes[i];
    // A change the commit-merge rule joins to the ones before (the log keeps
    // a long typing session in several) is listed as part of them, as the
    // encoder writes it: its time is measured from the joined change's.
    if (i != 0 && core_->continues(changes[i - 1], ch, out.back().timestamp, out.back().message)) {
      out.back().len += ch.len;
      continue;
    }
    out.push_back({ID{core_->peer_ids[ch.peer], ch.counter}, ch.len, ch.lamport, ch.timestamp,
                   ch.msg, ch.deps});
  }
  return out;
}

namespace {
// A new core with the history of `src` up to `vv` (all when nullptr).
std::shared_ptr<DocCore> copy_history(const DocCore& src, const detail::DenseVv* vv, PeerId peer) {
  auto core = std::make_shared<DocCore>(peer);
  // Changes name their peer by dense index: keep src's indexes (the
  // constructor interned the new peer first, which would shift them).
  core->peer_ids.clear();
  core->peer_index.clear();
  core->by_peer.clear();
  for (PeerId p : src.peer_ids) core->intern_peer(p);
  core->self = core->intern_peer(peer);
  for (const ContainerId& c : src.containers) core->intern_container(c);
  core->local_roots = src.local_roots;
  for (const auto& ch : src.changes) {
    Counter to = vv ? std::min(ch.end(), vv->get(ch.peer)) : ch.end();
    if (to <= ch.counter) continue;
    detail::Change c = ch;
    if (to < ch.end()) {
      c.len = to - ch.counter;
      detail::OpList ops;
      for (auto& op : c.ops) {
        if (op.counter >= to) break;
        Counter keep = to - op.counter;
        if (keep < op.atom_len()) {
          // Cut the op after `keep` units.
          switch (op.kind) {
            case detail::OpKind::kTextInsert:
              op.text.truncate(keep);
              break;
            case detail::OpKind::kListInsert:
              op.mutable_values().resize(keep);
              break;
            case detail::OpKind::kSeqDelete:
              op.len = op.len > 0 ? keep : -keep;
              break;
            default:
              break;
          }
        }
        ops.push_back(std::move(op));
      }
      c.ops = std::move(ops);
    }
    core->append_change(std::move(c));
  }
  auto st = core->build_state(core->oplog_vv);
  if (st.ok()) core->state = std::move(*st);
  core->state_frontiers = core->oplog_frontiers;
  return core;
}
}  // namespace

Doc Doc::fork() const {
  core_->flush_typing();
  core_->commit({}).ignore_error();
  return Doc(copy_history(*core_, nullptr, random_peer()));
}

Result<Doc> Doc::fork_at(const Frontiers& frontiers) const {
  core_->flush_typing();
  core_->commit({}).ignore_error();
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv vv, core_->frontiers_to_dense(frontiers));
  return Doc(copy_history(*core_, &vv, random_peer()));
}

Status Doc::checkout(const Frontiers& frontiers) {
  core_->flush_typing();
  WEFT_RETURN_IF_ERROR(core_->commit({}));
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv vv, core_->frontiers_to_dense(frontiers));
  WEFT_ASSIGN_OR_RETURN(auto st,
                        core_->build_state(vv, true, detail::DocCore::PlainIds::kDeferred));
  std::unique_ptr<detail::State> before = std::move(core_->state);
  core_->state = std::move(st);
  core_->state_frontiers = core_->dense_to_frontiers(vv);
  core_->detached = !(vv.total() == core_->oplog_vv.total());
  core_->emit_all_diff(*before, EventTrigger::kCheckout);
  return Status();
}

Status Doc::checkout_to_latest() {
  core_->flush_typing();
  if (!core_->detached) return Status();
  WEFT_ASSIGN_OR_RETURN(
      auto st, core_->build_state(core_->oplog_vv, true, detail::DocCore::PlainIds::kDeferred));
  std::unique_ptr<detail::State> before = std::move(core_->state);
  core_->state = std::move(st);
  core_->state_frontiers = core_->oplog_frontiers;
  core_->detached = false;
  core_->emit_all_diff(*before, EventTrigger::kCheckout);
  return Status();
}

bool Doc::is_detached() const {
  core_->flush_typing();
  return core_->detached;
}
void Doc::detach() {
  core_->flush_typing();
  core_->commit({}).ignore_error();
  core_->detached = true;
}
Status Doc::attach() {
  core_->flush_typing();
  return checkout_to_latest();
}

Result<std::vector<ContainerDiff>> Doc::diff(const Frontiers& from, const Frontiers& to) const {
  core_->settle();
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv a, core_->frontiers_to_dense(from));
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv b, core_->frontiers_to_dense(to));
  WEFT_ASSIGN_OR_RETURN(auto sa, core_->build_state(a, true, detail::DocCore::PlainIds::kDeferred));
  WEFT_ASSIGN_OR_RETURN(auto sb, core_->build_state(b, true, detail::DocCore::PlainIds::kDeferred));
  std::vector<ContainerDiff> out;
  for (uint32_t i = 0; i < core_->containers.size(); ++i) {
    auto d = detail::diff_values(core_->containers[i], core_->container_value(*sa, i, false),
                                 core_->container_value(*sb, i, false));
    if (d) out.push_back(std::move(*d));
  }
  return out;
}

Value Doc::to_json() const {
  core_->flush_typing();
  return core_->doc_value(*core_->state);
}
std::string Doc::to_json_string() const {
  core_->flush_typing();
  return to_json().to_json_string();
}

const std::shared_ptr<DocCore>& Doc::core() const {
  core_->flush_typing();
  return core_;
}

Subscription Doc::subscribe_root(EventCallback callback) {
  core_->flush_typing();
  uint64_t id = core_->next_subscriber++;
  core_->subscribers.push_back({id, std::nullopt, std::move(callback)});
  std::weak_ptr<DocCore> weak = core_;
  return Subscription([weak, id] {
    if (auto c = weak.lock()) {
      std::erase_if(c->subscribers, [&](const detail::Subscriber& s) { return s.id == id; });
    }
  });
}

Subscription Doc::subscribe(const ContainerId& container, EventCallback callback) {
  core_->flush_typing();
  uint64_t id = core_->next_subscriber++;
  uint32_t idx = core_->intern_container(container);
  core_->subscribers.push_back({id, idx, std::move(callback)});
  std::weak_ptr<DocCore> weak = core_;
  return Subscription([weak, id] {
    if (auto c = weak.lock()) {
      std::erase_if(c->subscribers, [&](const detail::Subscriber& s) { return s.id == id; });
    }
  });
}

Subscription Doc::subscribe_local_update(LocalUpdateCallback callback) {
  core_->flush_typing();
  uint64_t id = core_->next_subscriber++;
  core_->local_update_subscribers.emplace_back(id, std::move(callback));
  std::weak_ptr<DocCore> weak = core_;
  return Subscription([weak, id] {
    if (auto c = weak.lock()) {
      std::erase_if(c->local_update_subscribers, [&](const auto& s) { return s.first == id; });
    }
  });
}

}  // namespace weft::crdt
