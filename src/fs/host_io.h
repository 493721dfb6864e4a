// Kernel-confined file access beneath a root directory, for HostFilesystem.
// Every path is resolved from the root's directory fd with openat2
// (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), or, where
// openat2 is missing, by walking one segment at a time with O_NOFOLLOW; so no
// symlink (planted before or during an operation) and no ".." can lead
// outside. Final components are then handled with *at() calls that never
// follow links (AT_SYMLINK_NOFOLLOW, O_NOFOLLOW). Private to fs/.
#ifndef WEFT_SRC_FS_HOST_IO_H_
#define WEFT_SRC_FS_HOST_IO_H_

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/path.h"

namespace weft::fs::internal {

// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: returns the fd (or -1) and leaves this empty.
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Closes file descriptors on a background thread. A write replaces its target
// by renaming a temp file over it; the old inode is freed by the last close of
// it, and when its pages are still under writeback (the previous write's) that
// close waits for the I/O: ~1 ms for 1 MB, most of a write's time. Holding an
// fd of the old target across the rename and closing it here moves that wait
// off the caller's path; nothing of the old file stays visible in the tree.
// The thread starts with the first deferred close. Thread-safe. In a child
// forked after the thread started (the thread and perhaps the lock stayed in
// the parent), every call closes inline and the destructor leaves the parent's
// thread object alone instead of hanging in a join.
class DeferredCloser {
 public:
  // At most `max_pending` fds wait at once; beyond that close_later closes inline.
  explicit DeferredCloser(size_t max_pending = 8) : max_pending_(max_pending) {}
  // Closes every queued fd and joins the thread.
  ~DeferredCloser();
  DeferredCloser(const DeferredCloser&) = delete;
  DeferredCloser& operator=(const DeferredCloser&) = delete;

  // Takes `fd` and closes it soon on the background thread (inline when the
  // queue is full or the thread cannot start).
  void close_later(UniqueFd fd);
  // Returns once every fd queued before the call is closed.
  void drain();
  // Fds closed so far on the background thread (tests).
  size_t closed_in_background() const;

 private:
  void run();
  // True in a process forked after the thread started.
  bool in_forked_child() const;

  // What the thread shares; on the heap so that a forked child can leave it
  // alone (destroying a condition variable the parent's thread waits on hangs).
  struct State {
    std::mutex mu;
    std::condition_variable work_cv;  // queue non-empty or stop
    std::condition_variable idle_cv;  // queue empty and nothing being closed
    std::vector<int> queue;
    size_t closing = 0;  // fds taken off the queue and not yet closed
    size_t closed = 0;
    bool stop = false;
  };

  const size_t max_pending_;
  std::unique_ptr<State> state_ = std::make_unique<State>();
  std::unique_ptr<std::thread> thread_;
  std::atomic<pid_t> owner_pid_{0};  // the process the thread runs in; 0 before it starts
};

// Maps errno from an operation on `what` to a Status with an actionable message.
Status errno_status(int err, std::string_view op, std::string_view what);

// One directory entry as seen by a walk.
struct DirEntry {
  std::string name;
  unsigned char type;  // DT_REG, DT_DIR, DT_LNK, ...
};

class RootDir {
 public:
  // Opens the canonical root. kNotFound / kNotADirectory / kPermissionDenied.
  static Result<RootDir> open(std::string_view root);

  const std::string& path() const { return path_; }
  int fd() const { return fd_->get(); }

  // Opens `p` beneath the root with `flags` (O_NOFOLLOW and O_CLOEXEC added).
  // ELOOP (a symlink on the way) becomes kPermissionDenied.
  Result<UniqueFd> open_beneath(const NormalPath& p, int flags, mode_t mode = 0) const;

  // Opens the directory holding `p` (O_RDONLY|O_DIRECTORY); missing
  // directories are created (0777 & ~umask) when `create`, else kNotFound.
  // REQUIRES: !p.is_root().
  Result<UniqueFd> open_parent(const NormalPath& p, bool create) const;

  // True when this kernel supports openat2 (else the O_NOFOLLOW walk is used).
  static bool has_openat2();
  // Tests force the fallback walk with this.
  static void force_fallback_for_testing(bool on);

 private:
  // The precise error for a failed open of `p` (ENOTDIR/ELOOP are ambiguous:
  // a symlink on the way is kPermissionDenied, a file on the way kNotADirectory).
  Status diagnose(const NormalPath& p, int err) const;

  std::string path_;
  std::shared_ptr<UniqueFd> fd_;
};

// lstat of `name` in directory `dirfd`; nullopt-like via ok flag: returns
// false when absent (errno ENOENT), Status error for anything else.
Result<bool> lstat_at(int dirfd, const std::string& name, struct stat* st);

// Entries of an open directory (not "." / ".."), sorted so that a
// depth-first walk visits paths in byte order (a directory sorts as name + "/").
Result<std::vector<DirEntry>> read_dir(int dirfd, bool sort = true);

// Reads the whole of an open regular file (up to max_bytes, else kResourceExhausted).
Status read_all(int fd, const std::string& what, int64_t max_bytes, std::string* out);

// Writes all of `data` to fd.
Status write_all(int fd, std::string_view data, const std::string& what);

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_HOST_IO_H_
