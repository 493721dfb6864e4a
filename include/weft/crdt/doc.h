// Doc: a CRDT document (Loro's document model, implemented natively): root
// containers by name, child containers, a causal history of changes, local
// transactions, import/export (Loro JSON updates, Loro binary updates and
// snapshots, and weft's binary format), time travel and events.
//
// Thread safety: NOT thread-safe. Use one Doc from one thread at a time (wrap
// it in a mutex to share it). Distinct Docs are independent. Event callbacks
// run on the calling thread after the state is consistent and may read the doc.
//
// Doc is movable, not copyable (use fork() to copy).
#ifndef WEFT_CRDT_DOC_H_
#define WEFT_CRDT_DOC_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/crdt/container_id.h"
#include "weft/crdt/event.h"
#include "weft/crdt/handles.h"
#include "weft/crdt/ids.h"
#include "weft/crdt/value.h"
#include "weft/crdt/version.h"

namespace weft::crdt {

// Options for one commit.
struct CommitOptions {
  std::optional<std::string> message{};  // kept per change
  std::optional<int64_t> timestamp{};    // Unix seconds; default: now if recording, else 0
  std::string origin{};                  // tag passed to events and the UndoManager
};

// Which ops an import applied and which wait for missing dependencies.
struct ImportStatus {
  std::vector<IdSpan> success;  // newly applied spans
  std::vector<IdSpan> pending;  // spans parked until their deps arrive
};

// What Doc::import(data, options) does beyond a plain import.
struct ImportOptions {
  // Every imported change's commit message, whatever the data says (history
  // attributes the changes to whoever is importing them for someone).
  std::optional<std::string> message;
  // Refuses the whole import (kFailedPrecondition, nothing changes) when any
  // of its changes would wait for missing dependencies.
  bool require_complete = false;
  // Called with the UTF-8 of each text insert in the data, before anything is
  // applied: an error refuses the whole import and is returned (a caller's
  // rule on text content, checked in time proportional to the data).
  std::function<Status(std::string_view inserted)> check_text_insert;
};

// How hard Doc::export_snapshot compresses (see there).
enum class SnapshotCompression { kSmallest, kFast };

// Summary of one stored change (for `weft doc info` and inspection).
struct ChangeMeta {
  ID id;                // first op
  Counter len = 0;      // number of op units
  Lamport lamport = 0;  // of the first op
  int64_t timestamp = 0;
  std::optional<std::string> message;
  std::vector<ID> deps;
};

// VersionVector and Frontiers in Loro's binary encoding (loro-crdt's
// VersionVector.encode() / Frontiers encode: a postcard vector of (peer,
// counter) pairs; frontiers sorted). The decoders accept any entry order.
// Errors: kDataLoss "corrupt Loro binary data: ..." for malformed bytes.
std::string encode_loro_version_vector(const VersionVector& vv);
Result<VersionVector> decode_loro_version_vector(std::string_view bytes);
std::string encode_loro_frontiers(const Frontiers& frontiers);
Result<Frontiers> decode_loro_frontiers(std::string_view bytes);

// What a Loro binary update needs and carries, read without importing it
// (inspect_loro_update).
struct LoroUpdateInfo {
  // The version a doc must hold for every change of the update to apply in
  // one import (none would wait): per peer, the start of what the update
  // carries of it (across a gap between its ranges, the later start), and
  // the end of each dependency the update does not carry itself.
  VersionVector needs;
  // The counter ranges the update carries, per peer: sorted by peer then
  // start, overlapping and adjacent ranges joined.
  std::vector<IdSpan> spans;
  // Each peer's end of `spans`: a doc whose version includes it already has
  // every change of the update.
  VersionVector end;
};
// Reads what a Loro binary update (FastUpdates; a FastSnapshot's change
// blocks too) needs and carries from its change blocks' headers: the
// envelope checksum, each block's span and its changes' dependencies; ops,
// values and commit messages are not decoded, and no doc is touched.
// Errors: kDataLoss "corrupt Loro binary data: ..." for malformed bytes
// (including data without the "loro" magic), kUnimplemented for an encode
// mode other than 3 and 4 or a shallow snapshot.
Result<LoroUpdateInfo> inspect_loro_update(std::string_view data);
// One Loro FastUpdates holding the change blocks of every one of `updates`
// (each a FastUpdates: magic, checksum and mode checked), in order: importing
// it imports them all at once (one causal ordering, one replay of concurrent
// changes). Errors: kDataLoss for a corrupt envelope, kUnimplemented for a
// FastSnapshot or another mode.
Result<std::string> join_loro_updates(const std::vector<std::string_view>& updates);

class Doc {
 public:
  // A doc with a random peer id.
  Doc();
  // A doc with peer id `peer` (REQUIRES peer != kReservedPeer).
  explicit Doc(PeerId peer);
  ~Doc();
  Doc(Doc&&) noexcept;
  Doc& operator=(Doc&&) noexcept;
  Doc(const Doc&) = delete;
  Doc& operator=(const Doc&) = delete;

