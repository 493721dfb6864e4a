// Internal: SeqState, the state of one Text or List at one version, in one of
// its modes at a time:
//
//   kPlain        the plain state (PlainSeq: visible units only, no
//                 tombstones) whose units keep their ids. The common case.
//   kPlainNoIds   a plain state without ids: set from a snapshot's state
//                 section, or replayed for reading (DocCore::PlainIds). Its
//                 first local delete gives it its ids back (recover_ids).
//   kTracker      the Fugue tracker (Seq, with tombstones) kept for good: it
//                 holds style anchors, or the tests switched plain states off.
//   kTempTracker  the whole tracker of an import or a replay (materialize):
//                 it folds back into a plain state when that ends (fold).
//   kPartial      an import's partial tracker (Eg-walker's partial replay,
//                 begin_partial): a tracker from a common ancestor on, holding
//                 the plain state it replaced, which takes its place again at
//                 the end of the import (fold_partial).
//
// The modes change only through the named transitions below; each checks its
// pre- and postconditions with WEFT_DCHECK. Readers ask `plain()` /
// `tracker()` (nullptr when the state is not in that mode); how a transition's
// new contents are built (the replay, the partial replay, the fold) is
// DocCore's (replay.cc, partial_replay.cc).
//
// A List's element values sit beside the mode (`values()`, by content index):
// every mode's contents index into them.
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_SEQ_STATE_H_
#define WEFT_SRC_CRDT_SEQ_STATE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "crdt/dcheck.h"
#include "crdt/fugue_tracker.h"
#include "crdt/plain_state.h"
#include "weft/base/status.h"
#include "weft/crdt/value.h"

namespace weft::crdt::detail {

// What a partial tracker keeps beside its Seq: the plain state it replaced
// (which lends its ids and contents back when the tracker folds) and where
// the tracker's placeholders stand.
struct PartialTracker {
  std::unique_ptr<PlainSeq> plain;  // the state at `plain_vv`
  DenseVv base;                     // every op the tracker resolves holds it
  DenseVv plain_vv;                 // the state's version when the tracker began
  // Placeholders filled in, and how many of them are the units of the state
  // at `base` (the first ones; the others only pad the end, see begin_partial).
  size_t placeholders = 0, real_placeholders = 0;
  // The first `skip` units of the state at `base` are not in the tracker: no
  // op it resolves reaches them (partial_low >= skip), so they are the first
  // `skip` visible units of every version it replays, and a position there
  // is `skip` more than in the tracker.
  size_t skip = 0;
};

class SeqState {
 public:
  enum class Mode : uint8_t { kPlain, kPlainNoIds, kTracker, kTempTracker, kPartial };

  // An empty plain state (`ids`: whether its units keep their ids).
  static SeqState empty_plain(bool is_text, bool ids) {
    return SeqState(Plain{std::make_unique<PlainSeq>(is_text, ids)});
  }
  // An empty tracker kept for good (peer table: the doc's, see Seq).
  static SeqState empty_tracker(const std::vector<uint64_t>* peer_ids, bool is_text) {
    return SeqState(Tracker{std::make_unique<Seq>(peer_ids, is_text), false});
  }

  SeqState(SeqState&& other) noexcept
      : rep_(std::move(other.rep_)),
        values_(std::move(other.values_)),
        plain_(std::exchange(other.plain_, nullptr)) {}
  SeqState& operator=(SeqState&& other) noexcept {
    rep_ = std::move(other.rep_);
    values_ = std::move(other.values_);
    plain_ = std::exchange(other.plain_, nullptr);
    return *this;
  }

  Mode mode() const;
  bool is_plain() const { return rep_.index() == kPlainIndex; }
  bool is_partial() const { return rep_.index() == kPartialIndex; }
  // A tracker that folds back at the end of its import or replay (a
  // temporary whole tracker or a partial one).
  bool is_temporary() const {
    if (const auto* t = std::get_if<Tracker>(&rep_)) return t->temporary;
    return is_partial();
  }

  // The plain state (kPlain, kPlainNoIds), else nullptr. (One load: every
  // keystroke asks.)
  [[gnu::always_inline]] PlainSeq* plain() const { return plain_; }
  // The tracker (kTracker, kTempTracker, kPartial), else nullptr.
  Seq* tracker() const {
    if (const auto* t = std::get_if<Tracker>(&rep_)) return t->seq.get();
    if (const auto* p = std::get_if<Partial>(&rep_)) return p->seq.get();
    return nullptr;
  }
  // What the partial tracker keeps (kPartial), else nullptr.
  const PartialTracker* partial() const {
    const auto* p = std::get_if<Partial>(&rep_);
    return p ? &p->info : nullptr;
  }
  PartialTracker* partial() {
    auto* p = std::get_if<Partial>(&rep_);
    return p ? &p->info : nullptr;
  }

