// Internal: the state of a doc at one version: per container, a Text's or
// List's plain state or Fugue tracker (with the partial tracker of an import
// in progress), a Map's entries, a Counter's value (see DocCore in core.h,
// which builds and edits them).
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_CONTAINER_STATE_H_
#define WEFT_SRC_CRDT_CONTAINER_STATE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crdt/plain_state.h"
#include "crdt/fugue_tracker.h"
#include "weft/crdt/container_id.h"
#include "weft/crdt/ids.h"
#include "weft/crdt/value.h"

namespace weft::crdt::detail {

struct MapEntry {
  bool written = false;
  Lamport lamport = 0;
  PeerId peer = 0;
  std::optional<Value> value;  // nullopt = deleted
};

// A Text / List whose plain state is on a temporary tracker for an import
// (Eg-walker's partial replay, see DocCore::begin_partial): the tracker holds
// placeholders for the state at `base` and the ops since, and the plain
// state it replaced waits here to lend its ids and contents back when the
// tracker folds into a plain state again (DocCore::fold_trackers).
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

// The state of one container. A Text or List holds either its plain state
// (`plain`, no tombstones, the common case) or, while an op needs it, its
// Fugue tracker (`seq`, which then also serves reads); never both. An
// import's tracker is temporary (it folds back into a plain state when the
// import ends); one that holds style anchors stays.
struct ContainerState {
  ContainerType type = ContainerType::kMap;
  std::unique_ptr<PlainSeq> plain;  // Text / List: the plain state
  std::unique_ptr<Seq> seq;         // Text / List: the tracker, when it has one
  // Set while `seq` is a partial tracker (see PartialTracker).
  std::unique_ptr<PartialTracker> partial;
  // The tracker is an import's (or a replay's): it folds back into a plain
  // state when that ends (DocCore::fold_trackers).
  bool temp_tracker = false;
  std::vector<Value> list_values;  // List: value of each element (by content index)
  std::map<std::string, MapEntry> map;
  double counter = 0;

  // Reads of a Text / List, from whichever of plain / seq is held.
  size_t units() const { return seq ? seq->visible_units() : plain ? plain->visible_units() : 0; }
  size_t utf16_len() const { return seq ? seq->utf16_len() : plain ? plain->utf16_len() : 0; }
  size_t utf8_len() const { return seq ? seq->utf8_len() : plain ? plain->utf8_len() : 0; }
  std::string text() const { return seq ? seq->to_utf8() : plain ? plain->to_utf8() : ""; }
  std::vector<uint32_t> contents() const {
    return seq     ? seq->visible_contents()
           : plain ? plain->visible_contents()
                   : std::vector<uint32_t>{};
  }
  // See Seq::locate (entity positions count style anchors, which only a Seq holds).
  Result<Seq::Boundary> locate(size_t n, int kind) const {
    if (seq) return seq->locate(n, kind);
    if (plain) return plain->locate(n, kind);
    if (n == 0) return Seq::Boundary{};
    return out_of_range("position past the end of an empty sequence");
  }
  // See Seq::unit_runs; into `runs`, whose capacity a plain state reuses.
  // REQUIRES: seq, or plain with ids_known().
  void unit_runs(size_t from, size_t to, std::vector<Seq::Run>& runs) const {
    if (plain) return plain->unit_runs(from, to, runs);
    if (seq) {
      runs = seq->unit_runs(from, to);
    } else {
      runs.clear();
    }
  }
};

// All container states of one version.
struct State {
  std::vector<std::unique_ptr<ContainerState>> containers;  // by container index
  DenseVv vv;
  int64_t vv_total = 0;
  bool plain = true;  // new Text / List states start plain (false: straight to a Seq)
  // New plain states keep their units' ids (false: they do not; see
  // PlainSeq::ids_known and DocCore::recover_ids).
  bool plain_ids = true;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_CONTAINER_STATE_H_
