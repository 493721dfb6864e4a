// VersionVector (peer -> exclusive end counter) and Frontiers (the minimal
// antichain of last op IDs that generates the same causal closure).
//
// Conversions between the two need the causal graph, so they live on Doc
// (Doc::frontiers_to_vv / Doc::vv_to_frontiers). The types here are values.
//
// Thread safety: plain values; safe to copy and read from any thread.
#ifndef WEFT_CRDT_VERSION_H_
#define WEFT_CRDT_VERSION_H_

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/crdt/ids.h"

namespace weft::crdt {

// Result of comparing two versions in the causal partial order.
enum class VersionOrder { kEqual, kLess, kGreater, kConcurrent };

// Maps each peer to the exclusive end of the counters seen from it (the number
// of its ops seen). Peers absent from the vector have end 0. Kept sorted by peer.
class VersionVector {
 public:
  VersionVector() = default;
  VersionVector(std::initializer_list<std::pair<const PeerId, Counter>> entries);

  // The end for `peer` (0 when absent).
  Counter get(PeerId peer) const;
  // Sets the end for `peer`; an end <= 0 removes the entry.
  void set(PeerId peer, Counter end);
  // Raises the end for `peer` to at least `end`.
  void extend(PeerId peer, Counter end);
  // Raises every entry to the max of this and `other`.
  void merge(const VersionVector& other);

  // True when `id` is inside the version (id.counter < get(id.peer)).
  bool includes(const ID& id) const { return id.counter < get(id.peer); }
  // True when every op in `other` is in this version.
  bool includes(const VersionVector& other) const;
  // Partial order between this and `other`.
  VersionOrder compare(const VersionVector& other) const;

  // The spans in this version but not in `base` (per peer [base end, this end)).
  std::vector<IdSpan> diff_spans(const VersionVector& base) const;
  // Entry-wise minimum (the version both have seen).
  VersionVector intersect(const VersionVector& other) const;

  // Total number of ops in the version.
  int64_t total() const;
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<PeerId, Counter>>& entries() const { return entries_; }

  // {"peer":end,...} as compact JSON with decimal string keys.
  std::string to_json_string() const;

  friend bool operator==(const VersionVector&, const VersionVector&) = default;

 private:
  std::vector<std::pair<PeerId, Counter>> entries_;  // sorted by peer, ends > 0
};

// The minimal set of last op IDs of a version, sorted by (peer, counter).
class Frontiers {
 public:
  Frontiers() = default;
  Frontiers(std::initializer_list<ID> ids);
  explicit Frontiers(std::vector<ID> ids);

  const std::vector<ID>& ids() const { return ids_; }
  bool empty() const { return ids_.empty(); }
  size_t size() const { return ids_.size(); }
  bool contains(const ID& id) const;
  // Adds `id` (keeps the list sorted; does not remove dominated IDs, which
  // needs the causal graph).
  void push(const ID& id);
  // Makes `id` the only ID (reusing the storage: a local commit does this;
  // inline because every keystroke commit replaces a one-ID frontier).
  void assign(const ID& id) {
    if (ids_.size() == 1)
      ids_[0] = id;
    else
      assign_slow(id);
  }

  // Drops every ID for which `seen(id)` holds, then adds `id` (reusing the
  // storage: an imported change concurrent with part of the frontier).
  template <typename Pred>
  void replace_seen(const ID& id, Pred seen) {
    ids_.erase(std::remove_if(ids_.begin(), ids_.end(), seen), ids_.end());
    push(id);
  }

  // [{"peer":"<decimal>","counter":N},...] as compact JSON.
  std::string to_json_string() const;

  friend bool operator==(const Frontiers&, const Frontiers&) = default;

 private:
  void assign_slow(const ID& id);
  std::vector<ID> ids_;
};

}  // namespace weft::crdt

#endif  // WEFT_CRDT_VERSION_H_
