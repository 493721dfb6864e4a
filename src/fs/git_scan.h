// Scanner: the stat walk of a snapshot. It walks the workspace with fds
// (O_NOFOLLOW, no .gitignore), hashes into the snapshot's pack only the files
// whose stat differs from the index (the stat cache), and collects the index
// updates. Private to fs/.
//
// Thread safety: scan() runs its own two threads; the index is only read
// while they run and updated afterwards by the calling thread. A Scanner is
// used by one snapshot at a time.
#ifndef WEFT_SRC_FS_GIT_SCAN_H_
#define WEFT_SRC_FS_GIT_SCAN_H_

#include <git2.h>
#include <sys/stat.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "git_pack.h"
#include "host_io.h"
#include "weft/base/status.h"

namespace weft::fs::internal {

// libgit2's last error as a Status: kDataLoss when the store's objects are
// damaged, else kUnavailable.
Status git_failure(std::string_view what);

// True when index entry `e` still describes a file with stat `st` and `mode`.
bool same_stat(const git_index_entry* e, const struct stat& st, uint32_t mode);

// What one scanning thread found: the index is only read while threads run;
// their updates are applied afterwards by the caller's thread.
struct ScanPart {
  size_t known = 0;                 // walked files the index already had
  std::vector<std::string> walked;  // every captured path, to find deletions
  std::vector<std::pair<std::string, git_index_entry>> updates;  // entry.path unset
  std::string buffer;
  Status error;
};

// Scans the tree into the index, hashing only files whose stat changed. The
// stat walk (one fstatat per file) is the cost of an incremental snapshot,
// so the top-level directories are shared out between two threads.
struct Scanner {
  PackWriter* pack;
  git_index* index;
  int64_t racy_after_sec;  // files modified at/after this second are re-hashed next time
  std::mutex pack_mu;      // the pack writer is single-threaded
  size_t known = 0;
  bool changed = false;  // an entry was added, updated or removed
  size_t updated = 0;    // entries added, updated or removed
  std::vector<std::string> walked;

  // Captures one non-directory entry (regular file or symlink; others are
  // skipped): re-hashed into the pack only when its stat changed.
  Status add(ScanPart& part, int dirfd, const DirEntry& e, const std::string& path);

  // Scans the entries of dirfd; subdirectories are walked (recursively)
  // unless `subdirs` is given, which then receives their names instead.
  Status walk(ScanPart& part, int dirfd, const std::string& rel,
              std::vector<std::string>* subdirs = nullptr);

  Status walk_subdir(ScanPart& part, int dirfd, const std::string& name, const std::string& path);

  // Walks the whole tree (two threads when there are two top-level
  // directories or more), then applies the updates to the index.
  Status scan(int rootfd);

  // `entries_before`: the index's size before the walk. When every one of
  // them was walked again, nothing was deleted and the scan is skipped.
  Status remove_unseen(size_t entries_before);
};

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_GIT_SCAN_H_
