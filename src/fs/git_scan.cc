// The snapshot stat walk (see git_scan.h).
#include "git_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <thread>

#include "host_io.h"

namespace weft::fs::internal {

// One directory's entries, names NUL-terminated in one buffer (reused from
// directory to directory at the same depth: no allocation per entry).
struct DirList {
  struct Item {
    uint64_t key;   // the first 8 bytes of the name as git orders it (see sort_key)
    uint32_t name;  // offset in names
    uint32_t len;
    unsigned char type;  // DT_REG, DT_DIR, DT_LNK, ...
  };
  std::vector<char> names;
  std::vector<Item> items;
  const char* name(const Item& i) const { return names.data() + i.name; }
};

// An open directory: owned (closed when the last walker or queued
// subdirectory lets go of it), or the caller's root fd.
struct DirFd {
  int fd;
  bool owned;
  DirFd(int f, bool o) : fd(f), owned(o) {}
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;
  ~DirFd() {
    if (owned) ::close(fd);
  }
};

struct ScanPart {
  std::string path;           // the path being visited, relative to the root
  size_t cursor = 0;          // entries_ before it have paths below the last one matched
  size_t matched = 0;         // entries_ this part marked seen
  std::deque<DirList> lists;  // one per depth (a deque: references stay valid)
  std::vector<char> dents;    // getdents64 buffer
  std::string buffer;         // file contents
  std::vector<std::pair<std::string, git_index_entry>> updates;  // entry.path unset
  Status error;
};

namespace {

// Times a file may have been given in the same tick as our stat: ticks are
// at most 10 ms (HZ=100); the margin is several of them.
constexpr int64_t kFineMarginNs = 50'000'000;
constexpr size_t kDentsBuffer = 64 * 1024;

int64_t to_ns(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The first 8 bytes of name + ("/" for a directory), zero-padded, big-endian:
// names whose keys differ sort as their keys do (no name holds a 0 byte).
uint64_t sort_key(const char* name, size_t len, unsigned char type) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i) {
    unsigned c =
        i < len ? static_cast<unsigned char>(name[i]) : (i == len && type == DT_DIR ? '/' : 0);
    key = key << 8 | c;
  }
  return key;
}

// Orders names as git orders paths: a directory as if its name ended in '/'.
bool git_order(const DirList& l, const DirList::Item& a, const DirList::Item& b) {
  if (a.key != b.key) return a.key < b.key;
  size_t n = std::min(a.len, b.len);
  int c = std::memcmp(l.name(a), l.name(b), n);
  if (c != 0) return c < 0;
  auto at = [&](const DirList::Item& e) -> int {
    if (n < e.len) return static_cast<unsigned char>(l.name(e)[n]);
    return e.type == DT_DIR ? '/' : -1;
  };
  return at(a) < at(b);
}

// Lists dirfd (which must be freshly opened: getdents64 reads on from its
// offset) into `out`, sorted in git order, without "." and "..".
Status list_dir(int dirfd, const std::string& path, std::vector<char>& dents, DirList& out) {
  out.names.clear();
  out.items.clear();
  dents.resize(kDentsBuffer);
  for (;;) {
    ssize_t n = ::getdents64(dirfd, dents.data(), dents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, "list", path.empty() ? "." : path);
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(dents.data() + at);
      at += d->d_reclen;
      const char* name = d->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      unsigned char type = d->d_type;
      if (type == DT_UNKNOWN) {  // filesystems without d_type
        struct stat st;
        if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode)   ? DT_DIR
               : S_ISREG(st.st_mode) ? DT_REG
               : S_ISLNK(st.st_mode) ? DT_LNK
                                     : DT_UNKNOWN;
      }
      size_t len = std::strlen(name);
      out.items.push_back({sort_key(name, len, type), static_cast<uint32_t>(out.names.size()),
                           static_cast<uint32_t>(len), type});
      out.names.insert(out.names.end(), name, name + len + 1);
    }
  }
  std::sort(out.items.begin(), out.items.end(),
            [&](const DirList::Item& a, const DirList::Item& b) { return git_order(out, a, b); });
  return Status();
}