  PeerId peer_id() const;
  // Changes the peer id (commits pending ops first).
  // Errors: kInvalidArgument for the reserved id.
  Status set_peer_id(PeerId peer);

  // ---- containers
  // Root containers by name (created on first use; they appear in to_json()).
  TextRef get_text(std::string_view name);
  ListRef get_list(std::string_view name);
  MapRef get_map(std::string_view name);
  CounterRef get_counter(std::string_view name);
  // Handles for any container id (root or child). Errors: kInvalidArgument when
  // the id's type does not match; kNotFound for an unknown child.
  Result<TextRef> text(const ContainerId& id);
  Result<ListRef> list(const ContainerId& id);
  Result<MapRef> map(const ContainerId& id);
  Result<CounterRef> counter(const ContainerId& id);
  // The value of one container (children nested). Errors: kNotFound.
  Result<Value> get_value(const ContainerId& id) const;

  // ---- transactions
  // Closes the open transaction into a change (merged into the previous
  // change when Loro would merge it). A no-op when nothing is pending.
  Status commit(const CommitOptions& options);
  // commit with default options (no message, no timestamp, no origin). Its
  // own overload: a keystroke's commit builds no options struct.
  Status commit();
  // With auto-commit on, each edit call commits at once.
  void set_auto_commit(bool on);
  // Record wall-clock timestamps on commits without an explicit one.
  void set_record_timestamp(bool on);
  // Max seconds between two commits merged into one change (default 1000).
  void set_change_merge_interval(int64_t seconds);

  // ---- import / export
  // Imports Loro JSON updates, Loro binary FastUpdates / FastSnapshot (magic
  // "loro"; a snapshot's history is replayed) or weft binary updates/snapshot
  // (by content);
  // `origin` is passed to the events it fires. Commits the open transaction
  // first. Atomic: on error the doc is exactly as before. While detached the
  // history grows but the visible state stays where it was. Errors:
  // kInvalidArgument / kDataLoss for malformed or corrupt input (kOutOfRange
  // for a position past the end of its version), kUnimplemented for
  // MovableList or Tree ops.
  // Cost: an import into an empty doc (like a snapshot load and a checkout)
  // builds a state without the element ids a local delete names; the first
  // local delete on it replays the history once more to rebuild them.
  Result<ImportStatus> import(std::string_view data, std::string_view origin = "");
  // import() with `options` (see ImportOptions); as atomic, and at the
  // same cost (no copy of the doc).
  Result<ImportStatus> import(std::string_view data, const ImportOptions& options,
                              std::string_view origin = "");
  // Loro JSON updates (schema_version 1) with every op not in `from`.
  std::string export_json_updates(const VersionVector& from = {},
                                  bool peer_compression = true) const;
  // weft binary updates with every op not in `from`.
  std::string export_updates(const VersionVector& from = {}) const;
  // weft binary snapshot (history + state; loads without replay).
  // kSmallest spends tens of ms on a 100 KB doc for the smallest bytes (export,
  // archive); kFast bounds the cost to a few ms for ~20% more bytes (frequent
  // writes: a store's compaction, a fork).
  std::string export_snapshot(
      SnapshotCompression compression = SnapshotCompression::kSmallest) const;
  // Loro binary FastUpdates (encode mode 4) with every op not in `from`, as
  // loro-crdt's doc.export({mode: "update", from}) (import() reads it back).
  std::string export_loro_updates(const VersionVector& from = {}) const;
  // Loro binary FastSnapshot (encode mode 3) of the whole history. Its state
  // section is the replay form: loro-crdt rebuilds the state from the
  // history on import (as for a shallow snapshot rooted at the empty version).
  std::string export_loro_snapshot() const;

