// Value types of the filesystem protocol (seed 004): the results every
// backend returns, the per-instance limits, write modes and the snapshot
// record. They mirror the seed's Python protocol field for field, so the
// Python binding and the MCP server can expose them one-to-one.
//
// Error table (seed "Exception Mapping" -> weft::StatusCode -> Python):
//   file not found       kNotFound          FileNotFoundError
//   path is a directory  kIsADirectory      IsADirectoryError
//   path is a file       kNotADirectory     NotADirectoryError
//   access denied        kPermissionDenied  PermissionError   (read-only
//                        instance, path escaping the root, symlinks, hard links)
//   file exists          kAlreadyExists     FileExistsError
//   invalid content /    kInvalidArgument,  ValueError        (bad path, bad
//   over a limit         kResourceExhausted                    UTF-8, bad regex;
//                                                              size limits)
//   backend unavailable  kUnavailable (and  RuntimeError      (bwrap missing,
//                        any other code)                       snapshot store)
//
// Thread safety: plain values; copy freely between threads.
#ifndef WEFT_FS_TYPES_H_
#define WEFT_FS_TYPES_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft::fs {

using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point;

// The name prefix of the host backends' temporary files (written, then renamed
// over their target): hidden from listings and searches, and from the
// workspace kernel's watcher.
inline constexpr std::string_view kTempFilePrefix = ".weft-tmp-";

// Limits enforced by every backend; the defaults are the seed's recommended
// values. Configurable per instance (see the factories in filesystem.h).
struct FsLimits {
  // Largest `content` of one write(): Unicode code points for write(), bytes
  // for write_bytes(). Over it: kResourceExhausted.
  int64_t max_write_chars = 48'000;
  // Most segments in a normalised path ("a/b/c" has 3). Over it: kInvalidArgument.
  int max_path_depth = 16;
  // Longest path segment, in bytes. Over it: kInvalidArgument.
  int max_segment_length = 80;
  // Lines returned by read() when the caller gives no limit.
  int64_t default_read_lines = 2'000;
  // Most grep matches returned; a larger max_matches is clamped to this.
  int64_t max_grep_matches = 1'000;
  // Largest file read()/read_bytes()/grep will take, in bytes (a bound on
  // the time one call spends, not a seed limit). read() and grep stream the
  // file in bounded chunks, so their memory does not grow with it. Over it:
  // kResourceExhausted (grep skips the file).
  int64_t max_read_file_bytes = 256ll << 20;
  // Longest line read() returns and grep reports, in bytes (without its
  // terminator). A longer line is cut at a UTF-8 boundary at or below this;
  // ReadResult::cut_lines and GrepMatch::line_length_bytes give its length.
  // The default holds any one write() (48,000 code points of up to 4 bytes),
  // so what was written on one line reads back whole; the MCP server uses
  // 4 KiB (server_fs_limits).
  int64_t max_line_bytes = 256ll << 10;
  // Most bytes of `content` one read() returns: whole (possibly cut) lines
  // are taken while they fit, at least one; the rest is left for the next
  // page (truncated). Bounds a page of many long lines.
  int64_t max_read_bytes = 1ll << 20;
};

// What a path names. Host backends report what lstat says (links are never
// followed); InMemory has only files and directories.
enum class FileType {
  kFile,
  kDirectory,
  kSymlink,
  kFifo,
  kSocket,
  kCharDevice,
  kBlockDevice,
  kOther,
};

// "file", "directory", "symlink", "fifo", "socket", "char_device",
// "block_device", "other".
std::string_view file_type_name(FileType type);
// The mark `ls -F` puts after a name: "/" directory, "@" symlink, "|" fifo,
// "=" socket, "" otherwise.
std::string_view file_type_mark(FileType type);

// write()/write_bytes() behaviour. Python/CLI names: "create", "overwrite", "append".
enum class WriteMode { kCreate, kOverwrite, kAppend };

// "create" | "overwrite" | "append".
std::string_view write_mode_name(WriteMode mode);
// Parses a seed mode name; kInvalidArgument for anything else.
Result<WriteMode> parse_write_mode(std::string_view name);

// Metadata for a file or directory. `path` is normalised and relative to the
// root ("." for the root itself); timestamps are absent when unknown.
struct FileStat {
  std::string path;
  bool is_file = false;  // a regular file
  bool is_directory = false;
  FileType type = FileType::kFile;
  // For a symlink: its target as stored (readlink), never followed.
  std::optional<std::string> symlink_target;
  int64_t size_bytes = 0;
  std::optional<TimePoint> created_at;
  std::optional<TimePoint> modified_at;
};

