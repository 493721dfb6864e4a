// GitSnapshotStore: snapshots of a host directory as commits in a libgit2
// repository kept outside the directory. The index (in the store) is the
// stat cache that makes a snapshot cost what changed; each snapshot's new
// objects go into one pack file. The snapshot commits form one chain (first
// parent = the snapshot made before) kept alive by the ref refs/weft/log,
// and each carries its record (JSON) in the commit message, so snapshots()
// and a restore from another process need nothing but the store. Private
// to fs/.
//
// Thread safety: all methods lock an internal mutex; instances and processes
// sharing one store serialise through an flock on <git_dir>/weft.lock.
#ifndef WEFT_SRC_FS_GIT_STORE_H_
#define WEFT_SRC_FS_GIT_STORE_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/types.h"

struct git_index;

namespace weft::fs::internal {

class GitSnapshotStore {
 public:
  // `root` is canonical; `git_dir` must lie outside it (kInvalidArgument).
  // Nothing is created until the first snapshot.
  static Result<std::unique_ptr<GitSnapshotStore>> create(std::string root, std::string git_dir);
  ~GitSnapshotStore();

  const std::string& git_dir() const { return git_dir_; }

  Result<FilesystemSnapshot> snapshot(std::optional<std::string> tag);
  // Strict restore of `snapshot` (its git_dir if set, else this store).
  Status restore(const FilesystemSnapshot& snapshot);
  Result<std::vector<FilesystemSnapshot>> list();

 private:
  GitSnapshotStore() = default;
  Status open_locked(bool create);
  // The snapshot proper; sets *reopen when the repository must be reopened.
  Result<FilesystemSnapshot> snapshot_locked(git_index* index, std::optional<std::string> tag,
                                             bool* reopen);

  std::mutex mu_;
  std::string root_;
  std::string git_dir_;
  struct Repo;
  std::unique_ptr<Repo> repo_;
};

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_GIT_STORE_H_
