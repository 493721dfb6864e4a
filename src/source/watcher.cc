#include "weft/source/watcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "source/coalescer.h"
#include "source/watch_tree.h"
#include "source/watcher_internal.h"

namespace weft::source {

namespace {

using internal::Coalescer;
using internal::WatchTree;
using Clock = Coalescer::Clock;

constexpr uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MODIFY |
                                IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                                IN_ATTRIB | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
constexpr size_t kReadBufferBytes = 64 * 1024;  // room for many events; one needs <= 272 bytes
// Reads per wake-up before due changes are delivered, so a flood of events
// cannot hold back what is already due.
constexpr int kReadsPerRound = 16;
// How long a directory found moved (by a scan) waits for its MOVED_FROM.
// The kernel queues that event just after the rename is visible, so only a
// preempted renaming thread delays it; past this, events count as lost.
constexpr std::chrono::seconds kArrivalGrace{1};

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// A /proc/sys value for a message ("?" when it cannot be read).
std::string proc_value(const char* path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value)) return "?";
  return value;
}

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

std::string_view file_change_kind_name(FileChange::Kind kind) {
  switch (kind) {
    case FileChange::Kind::kChanged: return "changed";
    case FileChange::Kind::kCreated: return "created";
    case FileChange::Kind::kDeleted: return "deleted";
    case FileChange::Kind::kRenamed: return "renamed";
    case FileChange::Kind::kRescan: return "rescan";
  }
  return "unknown";
}

struct Watcher::Impl {
  Impl(std::string root_path, WatcherOptions opts, Callback cb, internal::WatcherLimits lim)
      : root(std::move(root_path)),
        options(std::move(opts)),
        callback(std::move(cb)),
        limits(lim),
        coalescer(options.quiet, options.max_delay, options.max_open_delay, limits.max_pending) {}
  ~Impl() {
    if (inotify_fd >= 0) ::close(inotify_fd);
    if (stop_fd >= 0) ::close(stop_fd);
    if (flush_fd >= 0) ::close(flush_fd);
  }
  bool flush(std::chrono::milliseconds timeout);
  // On the watcher thread: everything queued read, everything pending due.
  void serve_flush();
  // Resyncs when needed, then hands the changes due by `due_by` to the callback.
  void deliver(Clock::time_point due_by);

  static Result<std::unique_ptr<Watcher>> launch(const std::string& root, WatcherOptions options,
                                                 Callback callback, internal::WatcherLimits limits);
  Status open();
  void run();
  void stop();

  // How a scan treats what it finds.
  enum class Scan : uint8_t {
    kRebuild,  // the tree is being built from scratch: nothing is reported
    kWatch,    // watch what is there; the receiver already knows it
    kReport,   // watch it and report everything as created
  };
  struct Added {
    enum class State : uint8_t {
      kFailed,   // no watch (gone again, not a directory, a limit)
      kNew,      // a watch new to the tree
      kKnown,    // already watched at this place
      kMoved,    // watched elsewhere: a move whose MOVED_TO was missed, now told
      kPending,  // watched elsewhere: told when that move's MOVED_FROM comes
    };
    int wd = -1;
    State state = State::kFailed;
  };
  // Watches directory `rel`, the child `name` of `parent_wd`. Unless
  // rebuilding, a directory the tree knows under another path was moved here
  // without a MOVED_TO (its new parent had no watch yet): see arrive().
  Added add_watch(const std::string& rel, int parent_wd, const std::string& name, Scan how,
                  Clock::time_point now);
  // Watches the directories under `rel` (watched as `wd`).
  void scan(const std::string& rel, int wd, Scan how, Clock::time_point now);
  void handle(const inotify_event& event, Clock::time_point now);
  // False when it stopped with events still queued.
  bool drain();
  // Watched directory `wd` was found at child `name` of `parent`: completes
  // its move when the MOVED_FROM was already seen, else waits for it.
  Added::State arrive(int wd, int parent, const std::string& name, Clock::time_point now);
  // Completes the move of arrived directory `wd` whose MOVED_FROM had
  // `cookie`: a kRenamed when the coalescer still holds that MOVED_FROM,
  // else (already told as deleted) a directory new to the receiver.
  void complete_arrival(int wd, uint32_t cookie, Clock::time_point now);
  // Watches and reports directory `rel` and everything under it as created.
  void arrive_fresh(const std::string& rel, int parent, const std::string& name,
                    Clock::time_point now);
  // `wd` is now watched as child `name` of `parent` by its own events: an
  // arrival found there needs nothing more.
  void placed(int wd, int parent, const std::string& name);
  // Settles the MOVED_FROM handled last, now that its MOVED_TO did not follow.
  void settle_last_move(Clock::time_point now);
  // With the queue drained: an arrival whose old place was dropped is new
  // here; one still without its MOVED_FROM after kArrivalGrace means lost
  // events (or a second path to one directory): a rescan.
  void settle_arrivals(Clock::time_point now);
  // Rebuilds the watch tree from the disk (after lost events).
  void resync();
  void remove_subtree(int wd);
  void watch_limit_reached(const std::string& rel);
  void diagnose(const std::string& message);
  bool is_ignored(const std::string& path, bool is_dir) const {
    return options.ignored && options.ignored(path, is_dir);
  }

