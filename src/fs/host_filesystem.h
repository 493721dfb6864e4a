// HostFilesystem: the protocol over a host directory, confined by the kernel
// (host_io.h), with atomic writes and git snapshots (git_store.h). Private
// to fs/; callers use make_host_filesystem.
#ifndef WEFT_SRC_FS_HOST_FILESYSTEM_H_
#define WEFT_SRC_FS_HOST_FILESYSTEM_H_

#include <memory>
#include <mutex>
#include <string>

#include "git_store.h"
#include "host_io.h"
#include "weft/fs/change_lock.h"
#include "weft/fs/filesystem.h"

namespace weft::fs::internal {

// Names the host backends hide: their own temporary files.
inline constexpr std::string_view kTempPrefix = kTempFilePrefix;

class HostFilesystem final : public Filesystem {
 public:
  HostFilesystem(RootDir root, HostOptions options, std::unique_ptr<GitSnapshotStore> store);

  std::string root() const override { return root_.path(); }
  bool read_only() const override { return options_.read_only; }
  const FsLimits& limits() const override { return options_.limits; }

 protected:
  Result<ReadResult> do_read(std::string_view path, int64_t offset,
                             std::optional<int64_t> limit) override;
  Result<ReadBytesResult> do_read_bytes(std::string_view path, int64_t offset,
                                        std::optional<int64_t> limit) override;
  bool do_exists(std::string_view path) override;
  Result<FileStat> do_stat(std::string_view path) override;
  Result<std::vector<FileEntry>> do_list(std::string_view path) override;
  Result<std::vector<GlobMatch>> do_glob(std::string_view pattern, std::string_view path) override;
  Result<std::vector<GrepMatch>> do_grep(std::string_view pattern, std::string_view path,
                                         const std::optional<std::string>& glob,
                                         std::optional<int64_t> max_matches) override;
  Result<std::vector<GrepMatch>> do_grep_with(std::string_view pattern, std::string_view path,
                                              const GrepOptions& options) override;
  Result<WriteResult> do_write(std::string_view path, std::string_view content, WriteMode mode,
                               bool create_parents, bool text) override;
  Status do_remove(std::string_view path, bool recursive) override;
  Status do_mkdir(std::string_view path, bool parents, bool exist_ok) override;
  Status do_move(std::string_view source, std::string_view destination, bool overwrite) override;
  Status do_copy(std::string_view source, std::string_view destination, bool overwrite) override;
  Result<FilesystemSnapshot> do_snapshot(std::optional<std::string> tag) override;
  Status do_restore(const FilesystemSnapshot& snapshot) override;
  Result<std::vector<FilesystemSnapshot>> do_snapshots() override;

 private:
  Result<NormalPath> normalize(std::string_view path) const;
  // normalize + refuses paths through a ".git" directory (its hooks would run
  // on the host) and a read-only instance.
  Result<NormalPath> normalize_for_change(std::string_view path) const;
  Status check_file(const struct stat& st, const NormalPath& p) const;
  // Hold options_.change_lock (when set) for a change to `p`, or to the whole
  // tree; an empty Held when there is none.
  Result<ChangeLock::Held> lock_path(const NormalPath& p) const;
  Result<ChangeLock::Held> lock_tree() const;
  // Opens p for reading, refusing what check_file refuses and files over
  // limits().max_read_file_bytes; `st` gets its fstat.
  Result<UniqueFd> open_file(const NormalPath& p, struct stat* st) const;
  // Atomically replaces (or creates) p with `data`: temp file, rename (with the
  // fsyncs of options_.durability).
  // `keep_mode` < 0 means a new file's default mode.
  Status replace_file(int dirfd, const NormalPath& p, std::string_view data, int keep_mode,
                      bool no_replace) const;
  Status copy_tree(int src_dir, int dst_parent, const std::string& name,
                   const NormalPath& dst) const;
  Status remove_tree(int parent, const std::string& name, const std::string& what) const;

  RootDir root_;
  HostOptions options_;
  std::unique_ptr<GitSnapshotStore> store_;
  // Closes replaced targets off the write path (see DeferredCloser).
  mutable DeferredCloser closer_;
};

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_HOST_FILESYSTEM_H_
