// InMemoryFilesystem: a persistent tree (in_memory_tree.h) behind a mutex.
// Readers copy the root pointer under a shared lock and then work lock-free
// on immutable nodes; writers build a new root and swap it in.
#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "common.h"
#include "in_memory_tree.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/path.h"

namespace weft::fs {
namespace {

using internal::lookup;
using internal::MemNode;
using internal::NodePtr;
using internal::put;

class InMemoryFilesystem final : public Filesystem {
 public:
  explicit InMemoryFilesystem(InMemoryOptions options)
      : options_(options), root_(MemNode::make_dir(Clock::now())) {}

  std::string root() const override { return "/"; }
  bool read_only() const override { return options_.read_only; }
  const FsLimits& limits() const override { return options_.limits; }

 protected:
  Result<ReadResult> do_read(std::string_view path, int64_t offset,
                             std::optional<int64_t> limit) override {
    WEFT_ASSIGN_OR_RETURN(auto file, file_at(path));
    return internal::page_lines(*file.second->data, file.first.str(), offset, limit, limits());
  }

  Result<ReadBytesResult> do_read_bytes(std::string_view path, int64_t offset,
                                        std::optional<int64_t> limit) override {
    WEFT_ASSIGN_OR_RETURN(auto file, file_at(path));
    return internal::page_bytes(*file.second->data, file.first.str(), offset, limit);
  }

  bool do_exists(std::string_view path) override {
    auto p = normalize(path);
    if (!p.ok()) return false;
    auto node = lookup(current(), *p);
    return node.ok() && *node;
  }

  Result<FileStat> do_stat(std::string_view path) override {
    WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(current(), p));
    FileStat s;
    s.path = p.str();
    s.is_file = !node->is_dir;
    s.is_directory = node->is_dir;
    s.type = node->is_dir ? FileType::kDirectory : FileType::kFile;
    s.size_bytes = node->is_dir ? 0 : static_cast<int64_t>(node->data->size());
    s.created_at = node->created_at;
    s.modified_at = node->modified_at;
    return s;
  }

  Result<std::vector<FileEntry>> do_list(std::string_view path) override {
    WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(current(), p));
    if (!node->is_dir) return not_a_directory("'" + p.str() + "' is a file, not a directory");
    std::vector<FileEntry> out;
    out.reserve(node->children.size());
    for (const auto& [name, child] : node->children) {
      out.push_back({name, p.child(name).str(), !child->is_dir, child->is_dir,
                     child->is_dir ? FileType::kDirectory : FileType::kFile, std::nullopt});
    }
    return out;
  }

