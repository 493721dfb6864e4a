// Cross-process change lock of a workspace root (see include/weft/fs/change_lock.h).
#include "weft/fs/change_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "weft/base/hash.h"
#include "weft/fs/state_dir.h"

namespace weft::fs {

constexpr const char* kLockFileName = "change.lock";
// Path bytes lie in [1, 2^40]: far fewer collisions than paths in any workspace.
constexpr uint64_t kPathByteMask = (uint64_t{1} << 40) - 1;

struct ChangeLock::Held::Record {
  const ChangeLock* owner = nullptr;
  pid_t pid = 0;  // a child forked while this was held does not hold it
  int fd = -1;  // the file description holding the bytes; -1 for a nested (covered) request
  bool tree = false;
  std::vector<uint64_t> bytes;  // sorted
};

namespace {

// The locks this thread holds, innermost last (a nested request checks them).
thread_local std::vector<ChangeLock::Held::Record*> t_held;

Status lock_byte(int fd, uint64_t byte, short type, const std::string& file) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(byte);
  fl.l_len = 1;
  while (::fcntl(fd, F_OFD_SETLKW, &fl) != 0) {
    if (errno == EINTR) continue;
    return unavailable("cannot lock '" + file + "': " + std::strerror(errno));
  }
  return Status();
}

}  // namespace

ChangeLock::Held::Held(Held&& other) noexcept : record_(std::move(other.record_)) {}

ChangeLock::Held& ChangeLock::Held::operator=(Held&& other) noexcept {
  if (this != &other) {
    release();
    record_ = std::move(other.record_);
  }
  return *this;
}

ChangeLock::Held::Held() = default;
ChangeLock::Held::~Held() { release(); }

void ChangeLock::Held::release() {
  if (!record_) return;
  auto it = std::find(t_held.begin(), t_held.end(), record_.get());
  if (it != t_held.end()) t_held.erase(it);
  if (record_->fd >= 0) ::close(record_->fd);  // closing the description drops its locks
  record_.reset();
}

ChangeLock::~ChangeLock() { ::close(dir_fd_); }

Result<std::shared_ptr<ChangeLock>> ChangeLock::open(const std::string& dir) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) {
    return unavailable("cannot open state directory '" + dir + "': " + std::strerror(errno));
  }
  std::string file = dir + "/" + kLockFileName;
  int fd = ::openat(dfd, kLockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    ::close(dfd);
    return unavailable("cannot open lock file '" + file + "': " + std::strerror(err));
  }
  ::close(fd);
  return std::shared_ptr<ChangeLock>(new ChangeLock(dfd, std::move(file)));
}

uint64_t ChangeLock::byte_of(std::string_view path) {
  return 1 + (hash64(path) & kPathByteMask);
}

Result<ChangeLock::Held> ChangeLock::lock_paths(const std::vector<std::string>& paths) {
  std::vector<uint64_t> bytes;
  bytes.reserve(paths.size());
  for (const std::string& p : paths) bytes.push_back(byte_of(p));
  return acquire(false, std::move(bytes));
}

Result<ChangeLock::Held> ChangeLock::lock_tree() { return acquire(true, {}); }

Result<ChangeLock::Held> ChangeLock::acquire(bool tree, std::vector<uint64_t> bytes) {
  std::sort(bytes.begin(), bytes.end());
  bytes.erase(std::unique(bytes.begin(), bytes.end()), bytes.end());
  Held held;
  held.record_ = std::make_unique<Held::Record>();
  held.record_->owner = this;
  held.record_->pid = ::getpid();
  held.record_->tree = tree;
  held.record_->bytes = bytes;
  // Nested in a lock this thread holds: fine when covered, refused otherwise.
  bool nested = false, covered = false;
  // A child forked while this thread held locks has copies of their descriptors, which keep
  // the parent's locks alive: it drops them, so the parent's release takes effect.
  std::erase_if(t_held, [&](Held::Record* r) {
    if (r->pid == held.record_->pid) return false;
    if (r->fd >= 0) ::close(r->fd);
    r->fd = -1;
    return true;
  });
  for (const Held::Record* h : t_held) {
    const Held::Record& r = *h;
    if (r.owner != this) continue;
    nested = true;
    covered = covered || r.tree ||
              (!tree && std::includes(r.bytes.begin(), r.bytes.end(), bytes.begin(), bytes.end()));
  }
  if (nested && !covered) {
    return failed_precondition(
        "internal: a change lock was requested inside another that does not cover it");
  }
  if (!nested) {
    int fd = ::openat(dir_fd_, kLockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return unavailable("cannot open lock file '" + file_ + "': " + std::strerror(errno));
    held.record_->fd = fd;  // from here `held` closes it on every return
    WEFT_RETURN_IF_ERROR(lock_byte(fd, 0, tree ? F_WRLCK : F_RDLCK, file_));
    for (uint64_t b : bytes) WEFT_RETURN_IF_ERROR(lock_byte(fd, b, F_WRLCK, file_));
  }
  t_held.push_back(held.record_.get());  // records stay put when a Held moves
  return held;
}

Result<RootChangeLock> open_root_change_lock(std::string_view root,
                                             const std::optional<std::string>& state_dir) {
  RootChangeLock out;
  auto try_dir = [&](const std::string& dir) -> Status {
    WEFT_RETURN_IF_ERROR(ensure_private_dir(dir));
    WEFT_ASSIGN_OR_RETURN(out.lock, ChangeLock::open(dir));
    out.dir = dir;
    return Status();
  };
  if (state_dir) {
    std::error_code ec;
    std::string dir = std::filesystem::absolute(*state_dir, ec).string();
    WEFT_RETURN_IF_ERROR(try_dir(ec ? *state_dir : dir));
    return out;
  }
  std::string r(root);
  char* real = ::realpath(r.c_str(), nullptr);
  if (!real) return out;
  std::string canonical = real;
  std::free(real);
  Status first = try_dir(default_root_state_dir(canonical));
  if (first.ok()) return out;
  std::string why(first.message());
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run == '/') {
    std::string fallback = std::string(run) + "/weft/" + root_key(canonical);
    if (try_dir(fallback).ok()) {
      out.warning = why + "; using " + fallback + " for the change lock instead";
      return out;
    }
  }
  out.warning = why + "; changes are serialised only within this process, so another weft "
                      "process on this root may overwrite this one's edits (pass --state DIR)";
  return out;
}

}  // namespace weft::fs
