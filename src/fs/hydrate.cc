// Copies host directories into a workspace (seed: HostMount, allowed_host_roots).
#include "weft/fs/hydrate.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "host_io.h"
#include "weft/base/glob.h"

namespace weft::fs {
namespace {

namespace stdfs = std::filesystem;

std::optional<std::string> real(const std::string& p) {
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return std::nullopt;
  std::string out = r;
  std::free(r);
  return out;
}

bool within(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
          path[dir.size()] == '/');
}

Result<std::string> resolve_mount(const HostMount& mount, const std::vector<std::string>& roots) {
  if (roots.empty()) {
    return permission_denied("no allowed_host_roots given; refusing to hydrate '" +
                             mount.host_path + "'");
  }
  std::vector<std::string> real_roots;
  for (const std::string& r : roots) {
    if (auto rr = real(r)) real_roots.push_back(*rr);
  }
  std::optional<std::string> resolved;
  if (!mount.host_path.empty() && mount.host_path[0] == '/') {
    resolved = real(mount.host_path);
  } else {
    for (const std::string& r : real_roots) {
      if ((resolved = real(r + "/" + mount.host_path))) break;
    }
  }
  if (!resolved) return not_found("host path '" + mount.host_path + "' does not exist");
  for (const std::string& r : real_roots) {
    if (within(*resolved, r)) return *resolved;
  }
  return permission_denied("host path '" + *resolved + "' is outside the allowed host roots");
}

struct Copier {
  Filesystem& target;
  const HostMount& mount;
  std::vector<GlobPattern> include, exclude;
  HydrateStats stats;

  bool selected(const std::string& rel) const {
    auto any = [&](const std::vector<GlobPattern>& gs) {
      for (const auto& g : gs) {
        if (g.matches(rel)) return true;
      }
      return false;
    };
    return (include.empty() || any(include)) && !any(exclude);
  }

  std::string dest(const std::string& rel) const {
    if (mount.mount_path.empty() || mount.mount_path == ".") return rel;
    return rel.empty() ? mount.mount_path : mount.mount_path + "/" + rel;
  }

  Status copy_file(int fd, const std::string& rel) {
    std::string data;
    WEFT_RETURN_IF_ERROR(internal::read_all(fd, rel, target.limits().max_read_file_bytes, &data));
    if (stats.bytes + static_cast<int64_t>(data.size()) > mount.max_bytes) {
      return resource_exhausted("hydrating '" + mount.host_path + "' exceeds max_bytes " +
                                std::to_string(mount.max_bytes));
    }
    // Large files go in as several writes, each within the per-write limit.
    size_t chunk = static_cast<size_t>(std::max<int64_t>(1, target.limits().max_write_chars));
    size_t pos = 0;
    do {
      std::string_view part = std::string_view(data).substr(pos, chunk);
      auto w = target.write_bytes(dest(rel), part,
                                  pos == 0 ? WriteMode::kOverwrite : WriteMode::kAppend, true);
      if (!w.ok()) return w.status();
      pos += part.size();
    } while (pos < data.size());
    stats.files++;
    stats.bytes += static_cast<int64_t>(data.size());
    return Status();
  }

  Status walk(int dirfd, const std::string& rel) {
    WEFT_ASSIGN_OR_RETURN(auto entries, internal::read_dir(dirfd, true));
    for (const auto& e : entries) {
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (e.type == DT_DIR) {
        int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
          stats.skipped++;
          continue;
        }
        internal::UniqueFd sub(fd);
        WEFT_RETURN_IF_ERROR(walk(sub.get(), child));
      } else if (e.type == DT_REG && selected(child)) {
        int fd = ::openat(dirfd, e.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
          stats.skipped++;
          continue;
        }
        internal::UniqueFd in(fd);
        WEFT_RETURN_IF_ERROR(copy_file(in.get(), child));
      } else {
        stats.skipped++;
      }
    }
    return Status();
  }
};

}  // namespace

Result<HydrateStats> hydrate_from_host(Filesystem& target, const HostMount& mount,
                                       const std::vector<std::string>& allowed_host_roots) {
  WEFT_ASSIGN_OR_RETURN(std::string host, resolve_mount(mount, allowed_host_roots));
  Copier c{target, mount, {}, {}, {}};
  for (const auto& g : mount.include_glob) {
    WEFT_ASSIGN_OR_RETURN(GlobPattern p, GlobPattern::compile(g));
    c.include.push_back(std::move(p));
  }
  for (const auto& g : mount.exclude_glob) {
    WEFT_ASSIGN_OR_RETURN(GlobPattern p, GlobPattern::compile(g));
    c.exclude.push_back(std::move(p));
  }
  internal::UniqueFd fd(::open(host.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return internal::errno_status(errno, "open", host);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return internal::errno_status(errno, "stat", host);
  if (S_ISDIR(st.st_mode)) {
    WEFT_RETURN_IF_ERROR(c.walk(fd.get(), ""));
  } else if (S_ISREG(st.st_mode)) {
    std::string name = stdfs::path(host).filename().string();
    if (c.selected(name)) WEFT_RETURN_IF_ERROR(c.copy_file(fd.get(), name));
  } else {
    return permission_denied("host path '" + host + "' is not a file or directory");
  }
  return c.stats;
}

}  // namespace weft::fs
