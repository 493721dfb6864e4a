// Doc::revert_to: write new local ops that bring every container back to its
// value at an earlier version (history is kept; the basis of rollback).
#include <functional>

#include "crdt/core.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

using detail::DocCore;
using detail::State;

class Reverter {
 public:
  Reverter(Doc& doc, DocCore& core, const State& target)
      : doc_(doc), core_(core), target_(target) {}

  Value target_value(const ContainerId& id) {
    auto it = core_.find_container(id);
    if (!it) return Value();
    return core_.container_value(target_, *it, false);
  }
  Value current_value(const ContainerId& id) {
    auto it = core_.find_container(id);
    if (!it) return Value();
    return core_.container_value(core_.live(), *it, false);
  }

  // Makes container `id` (present in both versions) equal to its target value.
  Status make_equal(const ContainerId& id) {
    switch (id.type()) {
      case ContainerType::kText: {
        WEFT_ASSIGN_OR_RETURN(TextRef t, doc_.text(id));
        Value tv = target_value(id);
        return t.update(tv.kind() == Value::Kind::kString ? tv.as_string() : "");
      }
      case ContainerType::kCounter: {
        WEFT_ASSIGN_OR_RETURN(CounterRef c, doc_.counter(id));
        Value tv = target_value(id);
        double want = tv.kind() == Value::Kind::kF64 ? tv.as_f64() : 0;
        if (want != c.value()) return c.increment(want - c.value());
        return Status();
      }
      case ContainerType::kMap: {
        WEFT_ASSIGN_OR_RETURN(MapRef m, doc_.map(id));
        Value tv = target_value(id), cv = current_value(id);
        ValueMap want = tv.kind() == Value::Kind::kMap ? tv.as_map() : ValueMap{};
        ValueMap have = cv.kind() == Value::Kind::kMap ? cv.as_map() : ValueMap{};
        for (const auto& [k, v] : have) {
          if (!want.count(k)) WEFT_RETURN_IF_ERROR(m.erase(k));
        }
        for (const auto& [k, v] : want) {
          auto it = have.find(k);
          if (v.is_container()) {
            if (it != have.end() && it->second == v) {
              WEFT_RETURN_IF_ERROR(make_equal(v.as_container()));
            } else {
              WEFT_ASSIGN_OR_RETURN(ContainerId child, m.set_container(k, v.as_container().type()));
              WEFT_RETURN_IF_ERROR(fill(child, v.as_container()));
            }
          } else if (it == have.end() || !(it->second == v)) {
            WEFT_RETURN_IF_ERROR(m.set(k, v));
          }
        }
        return Status();
      }
      case ContainerType::kList: {
        WEFT_ASSIGN_OR_RETURN(ListRef l, doc_.list(id));
        Value tv = target_value(id), cv = current_value(id);
        ValueList want = tv.kind() == Value::Kind::kList ? tv.as_list() : ValueList{};
        ValueList have = cv.kind() == Value::Kind::kList ? cv.as_list() : ValueList{};
        size_t p = 0;
        while (p < want.size() && p < have.size() && want[p] == have[p]) ++p;
        size_t s = 0;
        while (s < want.size() - p && s < have.size() - p &&
               want[want.size() - 1 - s] == have[have.size() - 1 - s]) {
          ++s;
        }
        if (have.size() - p - s) WEFT_RETURN_IF_ERROR(l.erase(p, have.size() - p - s));
        for (size_t i = p; i < want.size() - s; ++i) {
          if (want[i].is_container()) {
            WEFT_ASSIGN_OR_RETURN(ContainerId child,
                                  l.insert_container(i, want[i].as_container().type()));
            WEFT_RETURN_IF_ERROR(fill(child, want[i].as_container()));
          } else {
            WEFT_RETURN_IF_ERROR(l.insert(i, want[i]));
          }
        }
        // Children kept in place are reverted recursively.
        for (size_t i = 0; i < p; ++i) {
          if (want[i].is_container()) WEFT_RETURN_IF_ERROR(make_equal(want[i].as_container()));
        }
        for (size_t i = want.size() - s; i < want.size(); ++i) {
          if (want[i].is_container()) WEFT_RETURN_IF_ERROR(make_equal(want[i].as_container()));
        }
        return Status();
      }
      default:
        return unimplemented("revert of this container type");
    }
  }

  // Fills a fresh container `dst` with the target value of container `src`.
  Status fill(const ContainerId& dst, const ContainerId& src) {
    Value tv = target_value(src);
    switch (dst.type()) {
      case ContainerType::kText: {
        WEFT_ASSIGN_OR_RETURN(TextRef t, doc_.text(dst));
        return tv.kind() == Value::Kind::kString ? t.insert(0, tv.as_string()) : Status();
      }
      case ContainerType::kCounter: {
        WEFT_ASSIGN_OR_RETURN(CounterRef c, doc_.counter(dst));
        double v = tv.kind() == Value::Kind::kF64 ? tv.as_f64() : 0;
        return v != 0 ? c.increment(v) : Status();
      }
      case ContainerType::kMap: {
        WEFT_ASSIGN_OR_RETURN(MapRef m, doc_.map(dst));
        if (tv.kind() != Value::Kind::kMap) return Status();
        for (const auto& [k, v] : tv.as_map()) {
          if (v.is_container()) {
            WEFT_ASSIGN_OR_RETURN(ContainerId child, m.set_container(k, v.as_container().type()));
            WEFT_RETURN_IF_ERROR(fill(child, v.as_container()));
          } else {
            WEFT_RETURN_IF_ERROR(m.set(k, v));
          }
        }
        return Status();
      }
      case ContainerType::kList: {
        WEFT_ASSIGN_OR_RETURN(ListRef l, doc_.list(dst));
        if (tv.kind() != Value::Kind::kList) return Status();
        size_t i = 0;
        for (const auto& v : tv.as_list()) {
          if (v.is_container()) {
            WEFT_ASSIGN_OR_RETURN(ContainerId child,
                                  l.insert_container(i, v.as_container().type()));
            WEFT_RETURN_IF_ERROR(fill(child, v.as_container()));
          } else {
            WEFT_RETURN_IF_ERROR(l.insert(i, v));
          }
          ++i;
        }
        return Status();
      }
      default:
        return unimplemented("revert of this container type");
    }
  }

 private:
  Doc& doc_;
  DocCore& core_;
  const State& target_;
};

}  // namespace

Status Doc::revert_to(const Frontiers& frontiers) {
  core_->settled();  // see DocCore::settled
  WEFT_RETURN_IF_ERROR(core_->check_editable(0));
  WEFT_RETURN_IF_ERROR(core_->commit({}));
  WEFT_ASSIGN_OR_RETURN(detail::DenseVv vv, core_->frontiers_to_dense(frontiers));
  WEFT_ASSIGN_OR_RETURN(auto target,
                        core_->build_state(vv, true, detail::DocCore::PlainIds::kDeferred));
  const bool ac = core_->set_auto_commit(false);
  Reverter r(*this, *core_, *target);
  Status st;
  for (uint32_t i = 0; i < core_->container_table().size() && st.ok(); ++i) {
    const ContainerId id = core_->container_table()[i];
    if (!id.is_root()) continue;
    bool in_target = i < target->containers.size() && target->containers[i];
    bool in_current = i < core_->live().containers.size() && core_->live().containers[i];
    if (in_target || in_current) st = r.make_equal(id);
  }
  core_->set_auto_commit(ac);
  WEFT_RETURN_IF_ERROR(st);
  return core_->commit({});
}

}  // namespace weft::crdt
