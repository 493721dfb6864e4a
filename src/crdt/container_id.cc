// Container types and Loro container-id strings.
#include "weft/crdt/container_id.h"

namespace weft::crdt {

std::string_view container_type_name(ContainerType type) {
  switch (type) {
    case ContainerType::kText:
      return "Text";
    case ContainerType::kMap:
      return "Map";
    case ContainerType::kList:
      return "List";
    case ContainerType::kMovableList:
      return "MovableList";
    case ContainerType::kTree:
      return "Tree";
    case ContainerType::kCounter:
      return "Counter";
  }
  return "Unknown";
}

Result<ContainerType> parse_container_type(std::string_view name) {
  if (name == "Text" || name == "text") return ContainerType::kText;
  if (name == "Map" || name == "map") return ContainerType::kMap;
  if (name == "List" || name == "list") return ContainerType::kList;
  if (name == "MovableList" || name == "movablelist" || name == "movable_list") {
    return ContainerType::kMovableList;
  }
  if (name == "Tree" || name == "tree") return ContainerType::kTree;
  if (name == "Counter" || name == "counter") return ContainerType::kCounter;
  return invalid_argument("unknown container type '" + std::string(name) + "'");
}

bool is_valid_root_name(std::string_view name) {
  if (name.empty()) return false;
  if (name.find('/') != std::string_view::npos) return false;
  if (name.find('\0') != std::string_view::npos) return false;
  return name.rfind("\xF0\x9F\xA4\x9D:", 0) != 0;  // "🤝:"
}

ContainerId ContainerId::root(std::string name, ContainerType type) {
  ContainerId c;
  c.is_root_ = true;
  c.name_ = std::move(name);
  c.type_ = type;
  return c;
}

ContainerId ContainerId::child(ID id, ContainerType type) {
  ContainerId c;
  c.is_root_ = false;
  c.id_ = id;
  c.type_ = type;
  return c;
}

Result<ContainerId> ContainerId::parse(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return invalid_argument("bad container id '" + std::string(text.substr(0, 200)) +
                            "': " + std::string(why));
  };
  if (text.rfind("cid:", 0) != 0) return bad("expected a 'cid:' prefix");
  std::string_view rest = text.substr(4);
  size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return bad("missing ':Type'");
  auto type = parse_container_type(rest.substr(colon + 1));
  if (!type.ok()) return bad("unknown type");
  std::string_view body = rest.substr(0, colon);
  if (body.rfind("root-", 0) == 0) {
    std::string_view name = body.substr(5);
    if (!is_valid_root_name(name)) return bad("invalid root name");
    return root(std::string(name), *type);
  }
  auto id = parse_id(body);
  if (!id.ok()) return bad("expected root-NAME or counter@peer");
  return child(*id, *type);
}

std::string ContainerId::to_string() const {
  std::string s = "cid:";
  if (is_root_)
    s += "root-" + name_;
  else
    s += id_.to_string();
  s += ":";
  s += container_type_name(type_);
  return s;
}

std::strong_ordering operator<=>(const ContainerId& a, const ContainerId& b) {
  if (a.is_root_ != b.is_root_)
    return a.is_root_ ? std::strong_ordering::less : std::strong_ordering::greater;
  if (auto c = a.name_ <=> b.name_; c != 0) return c;
  if (auto c = a.id_ <=> b.id_; c != 0) return c;
  return a.type_ <=> b.type_;
}

}  // namespace weft::crdt
