// The value side of file blocks: content hashes, version strings and action
// names (weft/source/file_block.h).
#include <charconv>
#include <string>

#include "weft/base/hash.h"
#include "weft/source/file_block.h"

namespace weft::source {
namespace {

// A version names a few frontier ids; anything longer is not one we wrote.
constexpr size_t kMaxVersionChars = 4096;
constexpr std::string_view kVersionPrefix = "v1-";
constexpr std::string_view kEmptyVersion = "v0";

constexpr char kHexDigits[] = "0123456789abcdef";

void append_hex(std::string& out, uint64_t value) {
  char buf[16];
  int n = 0;
  do {
    buf[n++] = kHexDigits[value & 0xF];
    value >>= 4;
  } while (value != 0);
  while (n > 0) out.push_back(buf[--n]);
}

Status not_a_version(std::string_view text) {
  constexpr size_t kShown = 80;
  std::string shown(text.substr(0, kShown));
  if (text.size() > kShown) shown += "...";
  return invalid_argument("not a version of this file: \"" + shown +
                          "\" (versions look like \"v0\" or \"v1-<hex>.<n>\", as history "
                          "and change results give them)");
}

// Parses one "<peerhex>.<counter>" item.
bool parse_item(std::string_view item, crdt::ID& id) {
  size_t dot = item.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 16) return false;
  std::string_view peer = item.substr(0, dot), counter = item.substr(dot + 1);
  if (counter.empty()) return false;
  uint64_t p = 0;
  auto [pend, perr] = std::from_chars(peer.data(), peer.data() + peer.size(), p, 16);
  if (perr != std::errc() || pend != peer.data() + peer.size()) return false;
  int32_t c = 0;
  auto [cend, cerr] = std::from_chars(counter.data(), counter.data() + counter.size(), c, 10);
  if (cerr != std::errc() || cend != counter.data() + counter.size() || c < 0) return false;
  if (p == crdt::kReservedPeer) return false;
  id = crdt::ID{p, c};
  return true;
}

}  // namespace

std::string content_hash(std::string_view bytes) {
  uint64_t h = hash64(bytes);
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHexDigits[h & 0xF];
    h >>= 4;
  }
  return out;
}

std::string encode_version(const crdt::Frontiers& frontiers) {
  if (frontiers.empty()) return std::string(kEmptyVersion);
  std::string out(kVersionPrefix);
  bool first = true;
  for (const crdt::ID& id : frontiers.ids()) {
    if (!first) out.push_back('_');
    first = false;
    append_hex(out, id.peer);
    out.push_back('.');
    out += std::to_string(id.counter);
  }
  return out;
}

Result<crdt::Frontiers> decode_version(std::string_view version) {
  if (version == kEmptyVersion) return crdt::Frontiers();
  if (version.size() > kMaxVersionChars || !version.starts_with(kVersionPrefix)) {
    return not_a_version(version);
  }
  std::vector<crdt::ID> ids;
  std::string_view rest = version.substr(kVersionPrefix.size());
  while (true) {
    size_t sep = rest.find('_');
    crdt::ID id;
    if (!parse_item(rest.substr(0, sep), id)) return not_a_version(version);
    ids.push_back(id);
    if (sep == std::string_view::npos) break;
    rest = rest.substr(sep + 1);
  }
  crdt::Frontiers frontiers(std::move(ids));
  // Only the spelling encode_version writes (lower-case hex without leading
  // zeros, decimal counters, ids sorted and distinct) names a version.
  if (encode_version(frontiers) != version) return not_a_version(version);
  return frontiers;
}

std::string_view reconcile_action_name(ReconcileResult::Action action) {
  switch (action) {
    case ReconcileResult::Action::kNone:
      return "none";
    case ReconcileResult::Action::kTookDisk:
      return "took_disk";
    case ReconcileResult::Action::kTookMemory:
      return "took_memory";
    case ReconcileResult::Action::kMerged:
      return "merged";
    case ReconcileResult::Action::kConflict:
      return "conflict";
  }
  return "unknown";
}

}  // namespace weft::source
