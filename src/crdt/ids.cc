// IDs, version vectors and frontiers (the parts that need no causal graph).
#include "weft/crdt/ids.h"

#include <algorithm>
#include <charconv>

#include "weft/crdt/version.h"

namespace weft::crdt {

std::string ID::to_string() const { return std::to_string(counter) + "@" + std::to_string(peer); }

Result<PeerId> parse_peer(std::string_view text) {
  PeerId v = 0;
  if (text.empty() || text.size() > 20)
    return invalid_argument("bad peer id '" + std::string(text) + "'");
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return invalid_argument("bad peer id '" + std::string(text) + "': expected a decimal u64");
  }
  return v;
}

Result<ID> parse_id(std::string_view text) {
  size_t at = text.rfind('@');
  if (at == std::string_view::npos)
    return invalid_argument("bad op id '" + std::string(text) + "': expected counter@peer");
  std::string_view c = text.substr(0, at);
  int64_t counter = 0;
  auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), counter);
  if (c.empty() || ec != std::errc() || p != c.data() + c.size() || counter < 0 ||
      counter > INT32_MAX) {
    return invalid_argument("bad op id '" + std::string(text) + "': bad counter");
  }
  WEFT_ASSIGN_OR_RETURN(PeerId peer, parse_peer(text.substr(at + 1)));
  return ID{peer, static_cast<Counter>(counter)};
}

VersionVector::VersionVector(std::initializer_list<std::pair<const PeerId, Counter>> entries) {
  for (const auto& [p, c] : entries) set(p, c);
}

Counter VersionVector::get(PeerId peer) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), peer,
                             [](const auto& e, PeerId p) { return e.first < p; });
  return it != entries_.end() && it->first == peer ? it->second : 0;
}

void VersionVector::set(PeerId peer, Counter end) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), peer,
                             [](const auto& e, PeerId p) { return e.first < p; });
  if (it != entries_.end() && it->first == peer) {
    if (end <= 0)
      entries_.erase(it);
    else
      it->second = end;
  } else if (end > 0) {
    entries_.insert(it, {peer, end});
  }
}

void VersionVector::extend(PeerId peer, Counter end) {
  if (get(peer) < end) set(peer, end);
}

void VersionVector::merge(const VersionVector& other) {
  for (const auto& [p, c] : other.entries_) extend(p, c);
}

bool VersionVector::includes(const VersionVector& other) const {
  for (const auto& [p, c] : other.entries_)
    if (get(p) < c) return false;
  return true;
}

VersionOrder VersionVector::compare(const VersionVector& other) const {
  bool a = includes(other), b = other.includes(*this);
  if (a && b) return VersionOrder::kEqual;
  if (a) return VersionOrder::kGreater;
  if (b) return VersionOrder::kLess;
  return VersionOrder::kConcurrent;
}

std::vector<IdSpan> VersionVector::diff_spans(const VersionVector& base) const {
  std::vector<IdSpan> out;
  for (const auto& [p, c] : entries_) {
    Counter b = base.get(p);
    if (b < c) out.push_back({p, b, c});
  }
  return out;
}

VersionVector VersionVector::intersect(const VersionVector& other) const {
  VersionVector out;
  for (const auto& [p, c] : entries_) out.set(p, std::min(c, other.get(p)));
  return out;
}

int64_t VersionVector::total() const {
  int64_t t = 0;
  for (const auto& e : entries_) t += e.second;
  return t;
}

std::string VersionVector::to_json_string() const {
  std::string s = "{";
  // Keys sorted as decimal strings so the output is canonical JSON.
  std::vector<std::pair<std::string, Counter>> items;
  for (const auto& [p, c] : entries_) items.emplace_back(std::to_string(p), c);
  std::sort(items.begin(), items.end());
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ",";
    s += "\"" + items[i].first + "\":" + std::to_string(items[i].second);
  }
  return s + "}";
}

Frontiers::Frontiers(std::initializer_list<ID> ids) : Frontiers(std::vector<ID>(ids)) {}

Frontiers::Frontiers(std::vector<ID> ids) : ids_(std::move(ids)) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

bool Frontiers::contains(const ID& id) const {
  return std::binary_search(ids_.begin(), ids_.end(), id);
}

// The general case of Frontiers::assign (out of line: the one-ID path needs
// no stack frame).
void Frontiers::assign_slow(const ID& id) { ids_.assign(1, id); }

void Frontiers::push(const ID& id) {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || !(*it == id)) ids_.insert(it, id);
}

std::string Frontiers::to_json_string() const {
  std::string s = "[";
  for (size_t i = 0; i < ids_.size(); ++i) {
    if (i) s += ",";
    s += "{\"peer\":\"" + std::to_string(ids_[i].peer) +
         "\",\"counter\":" + std::to_string(ids_[i].counter) + "}";
  }
  return s + "]";
}

}  // namespace weft::crdt
