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

detail::DocCore& Doc::settled() const { return core_->settled(); }

// Every public method starts from settled() (DocCore::settled): it sees the
// doc as if the buffered keystrokes were applied.
PeerId Doc::peer_id() const {
  detail::DocCore& core = settled();
  return core.local_peer();
}

Status Doc::set_peer_id(PeerId peer) {
  detail::DocCore& core = settled();
  if (peer == kReservedPeer) return invalid_argument("peer id u64::MAX is reserved");
  WEFT_RETURN_IF_ERROR(core.commit({}));
  core.set_local_peer(peer);
  return Status();
}

namespace {
template <typename Ref>
Ref root_ref(const std::shared_ptr<DocCore>& core, std::string_view name, ContainerType type) {
  core->settled();  // (the handle getters' one entry point)
  ContainerId id = ContainerId::root(std::string(name), type);
  uint32_t idx = core->intern_container(id);
  core->mark_local_root(idx);
  return Ref(core, std::move(id));
}
template <typename Ref>
Result<Ref> any_ref(const std::shared_ptr<DocCore>& core, const ContainerId& id,
                    ContainerType type) {
  core->settled();  // (the handle getters' one entry point)
  if (id.type() != type) {
    return invalid_argument("container " + id.to_string() + " is not a " +
                            std::string(container_type_name(type)));
  }
  if (id.is_root()) {
    if (!is_valid_root_name(id.name())) return invalid_argument("invalid root container name");
    core->intern_container(id);
  } else if (!core->find_container(id)) {
    return not_found("container " + id.to_string() + " does not exist in this doc");
  }
  return Ref(core, id);
}
}  // namespace

TextRef Doc::get_text(std::string_view name) {
  return root_ref<TextRef>(core_, name, ContainerType::kText);
}
ListRef Doc::get_list(std::string_view name) {
  return root_ref<ListRef>(core_, name, ContainerType::kList);
}
MapRef Doc::get_map(std::string_view name) {
  return root_ref<MapRef>(core_, name, ContainerType::kMap);
}
CounterRef Doc::get_counter(std::string_view name) {
  return root_ref<CounterRef>(core_, name, ContainerType::kCounter);
}
Result<TextRef> Doc::text(const ContainerId& id) {
  return any_ref<TextRef>(core_, id, ContainerType::kText);
}
Result<ListRef> Doc::list(const ContainerId& id) {
  return any_ref<ListRef>(core_, id, ContainerType::kList);
}
Result<MapRef> Doc::map(const ContainerId& id) {
  return any_ref<MapRef>(core_, id, ContainerType::kMap);
}
Result<CounterRef> Doc::counter(const ContainerId& id) {
  return any_ref<CounterRef>(core_, id, ContainerType::kCounter);
}

Result<Value> Doc::get_value(const ContainerId& id) const {
  detail::DocCore& core = settled();
  const std::optional<uint32_t> idx = core.find_container(id);
  if (!idx) {
    if (id.is_root())
      return core.container_value(core.live(), core.intern_container(id), true);
    return not_found("container " + id.to_string() + " does not exist in this doc");
  }
  return core.container_value(core.live(), *idx, true);
}

namespace {
// Doc::commit's every case but buffered keystrokes, out of line: the two
// commit calls then save no registers for their keystroke case.
[[gnu::noinline]] Status commit_unbuffered(detail::DocCore& core, const CommitOptions& options) {
  // The keystroke commits without the general path's call frame.
  if (core.direct_open() && core.commit_direct(options)) return Status();
  if (core.txn_op_count() == 1 && core.commit_in_place(options)) return Status();
  return core.commit(options);
}

// commit()'s options (at namespace scope: no guard on the way in; not
// constinit, as clang's libstdc++ std::string is not constant-initializable).
const CommitOptions kDefaultCommit{};
}  // namespace

