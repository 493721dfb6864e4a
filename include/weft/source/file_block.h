// FileBlock: one text file of the workspace as a CRDT block (seed 001's
// FileSource pair). The memory doc is what agents and sync clients change;
// its root Text container `content` holds the file's text. The disk side is
// the doc as of the frontiers last synced with the file (`synced()`), with the
// file's DiskState then; it is forked from the memory doc when a reconcile
// needs it rather than kept, so a clean block costs one doc.
//
// Every change is a commit whose message is "<origin>\n<what>": the origin is
// `agent:<client name>`, `human:<name>`, `source:disk` or `system:<what>`.
// Versions are opaque strings naming frontiers (encode_version); the empty
// history's version is "v0".
//
// This type does no I/O: the kernel reads and writes files and the store.
//
// Thread safety: not thread-safe; the kernel holds a per-block lock.
#ifndef WEFT_SOURCE_FILE_BLOCK_H_
#define WEFT_SOURCE_FILE_BLOCK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/crdt/doc.h"
#include "weft/doc/permission.h"

namespace weft::source {

inline constexpr std::string_view kContentContainer = "content";
inline constexpr std::string_view kDiskOrigin = "source:disk";

// Who makes a change and what it is ("agent:claude-code", "fs_edit").
struct Attribution {
  std::string origin;
  std::string what;
  std::optional<int64_t> timestamp;  // Unix seconds; default: now
};

// What the block knew of its file when they were last in sync.
struct DiskState {
  std::string hash;      // 16 hex digits of hash64 of the bytes ("" : no file)
  int64_t size = -1;     // bytes (-1: no file)
  int64_t mtime_ns = 0;  // st_mtim
  uint64_t inode = 0;
  // True when a stat of the file still matches (size, mtime and inode): the
  // file is then taken as unchanged without reading it.
  bool same_stat(const DiskState& other) const {
    return size == other.size && mtime_ns == other.mtime_ns && inode == other.inode;
  }
};
// hash64 of `bytes` as DiskState::hash spells it.
std::string content_hash(std::string_view bytes);

// Opaque version strings <-> frontiers. Errors: kInvalidArgument "not a
// version of this file: ..." for text that no encode_version wrote.
std::string encode_version(const crdt::Frontiers& frontiers);
Result<crdt::Frontiers> decode_version(std::string_view version);

struct FileHistoryEntry {
  std::string version;  // the file's state right after this change
  std::string before;   // the version the change was made on (its parents)
  std::string author;   // the origin: "agent:claude-code"
  std::string message;  // what: "fs_edit"
  int64_t timestamp = 0;
};

// One commit made by a FileBlock method.
struct ChangeResult {
  bool changed = false;  // false: the text was already that; nothing committed
  std::string before;    // versions before and after
  std::string after;
};

struct ReconcileResult {
  enum class Action : uint8_t {
    kNone,        // the disk text is the synced text: nothing to do
    kTookDisk,    // the block took the disk's text (only the disk changed, or read_only)
    kTookMemory,  // only the block changed: write text() to the file
    kMerged,      // both changed and were merged: write text() to the file
    kConflict,    // both changed under `human`: the block took the disk's text and
                  // the block's own change waits for approval (below)
  };
  Action action = Action::kNone;
  bool write_file = false;  // the file must be rewritten with text()
  // kConflict: the block's change that was set aside, as a proposal on `base`.
  std::string base_version;
  std::string proposed_text;
  std::string block_diff;  // unified diff base -> proposed
  std::string disk_diff;   // unified diff base -> disk
};
std::string_view reconcile_action_name(ReconcileResult::Action action);

class FileBlock {
 public:
  // A new block holding `text` (valid UTF-8) in one change by `origin`
  // (normally source:disk "initial content"), synced with `disk`. An empty text
  // makes a block whose history is "v0" alone.
  static Result<FileBlock> create(std::string_view text, const DiskState& disk,
                                  const Attribution& origin);
  // A block from its stored blobs (a snapshot and/or updates, oldest first, as
  // Doc::import takes them), synced at `synced_version` with `disk`.
  // Errors: kDataLoss when a blob does not import or the content is not a Text.
  static Result<FileBlock> load(const std::vector<std::string_view>& blobs,
                                std::string_view synced_version, const DiskState& disk);

  FileBlock(FileBlock&&) noexcept;
  FileBlock& operator=(FileBlock&&) noexcept;
  ~FileBlock();

  std::string text() const;
  size_t text_bytes() const;
  std::string version() const;  // current frontiers
  crdt::Doc& doc() { return doc_; }
  const crdt::Doc& doc() const { return doc_; }

