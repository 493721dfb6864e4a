// Filesystem: the one protocol (seed 004) every weft tool uses to reach a
// workspace, whatever backend holds it: InMemory (a persistent tree with O(1)
// snapshots), Host (a directory confined by the kernel, git snapshots) or a
// SandboxWorkspace (a Host overlay where commands run under bubblewrap; see
// sandbox.h).
//
// Paths: relative to the root ("src/a.py", "./src/../src/a.py"); an absolute
// path is accepted only when it lies inside root() and is then taken relative
// to it. Paths are normalised lexically (see path.h): "", "." name the root;
// ".." may not climb above the root (kPermissionDenied); NUL bytes, more than
// limits().max_path_depth segments or a segment longer than
// limits().max_segment_length bytes get kInvalidArgument. Result paths are
// normalised and root-relative. Host backends never follow symbolic links
// (an operation naming or passing through one gets kPermissionDenied) and the
// kernel enforces it (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS).
//
// Errors: every method returns Status/Result; the code table mapping onto the
// seed's Python exceptions is in types.h. Every method of a read-only
// instance that would modify it returns kPermissionDenied.
//
// Thread safety: every Filesystem is safe for concurrent calls from several
// threads (the MCP server shares one instance across its workers). InMemory
// operations are atomic with respect to each other; Host operations are each
// atomic on disk (writes go through temp file + rename; how durable they are
// is HostOptions::durability), and snapshot/restore are serialised per
// instance. Concurrent writers to one path: the last
// rename wins, readers see the old or the new content, never a mix.
#ifndef WEFT_FS_FILESYSTEM_H_
#define WEFT_FS_FILESYSTEM_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/types.h"

namespace weft::fs {

class ChangeLock;

// Options of Filesystem::grep beyond the pattern and the base path.
struct GrepOptions {
  // Only files matching this glob (see Filesystem::grep).
  std::optional<std::string> glob;
  // Bound on the result (default and cap: limits().max_grep_matches).
  std::optional<int64_t> max_matches;
  // When non-null, polled while the scan runs; once it reads true the scan
  // stops and grep returns kCancelled. The Host backend checks it before each
  // directory entry (a scan stops within one file's search); other backends
  // (InMemory, Sandbox) check it before and after their scan. Must outlive
  // the call.
  const std::atomic<bool>* cancel = nullptr;
  // Threads searching files at once (Host and Sandbox backends; the others
  // search on the caller's thread): 1 (the default) searches on the calling
  // thread only, 0 uses every hardware thread. The result is the same for
  // any count: the walk order, max_matches and cancellation hold.
  int threads = 1;
  // Caps GrepMatch::line_content below limits().max_line_bytes for this call
  // (at least 16 bytes), e.g. when only paths or counts are wanted. Host and
  // Sandbox backends.
  std::optional<int64_t> max_line_bytes;
};

class Filesystem {
 public:
  virtual ~Filesystem() = default;
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  // --- read operations -----------------------------------------------------

  // Lines [offset, offset+limit) of a UTF-8 text file (offset 0-based; no
  // limit: limits().default_read_lines). An offset past the end gives empty
  // content. kNotFound, kIsADirectory, kPermissionDenied; kInvalidArgument for
  // offset < 0, limit <= 0 or content that is not UTF-8 (use read_bytes);
  // kResourceExhausted for a file over limits().max_read_file_bytes.
  Result<ReadResult> read(std::string_view path, int64_t offset = 0,
                          std::optional<int64_t> limit = std::nullopt) {
    return do_read(path, offset, limit);
  }

  // Bytes [offset, offset+limit) (no limit: to the end). Errors as read(),
  // without the UTF-8 check.
  Result<ReadBytesResult> read_bytes(std::string_view path, int64_t offset = 0,
                                     std::optional<int64_t> limit = std::nullopt) {
    return do_read_bytes(path, offset, limit);
  }

  // True if the path names a file, directory (or, on Host, a symlink) inside
  // the root; false for missing or invalid paths.
  bool exists(std::string_view path) { return do_exists(path); }

  // Metadata. kNotFound; kInvalidArgument/kPermissionDenied for bad paths.
  Result<FileStat> stat(std::string_view path) { return do_stat(path); }

  // Entries of a directory, sorted by name. kNotFound, kNotADirectory.
  Result<std::vector<FileEntry>> list(std::string_view path = ".") { return do_list(path); }

  // Files and directories under `path` whose path relative to `path` matches
  // `pattern` (weft/base/glob.h syntax: * ? [..] {a,b}, ** spans directories),
  // sorted by path. Symlinks are never traversed. kInvalidArgument for a bad
  // pattern; kNotFound / kNotADirectory for the base.
  Result<std::vector<GlobMatch>> glob(std::string_view pattern, std::string_view path = ".") {
    return do_glob(pattern, path);
  }