// Appends "/name" (or "name" at the root) to `path`; returns the old length.
size_t push_name(std::string& path, const char* name, size_t len) {
  size_t old = path.size();
  if (old > 0) path.push_back('/');
  path.append(name, len);
  return old;
}

}  // namespace

Status git_failure(std::string_view what) {
  const ::git_error* e = git_error_last();
  if (e && (e->klass == GIT_ERROR_ZLIB || e->klass == GIT_ERROR_ODB)) {
    return data_loss("snapshot store: " + std::string(what) + ": " +
                     (e->message ? e->message : "corrupt object") +
                     " (the store's object files are damaged)");
  }
  return unavailable("snapshot store: " + std::string(what) + ": " +
                     (e && e->message ? e->message : "unknown libgit2 error"));
}

bool same_stat(const git_index_entry* e, const struct stat& st, uint32_t mode) {
  return e->mode == mode && e->file_size == static_cast<uint32_t>(st.st_size) &&
         e->mtime.seconds == static_cast<int32_t>(st.st_mtim.tv_sec) &&
         e->mtime.nanoseconds == static_cast<uint32_t>(st.st_mtim.tv_nsec) &&
         e->ctime.seconds == static_cast<int32_t>(st.st_ctim.tv_sec) &&
         e->ctime.nanoseconds == static_cast<uint32_t>(st.st_ctim.tv_nsec) &&
         e->ino == static_cast<uint32_t>(st.st_ino);
}

RacyRule RacyRule::for_root(int rootfd, int64_t now_ns) {
  RacyRule r;
  struct statfs fs;
  if (::fstatfs(rootfd, &fs) == 0) {
    // Local filesystems whose times come from this kernel's clock in
    // nanoseconds. Anything else (network, FUSE, FAT, ...) gets whole seconds.
    switch (static_cast<uint64_t>(fs.f_type)) {
      case EXT4_SUPER_MAGIC:  // also ext2/ext3 (1 s times there have tv_nsec 0)
      case XFS_SUPER_MAGIC:
      case BTRFS_SUPER_MAGIC:
      case TMPFS_MAGIC:
      case F2FS_SUPER_MAGIC:
      case OVERLAYFS_SUPER_MAGIC:
        r.fine = true;
        break;
      default:
        break;
    }
  }
  r.fine_cutoff_ns = now_ns - kFineMarginNs;
  r.coarse_after_sec = now_ns / 1'000'000'000 - 1;
  return r;
}

bool RacyRule::trusted(const struct timespec& mtime, const struct timespec& ctime) const {
  // tv_nsec == 0 on a fine filesystem: most likely one with 1 s times (ext4
  // with small inodes), so the whole-second rule applies.
  if (fine && mtime.tv_nsec != 0 && ctime.tv_nsec != 0) {
    return to_ns(mtime) < fine_cutoff_ns && to_ns(ctime) < fine_cutoff_ns;
  }
  return mtime.tv_sec < coarse_after_sec && ctime.tv_sec < coarse_after_sec;
}

size_t Scanner::match(ScanPart& part) {
  const char* path = part.path.c_str();
  auto less = [](const git_index_entry* e, const char* p) { return std::strcmp(e->path, p) < 0; };
  size_t n = entries_.size();
  size_t at = part.cursor;
  // The cursor is only a hint: every entry before it must sort below path.
  if (at > n || (at > 0 && !less(entries_[at - 1], path))) at = 0;
  // Paths come in index order, so the match is nearly always within a few
  // steps (past the entries of deleted files); else binary search.
  for (size_t end = std::min(n, at + 4); at < end && less(entries_[at], path); ++at) {
  }
  if (at < n && less(entries_[at], path)) {
    at = static_cast<size_t>(std::lower_bound(entries_.begin() + at, entries_.end(), path, less) -
                             entries_.begin());
  }
  part.cursor = at;
  if (at == n || std::strcmp(entries_[at]->path, path) != 0) return kNoEntry;
  part.cursor = at + 1;
  return at;
}

