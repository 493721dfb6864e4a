// Hydration: copying host directories into a workspace (the seed's HostMount
// and allowed_host_roots), used for InMemory filesystems and sandbox overlays.
//
// Thread safety: hydrate_from_host is a free function; it writes through the
// target's own thread-safe API.
#ifndef WEFT_FS_HYDRATE_H_
#define WEFT_FS_HYDRATE_H_

#include <string>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/filesystem.h"

namespace weft::fs {

struct HostMount {
  // A host file or directory: absolute, or relative to the first allowed
  // root under which it exists.
  std::string host_path;
  // Where it lands in the workspace ("" = the root; else a relative path).
  std::string mount_path;
  // Globs (weft/base/glob.h) on the path relative to host_path; a file is
  // copied when it matches some include (or include is empty) and no exclude.
  std::vector<std::string> include_glob;
  std::vector<std::string> exclude_glob;
  // Stop with kResourceExhausted past this many bytes in total.
  int64_t max_bytes = 64ll << 20;
};

struct HydrateStats {
  int64_t files = 0;
  int64_t bytes = 0;
  int64_t skipped = 0;  // symlinks, special files, files over the write limit
};

// Copies `mount` into `target` byte for byte (write_bytes, overwrite,
// create_parents). The resolved host path must lie inside one of
// `allowed_host_roots` (compared after resolving symlinks);
// kPermissionDenied otherwise, or when allowed_host_roots is empty.
// kNotFound for a missing host path. Symlinks under host_path are skipped.
Result<HydrateStats> hydrate_from_host(Filesystem& target, const HostMount& mount,
                                       const std::vector<std::string>& allowed_host_roots);

}  // namespace weft::fs

#endif  // WEFT_FS_HYDRATE_H_