Status Doc::commit() {
  if (core_->typing_buffered()) {  // commit_typing's default-options case
    core_->count_typing_committed();
    return Status();
  }
  return commit_unbuffered(*core_, kDefaultCommit);
}
Status Doc::commit(const CommitOptions& options) {
  // Buffered keystrokes: a default commit is a count (see DocCore::typing).
  if (core_->typing_buffered() && core_->commit_typing(options)) return Status();
  return commit_unbuffered(*core_, options);
}
void Doc::set_auto_commit(bool on) {
  detail::DocCore& core = settled();
  core.set_auto_commit(on);
}
void Doc::set_record_timestamp(bool on) {
  detail::DocCore& core = settled();
  core.set_record_timestamp(on);
}
void Doc::set_change_merge_interval(int64_t seconds) {
  detail::DocCore& core = settled();
  core.set_merge_interval(seconds);
}

Result<ImportStatus> Doc::import(std::string_view data, std::string_view origin) {
  return import(data, ImportOptions{}, origin);
}

Result<ImportStatus> Doc::import(std::string_view data, const ImportOptions& options,
                                 std::string_view origin) {
  detail::DocCore& core = settled();
  WEFT_RETURN_IF_ERROR(core.commit({}));
  Result<ImportStatus> result = ImportStatus();
  core.set_import_origin(std::string(origin));
  if (detail::is_weft_binary(data)) {
    result = core.import_binary(data, options);
  } else if (detail::loro::is_loro_binary(data)) {
    auto changes = core.decode_loro_binary(data);
    result = changes.ok() ? core.import_changes(std::move(*changes), options) : changes.status();
  } else {
    auto changes = core.decode_json(data);
    result = changes.ok() ? core.import_changes(std::move(*changes), options) : changes.status();
  }
  core.set_import_origin({});
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
  detail::DocCore& core = settled();
  return core.to_public(core.live().vv);
}
VersionVector Doc::oplog_version() const {
  detail::DocCore& core = settled();
  return core.to_public(core.oplog_version());
}
Frontiers Doc::frontiers() const {
  detail::DocCore& core = settled();
  return core.state_heads();
}
Frontiers Doc::oplog_frontiers() const {
  detail::DocCore& core = settled();
  return core.oplog_heads();
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
    if (const std::optional<uint32_t> idx = core_->find_peer(p))
      d.set(*idx, std::min(c, core_->oplog_version().get(*idx)));
  }
  return core_->dense_to_frontiers(d);
}

Result<VersionOrder> Doc::compare(const Frontiers& a, const Frontiers& b) const {
  // (frontiers_to_vv settles)
  WEFT_ASSIGN_OR_RETURN(VersionVector va, frontiers_to_vv(a));
  WEFT_ASSIGN_OR_RETURN(VersionVector vb, frontiers_to_vv(b));
  return va.compare(vb);
}

size_t Doc::change_count() const { return changes().size(); }
size_t Doc::op_count() const {
  detail::DocCore& core = settled();
  return static_cast<size_t>(core.oplog_version().total());
}

std::vector<ChangeMeta> Doc::changes() const {
  core_->settle();
  std::vector<ChangeMeta> out;
  const auto& changes = core_->log();
  for (size_t i = 0; i < changes.size(); ++i) {
    const detail::Change& ch = changes[i];
    // A change the commit-merge rule joins to the ones before (the log keeps
    // a long typing session in several) is listed as part of them, as the
    // encoder writes it: its time is measured from the joined change's.
    if (i != 0 && core_->continues(changes[i - 1], ch, out.back().timestamp, out.back().message)) {
      out.back().len += ch.len;
      continue;
    }
    out.push_back({ID{core_->peer_table()[ch.peer], ch.counter}, ch.len, ch.lamport, ch.timestamp,
                   ch.msg, ch.deps});
  }
  return out;
}

std::shared_ptr<DocCore> DocCore::copy_history(const DocCore& src, const detail::DenseVv* vv,
                                               PeerId peer) {
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

Doc Doc::fork() const {
  detail::DocCore& core = settled();
  core.commit({}).ignore_error();
  return Doc(DocCore::copy_history(core, nullptr, random_peer()));
}

Result<Doc> Doc::fork_at(const Frontiers& frontiers) const {
  detail::DocCore& core = settled();
  core.commit({}).ignore_error();
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv vv, core.frontiers_to_dense(frontiers));
  return Doc(DocCore::copy_history(core, &vv, random_peer()));
}