  // Lines matching the RE2 `pattern` in the files under `path` (or in `path`
  // itself if it is a file), sorted by (path, line_number); binary files
  // (a NUL byte in the first 8 KiB) are skipped. `glob` filters files: a
  // pattern without '/' matches the file name, one with '/' the path
  // relative to `path`. max_matches (default and cap:
  // limits().max_grep_matches) bounds the result. kInvalidArgument for a bad
  // regex or glob or max_matches <= 0; kNotFound for the base.
  Result<std::vector<GrepMatch>> grep(std::string_view pattern, std::string_view path = ".",
                                      std::optional<std::string> glob = std::nullopt,
                                      std::optional<int64_t> max_matches = std::nullopt) {
    return do_grep(pattern, path, glob, max_matches);
  }

  // As above with GrepOptions, which adds cancellation: kCancelled when
  // options.cancel turned true before the scan finished.
  Result<std::vector<GrepMatch>> grep(std::string_view pattern, std::string_view path,
                                      const GrepOptions& options) {
    return do_grep_with(pattern, path, options);
  }

  // --- write operations ----------------------------------------------------

  // Writes UTF-8 text. kAlreadyExists (mode kCreate and the file exists),
  // kNotFound (parent missing and !create_parents), kIsADirectory,
  // kNotADirectory (a parent is a file), kPermissionDenied,
  // kInvalidArgument (not UTF-8), kResourceExhausted (over
  // limits().max_write_chars code points). A failed write leaves the old
  // content intact. bytes_written counts this call's bytes.
  Result<WriteResult> write(std::string_view path, std::string_view content,
                            WriteMode mode = WriteMode::kOverwrite, bool create_parents = true) {
    return do_write(path, content, mode, create_parents, /*text=*/true);
  }

  // Writes raw bytes; as write() without the UTF-8 check, limit in bytes.
  Result<WriteResult> write_bytes(std::string_view path, std::string_view content,
                                  WriteMode mode = WriteMode::kOverwrite,
                                  bool create_parents = true) {
    return do_write(path, content, mode, create_parents, /*text=*/false);
  }

  // The seed's delete(path, recursive). kNotFound; kIsADirectory for a
  // directory unless `recursive`; kPermissionDenied (incl. the root itself).
  Status remove(std::string_view path, bool recursive = false) {
    return do_remove(path, recursive);
  }

  // Creates a directory. kAlreadyExists (exists and !exist_ok, or a file is
  // there), kNotFound (parent missing and !parents), kNotADirectory.
  Status mkdir(std::string_view path, bool parents = true, bool exist_ok = true) {
    return do_mkdir(path, parents, exist_ok);
  }

  // Renames a file or directory. kNotFound (source), kAlreadyExists
  // (destination exists and !overwrite; a directory is never overwritten),
  // kInvalidArgument (moving a directory into itself), parent errors as write().
  Status move(std::string_view source, std::string_view destination, bool overwrite = false) {
    return do_move(source, destination, overwrite);
  }

  // Copies a file, or a directory tree (symlinks inside are skipped on Host).
  // Errors as move().
  Status copy(std::string_view source, std::string_view destination, bool overwrite = false) {
    return do_copy(source, destination, overwrite);
  }

  // --- snapshots -----------------------------------------------------------

  // Captures the whole tree. InMemory: O(1). Host/Sandbox: a git commit in
  // the external store, costing time in proportion to what changed.
  // kUnavailable when the snapshot store cannot be written.
  Result<FilesystemSnapshot> snapshot(std::optional<std::string> tag = std::nullopt) {
    return do_snapshot(std::move(tag));
  }

  // Makes the tree exactly what it was at `snapshot`: files created since
  // (ignored ones too) are removed. A Host instance restores records made by
  // another process or instance of the same root (it opens snapshot.git_dir).
  // kNotFound (unknown snapshot), kInvalidArgument (record of another root or
  // backend), kPermissionDenied (read-only), kUnavailable (store unreadable).
  // Validation happens before the tree is touched.
  Status restore(const FilesystemSnapshot& snapshot) { return do_restore(snapshot); }

  // Snapshots taken of this root (from this store), oldest first.
  Result<std::vector<FilesystemSnapshot>> snapshots() { return do_snapshots(); }

  // --- metadata --------------------------------------------------------------

  // The root: an absolute host path, or "/" for InMemory.
  virtual std::string root() const = 0;
  virtual bool read_only() const = 0;
  virtual const FsLimits& limits() const = 0;

 protected:
  Filesystem() = default;

