// Internal: the state of a doc at one version (State): per container, the
// state its type holds (ContainerState): a Text's or List's SeqState
// (seq_state.h), a Map's MapState (map_state.h) or a Counter's CounterState
// (counter_state.h). DocCore (core.h) builds and edits them.
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_CONTAINER_STATE_H_
#define WEFT_SRC_CRDT_CONTAINER_STATE_H_

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "crdt/counter_state.h"
#include "crdt/dcheck.h"
#include "crdt/map_state.h"
#include "crdt/seq_state.h"
#include "weft/crdt/container_id.h"

namespace weft::crdt::detail {

// The state of one container: which of SeqState / MapState / CounterState
// follows from its type (Text and List: SeqState; Counter: CounterState;
// Map: MapState; the types weft does not implement hold an empty MapState,
// which no op reaches).
class ContainerState {
 public:
  // A Text / List's state.
  ContainerState(ContainerType type, SeqState seq) : type_(type), rep_(std::move(seq)) {
    WEFT_DCHECK(is_sequence_type(type));
  }
  // An empty state of any other type.
  explicit ContainerState(ContainerType type) : type_(type) {
    WEFT_DCHECK(!is_sequence_type(type));
    if (type == ContainerType::kCounter) rep_.emplace<CounterState>();
  }
  static bool is_sequence_type(ContainerType t) {
    return t == ContainerType::kText || t == ContainerType::kList;
  }

  ContainerType type() const { return type_; }

  // A Text / List's state (nullptr for other types).
  SeqState* seq_if() { return std::get_if<SeqState>(&rep_); }
  const SeqState* seq_if() const { return std::get_if<SeqState>(&rep_); }
  // REQUIRES: a Text / List.
  SeqState& sequence() {
    WEFT_DCHECK(seq_if());
    return *std::get_if<SeqState>(&rep_);
  }
  const SeqState& sequence() const {
    WEFT_DCHECK(seq_if());
    return *std::get_if<SeqState>(&rep_);
  }
  // A Map's / Counter's state (nullptr for other types).
  MapState* map_if() { return std::get_if<MapState>(&rep_); }
  CounterState* counter_if() { return std::get_if<CounterState>(&rep_); }
  // REQUIRES: a Map.
  MapState& map() {
    WEFT_DCHECK(std::holds_alternative<MapState>(rep_));
    return *std::get_if<MapState>(&rep_);
  }
  const MapState& map() const {
    WEFT_DCHECK(std::holds_alternative<MapState>(rep_));
    return *std::get_if<MapState>(&rep_);
  }
  // REQUIRES: a Counter.
  CounterState& counter() {
    WEFT_DCHECK(std::holds_alternative<CounterState>(rep_));
    return *std::get_if<CounterState>(&rep_);
  }
  const CounterState& counter() const {
    WEFT_DCHECK(std::holds_alternative<CounterState>(rep_));
    return *std::get_if<CounterState>(&rep_);
  }
  // Whether the state is the one its type holds.
  bool fits_type() const {
    if (is_sequence_type(type_)) return std::holds_alternative<SeqState>(rep_);
    if (type_ == ContainerType::kCounter) return std::holds_alternative<CounterState>(rep_);
    return std::holds_alternative<MapState>(rep_);
  }

  // A Text / List's plain state, or its tracker (see SeqState); nullptr
  // when it holds the other, or for other types.
  [[gnu::always_inline]] PlainSeq* plain() const {
    const SeqState* s = seq_if();
    return s ? s->plain() : nullptr;
  }
  Seq* tracker() const {
    const SeqState* s = seq_if();
    return s ? s->tracker() : nullptr;
  }

  // Reads of a Text / List (see SeqState; empty for other types).
  size_t units() const {
    const SeqState* s = seq_if();
    return s ? s->units() : 0;
  }
  size_t utf16_len() const {
    const SeqState* s = seq_if();
    return s ? s->utf16_len() : 0;
  }
  size_t utf8_len() const {
    const SeqState* s = seq_if();
    return s ? s->utf8_len() : 0;
  }
  std::string text() const {
    const SeqState* s = seq_if();
    return s ? s->text() : "";
  }
  std::vector<uint32_t> contents() const {
    const SeqState* s = seq_if();
    return s ? s->contents() : std::vector<uint32_t>{};
  }
  Result<Seq::Boundary> locate(size_t n, int kind) const {
    if (const SeqState* s = seq_if()) return s->locate(n, kind);
    if (n == 0) return Seq::Boundary{};
    return out_of_range("position past the end of an empty sequence");
  }
  // REQUIRES: a Text / List (see SeqState::unit_runs).
  void unit_runs(size_t from, size_t to, std::vector<Seq::Run>& runs) const {
    sequence().unit_runs(from, to, runs);
  }

 private:
  ContainerType type_;
  std::variant<MapState, SeqState, CounterState> rep_;
};

// All container states of one version.
struct State {
  std::vector<std::unique_ptr<ContainerState>> containers;  // by container index
  DenseVv vv;
  int64_t vv_total = 0;
  bool plain = true;  // new Text / List states start plain (false: straight to a tracker)
  // New plain states keep their units' ids (false: they do not; see
  // PlainSeq::ids_known and DocCore::recover_ids).
  bool plain_ids = true;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_CONTAINER_STATE_H_
