// Container identity: the type of a container and Loro's container-id strings
// (`cid:root-NAME:Type` for root containers, `cid:COUNTER@PEER:Type` for a
// child created by the op with that ID).
//
// Thread safety: plain values; safe to copy and read from any thread.
#ifndef WEFT_CRDT_CONTAINER_ID_H_
#define WEFT_CRDT_CONTAINER_ID_H_

#include <compare>
#include <functional>
#include <string>
#include <string_view>

#include "weft/crdt/ids.h"

namespace weft::crdt {

enum class ContainerType : uint8_t { kText, kMap, kList, kMovableList, kTree, kCounter };

// "Text", "Map", "List", "MovableList", "Tree", "Counter".
std::string_view container_type_name(ContainerType type);
// Parses a type name (also the lower-case forms). Errors: kInvalidArgument.
Result<ContainerType> parse_container_type(std::string_view name);

class ContainerId {
 public:
  ContainerId() = default;
  // A root container. REQUIRES a valid root name (see is_valid_root_name).
  static ContainerId root(std::string name, ContainerType type);
  // A child container created by op `id`.
  static ContainerId child(ID id, ContainerType type);

  // Parses "cid:root-NAME:Type" or "cid:C@P:Type" (P a decimal peer id).
  // Errors: kInvalidArgument naming what is wrong.
  static Result<ContainerId> parse(std::string_view text);

  bool is_root() const { return is_root_; }
  ContainerType type() const { return type_; }
  // Root name (empty for children).
  const std::string& name() const { return name_; }
  // Creating op (meaningless for roots).
  ID id() const { return id_; }

  // The Loro cid string.
  std::string to_string() const;

  friend bool operator==(const ContainerId&, const ContainerId&) = default;
  friend std::strong_ordering operator<=>(const ContainerId& a, const ContainerId& b);

 private:
  bool is_root_ = true;
  ContainerType type_ = ContainerType::kMap;
  std::string name_;
  ID id_;
};

// A root name is non-empty, has no '/' or NUL and does not start with "🤝:".
bool is_valid_root_name(std::string_view name);

}  // namespace weft::crdt

template <>
struct std::hash<weft::crdt::ContainerId> {
  size_t operator()(const weft::crdt::ContainerId& c) const noexcept {
    size_t h =
        c.is_root() ? std::hash<std::string>()(c.name()) : std::hash<weft::crdt::ID>()(c.id());
    return h * 31 + static_cast<size_t>(c.type());
  }
};

#endif  // WEFT_CRDT_CONTAINER_ID_H_