  // List: the value of each element, by content index (every mode's
  // contents point into it; appended to by inserts).
  std::vector<Value>& values() { return values_; }
  const std::vector<Value>& values() const { return values_; }

  // ---- transitions
  // kPlain → kPartial: `tracker` (placeholders for the state at info.base and
  // the ops since, see DocCore::begin_partial) takes the state's place, and
  // the plain state moves into `info`. REQUIRES: a plain state, `info.plain`
  // empty, info.base within info.plain_vv.
  void begin_partial(std::unique_ptr<Seq> tracker, PartialTracker info);
  // kPlain / kPlainNoIds / kPartial → kTracker (or kTempTracker when
  // `temporary`): the state becomes `whole`'s tracker and values, `whole`
  // being the same state replayed from the op log onto a tracker.
  // REQUIRES: not a tracker already (other than a partial one); `whole` a
  // tracker kept for good.
  void materialize(SeqState&& whole, bool temporary);
  // kTempTracker → kPlain: the tracker folded into `plain` (its visible
  // units, with their ids). REQUIRES: a temporary whole tracker.
  void fold(std::unique_ptr<PlainSeq> plain);
  // kPartial → kPlain: the plain state the partial tracker held, which the
  // fold brought to the tracker's version (partial_replay.cc), takes its
  // place again. REQUIRES: a partial tracker.
  void fold_partial();
  // kTempTracker → kTracker: a temporary tracker that cannot fold (it holds
  // style anchors) stays for good. REQUIRES: a temporary whole tracker.
  void keep_tracker();
  // kPlainNoIds → kPlain (or kTracker: a replay that met style anchors):
  // the state becomes `with_ids`, the same state replayed from the op log
  // with ids. REQUIRES: a plain state without ids; `with_ids` a plain state
  // with ids or a tracker kept for good.
  void recover_ids(SeqState&& with_ids);
  // Any mode but kPartial → kPlain / kPlainNoIds: the state becomes `plain`
  // (with `values` for a List), as a snapshot's state section sets it.
  void set_plain(std::unique_ptr<PlainSeq> plain, std::vector<Value> values = {});

  // ---- reads, from whichever of plain state / tracker is held
  size_t units() const {
    if (PlainSeq* p = plain()) return p->visible_units();
    return tracker()->visible_units();
  }
  size_t utf16_len() const;
  size_t utf8_len() const;
  std::string text() const;
  std::vector<uint32_t> contents() const;
  // See Seq::locate (entity positions count style anchors, which only a Seq holds).
  Result<Seq::Boundary> locate(size_t n, int kind) const;
  // See Seq::unit_runs; into `runs`, whose capacity a plain state reuses.
  // REQUIRES: a tracker, or a plain state with ids.
  void unit_runs(size_t from, size_t to, std::vector<Seq::Run>& runs) const;

  // The mode's own invariants ("" when they hold): a partial tracker holds
  // its plain state, and its base lies within that state's version; `deep`
  // adds each structure's check (PlainSeq::check_structure,
  // Seq::check_prepare), in O(elements).
  std::string check(bool deep) const;

 private:
  struct Plain {
    std::unique_ptr<PlainSeq> seq;
  };
  struct Tracker {
    std::unique_ptr<Seq> seq;
    bool temporary = false;
  };
  struct Partial {
    std::unique_ptr<Seq> seq;
    PartialTracker info;
  };
  static constexpr size_t kPlainIndex = 0, kTrackerIndex = 1, kPartialIndex = 2;
  using Rep = std::variant<Plain, Tracker, Partial>;

  explicit SeqState(Plain p) : rep_(std::move(p)) { sync(); }
  explicit SeqState(Tracker t) : rep_(std::move(t)) {}
  // Sets plain_ from rep_ (after every change of mode).
  void sync() {
    const auto* p = std::get_if<Plain>(&rep_);
    plain_ = p ? p->seq.get() : nullptr;
  }

  Rep rep_;
  std::vector<Value> values_;
  PlainSeq* plain_ = nullptr;  // rep_'s plain state when it holds one (see sync)
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_SEQ_STATE_H_