  const DiskState& disk() const { return disk_; }
  std::string synced_version() const;
  // The memory doc has changes the file does not have yet.
  bool ahead_of_disk() const;
  // Records that the file now holds text() with `disk` (after writing it, or
  // after finding it equal).
  void mark_synced(const DiskState& disk);

  // Makes the text `new_text` with a minimal diff, committed with `who`.
  // Changed lines are replaced whole (a single line over 4 KB is diffed by
  // character), here and in every other write of this class: merged with a
  // concurrent change, a line that both sides changed, or one changed and
  // the other deleted, comes out whole (both versions kept, the block's
  // first) instead of characters of both interleaved or joined to the next
  // line. Errors: kInvalidArgument for invalid UTF-8 (in the text or `who`)
  // or an origin holding a line break (every write checks `who` so).
  Result<ChangeResult> change(std::string_view new_text, const Attribution& who);

  // The file now holds `disk_text` (with `disk`). Resolves it with the memory
  // doc by seed 000's rule (see ReconcileResult), `level` being the path's
  // permission: read_only -> disk wins; human -> conflict; partner, append,
  // read_write, admin -> CRDT merge where the block's own insertions come
  // before the disk's at the same place. Disk text committed with `disk_origin`.
  // After kNone/kTookDisk/kConflict the block is synced with `disk`; after
  // kTookMemory/kMerged the caller writes text() and calls mark_synced.
  Result<ReconcileResult> reconcile(std::string_view disk_text, const DiskState& disk,
                                    doc::MemoryPermission level, const Attribution& disk_origin);

  // Changes, newest first (at most `limit`; 0: all). The oldest is the
  // content the block started from.
  std::vector<FileHistoryEntry> history(size_t limit = 0) const;
  // The text at `version`. Errors: kInvalidArgument (not a version),
  // kNotFound (a version of another file or of a history not loaded).
  Result<std::string> text_at(std::string_view version) const;
  // The version before `version` in history() order ("v0" for the oldest).
  // Precisely: the version the change ending at `version` was made on, which
  // is the next older entry unless changes were concurrent (a merge), so
  // revert_change(previous_version(v), v) undoes exactly that change.
  // Errors: kInvalidArgument; kNotFound when `version` is no history entry's.
  Result<std::string> previous_version(std::string_view version) const;
  // Unified diff (labels a/<label>, b/<label>) between two versions.
  Result<std::string> diff(std::string_view from, std::string_view to,
                           std::string_view label) const;
  // The text at `version` as a new change by `who` (nothing is lost).
  Result<ChangeResult> rollback(std::string_view version, const Attribution& who);
  // Undoes the change `before` -> `after` (one earlier ChangeResult) on top
  // of the current state: what it inserted is removed and what it removed
  // comes back, while later changes by anyone else stay.
  Result<ChangeResult> revert_change(std::string_view before, std::string_view after,
                                     const Attribution& who);
  // Applies `proposed_text`, written against `base_version`, merged (CRDT) with
  // everything that happened since (an approved change).
  Result<ChangeResult> apply_on_base(std::string_view base_version, std::string_view proposed_text,
                                     const Attribution& who);

  // Blob for the store: updates since `from` (empty: everything).
  std::string export_updates(const crdt::VersionVector& from = {}) const;
  std::string export_snapshot() const;

 private:
  FileBlock(crdt::Doc doc, crdt::Frontiers synced, DiskState disk);
  // A fork of the history up to `at` that writes as a new peer of its own
  // (so its ops never collide with the memory doc's). Disk-side forks take a
  // peer id above every id a FileBlock gives its own writers, which puts the
  // block's insertions before the disk's at one place (the CRDT orders
  // concurrent siblings by ascending peer id). Errors: kNotFound.
  Result<crdt::Doc> fork_writer(const crdt::Frontiers& at, bool disk_side) const;
  // Makes `fork` (a fork_writer at `at`) hold `new_text` in one commit by
  // `who` and imports that commit into the memory doc (a CRDT merge).
  Status merge_fork_text(crdt::Doc& fork, const crdt::Frontiers& at, std::string_view new_text,
                         const Attribution& who);
  // `new_text` as written on version `at` by `who`, merged with everything
  // since (a plain commit when `at` is the current version).
  Result<ChangeResult> merge_on(const crdt::Frontiers& at, std::string_view new_text,
                                const Attribution& who);
  // Makes the content `new_text` (valid UTF-8) in one commit by `who`.
  Result<ChangeResult> commit_text(std::string_view new_text, const Attribution& who);
  // The frontiers `version` names, checked to be in this doc's history.
  // Errors: kInvalidArgument, kNotFound.
  Result<crdt::Frontiers> known_version(std::string_view version) const;

  crdt::Doc doc_;
  crdt::Frontiers synced_;
  DiskState disk_;
};

}  // namespace weft::source

#endif  // WEFT_SOURCE_FILE_BLOCK_H_