// One directory listing entry. Anything but a regular file or a directory
// (Host backends only: symlinks, fifos, sockets, devices) has is_file ==
// is_directory == false and says what it is in `type`; links are listed but
// never followed. `name` is the name as stored: it may hold any byte but NUL
// and '/', so text output must escape it (display_name in path.h).
struct FileEntry {
  std::string name;
  std::string path;  // relative to the root
  bool is_file = false;
  bool is_directory = false;
  FileType type = FileType::kFile;
  std::optional<std::string> symlink_target;  // for a symlink, as stored
};

// One glob result; `path` is relative to the root (not to the glob's base).
struct GlobMatch {
  std::string path;
  bool is_file = false;
  FileType type = FileType::kFile;
};

// One grep match: the first match of the pattern on a line (one per line,
// like `rg`). `line_number` is 1-based; `line_content` is the line without its
// terminator ("\n" or "\r\n"). match_start/match_end are offsets in Unicode
// code points into line_content (the seed's Python str indices); the *_byte
// variants are the same span in UTF-8 bytes. A line longer than
// FsLimits::max_line_bytes is cut: line_content is then a window of at most
// that many bytes around the match, starting line_content_offset_byte bytes
// into the line, and line_length_bytes is the whole line's length.
struct GrepMatch {
  std::string path;
  int64_t line_number = 0;
  std::string line_content;
  int64_t line_length_bytes = 0;
  int64_t line_content_offset_byte = 0;
  int64_t match_start = 0;
  int64_t match_end = 0;
  int64_t match_start_byte = 0;
  int64_t match_end_byte = 0;
};

// A line of a ReadResult that was cut (see FsLimits::max_line_bytes):
// `line` is its 0-based number in the file, `length_bytes` its whole length
// without the terminator.
struct CutLine {
  int64_t line = 0;
  int64_t length_bytes = 0;
};

// A page of a text file. Lines end at "\n"; a final line without "\n" still
// counts; an empty file has 0 lines. `content` is the selected lines with
// their terminators, byte for byte (CRLF kept), except that a line over
// FsLimits::max_line_bytes keeps only its head (listed in cut_lines), and the
// page stops early once FsLimits::max_read_bytes are taken. `lines` is the
// number of lines in `content`; `limit` is the effective limit (the default
// when the caller gave none); truncated == lines remain after the page.
struct ReadResult {
  std::string content;
  std::string path;
  int64_t total_lines = 0;
  int64_t offset = 0;
  int64_t limit = 0;
  int64_t lines = 0;
  bool truncated = false;
  std::vector<CutLine> cut_lines;
};

// A byte range of a file. `content` holds raw bytes; size_bytes is the whole
// file's size; `limit` is the caller's limit, or the bytes returned when none
// was given; truncated == bytes remain after the range.
struct ReadBytesResult {
  std::string content;
  std::string path;
  int64_t size_bytes = 0;
  int64_t offset = 0;
  int64_t limit = 0;
  bool truncated = false;
};

// Confirmation of a write: bytes written by this call (not the file size).
struct WriteResult {
  std::string path;
  int64_t bytes_written = 0;
  WriteMode mode = WriteMode::kOverwrite;
};

// An immutable record of a filesystem state, storable and serialisable
// (see snapshot_to_json). `commit_ref` is a git commit id (Host, Sandbox) or
// a version id "mem-N" (InMemory); `git_dir` is the external snapshot store
// (Host, Sandbox), which lets a new process restore given only this record.
struct FilesystemSnapshot {
  std::string snapshot_id;  // a random UUID (RFC 4122 v4, lower-case)
  TimePoint created_at;
  std::string commit_ref;
  std::string root_path;
  std::optional<std::string> git_dir;
  std::optional<std::string> tag;
};

// JSON object {"snapshot_id","created_at" (ISO-8601 UTC with microseconds),
// "commit_ref","root_path","git_dir" (string|null),"tag" (string|null)}.
std::string snapshot_to_json(const FilesystemSnapshot& snapshot);
// Parses snapshot_to_json's output; kInvalidArgument naming the bad field.
Result<FilesystemSnapshot> snapshot_from_json(std::string_view json);

// ISO-8601 UTC ("2026-11-26T01:02:03.123456Z") and back (kInvalidArgument).
std::string format_time(TimePoint t);
Result<TimePoint> parse_time(std::string_view text);

}  // namespace weft::fs

#endif  // WEFT_FS_TYPES_H_