  Result<std::vector<GlobMatch>> do_glob(std::string_view pattern, std::string_view path) override {
    WEFT_ASSIGN_OR_RETURN(GlobPattern g, GlobPattern::compile(pattern));
    WEFT_ASSIGN_OR_RETURN(NormalPath base, normalize(path));
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(current(), base));
    if (!node->is_dir) return not_a_directory("'" + base.str() + "' is a file, not a directory");
    std::vector<GlobMatch> out;
    glob_walk(g, node, base, "", &out);
    std::sort(out.begin(), out.end(),
              [](const GlobMatch& a, const GlobMatch& b) { return a.path < b.path; });
    return out;
  }

  Result<std::vector<GrepMatch>> do_grep(std::string_view pattern, std::string_view path,
                                         const std::optional<std::string>& glob,
                                         std::optional<int64_t> max_matches) override {
    WEFT_ASSIGN_OR_RETURN(auto query,
                          internal::GrepQuery::compile(pattern, glob, max_matches, limits()));
    WEFT_ASSIGN_OR_RETURN(NormalPath base, normalize(path));
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(current(), base));
    std::vector<GrepMatch> out;
    if (!node->is_dir) {
      query->search(*node->data, base.str(), &out);
    } else {
      grep_walk(*query, node, base, "", &out);
    }
    return out;
  }

  Result<WriteResult> do_write(std::string_view path, std::string_view content, WriteMode mode,
                               bool create_parents, bool text) override {
    WEFT_RETURN_IF_ERROR(check_writable());
    WEFT_RETURN_IF_ERROR(internal::check_write_content(content, text, limits()));
    WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
    if (p.is_root()) return is_a_directory("the root is a directory; name a file to write");
    std::unique_lock lock(mu_);
    WEFT_ASSIGN_OR_RETURN(NodePtr old, lookup(root_, p));
    if (old && old->is_dir) return is_a_directory("'" + p.str() + "' is a directory");
    if (old && mode == WriteMode::kCreate) {
      return already_exists("'" + p.str() + "' exists; use mode overwrite or append");
    }
    auto data = std::make_shared<std::string>();
    if (old && mode == WriteMode::kAppend) {
      data->reserve(old->data->size() + content.size());
      *data = *old->data;
    }
    data->append(content);
    TimePoint now = Clock::now();
    NodePtr file = MemNode::make_file(std::move(data), old ? old->created_at : now, now);
    WEFT_ASSIGN_OR_RETURN(root_, put(root_, p, std::move(file), create_parents, now));
    return WriteResult{p.str(), static_cast<int64_t>(content.size()), mode};
  }

  Status do_remove(std::string_view path, bool recursive) override {
    WEFT_RETURN_IF_ERROR(check_writable());
    WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
    if (p.is_root()) return permission_denied("the workspace root cannot be deleted");
    std::unique_lock lock(mu_);
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(root_, p));
    if (node->is_dir && !recursive) {
      return is_a_directory("'" + p.str() + "' is a directory; pass recursive to delete it");
    }
    WEFT_ASSIGN_OR_RETURN(root_, put(root_, p, nullptr, false, Clock::now()));
    return Status();
  }

  Status do_mkdir(std::string_view path, bool parents, bool exist_ok) override {
    WEFT_RETURN_IF_ERROR(check_writable());
    WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
    std::unique_lock lock(mu_);
    WEFT_ASSIGN_OR_RETURN(NodePtr node, lookup(root_, p));
    if (node) {
      if (!node->is_dir) return already_exists("'" + p.str() + "' exists and is a file");
      if (!exist_ok) return already_exists("directory '" + p.str() + "' already exists");
      return Status();
    }
    TimePoint now = Clock::now();
    WEFT_ASSIGN_OR_RETURN(root_, put(root_, p, MemNode::make_dir(now), parents, now));
    return Status();
  }

  Status do_move(std::string_view source, std::string_view destination, bool overwrite) override {
    return transfer(source, destination, overwrite, /*keep_source=*/false);
  }

  Status do_copy(std::string_view source, std::string_view destination, bool overwrite) override {
    return transfer(source, destination, overwrite, /*keep_source=*/true);
  }

  Result<FilesystemSnapshot> do_snapshot(std::optional<std::string> tag) override {
    FilesystemSnapshot s;
    s.snapshot_id = internal::random_uuid();
    s.created_at = Clock::now();
    s.root_path = "/";
    s.tag = std::move(tag);
    std::unique_lock lock(mu_);
    s.commit_ref = "mem-" + std::to_string(++version_);
    versions_.emplace(s.commit_ref, Version{root_, s});
    return s;
  }

  Status do_restore(const FilesystemSnapshot& snapshot) override {
    WEFT_RETURN_IF_ERROR(check_writable());
    if (snapshot.git_dir) {
      return invalid_argument("snapshot " + snapshot.commit_ref +
                              " belongs to a git-backed filesystem, not this in-memory one");
    }
    std::unique_lock lock(mu_);
    auto it = versions_.find(snapshot.commit_ref);
    if (it == versions_.end() || it->second.record.snapshot_id != snapshot.snapshot_id) {
      return not_found("snapshot '" + snapshot.commit_ref + "' (" + snapshot.snapshot_id +
                       ") was not taken by this in-memory filesystem");
    }
    root_ = it->second.root;
    return Status();
  }

  Result<std::vector<FilesystemSnapshot>> do_snapshots() override {
    std::shared_lock lock(mu_);
    std::vector<FilesystemSnapshot> out;
    for (const auto& [ref, v] : versions_) out.push_back(v.record);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::stoll(a.commit_ref.substr(4)) < std::stoll(b.commit_ref.substr(4));
    });
    return out;
  }

 private:
  struct Version {
    NodePtr root;
    FilesystemSnapshot record;
  };

  NodePtr current() const {
    std::shared_lock lock(mu_);
    return root_;
  }

  Result<NormalPath> normalize(std::string_view path) const {
    return normalize_path(path, "/", limits());
  }

  Status check_writable() const {
    if (options_.read_only) return permission_denied("this filesystem is read-only");
    return Status();
  }

  static Result<NodePtr> existing(const NodePtr& root, const NormalPath& p) {
    WEFT_ASSIGN_OR_RETURN(NodePtr node, lookup(root, p));
    if (!node) return not_found("'" + p.str() + "' does not exist");
    return node;
  }

  Result<std::pair<NormalPath, NodePtr>> file_at(std::string_view path) const {
    WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(current(), p));
    if (node->is_dir) return is_a_directory("'" + p.str() + "' is a directory, not a file");
    if (static_cast<int64_t>(node->data->size()) > limits().max_read_file_bytes) {
      return resource_exhausted("'" + p.str() + "' is larger than the read limit");
    }
    return std::make_pair(std::move(p), std::move(node));
  }

  static void glob_walk(const GlobPattern& g, const NodePtr& dir, const NormalPath& base,
                        const std::string& rel, std::vector<GlobMatch>* out) {
    for (const auto& [name, child] : dir->children) {
      std::string child_rel = rel.empty() ? name : rel + "/" + name;
      if (g.matches(child_rel)) {
        out->push_back({base.child(child_rel).str(), !child->is_dir,
                        child->is_dir ? FileType::kDirectory : FileType::kFile});
      }
      if (child->is_dir && g.could_match_below(child_rel)) {
        glob_walk(g, child, base, child_rel, out);
      }
    }
  }

  static void grep_walk(const internal::GrepQuery& q, const NodePtr& dir, const NormalPath& base,
                        const std::string& rel, std::vector<GrepMatch>* out) {
    // Visit directories as if named "name/" so the walk yields byte-sorted paths
    // ("a.txt" < "a/b"), which max_matches relies on.
    std::vector<std::pair<std::string, const NodePtr*>> order;
    order.reserve(dir->children.size());
    for (const auto& [name, child] : dir->children) {
      order.emplace_back(child->is_dir ? name + "/" : name, &child);
    }
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, child_ptr] : order) {
      const NodePtr& child = *child_ptr;
      std::string_view name = std::string_view(key).substr(0, key.size() - child->is_dir);
      if (out->size() >= q.max()) return;
      std::string child_rel = rel.empty() ? std::string(name) : rel + "/" + std::string(name);
      if (child->is_dir) {
        grep_walk(q, child, base, child_rel, out);
      } else if (q.selects(child_rel, name)) {
        q.search(*child->data, base.child(child_rel).str(), out);
      }
    }
  }

  Status transfer(std::string_view source, std::string_view destination, bool overwrite,
                  bool keep_source) {
    WEFT_RETURN_IF_ERROR(check_writable());
    WEFT_ASSIGN_OR_RETURN(NormalPath from, normalize(source));
    WEFT_ASSIGN_OR_RETURN(NormalPath to, normalize(destination));
    if (from.is_root()) return permission_denied("the workspace root cannot be moved or copied");
    if (to.is_root()) return already_exists("the destination is the workspace root");
    std::unique_lock lock(mu_);
    WEFT_ASSIGN_OR_RETURN(NodePtr node, existing(root_, from));
    if (from.segments == to.segments) {
      return keep_source ? already_exists("'" + to.str() + "' is the source itself") : Status();
    }
    if (node->is_dir && to.within(from)) {
      return invalid_argument("cannot move or copy '" + from.str() + "' into itself ('" + to.str() +
                              "')");
    }
    WEFT_ASSIGN_OR_RETURN(NodePtr dest, lookup(root_, to));
    if (dest && (!overwrite || dest->is_dir || node->is_dir)) {
      return already_exists("destination '" + to.str() + "' exists" +
                            (overwrite ? " (directories are never overwritten)" : ""));
    }
    TimePoint now = Clock::now();
    NodePtr root = root_;
    if (!keep_source) {
      WEFT_ASSIGN_OR_RETURN(root, put(root, from, nullptr, false, now));
    }
    WEFT_ASSIGN_OR_RETURN(root_, put(root, to, node, true, now));
    return Status();
  }

  InMemoryOptions options_;
  mutable std::shared_mutex mu_;
  NodePtr root_;
  int64_t version_ = 0;
  std::map<std::string, Version> versions_;
};

}  // namespace

std::unique_ptr<Filesystem> make_in_memory_filesystem(InMemoryOptions options) {
  return std::make_unique<InMemoryFilesystem>(options);
}

}  // namespace weft::fs
