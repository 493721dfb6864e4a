// glob and grep over a host tree: a depth-first walk through directory fds
// opened with O_NOFOLLOW (symlinks are never traversed), visiting entries in
// byte order of their paths so results come out sorted and grep can stop at
// max_matches. ".git" directories and weft's temporary files are skipped.
// grep polls its cancellation flag before each directory entry, so a
// cancelled scan stops within one file's search.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "common.h"
#include "host_filesystem.h"

namespace weft::fs::internal {
namespace {

bool skipped(const DirEntry& e) {
  return (e.type == DT_DIR && e.name == ".git") || e.name.rfind(kTempPrefix, 0) == 0;
}

struct GlobWalk {
  const GlobPattern& pattern;
  const NormalPath& base;
  std::vector<GlobMatch>* out;

  Status walk(int dirfd, const std::string& rel) {
    WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(dirfd, false));
    for (const DirEntry& e : entries) {
      if (skipped(e)) continue;
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (pattern.matches(child)) {
        out->push_back({base.is_root() ? child : base.str() + "/" + child, e.type == DT_REG});
      }
      if (e.type == DT_DIR && pattern.could_match_below(child)) {
        int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;  // vanished or unreadable: skip, like find
        UniqueFd sub(fd);
        WEFT_RETURN_IF_ERROR(walk(sub.get(), child));
      }
    }
    return Status();
  }
};

struct GrepWalk {
  const GrepQuery& query;
  const NormalPath& base;
  int64_t max_bytes;
  bool allow_hard_links;
  const std::atomic<bool>* cancel;
  std::vector<GrepMatch>* out;
  std::string buffer;
  bool cancelled = false;

  bool stop() {
    if (cancel && cancel->load(std::memory_order_relaxed)) cancelled = true;
    return cancelled || out->size() >= query.max();
  }

  void file(int dirfd, const std::string& name, const std::string& path) {
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    UniqueFd in(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_bytes) return;
    if (st.st_nlink > 1 && !allow_hard_links) return;
    if (!read_all(fd, path, max_bytes, &buffer).ok()) return;
    query.search(buffer, path, out);
  }

  void walk(int dirfd, const std::string& rel) {
    auto entries = read_dir(dirfd, true);
    if (!entries.ok()) return;
    for (const DirEntry& e : *entries) {
      if (stop()) return;
      if (skipped(e)) continue;
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (e.type == DT_DIR) {
        int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        UniqueFd sub(fd);
        walk(sub.get(), child);
      } else if (e.type == DT_REG && query.selects(child, e.name)) {
        file(dirfd, e.name, base.is_root() ? child : base.str() + "/" + child);
      }
    }
  }
};

}  // namespace

Result<std::vector<GlobMatch>> HostFilesystem::do_glob(std::string_view pattern,
                                                       std::string_view path) {
  WEFT_ASSIGN_OR_RETURN(GlobPattern g, GlobPattern::compile(pattern));
  WEFT_ASSIGN_OR_RETURN(NormalPath base, normalize(path));
  auto dir = root_.open_beneath(base, O_RDONLY | O_DIRECTORY);
  if (!dir.ok()) {
    if (dir.status().code() == StatusCode::kNotADirectory && do_stat(path).ok()) {
      return not_a_directory("glob base '" + base.str() + "' is a file, not a directory");
    }
    return dir.status();
  }
  std::vector<GlobMatch> out;
  GlobWalk walk{g, base, &out};
  WEFT_RETURN_IF_ERROR(walk.walk(dir->get(), ""));
  std::sort(out.begin(), out.end(),
            [](const GlobMatch& a, const GlobMatch& b) { return a.path < b.path; });
  return out;
}

Result<std::vector<GrepMatch>> HostFilesystem::do_grep(std::string_view pattern,
                                                       std::string_view path,
                                                       const std::optional<std::string>& glob,
                                                       std::optional<int64_t> max_matches) {
  return do_grep_with(pattern, path, GrepOptions{glob, max_matches, nullptr});
}

Result<std::vector<GrepMatch>> HostFilesystem::do_grep_with(std::string_view pattern,
                                                            std::string_view path,
                                                            const GrepOptions& options) {
  WEFT_ASSIGN_OR_RETURN(auto query,
                        GrepQuery::compile(pattern, options.glob, options.max_matches, limits()));
  WEFT_ASSIGN_OR_RETURN(NormalPath base, normalize(path));
  WEFT_ASSIGN_OR_RETURN(UniqueFd fd, root_.open_beneath(base, O_RDONLY | O_NONBLOCK));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return errno_status(errno, "stat", base.str());
  std::vector<GrepMatch> out;
  if (S_ISDIR(st.st_mode)) {
    GrepWalk walk{*query,         base, limits().max_read_file_bytes, options_.allow_hard_links,
                  options.cancel, &out};
    walk.walk(fd.get(), "");
    if (walk.cancelled) return cancelled_error("grep was cancelled");
  } else {
    WEFT_RETURN_IF_ERROR(check_file(st, base));
    std::string data;
    WEFT_RETURN_IF_ERROR(read_all(fd.get(), base.str(), limits().max_read_file_bytes, &data));
    query->search(data, base.str(), &out);
  }
  return out;
}

}  // namespace weft::fs::internal
