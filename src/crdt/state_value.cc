// Reading container values back out of a state (see core.h).
#include "crdt/core.h"

namespace weft::crdt::detail {

Value DocCore::container_value(const State& s, uint32_t idx, bool deep) const {
  const ContainerState* cs = idx < s.containers.size() ? s.containers[idx].get() : nullptr;
  auto resolve = [&](const Value& v) -> Value {
    if (!deep || !v.is_container()) return v;
    auto it = container_index.find(v.as_container());
    if (it == container_index.end()) {
      switch (v.as_container().type()) {
        case ContainerType::kText:
          return Value(std::string());
        case ContainerType::kList:
        case ContainerType::kMovableList:
          return Value(ValueList{});
        case ContainerType::kCounter:
          return Value(0.0);
        default:
          return Value(ValueMap{});
      }
    }
    return container_value(s, it->second, true);
  };
  switch (containers[idx].type()) {
    case ContainerType::kText:
      return Value(cs ? cs->text() : std::string());
    case ContainerType::kList: {
      ValueList l;
      if (cs) {
        for (uint32_t vi : cs->contents()) l.push_back(resolve(cs->sequence().values()[vi]));
      }
      return Value(std::move(l));
    }
    case ContainerType::kCounter:
      return Value(cs ? cs->counter().value() : 0.0);
    case ContainerType::kMap: {
      ValueMap m;
      if (cs) {
        for (const auto& [k, e] : cs->map().entries()) {
          if (e.value) m.emplace(k, resolve(*e.value));
        }
      }
      return Value(std::move(m));
    }
    default:
      return Value();
  }
}

Value DocCore::doc_value(const State& s) const {
  ValueMap out;
  for (uint32_t i = 0; i < containers.size(); ++i) {
    if (!containers[i].is_root()) continue;
    bool present = (i < s.containers.size() && s.containers[i]) || local_roots[i];
    if (present) out.emplace(containers[i].name(), container_value(s, i, true));
  }
  return Value(std::move(out));
}

}  // namespace weft::crdt::detail
