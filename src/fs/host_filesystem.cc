#include "host_filesystem.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <random>

#include "common.h"
#include "weft/fs/change_lock.h"
#include "weft/fs/state_dir.h"

namespace weft::fs {
namespace internal {
namespace {

bool is_git_segment(const std::string& s) {
  return s.size() == 4 && s[0] == '.' && (s[1] | 0x20) == 'g' && (s[2] | 0x20) == 'i' &&
         (s[3] | 0x20) == 't';
}

std::optional<TimePoint> to_time(const struct statx_timestamp& ts) {
  if (ts.tv_sec == 0 && ts.tv_nsec == 0) return std::nullopt;
  return TimePoint(std::chrono::duration_cast<Clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

std::string temp_name() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(kTempPrefix) + buf;
}

}  // namespace

HostFilesystem::HostFilesystem(RootDir root, HostOptions options,
                               std::unique_ptr<GitSnapshotStore> store)
    : root_(std::move(root)), options_(std::move(options)), store_(std::move(store)) {}

Result<NormalPath> HostFilesystem::normalize(std::string_view path) const {
  return normalize_path(path, root_.path(), limits());
}

Result<NormalPath> HostFilesystem::normalize_for_change(std::string_view path) const {
  if (options_.read_only) return permission_denied("this filesystem is read-only");
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
  for (const std::string& s : p.segments) {
    if (is_git_segment(s)) {
      return permission_denied("'" + p.str() +
                               "' is inside a .git directory, which workspace tools may not "
                               "change (its hooks run on the host)");
    }
  }
  return p;
}

Status HostFilesystem::check_file(const struct stat& st, const NormalPath& p) const {
  if (S_ISDIR(st.st_mode)) return is_a_directory("'" + p.str() + "' is a directory, not a file");
  if (!S_ISREG(st.st_mode)) {
    return permission_denied("'" + p.str() + "' is a " +
                             std::string(file_type_name(file_type_of_mode(st.st_mode))) +
                             ", not a regular file; only regular files are read or written");
  }
  if (st.st_nlink > 1 && !options_.allow_hard_links) {
    return permission_denied("'" + p.str() + "' has " + std::to_string(st.st_nlink) +
                             " hard links and may alias a file outside the workspace; refused");
  }
  return Status();
}

Result<ChangeLock::Held> HostFilesystem::lock_path(const NormalPath& p) const {
  if (!options_.change_lock) return ChangeLock::Held();
  return options_.change_lock->lock_paths({p.str()});
}

Result<ChangeLock::Held> HostFilesystem::lock_tree() const {
  if (!options_.change_lock) return ChangeLock::Held();
  return options_.change_lock->lock_tree();
}

Result<UniqueFd> HostFilesystem::open_file(const NormalPath& p, struct stat* st) const {
  // O_NONBLOCK: opening a fifo must not wait for a writer (check_file refuses it).
  WEFT_ASSIGN_OR_RETURN(UniqueFd fd, root_.open_beneath(p, O_RDONLY | O_NONBLOCK));
  if (::fstat(fd.get(), st) != 0) return errno_status(errno, "stat", p.str());
  WEFT_RETURN_IF_ERROR(check_file(*st, p));
  if (st->st_size > limits().max_read_file_bytes) {
    return resource_exhausted("'" + p.str() + "' is " + std::to_string(st->st_size) +
                              " bytes, over the read limit of " +
                              std::to_string(limits().max_read_file_bytes));
  }
  return fd;
}

Result<ReadResult> HostFilesystem::do_read(std::string_view path, int64_t offset,
                                           std::optional<int64_t> limit) {
  WEFT_RETURN_IF_ERROR(check_page_args(offset, limit));
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
  struct stat st;
  WEFT_ASSIGN_OR_RETURN(UniqueFd fd, open_file(p, &st));
  std::string buffer;
  ChunkReader reader(fd.get(), p.str(), limits().max_read_file_bytes, &buffer, st.st_size);
  return page_lines_stream([&] { return reader.next(); }, p.str(), offset, limit, limits());
}

Result<ReadBytesResult> HostFilesystem::do_read_bytes(std::string_view path, int64_t offset,
                                                      std::optional<int64_t> limit) {
  WEFT_RETURN_IF_ERROR(check_page_args(offset, limit));
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
  struct stat st;
  WEFT_ASSIGN_OR_RETURN(UniqueFd fd, open_file(p, &st));
  // Only the range asked for is read.
  ReadBytesResult r;
  r.path = p.str();
  r.size_bytes = static_cast<int64_t>(st.st_size);
  r.offset = offset;
  int64_t from = std::min<int64_t>(offset, r.size_bytes);
  int64_t count = limit ? std::min(*limit, r.size_bytes - from) : r.size_bytes - from;
  WEFT_RETURN_IF_ERROR(read_range(fd.get(), p.str(), from, count, &r.content));
  r.limit = limit ? *limit : static_cast<int64_t>(r.content.size());
  r.truncated = from + static_cast<int64_t>(r.content.size()) < r.size_bytes;
  return r;
}

bool HostFilesystem::do_exists(std::string_view path) { return do_stat(path).ok(); }

Result<FileStat> HostFilesystem::do_stat(std::string_view path) {
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
  struct statx sx {};
  int rc;
  if (p.is_root()) {
    rc = ::statx(root_.fd(), "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx);
  } else {
    WEFT_ASSIGN_OR_RETURN(UniqueFd dir, root_.open_parent(p, false));
    rc = ::statx(dir.get(), p.name().c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
                 &sx);
  }
  if (rc != 0) return errno_status(errno, "stat", p.str());
  FileStat s;
  s.path = p.str();
  s.is_file = S_ISREG(sx.stx_mode);
  s.is_directory = S_ISDIR(sx.stx_mode);
  s.type = file_type_of_mode(sx.stx_mode);
  if (s.type == FileType::kSymlink) {
    WEFT_ASSIGN_OR_RETURN(UniqueFd dir, root_.open_parent(p, false));
    s.symlink_target = read_link_at(dir.get(), p.name());
  }
  s.size_bytes = s.is_directory ? 0 : static_cast<int64_t>(sx.stx_size);
  if (sx.stx_mask & STATX_BTIME) s.created_at = to_time(sx.stx_btime);
  s.modified_at = to_time(sx.stx_mtime);
  return s;
}

Result<std::vector<FileEntry>> HostFilesystem::do_list(std::string_view path) {
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize(path));
  auto fd = root_.open_beneath(p, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) {
    if (fd.status().code() == StatusCode::kNotADirectory && do_stat(path).ok()) {
      return not_a_directory("'" + p.str() + "' is a file, not a directory");
    }
    return fd.status();
  }
  WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(fd->get(), false));
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  std::vector<FileEntry> out;
  for (DirEntry& e : entries) {
    if (e.name.rfind(kTempPrefix, 0) == 0) continue;
    FileEntry entry{e.name,           p.child(e.name).str(),       e.type == DT_REG,
                    e.type == DT_DIR, file_type_of_dirent(e.type), std::nullopt};
    if (entry.type == FileType::kSymlink) entry.symlink_target = read_link_at(fd->get(), e.name);
    out.push_back(std::move(entry));
  }
  return out;
}

Status HostFilesystem::replace_file(int dirfd, const NormalPath& p, std::string_view data,
                                    int keep_mode, bool no_replace) const {
  const bool sync = options_.durability == WriteDurability::kFsync;
  // Content and mode before the file gets a name.
  auto fill = [&](int fd) -> Status {
    WEFT_RETURN_IF_ERROR(write_all(fd, data, p.str()));
    if (keep_mode >= 0 && ::fchmod(fd, static_cast<mode_t>(keep_mode)) != 0) {
      return errno_status(errno, "keep the mode of", p.str());
    }
    return Status();
  };
  std::string tmp = temp_name();
  auto fail = [&](Status s) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return s;
  };
  struct stat dir_st;
  const bool dir_known = ::fstat(dirfd, &dir_st) == 0;
  bool named = false;
  if (UniqueFd spare = dir_known ? closer_.take_spare(dir_st) : UniqueFd(); spare.valid()) {
    // The spare made ahead on the closer's spare thread: no inode allocation here.
    WEFT_RETURN_IF_ERROR(fill(spare.get()));
    named = link_tmpfile(spare.get(), dirfd, tmp.c_str()) == 0;
    if (!named) closer_.disable_spares();  // cannot link here: today's path from now on
    // kFsync: synced once named, so that the inode's link count is on disk too.
    if (named && sync && ::fsync(spare.get()) != 0) {
      return fail(errno_status(errno, "sync", p.str()));
    }
  }
  if (!named) {
    UniqueFd fd(
        ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (!fd.valid()) return errno_status(errno, "create a temporary file for", p.str());
    Status s = fill(fd.get());
    if (s.ok() && sync && ::fsync(fd.get()) != 0) s = errno_status(errno, "sync", p.str());
    if (!s.ok()) return fail(s);
  }
  // The file being replaced, held open so that its last close (which frees the
  // inode and can wait for its writeback) happens on the closer's thread.
  UniqueFd old;
  if (!no_replace)
    old = UniqueFd(::openat(dirfd, p.name().c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  // Renaming over the old file (not exchanging) keeps ext4's auto_da_alloc:
  // the new data is flushed before a crash can leave the name empty.
  int rc = no_replace ? ::renameat2(dirfd, tmp.c_str(), dirfd, p.name().c_str(), RENAME_NOREPLACE)
                      : ::renameat(dirfd, tmp.c_str(), dirfd, p.name().c_str());
  if (rc != 0) return fail(errno_status(errno, "replace", p.str()));
  if (sync) ::fsync(dirfd);  // best effort: make the rename durable
  if (dir_known) closer_.want_spare(dirfd, dir_st);
  closer_.close_later(std::move(old));
  return Status();
}

Result<WriteResult> HostFilesystem::do_write(std::string_view path, std::string_view content,
                                             WriteMode mode, bool create_parents, bool text) {
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize_for_change(path));
  WEFT_RETURN_IF_ERROR(check_write_content(content, text, limits()));
  if (p.is_root()) return is_a_directory("the root is a directory; name a file to write");
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, lock_path(p));  // append reads, then replaces
  WEFT_ASSIGN_OR_RETURN(UniqueFd dir, root_.open_parent(p, create_parents));
  struct stat st;
  WEFT_ASSIGN_OR_RETURN(bool exists, lstat_at(dir.get(), p.name(), &st));
  int keep_mode = -1;
  std::string appended;  // append mode only: old content + `content`
  if (exists) {
    if (S_ISLNK(st.st_mode)) {
      return permission_denied("'" + p.str() +
                               "' is a symbolic link; links are not written through");
    }
    if (mode == WriteMode::kCreate) {
      return S_ISDIR(st.st_mode)
                 ? is_a_directory("'" + p.str() + "' is a directory")
                 : already_exists("'" + p.str() + "' exists; use mode overwrite or append");
    }
    if (S_ISDIR(st.st_mode)) return is_a_directory("'" + p.str() + "' is a directory");
    if (!S_ISREG(st.st_mode)) return permission_denied("'" + p.str() + "' is not a regular file");
    keep_mode = static_cast<int>(st.st_mode & 07777);
    if (mode == WriteMode::kAppend) {
      UniqueFd in(::openat(dir.get(), p.name().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      if (!in.valid()) return errno_status(errno, "open", p.str());
      struct stat now;
      if (::fstat(in.get(), &now) != 0) return errno_status(errno, "stat", p.str());
      WEFT_RETURN_IF_ERROR(check_file(now, p));
      WEFT_RETURN_IF_ERROR(read_all(in.get(), p.str(), limits().max_read_file_bytes, &appended));
      appended.append(content);
    }
  }
  std::string_view data = mode == WriteMode::kAppend && exists ? appended : content;
  WEFT_RETURN_IF_ERROR(replace_file(dir.get(), p, data, keep_mode, mode == WriteMode::kCreate));
  return WriteResult{p.str(), static_cast<int64_t>(content.size()), mode};
}

Status HostFilesystem::remove_tree(int parent, const std::string& name,
                                   const std::string& what) const {
  UniqueFd dir(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.valid()) return errno_status(errno, "open", what);
  WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(dir.get(), false));
  for (const DirEntry& e : entries) {
    std::string child = what + "/" + e.name;
    if (e.type == DT_DIR) {
      WEFT_RETURN_IF_ERROR(remove_tree(dir.get(), e.name, child));
    } else if (::unlinkat(dir.get(), e.name.c_str(), 0) != 0 && errno != ENOENT) {
      return errno_status(errno, "delete", child);
    }
  }
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
    return errno_status(errno, "delete", what);
  }
  return Status();
}

Status HostFilesystem::do_remove(std::string_view path, bool recursive) {
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize_for_change(path));
  if (p.is_root()) return permission_denied("the workspace root cannot be deleted");
  WEFT_ASSIGN_OR_RETURN(UniqueFd dir, root_.open_parent(p, false));
  struct stat st;
  WEFT_ASSIGN_OR_RETURN(bool exists, lstat_at(dir.get(), p.name(), &st));
  if (!exists) return not_found("'" + p.str() + "' does not exist");
  // A file is one path; a directory's delete walks the tree, so it excludes every change.
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, S_ISDIR(st.st_mode) ? lock_tree() : lock_path(p));
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir.get(), p.name().c_str(), 0) != 0)
      return errno_status(errno, "delete", p.str());
    return Status();
  }
  if (!recursive) {
    return is_a_directory("'" + p.str() + "' is a directory; pass recursive to delete it");
  }
  return remove_tree(dir.get(), p.name(), p.str());
}

