#include "host_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

#include "weft/base/input_file.h"

namespace weft::fs::internal {
namespace {

std::atomic<bool> g_force_fallback{false};

long sys_openat2(int dirfd, const char* path, struct open_how* how) {
  return syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
}

bool probe_openat2() {
  struct open_how how {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
  long fd = sys_openat2(AT_FDCWD, ".", &how);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return true;
  }
  return errno != ENOSYS && errno != EPERM;  // EPERM: seccomp filters in some containers
}

std::string join(const std::vector<std::string>& segs, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out.push_back('/');
    out += segs[i];
  }
  return out.empty() ? "." : out;
}

// Walks `segs[0..n)` from `start` with O_NOFOLLOW, creating missing directories
// when `create`. Returns an O_RDONLY|O_DIRECTORY fd.
Result<UniqueFd> walk_dirs(int start, const std::vector<std::string>& segs, size_t n, bool create) {
  UniqueFd cur(::openat(start, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cur.valid()) return errno_status(errno, "open", ".");
  for (size_t i = 0; i < n; ++i) {
    int fd = ::openat(cur.get(), segs[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(cur.get(), segs[i].c_str(), 0777) != 0 && errno != EEXIST) {
        return errno_status(errno, "create directory", join(segs, i + 1));
      }
      fd = ::openat(cur.get(), segs[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      int err = errno;
      struct stat st;
      if ((err == ENOTDIR || err == ELOOP) &&
          ::fstatat(cur.get(), segs[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        err = ELOOP;
      }
      if (err == ENOENT) {
        return not_found("directory '" + join(segs, i + 1) + "' does not exist");
      }
      return errno_status(err, "open directory", join(segs, i + 1));
    }
    cur = UniqueFd(fd);
  }
  return cur;
}

}  // namespace

Status errno_status(int err, std::string_view op, std::string_view what) {
  std::string w = "'" + std::string(what) + "'";
  std::string sys = std::strerror(err);
  switch (err) {
    case ENOENT:
      return not_found(w + " does not exist");
    case ENOTDIR:
      return not_a_directory(w + ": a component of the path is a file, not a directory");
    case EISDIR:
      return is_a_directory(w + " is a directory");
    case EEXIST:
    case ENOTEMPTY:
      return already_exists(w + " already exists");
    case ELOOP:
      return permission_denied(w +
                               " is or passes through a symbolic link; symlinks are not "
                               "followed in a workspace");
    case EXDEV:
      return permission_denied(w + " resolves outside the workspace root");
    case EACCES:
    case EPERM:
    case EROFS:
      return permission_denied("cannot " + std::string(op) + " " + w + ": " + sys);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return resource_exhausted("cannot " + std::string(op) + " " + w + ": " + sys);
    case ENAMETOOLONG:
      return invalid_argument(w + " is too long for the host filesystem");
    default:
      return unavailable("cannot " + std::string(op) + " " + w + ": " + sys);
  }
}

bool RootDir::has_openat2() {
  static const bool available = probe_openat2();
  return available && !g_force_fallback.load();
}

void RootDir::force_fallback_for_testing(bool on) { g_force_fallback.store(on); }

Result<RootDir> RootDir::open(std::string_view root) {
  std::string r(root);
  char* real = ::realpath(r.c_str(), nullptr);
  if (!real) return errno_status(errno, "open workspace root", r);
  RootDir d;
  d.path_ = real;
  std::free(real);
  // Named, not opened: O_DIRECTORY would refuse it too, with a less helpful message.
  if (struct stat st; ::stat(d.path_.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    return not_a_directory("workspace root '" + d.path_ + "' is " + file_kind_name(st.st_mode) +
                           ", not a directory");
  }
  int fd = ::open(d.path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "open workspace root", d.path_);
  d.fd_ = std::make_shared<UniqueFd>(fd);
  return d;
}

Result<UniqueFd> RootDir::open_beneath(const NormalPath& p, int flags, mode_t mode) const {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (p.is_root()) {
    int rfd = ::openat(fd(), ".", flags, mode);
    if (rfd < 0) return errno_status(errno, "open", ".");
    return UniqueFd(rfd);
  }
  if (has_openat2()) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    std::string rel = p.str();
    long fd;
    do {
      fd = sys_openat2(this->fd(), rel.c_str(), &how);
    } while (fd < 0 && errno == EAGAIN);
    if (fd < 0) return diagnose(p, errno);
    return UniqueFd(static_cast<int>(fd));
  }
  WEFT_ASSIGN_OR_RETURN(UniqueFd dir, walk_dirs(fd(), p.segments, p.segments.size() - 1, false));
  int ffd = ::openat(dir.get(), p.name().c_str(), flags, mode);
  if (ffd < 0) return diagnose(p, errno);
  return UniqueFd(ffd);
}

Status RootDir::diagnose(const NormalPath& p, int err) const {
  if (err != ENOTDIR && err != ELOOP && err != EXDEV) return errno_status(err, "open", p.str());
  // Find the first symlink or file on the way, without following anything.
  UniqueFd cur(::openat(fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (size_t i = 0; i < p.segments.size() && cur.valid(); ++i) {
    struct stat st;
    std::string prefix = join(p.segments, i + 1);
    if (::fstatat(cur.get(), p.segments[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) break;
    if (S_ISLNK(st.st_mode)) return errno_status(ELOOP, "open", prefix);
    if (!S_ISDIR(st.st_mode)) {
      if (i + 1 < p.segments.size()) {
        return not_a_directory("'" + prefix + "' is a file, not a directory");
      }
      break;
    }
    cur = UniqueFd(::openat(cur.get(), p.segments[i].c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return errno_status(err, "open", p.str());
}

Result<UniqueFd> RootDir::open_parent(const NormalPath& p, bool create) const {
  NormalPath parent = p.parent();
  if (has_openat2() && !parent.is_root()) {
    auto fd = open_beneath(parent, O_RDONLY | O_DIRECTORY);
    if (fd.ok() || !create || fd.status().code() != StatusCode::kNotFound) {
      if (!fd.ok() && fd.status().code() == StatusCode::kNotFound) {
        return not_found("parent directory '" + parent.str() + "' does not exist");
      }
      return fd;
    }
  }
  return walk_dirs(fd(), p.segments, p.segments.size() - 1, create);
}

Result<bool> lstat_at(int dirfd, const std::string& name, struct stat* st) {
  if (::fstatat(dirfd, name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0) return true;
  if (errno == ENOENT) return false;
  return errno_status(errno, "stat", name);
}

Result<std::vector<DirEntry>> read_dir(int dirfd, bool sort) {
  int dup = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup < 0) return errno_status(errno, "list", ".");
  DIR* dir = ::fdopendir(dup);
  if (!dir) {
    ::close(dup);
    return errno_status(errno, "list", ".");
  }
  std::vector<DirEntry> out;
  while (struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0))) {
      continue;
    }
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = IFTODT(st.st_mode);
    }
    out.push_back({e->d_name, type});
  }
  ::closedir(dir);
  if (sort) {
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) {
      // Compare as if directories ended in '/', so a DFS yields byte-sorted paths.
      size_t n = std::min(a.name.size(), b.name.size());
      int c = std::memcmp(a.name.data(), b.name.data(), n);
      if (c != 0) return c < 0;
      auto at = [](const DirEntry& e, size_t i) -> int {
        if (i < e.name.size()) return static_cast<unsigned char>(e.name[i]);
        if (i == e.name.size() && e.type == DT_DIR) return '/';
        return -1;
      };
      return at(a, n) < at(b, n);
    });
  }
  return out;
}

FileType file_type_of_mode(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kFile;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  if (S_ISFIFO(mode)) return FileType::kFifo;
  if (S_ISSOCK(mode)) return FileType::kSocket;
  if (S_ISCHR(mode)) return FileType::kCharDevice;
  if (S_ISBLK(mode)) return FileType::kBlockDevice;
  return FileType::kOther;
}

FileType file_type_of_dirent(unsigned char type) {
  return type == DT_UNKNOWN ? FileType::kOther : file_type_of_mode(DTTOIF(type));
}

std::optional<std::string> read_link_at(int dirfd, const std::string& name) {
  char buf[4096];
  ssize_t n = ::readlinkat(dirfd, name.c_str(), buf, sizeof buf);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

namespace {

// One read (a pread at `offset` when it is >= 0), retried on EINTR: the bytes
// read, 0 at the end of the file.
Result<size_t> read_once(int fd, char* buf, size_t size, int64_t offset, const std::string& what) {
  for (;;) {
    ssize_t n =
        offset >= 0 ? ::pread(fd, buf, size, static_cast<off_t>(offset)) : ::read(fd, buf, size);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) return errno_status(errno, "read", what);
  }
}

}  // namespace

Status read_all(int fd, const std::string& what, int64_t max_bytes, std::string* out) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno_status(errno, "stat", what);
  if (st.st_size > max_bytes) {
    return resource_exhausted("'" + what + "' is " + std::to_string(st.st_size) +
                              " bytes, over the read limit of " + std::to_string(max_bytes));
  }
  out->resize(static_cast<size_t>(st.st_size) + 1);
  size_t got = 0;
  for (;;) {
    if (got == out->size()) {
      if (static_cast<int64_t>(got) > max_bytes) {
        return resource_exhausted("'" + what + "' grew over the read limit while being read");
      }
      out->resize(out->size() * 2);
    }
    WEFT_ASSIGN_OR_RETURN(size_t n, read_once(fd, out->data() + got, out->size() - got, -1, what));
    if (n == 0) break;
    got += n;
  }
  out->resize(got);
  return Status();
}

Result<std::string_view> ChunkReader::next() {
  // Grown, never shrunk: a buffer reused across files is cleared at most once.
  if (buffer_.size() < chunk_bytes_) buffer_.resize(chunk_bytes_);
  WEFT_ASSIGN_OR_RETURN(size_t n, read_once(fd_, buffer_.data(), chunk_bytes_, -1, what_));
  read_ += static_cast<int64_t>(n);
  if (read_ > max_bytes_) {
    return resource_exhausted("'" + what_ + "' grew over the read limit of " +
                              std::to_string(max_bytes_) + " bytes while being read");
  }
  return std::string_view(buffer_.data(), n);
}

Status read_range(int fd, const std::string& what, int64_t offset, int64_t count,
                  std::string* out) {
  out->clear();
  if (count <= 0) return Status();
  out->resize(static_cast<size_t>(count));
  size_t got = 0;
  while (got < out->size()) {
    WEFT_ASSIGN_OR_RETURN(size_t n, read_once(fd, out->data() + got, out->size() - got,
                                              offset + static_cast<int64_t>(got), what));
    if (n == 0) break;
    got += n;
  }
  out->resize(got);
  return Status();
}

namespace {

std::atomic<size_t> g_spares_made{0};
std::atomic<size_t> g_spares_used{0};
std::atomic<size_t> g_spares_unlinked{0};
std::atomic<bool> g_fail_links{false};

}  // namespace

SpareStats spare_stats() {
  return {g_spares_made.load(), g_spares_used.load(), g_spares_unlinked.load()};
}

void fail_tmpfile_links_for_testing(bool on) { g_fail_links.store(on); }

int link_tmpfile(int fd, int dirfd, const char* name) {
  int err = EPERM;
  if (!g_fail_links.load()) {
    if (::linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
    // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH on kernels before 6.10; the
    // magic link of our own fd does not (it needs /proc).
    char proc[40];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (::linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    err = errno;
  }
  g_spares_unlinked.fetch_add(1, std::memory_order_relaxed);
  return err;
}

bool DeferredCloser::idle() const {
  const State& st = *state_;
  return st.queue.empty() && st.closing == 0 && !st.request.dir.valid() && !st.making;
}

bool DeferredCloser::in_forked_child() const {
  pid_t owner = owner_pid_.load(std::memory_order_acquire);
  return owner != 0 && owner != ::getpid();
}

DeferredCloser::~DeferredCloser() {
  if (in_forked_child()) {  // the parent's thread and state: neither joinable nor destructible here
    (void)thread_.release();
    (void)spare_thread_.release();
    (void)state_.release();
    return;
  }
  State& st = *state_;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.stop = true;
  }
  st.work_cv.notify_one();
  st.spare_cv.notify_one();
  if (thread_) thread_->join();
  if (spare_thread_) spare_thread_->join();
  for (int fd : st.queue) ::close(fd);  // only when the thread never started
}

bool DeferredCloser::ensure_thread(std::unique_ptr<std::thread>& thread,
                                   void (DeferredCloser::*loop)()) {
  if (thread) return true;
  try {
    thread = std::make_unique<std::thread>([this, loop] { (this->*loop)(); });
  } catch (const std::exception&) {  // std::system_error, std::bad_alloc
    return false;
  }
  owner_pid_.store(::getpid(), std::memory_order_release);
  return true;
}

void DeferredCloser::close_later(UniqueFd fd) {
  if (!fd.valid() || in_forked_child()) return;  // `fd` closes as it goes out of scope
  State& st = *state_;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.stop && st.queue.size() < max_pending_) {
      if (!ensure_thread(thread_, &DeferredCloser::run_closes))
        return;  // no thread: `fd` closes inline as it goes out of scope
      st.queue.push_back(fd.release());
      st.work_cv.notify_one();
      return;
    }
  }
  fd.reset();  // queue full: close inline rather than hold unbounded fds
}

UniqueFd DeferredCloser::take_spare(const struct stat& dir) {
  if (in_forked_child()) return UniqueFd();
  State& st = *state_;
  Spare taken;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.spare.is_for(dir)) return UniqueFd();
    taken = std::move(st.spare);
  }
  g_spares_used.fetch_add(1, std::memory_order_relaxed);
  return std::move(taken.file);  // `taken.dir` closes here: a directory's close is cheap
}

void DeferredCloser::want_spare(int dirfd, const struct stat& dir) {
  if (in_forked_child()) return;
  State& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  const bool again = st.last_dev == dir.st_dev && st.last_ino == dir.st_ino;
  st.last_dev = dir.st_dev;
  st.last_ino = dir.st_ino;
  if (!again || st.stop || st.spares_off || st.spare.is_for(dir) || st.request.is_for(dir)) {
    return;
  }
  if (std::find(st.no_tmpfile_devs.begin(), st.no_tmpfile_devs.end(), dir.st_dev) !=
      st.no_tmpfile_devs.end()) {
    return;
  }
  UniqueFd dup(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (!dup.valid() || !ensure_thread(spare_thread_, &DeferredCloser::run_spares)) return;
  st.request.dir = std::move(dup);  // a request not yet taken is replaced (closed here, cheap)
  st.request.dev = dir.st_dev;
  st.request.ino = dir.st_ino;
  st.spare_cv.notify_one();
}

void DeferredCloser::disable_spares() {
  if (in_forked_child()) return;
  Spare dropped;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->spares_off = true;
    dropped = std::move(state_->spare);
  }
}

void DeferredCloser::drain() {
  if (in_forked_child()) return;
  State& st = *state_;
  std::unique_lock<std::mutex> lock(st.mu);
  st.idle_cv.wait(lock, [&] { return idle(); });
}

size_t DeferredCloser::closed_in_background() const {
  if (in_forked_child()) return 0;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->closed;
}

void DeferredCloser::make_spare(std::unique_lock<std::mutex>& lock) {
  State& st = *state_;
  Spare made = std::move(st.request);
  st.making = true;
  lock.unlock();
  made.file = UniqueFd(::openat(made.dir.get(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666));
  const int err = errno;
  Spare replaced;
  lock.lock();
  st.making = false;
  if (made.file.valid()) {
    g_spares_made.fetch_add(1, std::memory_order_relaxed);
    if (!st.spares_off && !st.stop) {
      replaced = std::move(st.spare);
      st.spare = std::move(made);
    }
  } else if (err == EOPNOTSUPP || err == EISDIR || err == EINVAL) {
    st.no_tmpfile_devs.push_back(made.dev);  // this filesystem has no O_TMPFILE
  }
  lock.unlock();
  replaced = Spare();  // closes the replaced spare and `made`'s fds if unused, unlocked
  made = Spare();
  lock.lock();
}

void DeferredCloser::run_spares() {
  State& st = *state_;
  std::unique_lock<std::mutex> lock(st.mu);
  for (;;) {
    st.spare_cv.wait(lock, [&] { return st.stop || st.request.dir.valid(); });
    if (st.stop) return;
    make_spare(lock);
    if (idle()) st.idle_cv.notify_all();
  }
}

void DeferredCloser::run_closes() {
  State& st = *state_;
  std::vector<int> batch;
  std::unique_lock<std::mutex> lock(st.mu);
  for (;;) {
    st.work_cv.wait(lock, [&] { return st.stop || !st.queue.empty(); });
    if (st.queue.empty()) return;  // stop and nothing left
    batch.swap(st.queue);
    st.closing = batch.size();
    lock.unlock();
    for (int fd : batch) ::close(fd);
    lock.lock();
    st.closed += batch.size();
    st.closing = 0;
    batch.clear();
    if (idle()) st.idle_cv.notify_all();
  }
}

Status write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "write", what);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status();
}

}  // namespace weft::fs::internal
