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

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
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
//
// A second thread makes spare temp files: an unnamed O_TMPFILE in the
// directory of the last write, ready for the next write there. Creating a file
// allocates an inode, and ext4's allocator skips every inode freed in the last
// seconds (`recently_deleted`): in a loop of writes, thousands of them, ~30 % of
// a 100 KB write's CPU. A spare moves that off the caller's path too; it has
// no name, so nothing is visible in the tree until the write links it. (Its
// own thread: a close can wait for I/O — writeback, a discard — and the next
// write should not wait for that.)
//
// Each thread starts with the first deferred close or spare request.
// Thread-safe. In a child forked after a thread started (the threads and
// perhaps the lock stayed in the parent), every call closes inline, no spare
// is handed out, and the destructor leaves the parent's thread objects alone
// instead of hanging in a join.
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
  // Returns once every fd queued before the call is closed and the spare
  // asked for before the call is made (or failed).
  void drain();
  // Fds closed so far on the background thread (tests).
  size_t closed_in_background() const;

  // Hands out the spare temp file (O_TMPFILE, O_WRONLY, mode 0666 & ~umask,
  // empty, unnamed) if there is one for directory `dir` (its fstat), else an
  // invalid fd. The caller names it with link_tmpfile.
  UniqueFd take_spare(const struct stat& dir);
  // Called after each write in directory `dirfd` (`dir` is its fstat): from
  // the second write in a row there, asks the thread to make a spare for it
  // unless one exists or is under way (so one-off writes, e.g. a tree copy,
  // allocate no spares); replaces a spare for another directory. A filesystem
  // that refused O_TMPFILE gets no more requests.
  void want_spare(int dirfd, const struct stat& dir);
  // No more spares (after a spare could not be linked); drops the current one.
  void disable_spares();

 private:
  // A spare temp file and the directory it was made in (held, so that its
  // inode number cannot be reused by another directory while this lives).
  struct Spare {
    UniqueFd file;
    UniqueFd dir;
    dev_t dev = 0;
    ino_t ino = 0;
    bool is_for(const struct stat& d) const {
      return dir.valid() && dev == d.st_dev && ino == d.st_ino;
    }
  };

  // The two threads' loops: closes, spares.
  void run_closes();
  void run_spares();
  // Makes the requested spare (on the spares thread with st.mu held; unlocks
  // around the syscall).
  void make_spare(std::unique_lock<std::mutex>& lock);
  // Starts `thread` running `loop` if needed; false when it cannot start.
  // REQUIRES: mu held.
  bool ensure_thread(std::unique_ptr<std::thread>& thread, void (DeferredCloser::*loop)());
  // Nothing queued, being closed, requested or being made. REQUIRES: mu held.
  bool idle() const;
  // True in a process forked after a thread started.
  bool in_forked_child() const;

  // What the thread shares; on the heap so that a forked child can leave it
  // alone (destroying a condition variable the parent's thread waits on hangs).
  struct State {
    std::mutex mu;
    std::condition_variable work_cv;   // queue non-empty or stop
    std::condition_variable spare_cv;  // a spare requested or stop
    std::condition_variable idle_cv;   // nothing queued, being closed, requested or being made
    std::vector<int> queue;
    size_t closing = 0;  // fds taken off the queue and not yet closed
    size_t closed = 0;
    Spare spare;          // the ready spare, if any
    Spare request;        // the directory to make one for (file unused)
    bool making = false;  // the thread is making `request`'s spare
    bool spares_off = false;
    dev_t last_dev = 0;  // the directory of the previous want_spare
    ino_t last_ino = 0;
    std::vector<dev_t> no_tmpfile_devs;  // filesystems that refused O_TMPFILE
    bool stop = false;
  };

  const size_t max_pending_;
  std::unique_ptr<State> state_ = std::make_unique<State>();
  std::unique_ptr<std::thread> thread_;        // closes
  std::unique_ptr<std::thread> spare_thread_;  // spares
  std::atomic<pid_t> owner_pid_{0};            // the process the thread runs in; 0 before it starts
};

// Counts of spare temp files over the process (tests and benchmarks).
struct SpareStats {
  size_t made = 0;      // spares created on a background thread
  size_t used = 0;      // spares handed to a write (take_spare)
  size_t unlinked = 0;  // link_tmpfile failures (the write fell back)
};
SpareStats spare_stats();

// Gives the unnamed file `fd` (O_TMPFILE) the name `name` in `dirfd`: linkat
// with AT_EMPTY_PATH, else through /proc/self/fd. Returns errno, or 0.
int link_tmpfile(int fd, int dirfd, const char* name);
// Tests make link_tmpfile fail (EPERM) with this, to exercise the fallback.
void fail_tmpfile_links_for_testing(bool on);

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

// What a st_mode / a dirent d_type names.
FileType file_type_of_mode(mode_t mode);
FileType file_type_of_dirent(unsigned char type);
// The target of symlink `name` in `dirfd` as stored (never followed), or
// nullopt when it cannot be read.
std::optional<std::string> read_link_at(int dirfd, const std::string& name);

// Reads the whole of an open regular file (up to max_bytes, else kResourceExhausted).
Status read_all(int fd, const std::string& what, int64_t max_bytes, std::string* out);

// Reads an open file front to back in chunks of at most kChunkBytes, into a
// buffer the caller may reuse between files. next() gives an empty view at
// the end, and kResourceExhausted once more than max_bytes were read (the file
// grew while being read).
class ChunkReader {
 public:
  static constexpr size_t kChunkBytes = 256 << 10;
  // `size_hint` is the file's size when known (fstat), else -1: a small file
  // gets a buffer of its size, not a whole chunk to allocate and clear.
  ChunkReader(int fd, std::string what, int64_t max_bytes, std::string* buffer,
              int64_t size_hint = -1)
      : fd_(fd),
        what_(std::move(what)),
        max_bytes_(max_bytes),
        buffer_(*buffer),
        chunk_bytes_(size_hint < 0 ? kChunkBytes
                                   : std::clamp<size_t>(static_cast<size_t>(size_hint) + 1,
                                                        size_t{4} << 10, kChunkBytes)) {}
  Result<std::string_view> next();

 private:
  int fd_;
  std::string what_;
  int64_t max_bytes_;
  int64_t read_ = 0;
  std::string& buffer_;
  size_t chunk_bytes_;
};

// Reads bytes [offset, offset + count) of an open file (fewer at its end) into `out`.
Status read_range(int fd, const std::string& what, int64_t offset, int64_t count, std::string* out);

// Writes all of `data` to fd.
Status write_all(int fd, std::string_view data, const std::string& what);

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_HOST_IO_H_