  const std::string root;
  const WatcherOptions options;
  const Callback callback;
  const internal::WatcherLimits limits;
  int inotify_fd = -1;
  int stop_fd = -1;
  int flush_fd = -1;  // written by flush(): deliver everything now
  std::mutex flush_mu;
  std::condition_variable flush_cv;
  uint64_t flush_requested = 0;  // guarded by flush_mu
  uint64_t flush_done = 0;       // guarded by flush_mu
  bool running = false;          // guarded by flush_mu: the thread serves flushes
  std::thread thread;
  std::mutex stop_mutex;
  std::atomic<size_t> watched{0};

  // Owned by the watcher thread (and by open() before it starts).
  WatchTree tree;
  Coalescer coalescer;
  std::unordered_map<uint32_t, int> moving_dirs;  // cookie -> wd of a directory that left
  struct Place {
    int parent = WatchTree::kNone;
    std::string name;
    Clock::time_point expires;  // when its MOVED_FROM counts as lost
  };
  // Watched directories a scan found at a new place, waiting for the
  // MOVED_FROM of the move that brought them there.
  std::unordered_map<int, Place> arrivals;
  // The cookie of the directory MOVED_FROM handled last: its MOVED_TO, when
  // there is one, is the very next event.
  std::optional<uint32_t> last_move;
  bool limit_reported = false;
  bool limit_hit = false;  // during the current resync
  bool needs_resync = false;
  alignas(inotify_event) char buffer[kReadBufferBytes];
};

void Watcher::Impl::diagnose(const std::string& message) {
  if (options.diagnostic) {
    options.diagnostic(message);
  } else {
    std::fprintf(stderr, "weft watcher: %s\n", message.c_str());
  }
}

void Watcher::Impl::watch_limit_reached(const std::string& rel) {
  limit_hit = true;
  if (limit_reported) return;
  limit_reported = true;
  diagnose("cannot watch '" + (rel.empty() ? root : rel) +
           "': the inotify watch limit is reached (/proc/sys/fs/inotify/max_user_watches = " +
           proc_value("/proc/sys/fs/inotify/max_user_watches") +
           "); changes in directories without a watch are not seen. Raise it (sysctl "
           "fs.inotify.max_user_watches=N) or ignore large directories");
  coalescer.rescan(Clock::now());
}