  // ---- versions
  VersionVector version() const;        // of the current (possibly checked-out) state
  VersionVector oplog_version() const;  // of the whole history
  Frontiers frontiers() const;
  Frontiers oplog_frontiers() const;
  // Errors: kNotFound when an id is not in the history.
  Result<VersionVector> frontiers_to_vv(const Frontiers& frontiers) const;
  // REQUIRES: vv within oplog_version().
  Frontiers vv_to_frontiers(const VersionVector& vv) const;
  // Partial-order comparison of two frontiers. Errors: kNotFound.
  Result<VersionOrder> compare(const Frontiers& a, const Frontiers& b) const;
  // Number of changes and of op units.
  size_t change_count() const;
  size_t op_count() const;
  // The changes in log order, joined as the encoder writes them: a change
  // that continues the one before under Loro's commit-merge rule is part of
  // it (a long local session may be stored as several; see
  // docs/formats/binary.md).
  std::vector<ChangeMeta> changes() const;

  // ---- time travel
  // A new doc with the same history and state and a new random peer id.
  Doc fork() const;
  // A new doc holding the history up to `frontiers`. Errors: kNotFound.
  Result<Doc> fork_at(const Frontiers& frontiers) const;
  // Shows the state at `frontiers` (detached, read-only; edits fail).
  // Commits pending ops first. Errors: kNotFound.
  Status checkout(const Frontiers& frontiers);
  // Back to the latest state (attached).
  Status checkout_to_latest();
  bool is_detached() const;
  // Stops following new imports (state stays where it is).
  void detach();
  // Same as checkout_to_latest().
  Status attach();
  // Per-container changes from state `from` to state `to`. Errors: kNotFound.
  Result<std::vector<ContainerDiff>> diff(const Frontiers& from, const Frontiers& to) const;
  // Writes new local ops that bring the state back to its value at
  // `frontiers` (history is kept). Errors: kNotFound, kFailedPrecondition.
  Status revert_to(const Frontiers& frontiers);

  // ---- values
  // The whole doc like loro-crdt's toJSON(): roots by name, children nested.
  Value to_json() const;
  // to_json() as compact JSON with object keys sorted.
  std::string to_json_string() const;

  // ---- consistency
  // Verifies the engine's invariants without changing anything (buffered
  // keystrokes stay buffered): the op log's version, one form of uncommitted
  // edit, the state's version against the op log's, each container's state;
  // `deep` also recomputes every change's causal fields and each sequence
  // structure's counts (O(document)). kInternal names the first broken one.
  // For tests and fuzz targets, after every step.
  Status check_invariants(bool deep = true) const;

  // ---- events
  Subscription subscribe_root(EventCallback callback);
  Subscription subscribe(const ContainerId& container, EventCallback callback);
  Subscription subscribe_local_update(LocalUpdateCallback callback);

  // Internals for the UndoManager and tests (with buffered keystrokes
  // applied first: see DocCore::typing).
  const std::shared_ptr<detail::DocCore>& core() const;

 private:
  explicit Doc(std::shared_ptr<detail::DocCore> core);
  // The core with buffered keystrokes applied (DocCore::settled): where
  // every method but the typing paths starts.
  detail::DocCore& settled() const;
  std::shared_ptr<detail::DocCore> core_;
};

}  // namespace weft::crdt

#endif  // WEFT_CRDT_DOC_H_