Status HostFilesystem::do_mkdir(std::string_view path, bool parents, bool exist_ok) {
  WEFT_ASSIGN_OR_RETURN(NormalPath p, normalize_for_change(path));
  if (p.is_root()) {
    return exist_ok ? Status() : already_exists("the workspace root already exists");
  }
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, lock_path(p));
  WEFT_ASSIGN_OR_RETURN(UniqueFd dir, root_.open_parent(p, parents));
  if (::mkdirat(dir.get(), p.name().c_str(), 0777) == 0) return Status();
  if (errno != EEXIST) return errno_status(errno, "create directory", p.str());
  struct stat st;
  WEFT_ASSIGN_OR_RETURN(bool exists, lstat_at(dir.get(), p.name(), &st));
  if (exists && S_ISDIR(st.st_mode)) {
    return exist_ok ? Status() : already_exists("directory '" + p.str() + "' already exists");
  }
  return already_exists("'" + p.str() + "' exists and is not a directory");
}

Status HostFilesystem::do_move(std::string_view source, std::string_view destination,
                               bool overwrite) {
  WEFT_ASSIGN_OR_RETURN(NormalPath from, normalize_for_change(source));
  WEFT_ASSIGN_OR_RETURN(NormalPath to, normalize_for_change(destination));
  if (from.is_root()) return permission_denied("the workspace root cannot be moved");
  if (to.is_root()) return already_exists("the destination is the workspace root");
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, lock_tree());
  WEFT_ASSIGN_OR_RETURN(UniqueFd src_dir, root_.open_parent(from, false));
  struct stat st;
  WEFT_ASSIGN_OR_RETURN(bool exists, lstat_at(src_dir.get(), from.name(), &st));
  if (!exists) return not_found("'" + from.str() + "' does not exist");
  if (from.segments == to.segments) return Status();
  if (S_ISDIR(st.st_mode) && to.within(from)) {
    return invalid_argument("cannot move '" + from.str() + "' into itself ('" + to.str() + "')");
  }
  WEFT_ASSIGN_OR_RETURN(UniqueFd dst_dir, root_.open_parent(to, true));
  struct stat dst;
  WEFT_ASSIGN_OR_RETURN(bool dst_exists, lstat_at(dst_dir.get(), to.name(), &dst));
  if (dst_exists && (!overwrite || S_ISDIR(dst.st_mode) || S_ISDIR(st.st_mode))) {
    return already_exists("destination '" + to.str() + "' exists" +
                          (overwrite ? " (directories are never overwritten)" : ""));
  }
  int rc = overwrite
               ? ::renameat(src_dir.get(), from.name().c_str(), dst_dir.get(), to.name().c_str())
               : ::renameat2(src_dir.get(), from.name().c_str(), dst_dir.get(), to.name().c_str(),
                             RENAME_NOREPLACE);
  if (rc != 0) return errno_status(errno, "move to", to.str());
  return Status();
}

