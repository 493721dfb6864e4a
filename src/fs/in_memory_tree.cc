#include "in_memory_tree.h"

namespace weft::fs::internal {
namespace {

Result<NodePtr> put_at(const NodePtr& dir, const NormalPath& path, size_t depth, NodePtr node,
                       bool create_parents, TimePoint now) {
  auto copy = std::make_shared<MemNode>(*dir);
  const std::string& name = path.segments[depth];
  if (depth + 1 == path.segments.size()) {
    if (node) {
      copy->children[name] = std::move(node);
    } else {
      copy->children.erase(name);
    }
  } else {
    auto it = copy->children.find(name);
    NodePtr child;
    if (it == copy->children.end()) {
      std::vector<std::string> prefix(path.segments.begin(),
                                      path.segments.begin() + static_cast<ptrdiff_t>(depth) + 1);
      if (!create_parents) {
        return not_found("parent directory '" + NormalPath{prefix}.str() + "' does not exist");
      }
      if (!node) return dir;  // removing below a missing directory changes nothing
      child = MemNode::make_dir(now);
    } else if (!it->second->is_dir) {
      std::vector<std::string> prefix(path.segments.begin(),
                                      path.segments.begin() + static_cast<ptrdiff_t>(depth) + 1);
      return not_a_directory("'" + NormalPath{prefix}.str() + "' is a file, not a directory");
    } else {
      child = it->second;
    }
    WEFT_ASSIGN_OR_RETURN(NodePtr updated,
                          put_at(child, path, depth + 1, std::move(node), create_parents, now));
    copy->children[name] = std::move(updated);
  }
  copy->modified_at = now;
  return NodePtr(std::move(copy));
}

}  // namespace

NodePtr MemNode::make_dir(TimePoint now) {
  auto n = std::make_shared<MemNode>();
  n->is_dir = true;
  n->created_at = n->modified_at = now;
  return n;
}

NodePtr MemNode::make_file(std::shared_ptr<const std::string> data, TimePoint created,
                           TimePoint now) {
  auto n = std::make_shared<MemNode>();
  n->data = std::move(data);
  n->created_at = created;
  n->modified_at = now;
  return n;
}

Result<NodePtr> lookup(const NodePtr& root, const NormalPath& path) {
  const MemNode* cur = root.get();
  NodePtr found = root;
  for (size_t i = 0; i < path.segments.size(); ++i) {
    if (!cur->is_dir) {
      std::vector<std::string> prefix(path.segments.begin(),
                                      path.segments.begin() + static_cast<ptrdiff_t>(i));
      return not_a_directory("'" + NormalPath{prefix}.str() + "' is a file, not a directory");
    }
    auto it = cur->children.find(path.segments[i]);
    if (it == cur->children.end()) return NodePtr();
    found = it->second;
    cur = found.get();
  }
  return found;
}

Result<NodePtr> put(const NodePtr& root, const NormalPath& path, NodePtr node, bool create_parents,
                    TimePoint now) {
  if (path.is_root()) return node ? node : MemNode::make_dir(now);
  return put_at(root, path, 0, std::move(node), create_parents, now);
}

size_t count_nodes(const NodePtr& node) {
  size_t n = 1;
  for (const auto& [name, child] : node->children) n += count_nodes(child);
  return n;
}

}  // namespace weft::fs::internal
