// Identity of CRDT operations: peers, counters, lamport clocks and op IDs.
//
// Every atomic unit of an operation (one inserted character, one list element,
// one map write) has an ID: the author's PeerId and a per-peer Counter that is
// dense from 0. Peer ids are u64 and compare unsigned; on the wire (Loro JSON)
// they travel as decimal strings.
//
// Thread safety: plain values; safe to copy and read from any thread.
#ifndef WEFT_CRDT_IDS_H_
#define WEFT_CRDT_IDS_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft::crdt {

using PeerId = uint64_t;   // compared unsigned; u64::MAX is reserved
using Counter = int32_t;   // per-peer op counter, dense from 0
using Lamport = uint32_t;  // lamport clock of one op unit

inline constexpr PeerId kReservedPeer = UINT64_MAX;

// One op unit: `counter` of `peer`.
struct ID {
  PeerId peer = 0;
  Counter counter = 0;

  friend bool operator==(const ID&, const ID&) = default;
  // Orders by (peer, counter), the order Loro sorts deps in.
  friend std::strong_ordering operator<=>(const ID& a, const ID& b) {
    if (auto c = a.peer <=> b.peer; c != 0) return c;
    return a.counter <=> b.counter;
  }
  // "counter@peer", e.g. "3@155".
  std::string to_string() const;
};

// Parses "counter@peer" with a decimal u64 peer. Errors: kInvalidArgument.
Result<ID> parse_id(std::string_view text);

// Parses a decimal u64 (no sign, no spaces). Errors: kInvalidArgument.
Result<PeerId> parse_peer(std::string_view text);

// A run of consecutive counters of one peer: [start, end).
struct IdSpan {
  PeerId peer = 0;
  Counter start = 0;
  Counter end = 0;
  friend bool operator==(const IdSpan&, const IdSpan&) = default;
};

}  // namespace weft::crdt

template <>
struct std::hash<weft::crdt::ID> {
  size_t operator()(const weft::crdt::ID& id) const noexcept {
    return std::hash<uint64_t>()(id.peer * 0x9E3779B97F4A7C15ull ^ uint64_t(uint32_t(id.counter)));
  }
};

#endif  // WEFT_CRDT_IDS_H_
