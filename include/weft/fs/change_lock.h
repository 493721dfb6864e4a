// ChangeLock: serialises changes to one workspace root across processes (two
// `weft mcp` servers on one root, a server and `weft fs`), so that a
// read-modify-write (fs_edit, fs_patch, an append) never loses another
// process's change.
//
// The lock is a file, `change.lock`, in the root's state directory (outside
// the root: see state_dir.h), locked with open-file-description byte-range
// locks (F_OFD_SETLKW). A rename replaces a file's inode, so locking the
// workspace file itself would not work. Byte 0 is the tree: a change to named
// paths holds it shared, plus one exclusive byte per path chosen by a hash of
// the normalised root-relative path (paths that collide merely serialise); a
// change to the tree (delete, move, copy, snapshot, restore) holds byte 0
// exclusive. Bytes are taken in ascending order, so lockers never deadlock.
//
// Every acquisition opens its own file description, so two threads of one
// process exclude each other as two processes do. Within a thread, a request
// covered by a lock the thread already holds on the same ChangeLock succeeds
// at once (the tools lock around several Filesystem calls that lock again);
// a nested request that is not covered is refused with kFailedPrecondition
// rather than risk a deadlock. The locks are advisory: they bind only
// processes that use the same state directory.
//
// A process forked (without exec) while holding a lock keeps the parent's
// lock alive through its copy of the descriptor until it requests a lock of
// its own or exits; processes started by exec do not inherit it (O_CLOEXEC).
//
// Thread safety: a ChangeLock is safe to share between threads; a Held
// belongs to the thread that took it and must be released there.
#ifndef WEFT_FS_CHANGE_LOCK_H_
#define WEFT_FS_CHANGE_LOCK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft::fs {

class ChangeLock {
 public:
  // A held lock; released when destroyed (or by release()). Movable.
  class Held {
   public:
    Held();
    Held(Held&& other) noexcept;
    Held& operator=(Held&& other) noexcept;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();
    void release();

    struct Record;  // defined in change_lock.cc

   private:
    friend class ChangeLock;
    std::unique_ptr<Record> record_;
  };

  // Opens (creating it, mode 0600) `dir`/change.lock; `dir` must exist.
  // kUnavailable with the reason when it cannot.
  static Result<std::shared_ptr<ChangeLock>> open(const std::string& dir);
  ~ChangeLock();
  ChangeLock(const ChangeLock&) = delete;
  ChangeLock& operator=(const ChangeLock&) = delete;

  // Blocks until this thread holds the tree shared and every path exclusive.
  // `paths` are normalised root-relative paths (duplicates are fine).
  Result<Held> lock_paths(const std::vector<std::string>& paths);
  // Blocks until this thread holds the whole tree exclusively.
  Result<Held> lock_tree();

  // The byte of the lock file that stands for `path` (never 0, the tree's).
  static uint64_t byte_of(std::string_view path);
  const std::string& file() const { return file_; }

 private:
  ChangeLock(int dir_fd, std::string file) : dir_fd_(dir_fd), file_(std::move(file)) {}
  Result<Held> acquire(bool tree, std::vector<uint64_t> bytes);

  int dir_fd_;
  std::string file_;
};

// The change lock of the workspace directory `root` (any spelling; its real
// path picks the state directory). With `state_dir` given, that directory is
// used (created if absent) and an error is kUnavailable. Otherwise the default
// state directory (state_dir.h) is used, else $XDG_RUNTIME_DIR/weft/<hash>
// with a warning; when neither can be made, `lock` is null and `warning` says
// that changes are serialised only within this process. An unresolvable root
// gives a null lock and no warning (opening the workspace reports it).
struct RootChangeLock {
  std::shared_ptr<ChangeLock> lock;
  std::string dir;      // the state directory used ("" when none)
  std::string warning;  // set when the default was unusable (fallback or none)
};
Result<RootChangeLock> open_root_change_lock(std::string_view root,
                                             const std::optional<std::string>& state_dir);

}  // namespace weft::fs

#endif  // WEFT_FS_CHANGE_LOCK_H_
