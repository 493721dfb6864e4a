// Internal: MapState, the state of one Map at one version: per key, the
// write that wins under last-writer-wins (the highest lamport, then the
// highest peer id), a delete keeping its entry (value nullopt) so that an
// older write arriving later still loses to it.
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_MAP_STATE_H_
#define WEFT_SRC_CRDT_MAP_STATE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "weft/crdt/ids.h"
#include "weft/crdt/value.h"

namespace weft::crdt::detail {

struct MapEntry {
  bool written = false;
  Lamport lamport = 0;
  PeerId peer = 0;
  std::optional<Value> value;  // nullopt = deleted
};

class MapState {
 public:
  using Entries = std::map<std::string, MapEntry, std::less<>>;

  // Every key written, deleted ones included (value nullopt), in key order.
  const Entries& entries() const { return entries_; }
  // The entry of `key` (nullptr when it was never written).
  const MapEntry* find(std::string_view key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // Applies a write of `value` (nullptr: a delete) to `key` stamped
  // (`lamport`, `peer`) when it wins over the entry's current write.
  void apply(const std::string& key, Lamport lamport, PeerId peer, const Value* value) {
    MapEntry& e = entries_[key];
    const bool wins =
        !e.written || e.lamport < lamport || (e.lamport == lamport && e.peer < peer);
    if (!wins) return;
    e.written = true;
    e.lamport = lamport;
    e.peer = peer;
    if (value)
      e.value = *value;
    else
      e.value.reset();
  }
  // Sets `key`'s entry as it stands (a snapshot's state section).
  void install(std::string key, MapEntry entry) {
    entries_.insert_or_assign(std::move(key), std::move(entry));
  }

 private:
  Entries entries_;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_MAP_STATE_H_