Status Scanner::add(ScanPart& part, int dirfd, const char* name, const struct stat& st) {
  uint32_t mode;
  if (S_ISLNK(st.st_mode)) {
    mode = GIT_FILEMODE_LINK;
  } else if (S_ISREG(st.st_mode)) {
    mode = (st.st_mode & 0100) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
  } else {
    return Status();  // fifos, sockets, devices are not captured
  }
  size_t at = match(part);
  const git_index_entry* old = at == kNoEntry ? nullptr : entries_[at];
  auto capture = [&] {
    if (old) {
      seen_[at] = 1;
      ++part.matched;
    }
  };
  if (old && same_stat(old, st, mode)) {
    capture();
    return Status();
  }
  // Removed since the stat (e.g. a concurrent atomic write's temp file,
  // renamed away): not captured, so an old index entry goes.
  std::string& buffer = part.buffer;
  const std::string& path = part.path;
  if (mode == GIT_FILEMODE_LINK) {
    buffer.resize(4096);
    ssize_t n = ::readlinkat(dirfd, name, buffer.data(), buffer.size());
    if (n < 0 && errno == ENOENT) return Status();
    if (n < 0) return errno_status(errno, "read link", path);
    buffer.resize(static_cast<size_t>(n));
  } else {
    UniqueFd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid() && errno == ENOENT) return Status();
    if (!fd.valid()) return errno_status(errno, "open", path);
    WEFT_RETURN_IF_ERROR(read_all(fd.get(), path, int64_t{1} << 40, &buffer));
  }
  git_index_entry entry;
  std::memset(&entry, 0, sizeof entry);
  {
    std::lock_guard lock(pack_mu_);
    WEFT_RETURN_IF_ERROR(pack_add_blob(pack_, buffer, &entry.id));
  }
  capture();
  entry.mode = mode;
  entry.file_size = static_cast<uint32_t>(st.st_size);
  entry.ino = static_cast<uint32_t>(st.st_ino);
  entry.dev = static_cast<uint32_t>(st.st_dev);
  entry.uid = st.st_uid;
  entry.gid = st.st_gid;
  if (racy_.trusted(st.st_mtim, st.st_ctim)) {
    entry.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
    entry.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
    entry.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
    entry.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  }  // else: leave the times zero so that a change within the clock tick is not missed
  part.updates.emplace_back(path, entry);
  return Status();
}

Status Scanner::walk(ScanPart& part, const std::shared_ptr<DirFd>& dir, size_t depth,
                     std::vector<std::string>* subdirs) {
  if (failed_.load(std::memory_order_relaxed)) return Status();  // the snapshot fails anyway
  int dirfd = dir->fd;
  if (part.lists.size() <= depth) part.lists.resize(depth + 1);
  DirList& list = part.lists[depth];
  WEFT_RETURN_IF_ERROR(list_dir(dirfd, part.path, part.dents, list));
  for (const DirList::Item& item : list.items) {
    const char* name = list.name(item);
    if (item.type == DT_DIR) {
      if (std::strcmp(name, ".git") == 0) continue;  // git cannot store it; restore leaves it
      if (subdirs) {
        subdirs->emplace_back(name, item.len);
        continue;
      }
      size_t old = push_name(part.path, name, item.len);
      Status st;
      if (idle_.load(std::memory_order_relaxed) > 0) {  // hand it to the waiting thread
        {
          std::lock_guard lock(queue_mu_);
          pending_.push_back({dir, std::string(name, item.len), part.path, depth + 1});
        }
        queue_cv_.notify_one();
      } else {
        st = walk_subdir(part, dir, name, depth + 1);
      }
      part.path.resize(old);
      WEFT_RETURN_IF_ERROR(st);
      continue;
    }
    struct stat st;
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone: not captured
    size_t old = push_name(part.path, name, item.len);
    Status added = add(part, dirfd, name, st);
    part.path.resize(old);
    WEFT_RETURN_IF_ERROR(added);
  }
  return Status();
}

