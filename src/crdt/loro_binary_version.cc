// VersionVector and Frontiers in Loro's binary encoding (postcard: a count,
// then peer as unsigned LEB128 and counter zig-zag LEB128 per entry).
#include <algorithm>

#include "crdt/loro_binary.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

void put_entries(std::string& out, const std::vector<std::pair<PeerId, Counter>>& entries) {
  detail::loro::put_uleb(out, entries.size());
  for (const auto& [peer, counter] : entries) {
    detail::loro::put_uleb(out, peer);
    detail::loro::put_zigzag(out, counter);
  }
}

// Reads the count-prefixed (peer, counter) pairs of `bytes` (the whole input).
Status read_entries(std::string_view bytes, std::vector<std::pair<PeerId, Counter>>& out) {
  detail::loro::Reader r(bytes);
  // Each entry takes at least two bytes.
  const uint64_t n = r.count(r.remaining() / 2, "entry count");
  out.reserve(n);
  for (uint64_t k = 0; k < n && r.ok(); ++k) {
    const uint64_t peer = r.uleb();
    const int64_t counter = r.zigzag();
    if (r.ok() && (counter < 0 || counter > INT32_MAX))
      return detail::loro::corrupt("counter out of range");
    if (r.ok() && peer == kReservedPeer) return detail::loro::corrupt("reserved peer id");
    out.emplace_back(peer, static_cast<Counter>(counter));
  }
  if (!r.ok()) return r.status();
  if (!r.at_end()) return detail::loro::corrupt("trailing bytes after the entries");
  return Status();
}

}  // namespace

std::string encode_loro_version_vector(const VersionVector& vv) {
  std::string out;
  put_entries(out, vv.entries());
  return out;
}

Result<VersionVector> decode_loro_version_vector(std::string_view bytes) {
  std::vector<std::pair<PeerId, Counter>> entries;
  WEFT_RETURN_IF_ERROR(read_entries(bytes, entries));
  VersionVector vv;
  for (const auto& [peer, end] : entries) vv.extend(peer, end);
  return vv;
}

std::string encode_loro_frontiers(const Frontiers& frontiers) {
  std::vector<std::pair<PeerId, Counter>> entries;
  for (const ID& id : frontiers.ids()) entries.emplace_back(id.peer, id.counter);
  std::sort(entries.begin(), entries.end());
  std::string out;
  put_entries(out, entries);
  return out;
}

Result<Frontiers> decode_loro_frontiers(std::string_view bytes) {
  std::vector<std::pair<PeerId, Counter>> entries;
  WEFT_RETURN_IF_ERROR(read_entries(bytes, entries));
  Frontiers f;
  for (const auto& [peer, counter] : entries) {
    if (!f.contains(ID{peer, counter})) f.push(ID{peer, counter});
  }
  return f;
}

}  // namespace weft::crdt
