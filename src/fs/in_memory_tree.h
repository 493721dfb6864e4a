// The persistent tree behind InMemoryFilesystem: immutable nodes shared
// between versions; an update copies only the directories on the path to the
// change (path copying), so a snapshot is a pointer copy.
#ifndef WEFT_SRC_FS_IN_MEMORY_TREE_H_
#define WEFT_SRC_FS_IN_MEMORY_TREE_H_

#include <map>
#include <memory>
#include <string>

#include "weft/base/status.h"
#include "weft/fs/path.h"
#include "weft/fs/types.h"

namespace weft::fs::internal {

struct MemNode;
using NodePtr = std::shared_ptr<const MemNode>;

struct MemNode {
  bool is_dir = false;
  std::shared_ptr<const std::string> data;               // files
  std::map<std::string, NodePtr, std::less<>> children;  // directories
  TimePoint created_at;
  TimePoint modified_at;

  static NodePtr make_dir(TimePoint now);
  static NodePtr make_file(std::shared_ptr<const std::string> data, TimePoint created,
                           TimePoint now);
};

// The node at `path`, or null when absent. kNotADirectory when a parent is a file.
Result<NodePtr> lookup(const NodePtr& root, const NormalPath& path);

// A new root where `path` holds `node` (null removes it). Missing parents are
// created when `create_parents`, else kNotFound; a file parent is kNotADirectory.
Result<NodePtr> put(const NodePtr& root, const NormalPath& path, NodePtr node, bool create_parents,
                    TimePoint now);

// Number of files and directories below `node` (for tests and benchmarks).
size_t count_nodes(const NodePtr& node);

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_IN_MEMORY_TREE_H_