Status Scanner::walk_subdir(ScanPart& part, const std::shared_ptr<DirFd>& parent, const char* name,
                            size_t depth) {
  int fd = ::openat(parent->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  // Removed or replaced since the listing: nothing under it is captured.
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return Status();
  if (fd < 0) return errno_status(errno, "open", part.path);
  return walk(part, std::make_shared<DirFd>(fd, true), depth, nullptr);
}

void Scanner::run(ScanPart& part) {
  std::unique_lock lock(queue_mu_);
  for (;;) {
    while (pending_.empty() && walking_ > 0) {
      ++idle_;
      queue_cv_.wait(lock);
      --idle_;
    }
    if (pending_.empty()) break;  // and nobody walking: the tree is done
    Pending p = std::move(pending_.back());
    pending_.pop_back();
    ++walking_;
    lock.unlock();
    part.path = std::move(p.path);
    Status st = walk_subdir(part, p.parent, p.name.c_str(), p.depth);
    p.parent.reset();
    lock.lock();
    --walking_;
    if (!st.ok()) {
      part.error = std::move(st);
      failed_ = true;
    }
    if (walking_ == 0 && pending_.empty()) break;
  }
  lock.unlock();
  queue_cv_.notify_all();  // a waiting thread sees the end (or more work)
}

Status Scanner::scan(int rootfd) {
  size_t n = git_index_entrycount(index_);
  entries_.resize(n);
  for (size_t i = 0; i < n; ++i) entries_[i] = git_index_get_byindex(index_, i);
  auto by_path = [](const git_index_entry* a, const git_index_entry* b) {
    return std::strcmp(a->path, b->path) < 0;
  };
  // libgit2 keeps the index sorted the same way (byte order); this is a check.
  if (!std::is_sorted(entries_.begin(), entries_.end(), by_path)) {
    std::sort(entries_.begin(), entries_.end(), by_path);
  }
  seen_.assign(n, 0);

  // The listing reads on from the fd's offset: start at the beginning.
  if (::lseek(rootfd, 0, SEEK_SET) < 0) return errno_status(errno, "list", ".");
  ScanPart parts[2];
  std::vector<std::string> top;
  auto root = std::make_shared<DirFd>(rootfd, false);
  WEFT_RETURN_IF_ERROR(walk(parts[0], root, 0, &top));
  pending_.clear();
  walking_ = 0;
  failed_ = false;
  // Queued in reverse, so that they are taken in path order (the cursors
  // then mostly move forward).
  for (auto it = top.rbegin(); it != top.rend(); ++it) pending_.push_back({root, *it, *it, 1});
  root.reset();
  if (!pending_.empty()) {
    std::thread helper([&] { run(parts[1]); });
    run(parts[0]);
    helper.join();
  }
  size_t matched = 0;
  for (ScanPart& part : parts) {
    WEFT_RETURN_IF_ERROR(part.error);
    matched += part.matched;
  }
  // Entries the walk did not capture: their paths, before the index changes
  // (adding entries invalidates entries_).
  std::vector<std::string> gone;
  if (matched < n) {
    for (size_t i = 0; i < n; ++i) {
      if (!seen_[i]) gone.emplace_back(entries_[i]->path);
    }
  }
  entries_.clear();
  // Removals first: adding "a" when "a/x" is indexed (a directory replaced
  // by a file) makes libgit2 drop "a/x" itself.
  for (const std::string& p : gone) {
    if (git_index_remove(index_, p.c_str(), 0) != 0) return git_failure("unindex " + p);
    ++updated_;
  }
  for (ScanPart& part : parts) {
    for (auto& [path, entry] : part.updates) {
      entry.path = path.c_str();
      if (git_index_add(index_, &entry) != 0) return git_failure("index " + path);
      ++updated_;
    }
  }
  return Status();
}

}  // namespace weft::fs::internal
