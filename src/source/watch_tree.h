// WatchTree: the directories a Watcher watches, kept as a tree of inotify
// watch descriptors (each node: its parent's wd and its name). A directory's
// root-relative path is found by walking up from its wd, so renaming a
// directory re-parents one node and the paths of its whole subtree follow.
//
// Thread safety: none; owned by the watcher thread.
#ifndef WEFT_SRC_SOURCE_WATCH_TREE_H_
#define WEFT_SRC_SOURCE_WATCH_TREE_H_

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::source::internal {

class WatchTree {
 public:
  static constexpr int kNone = -1;

  // Forgets everything; `root_wd` becomes the root (path "").
  void reset(int root_wd);
  int root() const { return root_; }
  bool contains(int wd) const { return nodes_.count(wd) != 0; }
  size_t size() const { return nodes_.size(); }

  // Makes `wd` the child `name` of `parent`, moving it (with its subtree) when
  // it is already elsewhere. A different wd that held that place is removed
  // with its subtree and appended to `displaced`. False (nothing changes)
  // when `parent` is unknown or is `wd` or one of its descendants.
  bool place(int wd, int parent, const std::string& name, std::vector<int>* displaced);

  // The wd of child `name` of `parent`, or kNone.
  int child(int parent, const std::string& name) const;

  // `wd`'s root-relative path ("" for the root); nullopt for an unknown wd.
  std::optional<std::string> path(int wd) const;

  // Removes `wd` and its subtree, appending every removed wd to `removed`
  // (when not null). Removing the root empties the tree.
  void remove(int wd, std::vector<int>* removed);

  // Every wd, in no particular order.
  std::vector<int> wds() const;

 private:
  struct Node {
    int parent = kNone;
    std::string name;
    std::unordered_map<std::string, int> children;
  };
  void detach(int wd);
  int root_ = kNone;
  std::unordered_map<int, Node> nodes_;
};

}  // namespace weft::source::internal

#endif  // WEFT_SRC_SOURCE_WATCH_TREE_H_