Status Doc::checkout(const Frontiers& frontiers) {
  detail::DocCore& core = settled();
  WEFT_RETURN_IF_ERROR(core.commit({}));
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv vv, core.frontiers_to_dense(frontiers));
  WEFT_ASSIGN_OR_RETURN(auto st,
                        core.build_state(vv, true, detail::DocCore::PlainIds::kDeferred));
  const bool detach = vv.total() != core.oplog_version().total();
  std::unique_ptr<detail::State> before =
      core.replace_live(std::move(st), core.dense_to_frontiers(vv), detach);
  core.emit_all_diff(*before, EventTrigger::kCheckout);
  return Status();
}

Status Doc::checkout_to_latest() {
  detail::DocCore& core = settled();
  if (!core.is_detached()) return Status();
  WEFT_ASSIGN_OR_RETURN(auto st, core.build_state(core.oplog_version(), true,
                                                  detail::DocCore::PlainIds::kDeferred));
  std::unique_ptr<detail::State> before =
      core.replace_live(std::move(st), core.oplog_heads(), false);
  core.emit_all_diff(*before, EventTrigger::kCheckout);
  return Status();
}

bool Doc::is_detached() const {
  detail::DocCore& core = settled();
  return core.is_detached();
}
void Doc::detach() {
  detail::DocCore& core = settled();
  core.commit({}).ignore_error();
  core.set_detached();
}
Status Doc::attach() {
  settled();
  return checkout_to_latest();
}

Result<std::vector<ContainerDiff>> Doc::diff(const Frontiers& from, const Frontiers& to) const {
  core_->settle();
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv a, core_->frontiers_to_dense(from));
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv b, core_->frontiers_to_dense(to));
  WEFT_ASSIGN_OR_RETURN(auto sa, core_->build_state(a, true, detail::DocCore::PlainIds::kDeferred));
  WEFT_ASSIGN_OR_RETURN(auto sb, core_->build_state(b, true, detail::DocCore::PlainIds::kDeferred));
  std::vector<ContainerDiff> out;
  for (uint32_t i = 0; i < core_->container_table().size(); ++i) {
    auto d = detail::diff_values(core_->container_table()[i], core_->container_value(*sa, i, false),
                                 core_->container_value(*sb, i, false));
    if (d) out.push_back(std::move(*d));
  }
  return out;
}

Value Doc::to_json() const {
  detail::DocCore& core = settled();
  return core.doc_value(core.live());
}
std::string Doc::to_json_string() const {
  return to_json().to_json_string();
}

Status Doc::check_invariants(bool deep) const { return core_->check(deep); }

const std::shared_ptr<DocCore>& Doc::core() const {
  settled();
  return core_;
}

Subscription Doc::subscribe_root(EventCallback callback) {
  detail::DocCore& core = settled();
  const uint64_t id = core.add_subscriber(std::nullopt, std::move(callback));
  std::weak_ptr<DocCore> weak = core_;
  return Subscription([weak, id] {
    if (auto c = weak.lock()) c->remove_subscriber(id);
  });
}

Subscription Doc::subscribe(const ContainerId& container, EventCallback callback) {
  detail::DocCore& core = settled();
  const uint32_t idx = core.intern_container(container);
  const uint64_t id = core.add_subscriber(idx, std::move(callback));
  std::weak_ptr<DocCore> weak = core_;
  return Subscription([weak, id] {
    if (auto c = weak.lock()) c->remove_subscriber(id);
  });
}

Subscription Doc::subscribe_local_update(LocalUpdateCallback callback) {
  detail::DocCore& core = settled();
  const uint64_t id = core.add_local_update_subscriber(std::move(callback));
  std::weak_ptr<DocCore> weak = core_;
  return Subscription([weak, id] {
    if (auto c = weak.lock()) c->remove_local_update_subscriber(id);
  });
}

}  // namespace weft::crdt