Status HostFilesystem::copy_tree(int src_dir, int dst_parent, const std::string& name,
                                 const NormalPath& dst) const {
  if (::mkdirat(dst_parent, name.c_str(), 0777) != 0) {
    return errno_status(errno, "create directory", dst.str());
  }
  UniqueFd out(::openat(dst_parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!out.valid()) return errno_status(errno, "open", dst.str());
  WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(src_dir, false));
  for (const DirEntry& e : entries) {
    if (e.name.rfind(kTempPrefix, 0) == 0) continue;
    NormalPath child = dst.child(e.name);
    if (e.type == DT_DIR) {
      UniqueFd in(
          ::openat(src_dir, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!in.valid()) return errno_status(errno, "open", e.name);
      WEFT_RETURN_IF_ERROR(copy_tree(in.get(), out.get(), e.name, child));
    } else if (e.type == DT_REG) {
      UniqueFd in(
          ::openat(src_dir, e.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!in.valid()) return errno_status(errno, "open", e.name);
      struct stat st;
      if (::fstat(in.get(), &st) != 0) return errno_status(errno, "stat", e.name);
      WEFT_RETURN_IF_ERROR(check_file(st, child));
      std::string data;
      WEFT_RETURN_IF_ERROR(read_all(in.get(), e.name, limits().max_read_file_bytes, &data));
      WEFT_RETURN_IF_ERROR(
          replace_file(out.get(), child, data, static_cast<int>(st.st_mode & 07777), true));
    }  // symlinks and special files are skipped
  }
  return Status();
}

Status HostFilesystem::do_copy(std::string_view source, std::string_view destination,
                               bool overwrite) {
  WEFT_ASSIGN_OR_RETURN(NormalPath from, normalize(source));
  WEFT_ASSIGN_OR_RETURN(NormalPath to, normalize_for_change(destination));
  if (to.is_root()) return already_exists("the destination is the workspace root");
  if (from.segments == to.segments)
    return already_exists("'" + to.str() + "' is the source itself");
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, lock_tree());
  if (from.is_root()) return permission_denied("the workspace root cannot be moved or copied");
  if (to.within(from)) {
    return invalid_argument("cannot copy '" + from.str() + "' into itself ('" + to.str() + "')");
  }
  WEFT_ASSIGN_OR_RETURN(UniqueFd in, root_.open_beneath(from, O_RDONLY | O_NONBLOCK));
  struct stat st;
  if (::fstat(in.get(), &st) != 0) return errno_status(errno, "stat", from.str());
  WEFT_ASSIGN_OR_RETURN(UniqueFd dst_dir, root_.open_parent(to, true));
  struct stat dst;
  WEFT_ASSIGN_OR_RETURN(bool dst_exists, lstat_at(dst_dir.get(), to.name(), &dst));
  if (dst_exists && (!overwrite || S_ISDIR(dst.st_mode) || S_ISDIR(st.st_mode))) {
    return already_exists("destination '" + to.str() + "' exists" +
                          (overwrite ? " (directories are never overwritten)" : ""));
  }
  if (S_ISDIR(st.st_mode)) return copy_tree(in.get(), dst_dir.get(), to.name(), to);
  WEFT_RETURN_IF_ERROR(check_file(st, from));
  std::string data;
  WEFT_RETURN_IF_ERROR(read_all(in.get(), from.str(), limits().max_read_file_bytes, &data));
  return replace_file(dst_dir.get(), to, data, static_cast<int>(st.st_mode & 07777), !overwrite);
}

Result<FilesystemSnapshot> HostFilesystem::do_snapshot(std::optional<std::string> tag) {
  if (!store_) return unavailable("the snapshot store could not be set up for this root");
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, lock_tree());  // a consistent tree
  return store_->snapshot(std::move(tag));
}