  virtual Result<ReadResult> do_read(std::string_view path, int64_t offset,
                                     std::optional<int64_t> limit) = 0;
  virtual Result<ReadBytesResult> do_read_bytes(std::string_view path, int64_t offset,
                                                std::optional<int64_t> limit) = 0;
  virtual bool do_exists(std::string_view path) = 0;
  virtual Result<FileStat> do_stat(std::string_view path) = 0;
  virtual Result<std::vector<FileEntry>> do_list(std::string_view path) = 0;
  virtual Result<std::vector<GlobMatch>> do_glob(std::string_view pattern,
                                                 std::string_view path) = 0;
  virtual Result<std::vector<GrepMatch>> do_grep(std::string_view pattern, std::string_view path,
                                                 const std::optional<std::string>& glob,
                                                 std::optional<int64_t> max_matches) = 0;
  // Default: checks options.cancel before and after do_grep (the scan itself
  // runs to completion). Backends with an incremental scan override it.
  virtual Result<std::vector<GrepMatch>> do_grep_with(std::string_view pattern,
                                                      std::string_view path,
                                                      const GrepOptions& options) {
    auto cancelled = [&] {
      return options.cancel && options.cancel->load(std::memory_order_relaxed);
    };
    if (cancelled()) return cancelled_error("grep was cancelled");
    auto out = do_grep(pattern, path, options.glob, options.max_matches);
    if (out.ok() && cancelled()) return cancelled_error("grep was cancelled");
    return out;
  }
  virtual Result<WriteResult> do_write(std::string_view path, std::string_view content,
                                       WriteMode mode, bool create_parents, bool text) = 0;
  virtual Status do_remove(std::string_view path, bool recursive) = 0;
  virtual Status do_mkdir(std::string_view path, bool parents, bool exist_ok) = 0;
  virtual Status do_move(std::string_view source, std::string_view destination, bool overwrite) = 0;
  virtual Status do_copy(std::string_view source, std::string_view destination, bool overwrite) = 0;
  virtual Result<FilesystemSnapshot> do_snapshot(std::optional<std::string> tag) = 0;
  virtual Status do_restore(const FilesystemSnapshot& snapshot) = 0;
  virtual Result<std::vector<FilesystemSnapshot>> do_snapshots() = 0;
};

// --- factories ---------------------------------------------------------------

struct InMemoryOptions {
  FsLimits limits;
  bool read_only = false;
};

// An empty in-memory tree rooted at "/". Snapshots are O(1) (persistent tree
// with structural sharing: unchanged files and directories share memory).
std::unique_ptr<Filesystem> make_in_memory_filesystem(InMemoryOptions options = {});

// How a Host write makes new content safe (HostOptions::durability). Both
// modes write a temporary file in the target's directory and rename it over
// the target, so a reader, or a writer that crashes mid-way, never sees a
// torn file: the path holds the old content or the new, whole. They differ
// only across a power cut or kernel crash.
enum class WriteDurability {
  // Temp file, fsync, rename, fsync of the directory: once the call returns
  // the new content survives a power cut. Each write waits for one or two
  // disk flushes (from ~1 ms on a fast SSD to tens of ms on a busy VM disk).
  kFsync,
  // Temp file + rename, no fsync: the kernel writes the data back later (in
  // seconds). A power cut shortly after a write may leave the old content
  // or, on some filesystems, an empty file. What editors and
  // @modelcontextprotocol/server-filesystem do; the MCP server's default.
  kAtomicRename,
};

struct HostOptions {
  FsLimits limits;
  bool read_only = false;
  // The library default is full durability; see WriteDurability.
  WriteDurability durability = WriteDurability::kFsync;
  // Where snapshot commits live; must be outside the root. Default:
  // $XDG_STATE_HOME/weft/snapshots/<hash of root>.git (else
  // ~/.local/state/weft/...). Created on the first snapshot.
  std::optional<std::string> git_dir;
  // Reading a regular file with more than one hard link is refused
  // (kPermissionDenied) because it may alias a file outside the root.
  bool allow_hard_links = false;
  // Serialises this instance's changes with other processes' on the same root
  // (see change_lock.h and open_root_change_lock): writes and mkdir lock their
  // path, delete/move/copy/snapshot/restore the whole tree. Null (the default):
  // changes are atomic on disk but an append racing another process's write
  // may lose one of them.
  std::shared_ptr<ChangeLock> change_lock;
};

// The whole of a file a tool will rewrite (an edit, a patch): refused before
// reading when it is larger than fs's write limit (FsLimits::max_write_chars),
// which it could not be written back under. kResourceExhausted "'PATH' is N
// bytes; TOOL rewrites files of at most M bytes (the workspace's write
// limit)"; other errors as stat and read_bytes.
Result<std::string> read_for_rewrite(Filesystem& fs, std::string_view path, std::string_view tool);

// A filesystem confined to the existing directory `root` (made absolute and
// canonical). kNotFound / kNotADirectory for the root; kInvalidArgument when
// options.git_dir lies inside the root.
Result<std::unique_ptr<Filesystem>> make_host_filesystem(std::string_view root,
                                                         HostOptions options = {});

// The default snapshot store for a canonical root (see HostOptions::git_dir).
std::string default_snapshot_git_dir(std::string_view canonical_root);

}  // namespace weft::fs

#endif  // WEFT_FS_FILESYSTEM_H_
