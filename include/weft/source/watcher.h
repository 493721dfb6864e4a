// Watcher: tells what changed under a workspace root, from inotify (no
// polling). Recursive: every directory not ignored gets a watch, and new
// directories get one as they appear (with a scan of what was created in them
// before the watch took hold). Events are coalesced per path over a short
// quiet period, so an editor's write-to-temp-and-rename, or a burst of writes
// to one file, is delivered as one change of the final path; a file written
// to is held until its writer closes it (WatcherOptions::max_open_delay).
// A rename inside the root pairs IN_MOVED_FROM/IN_MOVED_TO into one kRenamed
// change (a file, or a whole directory: then `from`/`path` are the
// directories). Moves in from outside are kCreated, moves out kDeleted. A
// directory moved into one created a moment before (whose watch did not exist
// yet, so inotify never said where it went) is still a kRenamed: the scan of
// the new directory finds it by its watch; a file moved so comes as kDeleted
// of the old path and kCreated of the new one.
// IN_Q_OVERFLOW, or a watch that cannot be added (the inotify watch limit),
// is reported as one kRescan: the receiver must compare everything it knows
// with the disk.
//
// A batch is in the order the changes happened and is meant to be applied in
// that order: kRenamed moves what the receiver knows of `from` to `path`
// (replacing what `path` held; a content change comes as its own kChanged),
// kChanged/kCreated say "read `path` from the disk", kDeleted "forget it"
// (for a directory: everything under it). A new directory's contents come as
// changes of their own (the watcher scans it), so it need not be listed.
//
// Thread safety: start() spawns one thread that runs the callback; stop()
// (and the destructor) join it. The callback must not call stop().
#ifndef WEFT_SOURCE_WATCHER_H_
#define WEFT_SOURCE_WATCHER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/base/status.h"

namespace weft::source {

struct FileChange {
  enum class Kind : uint8_t {
    kChanged,  // a file's content or type may have changed (includes created)
    kCreated,  // a path appeared (file or directory)
    kDeleted,  // a path is gone (file or directory)
    kRenamed,  // `from` became `path` (both inside the root)
    kRescan,   // events were lost: compare everything with the disk
  };
  Kind kind = Kind::kChanged;
  std::string path;  // root-relative ("a/b.txt"); empty for kRescan
  std::string from;  // kRenamed only
  bool is_dir = false;
};
std::string_view file_change_kind_name(FileChange::Kind kind);

struct WatcherOptions {
  // A path's events are held until it has been quiet this long (write bursts,
  // temp-and-rename saves), but never longer than max_delay after the first.
  std::chrono::milliseconds quiet{5};
  std::chrono::milliseconds max_delay{50};
  // A file being written (written to or truncated, not yet closed by the
  // writer) is held until `quiet` after the close, so a slow rewrite
  // (truncate, ... write, close) is one change of the finished file, not an
  // empty or half-written one first. A writer that keeps the file open (a
  // log appended to forever) is still reported this long after the path's
  // first event, so at most about once per max_open_delay. Never less than
  // max_delay.
  std::chrono::milliseconds max_open_delay{1000};
  // Root-relative paths to leave out (directories are then not watched).
  std::function<bool(const std::string& path, bool is_dir)> ignored;
  // Called on the watcher thread with a message a person can act on (the
  // inotify watch limit was reached, a directory cannot be read...). When
  // empty, the message goes to stderr.
  std::function<void(const std::string& message)> diagnostic;
};

class Watcher {
 public:
  using Callback = std::function<void(const std::vector<FileChange>& changes)>;

  // Watches `root` (an existing directory). Errors: kNotFound, kNotADirectory,
  // kInvalidArgument (empty root or callback), kUnavailable (inotify cannot
  // be used: the message says why, e.g. the instance limit).
  static Result<std::unique_ptr<Watcher>> start(const std::string& root, WatcherOptions options,
                                               Callback callback);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  void stop();
  // Reads every inotify event queued so far and delivers all pending changes
  // now (quiet periods and open writers not waited for), then returns after
  // the callback has run on them. So a caller that changed files and then
  // flushes has had every change delivered (e.g. after a shell command
  // exited). False when the watcher does not answer within `timeout` (it
  // stopped, or the callback is slow); the changes still come later.
  // Must not be called from the callback.
  bool flush(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // How many directories are watched now.
  size_t watched_directories() const;

  struct Impl;

 private:
  explicit Watcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::source

#endif  // WEFT_SOURCE_WATCHER_H_
