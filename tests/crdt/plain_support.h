// Test helpers for the plain state (crdt/plain_state.h) seen through a Doc: which
// state a container holds, and a doc that never uses the plain state.
#ifndef WEFT_TESTS_CRDT_PLAIN_SUPPORT_H_
#define WEFT_TESTS_CRDT_PLAIN_SUPPORT_H_

#include "crdt/core_access.h"
#include "weft/crdt/doc.h"

namespace weft::crdt::testing {

// Whether Text/List `id` of `doc` holds its plain state (no tracker).
inline bool is_plain(const Doc& doc, const ContainerId& id) {
  const auto& core = *doc.core();
  const std::optional<uint32_t> idx = core.find_container(id);
  if (!idx || *idx >= core.live().containers.size()) return true;
  const auto* cs = core.live().containers[*idx].get();
  return cs == nullptr || cs->plain() != nullptr;
}

// Whether Text/List `id` of `doc` holds a plain state that keeps its ids.
inline bool plain_with_ids(const Doc& doc, const ContainerId& id) {
  const auto& core = *doc.core();
  const auto* cs = core.live().containers.at(*core.find_container(id)).get();
  return cs->plain() != nullptr && cs->plain()->ids_known();
}

// A doc whose Texts and Lists keep the Fugue tracker from the start.
inline Doc tracker_doc(PeerId peer) {
  Doc d(peer);
  test_options(d).plain_enabled = false;
  return d;
}

}  // namespace weft::crdt::testing

#endif  // WEFT_TESTS_CRDT_PLAIN_SUPPORT_H_
