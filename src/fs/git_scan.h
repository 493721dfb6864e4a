// Scanner: the stat walk of a snapshot. It walks the workspace with fds
// (O_NOFOLLOW, no .gitignore), hashes into the snapshot's pack only the files
// whose stat differs from the index (the stat cache), and updates the index:
// changed and new files, and the removal of every entry the walk did not
// capture (deleted files, a file replaced by a directory or the reverse,
// files that became fifos or sockets). Private to fs/.
//
// The walk visits each directory's entries in git's path order, so the
// paths it captures come in the index's own (sorted) order: each one is
// matched against the index by a cursor that moves forward instead of a
// hashed lookup, and the entries the cursors never matched are the deleted
// ones. An unchanged file costs one fstatat and about one strcmp.
//
// Thread safety: scan() runs its own two threads; the index is only read
// while they run and updated afterwards by the calling thread. A Scanner is
// used by one snapshot at a time.
#ifndef WEFT_SRC_FS_GIT_SCAN_H_
#define WEFT_SRC_FS_GIT_SCAN_H_

#include <git2.h>
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "git_pack.h"
#include "weft/base/status.h"

namespace weft::fs::internal {

// libgit2's last error as a Status: kDataLoss when the store's objects are
// damaged, else kUnavailable.
Status git_failure(std::string_view what);

// True when index entry `e` still describes a file with stat `st` and `mode`.
bool same_stat(const git_index_entry* e, const struct stat& st, uint32_t mode);

// When a file's stat times may be trusted by the next snapshot. A file
// changed again within the same timestamp tick as the stat we recorded
// would keep its stat, so entries whose times are too recent are stored
// with zero times (re-hashed next time). "Too recent" is relative to the
// start of the walk: `fine_cutoff_ns` (start minus a margin of several
// clock ticks) on local filesystems known to stamp files with the kernel's
// nanosecond clock, else whole seconds (`coarse_after_sec`: times at or
// after it are too recent), which also covers filesystems with 1 s or 2 s
// granularity and remote ones whose clock may differ from ours.
struct RacyRule {
  bool fine = false;           // the root's filesystem stamps nanoseconds locally
  int64_t fine_cutoff_ns = 0;  // times before this are safe (fine filesystems)
  int64_t coarse_after_sec = 0;

  // The rule for a walk starting now of the tree at rootfd.
  static RacyRule for_root(int rootfd, int64_t now_ns);
  // True when a stat with these times may be trusted by the next snapshot.
  bool trusted(const struct timespec& mtime, const struct timespec& ctime) const;
};

// Per-thread state of a walk, and an open directory shared by the
// directories under it that wait for a thread (see git_scan.cc).
struct ScanPart;
struct DirFd;

// Scans the tree into the index, hashing only files whose stat changed. The
// stat walk (one fstatat per file) is the cost of an incremental snapshot,
// so two threads walk: the top-level directories are queued, and a thread
// meeting a subdirectory while the other one waits for work queues it
// instead of walking it (a tree under one big directory is shared too).
class Scanner {
 public:
  Scanner(PackWriter* pack, git_index* index, RacyRule racy)
      : pack_(pack), index_(index), racy_(racy) {}

  // Walks the whole tree under rootfd and brings the index up to date.
  Status scan(int rootfd);

  bool changed() const { return updated_ > 0; }
  // Entries added, updated or removed by scan().
  size_t updated() const { return updated_; }

 private:
  static constexpr size_t kNoEntry = ~size_t{0};
  // The position in entries_ of the path in part's path buffer, or kNoEntry.
  size_t match(ScanPart& part);
  // Captures one non-directory entry (regular file or symlink; others are
  // skipped): re-hashed into the pack only when its stat changed.
  Status add(ScanPart& part, int dirfd, const char* name, const struct stat& st);
  // Scans the entries of dirfd (part's path buffer holds its path, empty
  // for the root); subdirectories are walked recursively (or queued when
  // the other thread waits for work) unless `subdirs` is given, which then
  // receives their names instead.
  Status walk(ScanPart& part, const std::shared_ptr<DirFd>& dir, size_t depth,
              std::vector<std::string>* subdirs);
  Status walk_subdir(ScanPart& part, const std::shared_ptr<DirFd>& parent, const char* name,
                     size_t depth);
  // A thread's loop: walks queued directories until none is left and no
  // thread is walking (which could queue more).
  void run(ScanPart& part);

  // A directory waiting for a thread; `parent` stays open until it is taken.
  struct Pending {
    std::shared_ptr<DirFd> parent;
    std::string name;
    std::string path;
    size_t depth;
  };

  PackWriter* pack_;
  git_index* index_;
  RacyRule racy_;
  std::mutex pack_mu_;  // the pack writer is single-threaded
  // The index's entries in path order, and which of them the walk captured
  // (one byte each: threads write disjoint elements).
  std::vector<const git_index_entry*> entries_;
  std::vector<uint8_t> seen_;
  size_t updated_ = 0;
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<Pending> pending_;     // guarded by queue_mu_
  int walking_ = 0;                  // threads walking a directory; guarded by queue_mu_
  std::atomic<int> idle_{0};         // threads waiting for a directory
  std::atomic<bool> failed_{false};  // a thread failed: the others stop early
};

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_GIT_SCAN_H_
