// Events: per-container deltas computed from the values before and after an
// operation (only when someone subscribed), delivered after the state is
// consistent (see core.h).
#include <algorithm>

#include "crdt/core.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

std::u32string to_u32(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) out.push_back(decode_utf8_unchecked(s, i));
  return out;
}

std::string to_u8(const std::u32string& s, size_t from, size_t len) {
  std::string out;
  for (size_t i = from; i < from + len; ++i) append_utf8(out, s[i]);
  return out;
}

// Common prefix and suffix lengths of two sequences.
template <typename Seq>
std::pair<size_t, size_t> common_ends(const Seq& a, const Seq& b) {
  size_t p = 0;
  while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
  size_t s = 0;
  while (s < a.size() - p && s < b.size() - p && a[a.size() - 1 - s] == b[b.size() - 1 - s]) ++s;
  return {p, s};
}

}  // namespace

std::optional<ContainerDiff> diff_values(const ContainerId& id, const Value& before,
                                         const Value& after) {
  if (before == after) return std::nullopt;
  ContainerDiff d;
  d.target = id;
  switch (id.type()) {
    case ContainerType::kText: {
      std::u32string a = before.kind() == Value::Kind::kString ? to_u32(before.as_string()) : U"";
      std::u32string b = after.kind() == Value::Kind::kString ? to_u32(after.as_string()) : U"";
      auto [p, s] = common_ends(a, b);
      TextDelta delta;
      if (p) delta.push_back({TextDeltaItem::Kind::kRetain, p, ""});
      if (a.size() - p - s) delta.push_back({TextDeltaItem::Kind::kDelete, a.size() - p - s, ""});
      if (b.size() - p - s) {
        delta.push_back(
            {TextDeltaItem::Kind::kInsert, b.size() - p - s, to_u8(b, p, b.size() - p - s)});
      }
      d.diff = std::move(delta);
      return d;
    }
    case ContainerType::kList: {
      ValueList a = before.kind() == Value::Kind::kList ? before.as_list() : ValueList{};
      ValueList b = after.kind() == Value::Kind::kList ? after.as_list() : ValueList{};
      auto [p, s] = common_ends(a, b);
      ListDelta delta;
      if (p) delta.push_back({ListDeltaItem::Kind::kRetain, p, {}});
      if (a.size() - p - s) delta.push_back({ListDeltaItem::Kind::kDelete, a.size() - p - s, {}});
      if (b.size() - p - s) {
        ListDeltaItem ins{ListDeltaItem::Kind::kInsert, b.size() - p - s, {}};
        ins.values.assign(b.begin() + p, b.end() - s);
        delta.push_back(std::move(ins));
      }
      d.diff = std::move(delta);
      return d;
    }
    case ContainerType::kMap: {
      ValueMap a = before.kind() == Value::Kind::kMap ? before.as_map() : ValueMap{};
      ValueMap b = after.kind() == Value::Kind::kMap ? after.as_map() : ValueMap{};
      MapDelta delta;
      for (const auto& [k, v] : a) {
        auto it = b.find(k);
        if (it == b.end())
          delta.updated[k] = std::nullopt;
        else if (!(it->second == v))
          delta.updated[k] = it->second;
      }
      for (const auto& [k, v] : b) {
        if (!a.count(k)) delta.updated[k] = v;
      }
      d.diff = std::move(delta);
      return d;
    }
    case ContainerType::kCounter: {
      double a = before.kind() == Value::Kind::kF64 ? before.as_f64() : 0;
      double b = after.kind() == Value::Kind::kF64 ? after.as_f64() : 0;
      d.diff = CounterDelta{b - a};
      return d;
    }
    default:
      return std::nullopt;
  }
}

void DocCore::begin_events() {
  gathering = true;
  before_values.clear();
}

void DocCore::touch(uint32_t container) {
  if (!gathering || before_values.count(container)) return;
  before_values.emplace(container, container_value(*state, container, false));
}

void DocCore::end_events(EventTrigger by, const std::string& origin, std::optional<std::string> msg,
                         const Frontiers& from) {
  gathering = false;
  DocEvent ev;
  ev.by = by;
  ev.origin = origin;
  ev.message = std::move(msg);
  ev.from = from;
  ev.to = state_frontiers;
  for (const auto& [idx, before] : before_values) {
    auto d = diff_values(containers[idx], before, container_value(*state, idx, false));
    if (d) ev.diffs.push_back(std::move(*d));
  }
  before_values.clear();
  if (ev.diffs.empty()) return;
  // Copy the list: callbacks may subscribe or unsubscribe while we iterate.
  auto subs = subscribers;
  ++emitting;
  for (const Subscriber& s : subs) {
    if (!s.container) {
      s.callback(ev);
      continue;
    }
    for (const ContainerDiff& d : ev.diffs) {
      auto it = container_index.find(d.target);
      if (it != container_index.end() && it->second == *s.container) {
        DocEvent one = ev;
        one.diffs = {d};
        s.callback(one);
      }
    }
  }
  --emitting;
}

void DocCore::emit_all_diff(const State& before, EventTrigger by) {
  if (subscribers.empty()) return;
  gathering = true;
  before_values.clear();
  for (uint32_t i = 0; i < containers.size(); ++i) {
    before_values.emplace(i, container_value(before, i, false));
  }
  end_events(by, "", std::nullopt, Frontiers());
}

}  // namespace weft::crdt::detail
