// The snapshot stat walk (see git_scan.h).
#include "git_scan.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace weft::fs::internal {

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

Status Scanner::add(ScanPart& part, int dirfd, const DirEntry& e, const std::string& path) {
  struct stat st;
  if (::fstatat(dirfd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status();
  uint32_t mode;
  if (S_ISLNK(st.st_mode)) {
    mode = GIT_FILEMODE_LINK;
  } else if (S_ISREG(st.st_mode)) {
    mode = (st.st_mode & 0100) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
  } else {
    return Status();  // fifos, sockets, devices are not captured
  }
  part.walked.push_back(path);
  const git_index_entry* old = git_index_get_bypath(index, path.c_str(), 0);
  if (old) ++part.known;
  if (old && same_stat(old, st, mode)) return Status();
  // Removed since the stat: not captured, and an old index entry goes.
  auto vanished = [&] {
    part.walked.pop_back();
    if (old) --part.known;
    return Status();
  };
  git_index_entry entry;
  std::memset(&entry, 0, sizeof entry);
  std::string& buffer = part.buffer;
  if (mode == GIT_FILEMODE_LINK) {
    buffer.resize(4096);
    ssize_t n = ::readlinkat(dirfd, e.name.c_str(), buffer.data(), buffer.size());
    if (n < 0 && errno == ENOENT) return vanished();
    if (n < 0) return errno_status(errno, "read link", path);
    buffer.resize(static_cast<size_t>(n));
  } else {
    UniqueFd fd(::openat(dirfd, e.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    // E.g. a concurrent atomic write's temp file, renamed away since the stat.
    if (!fd.valid() && errno == ENOENT) return vanished();
    if (!fd.valid()) return errno_status(errno, "open", path);
    WEFT_RETURN_IF_ERROR(read_all(fd.get(), path, int64_t{1} << 40, &buffer));
  }
  {
    std::lock_guard lock(pack_mu);
    WEFT_RETURN_IF_ERROR(pack_add_blob(pack, buffer, &entry.id));
  }
  entry.mode = mode;
  entry.file_size = static_cast<uint32_t>(st.st_size);
  entry.ino = static_cast<uint32_t>(st.st_ino);
  entry.dev = static_cast<uint32_t>(st.st_dev);
  entry.uid = st.st_uid;
  entry.gid = st.st_gid;
  if (st.st_mtim.tv_sec < racy_after_sec && st.st_ctim.tv_sec < racy_after_sec) {
    entry.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
    entry.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
    entry.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
    entry.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  }  // else: leave the times zero so that a change within the clock tick is not missed
  part.updates.emplace_back(path, entry);
  return Status();
}

Status Scanner::walk(ScanPart& part, int dirfd, const std::string& rel,
                     std::vector<std::string>* subdirs) {
  WEFT_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, read_dir(dirfd, false));
  for (const DirEntry& e : entries) {
    std::string path = rel.empty() ? e.name : rel + "/" + e.name;
    if (e.type == DT_DIR) {
      if (e.name == ".git") continue;  // git cannot store it; restore leaves it alone
      if (subdirs) {
        subdirs->push_back(e.name);
        continue;
      }
      WEFT_RETURN_IF_ERROR(walk_subdir(part, dirfd, e.name, path));
    } else {
      WEFT_RETURN_IF_ERROR(add(part, dirfd, e, path));
    }
  }
  return Status();
}

Status Scanner::walk_subdir(ScanPart& part, int dirfd, const std::string& name,
                            const std::string& path) {
  int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "open", path);
  UniqueFd sub(fd);
  return walk(part, sub.get(), path);
}

Status Scanner::scan(int rootfd) {
  ScanPart parts[2];
  std::vector<std::string> top;
  WEFT_RETURN_IF_ERROR(walk(parts[0], rootfd, "", &top));
  std::atomic<size_t> next{0};
  auto work = [&](ScanPart& part) {
    for (size_t i; part.error.ok() && (i = next++) < top.size();) {
      part.error = walk_subdir(part, rootfd, top[i], top[i]);
    }
  };
  if (top.size() >= 2) {
    std::thread helper(work, std::ref(parts[1]));
    work(parts[0]);
    helper.join();
  } else {
    work(parts[0]);
  }
  for (ScanPart& part : parts) {
    WEFT_RETURN_IF_ERROR(part.error);
    known += part.known;
    if (walked.empty()) {
      walked = std::move(part.walked);
    } else {
      walked.insert(walked.end(), std::make_move_iterator(part.walked.begin()),
                    std::make_move_iterator(part.walked.end()));
    }
    for (auto& [path, entry] : part.updates) {
      entry.path = path.c_str();
      if (git_index_add(index, &entry) != 0) return git_failure("index " + path);
      changed = true;
      ++updated;
    }
  }
  return Status();
}

Status Scanner::remove_unseen(size_t entries_before) {
  if (known == entries_before) return Status();
  std::sort(walked.begin(), walked.end());
  std::vector<std::string> gone;
  size_t n = git_index_entrycount(index);
  for (size_t i = 0; i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(index, i);
    if (!std::binary_search(walked.begin(), walked.end(), std::string(e->path))) {
      gone.emplace_back(e->path);
    }
  }
  for (const std::string& p : gone) {
    if (git_index_remove(index, p.c_str(), 0) != 0) return git_failure("unindex " + p);
    changed = true;
    ++updated;
  }
  return Status();
}

}  // namespace weft::fs::internal
