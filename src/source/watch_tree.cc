#include "source/watch_tree.h"

#include <algorithm>

namespace weft::source::internal {

void WatchTree::reset(int root_wd) {
  nodes_.clear();
  root_ = root_wd;
  if (root_wd != kNone) nodes_[root_wd] = Node{};
}

void WatchTree::detach(int wd) {
  auto it = nodes_.find(wd);
  if (it == nodes_.end()) return;
  auto parent = nodes_.find(it->second.parent);
  if (parent == nodes_.end()) return;
  auto child = parent->second.children.find(it->second.name);
  if (child != parent->second.children.end() && child->second == wd) {
    parent->second.children.erase(child);
  }
}

bool WatchTree::place(int wd, int parent, const std::string& name, std::vector<int>* displaced) {
  if (wd == kNone || !nodes_.count(parent)) return false;
  // Refuse a cycle: `parent` must not be `wd` or lie under it.
  for (int at = parent; at != kNone; at = nodes_.at(at).parent) {
    if (at == wd) return false;
  }
  Node& parent_node = nodes_.at(parent);
  auto held = parent_node.children.find(name);
  if (held != parent_node.children.end() && held->second != wd) {
    remove(held->second, displaced);
  }
  auto it = nodes_.find(wd);
  if (it == nodes_.end()) {
    it = nodes_.emplace(wd, Node{}).first;
  } else {
    detach(wd);
  }
  it->second.parent = parent;
  it->second.name = name;
  nodes_.at(parent).children[name] = wd;
  return true;
}

int WatchTree::child(int parent, const std::string& name) const {
  auto it = nodes_.find(parent);
  if (it == nodes_.end()) return kNone;
  auto child = it->second.children.find(name);
  return child == it->second.children.end() ? kNone : child->second;
}

std::optional<std::string> WatchTree::path(int wd) const {
  std::vector<const std::string*> names;
  int at = wd;
  while (at != root_) {
    auto it = nodes_.find(at);
    if (it == nodes_.end()) return std::nullopt;
    names.push_back(&it->second.name);
    at = it->second.parent;
  }
  if (!nodes_.count(root_)) return std::nullopt;
  std::string out;
  for (auto name = names.rbegin(); name != names.rend(); ++name) {
    if (!out.empty()) out += '/';
    out += **name;
  }
  return out;
}

void WatchTree::remove(int wd, std::vector<int>* removed) {
  if (!nodes_.count(wd)) return;
  detach(wd);
  std::vector<int> stack{wd};
  while (!stack.empty()) {
    int at = stack.back();
    stack.pop_back();
    auto it = nodes_.find(at);
    if (it == nodes_.end()) continue;
    for (const auto& [name, child] : it->second.children) stack.push_back(child);
    nodes_.erase(it);
    if (removed) removed->push_back(at);
  }
  if (wd == root_) root_ = kNone;
}

std::vector<int> WatchTree::wds() const {
  std::vector<int> out;
  out.reserve(nodes_.size());
  for (const auto& [wd, node] : nodes_) out.push_back(wd);
  return out;
}

}  // namespace weft::source::internal