Status HostFilesystem::do_restore(const FilesystemSnapshot& snapshot) {
  if (options_.read_only) return permission_denied("this filesystem is read-only");
  if (!store_) return unavailable("the snapshot store could not be set up for this root");
  WEFT_ASSIGN_OR_RETURN(ChangeLock::Held held, lock_tree());
  return store_->restore(snapshot);
}

Result<std::vector<FilesystemSnapshot>> HostFilesystem::do_snapshots() {
  if (!store_) return unavailable("the snapshot store could not be set up for this root");
  return store_->list();
}

}  // namespace internal

std::string default_snapshot_git_dir(std::string_view canonical_root) {
  return user_state_home() + "/weft/snapshots/" + root_key(canonical_root) + ".git";
}

Result<std::unique_ptr<Filesystem>> make_host_filesystem(std::string_view root,
                                                         HostOptions options) {
  WEFT_ASSIGN_OR_RETURN(internal::RootDir dir, internal::RootDir::open(root));
  std::string git_dir = options.git_dir ? *options.git_dir : default_snapshot_git_dir(dir.path());
  WEFT_ASSIGN_OR_RETURN(auto store, internal::GitSnapshotStore::create(dir.path(), git_dir));
  return std::unique_ptr<Filesystem>(
      new internal::HostFilesystem(std::move(dir), std::move(options), std::move(store)));
}

}  // namespace weft::fs