Watcher::Impl::Added Watcher::Impl::add_watch(const std::string& rel, int parent_wd,
                                              const std::string& name, Scan how,
                                              Clock::time_point now) {
  const std::string full = root + "/" + rel;
  int wd;
  if (limits.max_watches > 0 && tree.size() >= limits.max_watches) {
    wd = -1;
    errno = ENOSPC;
  } else {
    wd = inotify_add_watch(inotify_fd, full.c_str(), kWatchMask);
  }
  if (wd < 0) {
    int err = errno;
    if (err == ENOSPC) {
      watch_limit_reached(rel);
    } else if (err == EACCES || err == EPERM) {
      diagnose("cannot watch '" + rel + "': " + errno_text(err) + "; changes under it are not seen");
    }
    // ENOENT, ENOTDIR, ELOOP: gone again, or not a directory (never followed).
    return {};
  }
  using State = Added::State;
  if (tree.child(parent_wd, name) == wd) {
    placed(wd, parent_wd, name);
    return {wd, State::kKnown};
  }
  // inotify gives one wd per inode: a directory watched under another path
  // has been moved here.
  if (how != Scan::kRebuild && tree.contains(wd) && wd != tree.root()) {
    return {wd, arrive(wd, parent_wd, name, now)};
  }
  std::vector<int> displaced;
  if (!tree.place(wd, parent_wd, name, &displaced)) return {};
  for (int old : displaced) {
    if (old != wd) inotify_rm_watch(inotify_fd, old);
  }
  return {wd, State::kNew};
}

Watcher::Impl::Added::State Watcher::Impl::arrive(int wd, int parent, const std::string& name,
                                                  Clock::time_point now) {
  arrivals[wd] = Place{parent, name, now + kArrivalGrace};
  for (const auto& [cookie, moving] : moving_dirs) {
    if (moving != wd) continue;
    complete_arrival(wd, cookie, now);
    return Added::State::kMoved;
  }
  return Added::State::kPending;
}

void Watcher::Impl::complete_arrival(int wd, uint32_t cookie, Clock::time_point now) {
  auto found = arrivals.find(wd);
  if (found == arrivals.end()) return;
  const Place place = std::move(found->second);
  arrivals.erase(found);
  std::optional<std::string> dir = tree.path(place.parent);
  // Its new place is gone as well: the MOVED_FROM stays a kDeleted.
  if (!dir) return;
  const std::string path = join(*dir, place.name);
  moving_dirs.erase(cookie);
  if (!is_ignored(path, true) && coalescer.moved_to(path, true, cookie, now)) {
    std::vector<int> displaced;
    if (tree.place(wd, place.parent, place.name, &displaced)) {
      for (int old : displaced) inotify_rm_watch(inotify_fd, old);
      return;
    }
  }
  // The old path was already told as deleted (or the new one is ignored):
  // the watches under the old path go, and the directory is new to the
  // receiver.
  if (tree.contains(wd)) remove_subtree(wd);
  if (!is_ignored(path, true)) arrive_fresh(path, place.parent, place.name, now);
}

void Watcher::Impl::arrive_fresh(const std::string& rel, int parent, const std::string& name,
                                 Clock::time_point now) {
  struct stat st;
  if (::lstat((root + "/" + rel).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  coalescer.created(rel, true, now);
  Added added = add_watch(rel, parent, name, Scan::kReport, now);
  if (added.state == Added::State::kNew) scan(rel, added.wd, Scan::kReport, now);
}

void Watcher::Impl::placed(int wd, int parent, const std::string& name) {
  auto found = arrivals.find(wd);
  if (found != arrivals.end() && found->second.parent == parent && found->second.name == name) {
    arrivals.erase(found);
  }
}

void Watcher::Impl::settle_last_move(Clock::time_point now) {
  if (!last_move) return;
  const uint32_t cookie = *last_move;
  last_move.reset();
  auto moving = moving_dirs.find(cookie);
  if (moving == moving_dirs.end() || !arrivals.count(moving->second)) return;
  complete_arrival(moving->second, cookie, now);
}

void Watcher::Impl::settle_arrivals(Clock::time_point now) {
  std::vector<std::pair<int, Place>> left(arrivals.begin(), arrivals.end());
  arrivals.clear();
  for (auto& [wd, place] : left) {
    std::optional<std::string> dir = tree.path(place.parent);
    if (!dir) continue;  // its new place is gone too
    if (!tree.contains(wd)) {
      // Its old place was dropped (told as deleted): it is new here.
      arrive_fresh(join(*dir, place.name), place.parent, place.name, now);
      continue;
    }
    if (place.expires > now) {
      arrivals.emplace(wd, std::move(place));
      continue;
    }
    diagnose("directory '" + join(*dir, place.name) +
             "' appeared without the events of its move; compare everything with the disk");
    coalescer.rescan(now);
    needs_resync = true;
    return;
  }
}

void Watcher::Impl::scan(const std::string& rel, int wd, Scan how, Clock::time_point now) {
  using State = Added::State;
  const bool report = how == Scan::kReport;
  std::vector<std::pair<std::string, int>> stack{{rel, wd}};
  while (!stack.empty()) {
    auto [dir, dir_wd] = std::move(stack.back());
    stack.pop_back();
    const std::string full = dir.empty() ? root : root + "/" + dir;
    int dfd = ::open(full.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) continue;  // gone again, or replaced by something else
    DIR* listing = fdopendir(dfd);
    if (!listing) {
      ::close(dfd);
      continue;
    }
    while (const dirent* ent = readdir(listing)) {
      std::string name = ent->d_name;
      if (name == "." || name == "..") continue;
      bool is_dir = ent->d_type == DT_DIR;
      if (ent->d_type == DT_UNKNOWN) {
        struct stat st;
        if (fstatat(dfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        is_dir = S_ISDIR(st.st_mode);
      }
      std::string child = join(dir, name);
      if (is_ignored(child, is_dir)) continue;
      if (!is_dir) {
        if (report) coalescer.created(child, false, now);
        continue;
      }
      Added added = add_watch(child, dir_wd, name, how, now);
      // A directory moved here is told by its move (or by arrive_fresh).
      if (added.state == State::kMoved || added.state == State::kPending) continue;
      if (report) coalescer.created(child, true, now);
      // A directory already watched here has had its own events and scan.
      if (added.state == State::kNew || (added.state == State::kKnown && !report)) {
        stack.emplace_back(child, added.wd);
      }
    }
    closedir(listing);
  }
}

void Watcher::Impl::remove_subtree(int wd) {
  std::vector<int> removed;
  tree.remove(wd, &removed);
  for (int gone : removed) inotify_rm_watch(inotify_fd, gone);
}

void Watcher::Impl::resync() {
  std::vector<int> old = tree.wds();
  int root_wd = inotify_add_watch(inotify_fd, root.c_str(), kWatchMask);
  if (root_wd < 0) {
    diagnose("cannot watch the root '" + root + "' again: " + errno_text(errno) +
             "; no further changes are reported");
    tree.reset(WatchTree::kNone);
  } else {
    tree.reset(root_wd);
    limit_hit = false;
    scan("", root_wd, Scan::kRebuild, Clock::now());
    if (!limit_hit) limit_reported = false;
  }
  for (int wd : old) {
    if (!tree.contains(wd)) inotify_rm_watch(inotify_fd, wd);
  }
  moving_dirs.clear();
  arrivals.clear();
  last_move.reset();
}

void Watcher::Impl::handle(const inotify_event& event, Clock::time_point now) {
  const uint32_t mask = event.mask;
  if (last_move) {
    if ((mask & IN_MOVED_TO) && event.cookie == *last_move) {
      last_move.reset();  // the move's own MOVED_TO: paired below
    } else {
      settle_last_move(now);
    }
  }
  if (mask & IN_Q_OVERFLOW) {
    coalescer.rescan(now);
    needs_resync = true;
    return;
  }
  if (event.wd < 0) return;
  if (mask & (IN_IGNORED | IN_UNMOUNT)) {
    if (event.wd == tree.root()) {
      diagnose("the root '" + root + "' is no longer watched (deleted or unmounted)");
      coalescer.rescan(now);
    }
    if (tree.contains(event.wd)) remove_subtree(event.wd);
    return;
  }
  std::optional<std::string> dir = tree.path(event.wd);
  if (!dir) return;  // a watch already dropped
  if (mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
    // A subdirectory's own removal or rename is handled from its parent's
    // events; the root's means every path may be stale.
    if (event.wd == tree.root()) {
      diagnose("the root '" + root + "' was moved or deleted; compare everything with the disk");
      coalescer.rescan(now);
    }
    return;
  }
  if (event.len == 0) return;
  const std::string name = event.name;
  const bool is_dir = mask & IN_ISDIR;
  const std::string path = join(*dir, name);

  if (mask & IN_DELETE) {
    if (is_dir) {
      int child = tree.child(event.wd, name);
      if (child != WatchTree::kNone) tree.remove(child, nullptr);  // the kernel drops the watch
    }
    if (!is_ignored(path, is_dir)) coalescer.deleted(path, is_dir, now);
    return;
  }
  if (is_ignored(path, is_dir)) return;
  if (mask & IN_CREATE) {
    coalescer.created(path, is_dir, now);
    if (is_dir) {
      Added added = add_watch(path, event.wd, name, Scan::kReport, now);
      if (added.state == Added::State::kNew) scan(path, added.wd, Scan::kReport, now);
    }
    return;
  }
  if (mask & IN_MOVED_FROM) {
    coalescer.moved_from(path, is_dir, event.cookie, now);
    if (is_dir) {
      int child = tree.child(event.wd, name);
      if (child != WatchTree::kNone) {
        moving_dirs[event.cookie] = child;
        last_move = event.cookie;
      }
    }
    return;
  }
  if (mask & IN_MOVED_TO) {
    const bool paired = coalescer.moved_to(path, is_dir, event.cookie, now);
    if (!is_dir) return;
    auto moving = moving_dirs.find(event.cookie);
    int moved_wd = WatchTree::kNone;
    if (moving != moving_dirs.end()) {
      moved_wd = moving->second;
      moving_dirs.erase(moving);
    }
    if (paired && moved_wd != WatchTree::kNone && tree.contains(moved_wd)) {
      std::vector<int> displaced;
      if (tree.place(moved_wd, event.wd, name, &displaced)) {
        for (int old : displaced) inotify_rm_watch(inotify_fd, old);
        placed(moved_wd, event.wd, name);
        return;
      }
    }
    if (moved_wd != WatchTree::kNone && tree.contains(moved_wd)) remove_subtree(moved_wd);
    // Moved in from outside (or its watch was lost): watch it and, when it
    // is new to the receiver, report what is inside.
    Added added = add_watch(path, event.wd, name, Scan::kReport, now);
    if (added.state == Added::State::kNew || added.state == Added::State::kKnown) {
      scan(path, added.wd, paired ? Scan::kWatch : Scan::kReport, now);
    }
    return;
  }
  if (is_dir) return;
  if (mask & IN_MODIFY) coalescer.written(path, now);
  if (mask & IN_CLOSE_WRITE) {
    coalescer.closed(path, now);
  } else if (mask & IN_ATTRIB) {
    coalescer.changed(path, false, now);
  }
}

bool Watcher::Impl::drain() {
  for (int round = 0; round < kReadsPerRound; ++round) {
    ssize_t n = ::read(inotify_fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) diagnose("reading inotify events failed: " + errno_text(errno));
      return true;
    }
    if (n == 0) return true;
    const Clock::time_point now = Clock::now();
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      handle(*event, now);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return false;
}

void Watcher::Impl::run() {
  while (true) {
    timespec timeout{};
    timespec* wait = nullptr;
    std::optional<Clock::time_point> next = coalescer.next_deadline();
    for (const auto& [wd, place] : arrivals) {
      if (!next || place.expires < *next) next = place.expires;
    }
    if (next) {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(*next - Clock::now());
      if (left.count() < 0) left = std::chrono::nanoseconds(0);
      timeout.tv_sec = static_cast<time_t>(left.count() / 1000000000);
      timeout.tv_nsec = static_cast<long>(left.count() % 1000000000);
      wait = &timeout;
    }
    pollfd fds[3] = {{inotify_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}, {flush_fd, POLLIN, 0}};
    int ready = ppoll(fds, 3, wait, nullptr);
    if (ready < 0 && errno != EINTR) {
      diagnose("waiting for inotify events failed: " + errno_text(errno) + "; the watcher stops");
      return;
    }
    if (ready > 0 && fds[1].revents) return;
    if (ready > 0 && fds[2].revents) {
      serve_flush();
      continue;
    }
    bool drained = true;
    if (ready > 0 && (fds[0].revents & POLLIN)) {
      drained = drain();
      // A MOVED_TO split from its MOVED_FROM by a read is not waited for:
      // take_due() below could tell that MOVED_FROM as deleted meanwhile.
      settle_last_move(Clock::now());
    }
    if (drained && !arrivals.empty()) settle_arrivals(Clock::now());
    deliver(Clock::now());
  }
}

void Watcher::Impl::deliver(Clock::time_point due_by) {
  if (needs_resync) {
    needs_resync = false;
    resync();
  }
  Coalescer::Due due = coalescer.take_due(due_by);
  for (uint32_t cookie : due.moved_out) {
    // A directory moved out of the root (or to an ignored name): its
    // watches would keep reporting from outside.
    auto moving = moving_dirs.find(cookie);
    if (moving == moving_dirs.end()) continue;
    if (tree.contains(moving->second)) remove_subtree(moving->second);
    moving_dirs.erase(moving);
  }
  watched.store(tree.size());
  if (due.changes.empty()) return;
  try {
    callback(due.changes);
  } catch (const std::exception& e) {
    diagnose(std::string("the change callback threw: ") + e.what());
  } catch (...) {
    diagnose("the change callback threw");
  }
}

void Watcher::Impl::serve_flush() {
  uint64_t value = 0;
  while (::read(flush_fd, &value, sizeof value) < 0 && errno == EINTR) {
  }
  uint64_t target;
  {
    std::lock_guard lock(flush_mu);
    target = flush_requested;
  }
  // Every event queued before the request is read (a bounded number of
  // rounds: a writer that never stops cannot hold the flush forever).
  for (int round = 0; round < 64 && !drain(); ++round) {
  }
  settle_last_move(Clock::now());
  if (!arrivals.empty()) settle_arrivals(Clock::now());
  // Far enough ahead that every pending path is due and no writer is waited for.
  deliver(Clock::now() + std::chrono::hours(24));
  std::lock_guard lock(flush_mu);
  flush_done = std::max(flush_done, target);
  flush_cv.notify_all();
}

bool Watcher::Impl::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(flush_mu);
  if (!running) return false;
  uint64_t mine = ++flush_requested;
  uint64_t one = 1;
  while (::write(flush_fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
  return flush_cv.wait_for(lock, timeout, [&] { return flush_done >= mine || !running; }) &&
         flush_done >= mine;
}

Status Watcher::Impl::open() {
  inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd < 0) {
    int err = errno;
    if (err == EMFILE) {
      return unavailable(
          "cannot watch '" + root +
          "': the per-user limit of inotify instances is reached "
          "(/proc/sys/fs/inotify/max_user_instances = " +
          proc_value("/proc/sys/fs/inotify/max_user_instances") +
          "); stop other programs that watch files or raise the limit "
          "(sysctl fs.inotify.max_user_instances=N)");
    }
    return unavailable("cannot watch '" + root + "': inotify_init1: " + errno_text(err));
  }
  stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0) return unavailable("cannot watch '" + root + "': eventfd: " + errno_text(errno));
  flush_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (flush_fd < 0) {
    return unavailable("cannot watch '" + root + "': eventfd: " + errno_text(errno));
  }
  int root_wd = inotify_add_watch(inotify_fd, root.c_str(), kWatchMask);
  if (root_wd < 0) {
    int err = errno;
    if (err == ENOSPC) {
      return unavailable("cannot watch '" + root +
                         "': the inotify watch limit is reached "
                         "(/proc/sys/fs/inotify/max_user_watches = " +
                         proc_value("/proc/sys/fs/inotify/max_user_watches") +
                         "); raise it (sysctl fs.inotify.max_user_watches=N)");
    }
    return unavailable("cannot watch '" + root + "': " + errno_text(err));
  }
  tree.reset(root_wd);
  scan("", root_wd, Scan::kRebuild, Clock::now());
  watched.store(tree.size());
  return Status();
}

void Watcher::Impl::stop() {
  std::lock_guard<std::mutex> lock(stop_mutex);
  if (!thread.joinable()) return;
  uint64_t one = 1;
  while (::write(stop_fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread.join();
  std::lock_guard flush_lock(flush_mu);
  running = false;
  flush_cv.notify_all();
}

Result<std::unique_ptr<Watcher>> Watcher::Impl::launch(const std::string& root_arg,
                                                       WatcherOptions options, Callback callback,
                                                       internal::WatcherLimits limits) {
  if (root_arg.empty()) return invalid_argument("the watch root is empty; give a directory");
  if (!callback) return invalid_argument("the watcher needs a callback for the changes");
  if (options.quiet.count() < 0 || options.max_delay.count() < 0 ||
      options.max_open_delay.count() < 0) {
    return invalid_argument(
        "the watcher's quiet period, max delay and max open delay must not be negative");
  }
  std::string root = root_arg;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) return not_found("the watch root '" + root + "' does not exist");
    return unavailable("cannot watch '" + root + "': " + errno_text(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    return not_a_directory("the watch root '" + root + "' is not a directory");
  }
  if (root == "/") return invalid_argument("watching '/' is not supported; give a workspace");
  auto impl = std::make_unique<Impl>(root, std::move(options), std::move(callback), limits);
  WEFT_RETURN_IF_ERROR(impl->open());
  Impl* raw = impl.get();
  try {
    {
      std::lock_guard lock(raw->flush_mu);
      raw->running = true;
    }
    raw->thread = std::thread([raw] {
      raw->run();
      std::lock_guard lock(raw->flush_mu);
      raw->running = false;
      raw->flush_cv.notify_all();
    });
  } catch (const std::system_error& e) {
    return unavailable(std::string("cannot start the watcher thread: ") + e.what());
  }
  return std::unique_ptr<Watcher>(new Watcher(std::move(impl)));
}

Watcher::Watcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Watcher::~Watcher() { stop(); }

void Watcher::stop() {
  if (impl_) impl_->stop();
}

bool Watcher::flush(std::chrono::milliseconds timeout) {
  return impl_ ? impl_->flush(timeout) : false;
}

size_t Watcher::watched_directories() const { return impl_ ? impl_->watched.load() : 0; }

Result<std::unique_ptr<Watcher>> Watcher::start(const std::string& root, WatcherOptions options,
                                                Callback callback) {
  return Impl::launch(root, std::move(options), std::move(callback), internal::WatcherLimits{});
}

namespace internal {

Result<std::unique_ptr<Watcher>> start_watcher(const std::string& root, WatcherOptions options,
                                              Watcher::Callback callback, WatcherLimits limits) {
  return Watcher::Impl::launch(root, std::move(options), std::move(callback), limits);
}

}  // namespace internal

}  // namespace weft::source
