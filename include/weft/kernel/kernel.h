// Kernel: the workspace kernel of one root (seeds 000, 001, 003). It owns
// every block of the workspace: each text file the tools, sync or the watcher
// touch becomes a file block (`file:<path>`), a CRDT doc whose root Text
// `content` holds the file's text, kept in the SQLite block store of the
// root's state directory and mirrored to the file on disk.
//
// An agent's change goes: rules (weft.toml) -> CRDT commit attributed to the
// agent -> store -> atomic write of the file. A change the rules send to a
// person becomes a pending approval and the file stays as it is until a
// person approves it. A person's own change (origin "human:<name>": the CLI,
// the web page) is that decision: the `human` and `partner` levels and
// escalate rules do not ask them (read_only still denies). A change on disk
// (an editor, git, the shell) reaches the block through the watcher, or when a
// tool next touches the file, and is reconciled by fork-and-compare
// (source::FileBlock::reconcile).
//
// Files that are not text (invalid UTF-8, a NUL byte, or larger than
// max_block_bytes) have no block: their block, if they had one, is frozen
// with that reason, and tools change them as plain files under the same
// rules.
//
// Thread safety: every method is safe from any thread. One mutex guards the
// index of blocks (held for lookups only); each block has its own mutex, held
// for the whole of a change to it, so changes to different files run in
// parallel and changes to one file are serialised.
#ifndef WEFT_KERNEL_KERNEL_H_
#define WEFT_KERNEL_KERNEL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/doc/permission.h"
#include "weft/fs/filesystem.h"
#include "weft/kernel/blocks.h"
#include "weft/source/file_block.h"
#include "weft/source/rules.h"
#include "weft/source/watcher.h"
#include "weft/store/block_store.h"

namespace weft::kernel {

inline constexpr std::string_view kFileBlockPrefix = "file:";
inline constexpr std::string_view kKernelDbName = "kernel.db";

struct KernelOptions {
  // The root's state directory (fs/state_dir.h); the database lives there.
  std::string state_dir;
  // A larger text file is not a block (its block, if any, is frozen).
  uint64_t max_block_bytes = 16u << 20;
  // Loaded clean blocks leave memory, least recently used first, past this.
  size_t memory_budget_bytes = 128u << 20;
  // Watch the root with inotify (source::Watcher) and reconcile what changes.
  bool watch = true;
  store::Durability durability = store::Durability::kNormal;
  std::function<void(const std::string&)> log;  // diagnostics, one line each
};

// What an agent's change did.
struct ChangeOutcome {
  bool applied = false;           // committed and written to the file
  std::string pending_approval;   // the approval's id when a person must approve first
  std::string version;            // the block's version after the change ("" : not a block)
  bool created = false;           // the file did not exist before
  bool removed = false;           // the change deleted the file (remove, redo of a delete)
  std::string old_text;           // the content the change was made on
  std::string new_text;           // the content it asked for
  std::string rule;               // the rule that sent it to approval (or "")
};

// The old content of a file (nullopt: it does not exist) -> its new content.
// An error aborts the change and is returned as is.
using TextTransform =
    std::function<Result<std::string>(const std::optional<std::string>& old_text)>;

// One file as fs_status shows it.
struct FileStatus {
  std::string path;
  bool is_block = false;
  bool dirty = false;        // the block has changes not yet on disk
  bool disk_ahead = false;   // the file changed since the block last synced
  bool deleted = false;      // the file is gone; the block keeps its history
  std::string frozen;        // why the block takes no changes ("" : it does)
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  std::string version;
  std::vector<std::string> pending_approvals;
};

// A change waiting for a person (or one that was decided).
struct Approval {
  std::string id;       // "apr_" + 12 hex digits
  std::string path;
  std::string author;   // agent:<name>
  std::string what;     // the tool, or "conflict" for a reconcile under `human`
  std::string op;       // create | append | overwrite | delete | move | copy
  std::string rule;     // why it needs approval
  std::string base_version;  // the version the change was written against
  std::optional<std::string> proposed_text;  // nullopt for a delete
  std::string target_path;   // move and copy
  bool overwrite = false;    // move and copy: replace an existing target
  std::string diff;          // unified diff of the change
  std::string disk_diff;     // conflict only: what the disk did
  int64_t created_at_ms = 0;
  std::string state = "pending";  // pending | approved | rejected
  std::string decided_by;
  int64_t decided_at_ms = 0;
};

class Kernel {
 public:
  // Opens the kernel of `fs`'s root: the database in options.state_dir
  // (created), weft.toml, the ignore files, the watcher, and a first pass
  // that writes blocks ahead of their file (after a crash) and reconciles
  // files that changed while no kernel watched. Errors: kInvalidArgument
  // naming the line of a bad weft.toml; kUnavailable for a state directory or
  // database that cannot be used; store errors.
  static Result<std::unique_ptr<Kernel>> open(std::shared_ptr<fs::Filesystem> fs,
                                              KernelOptions options);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  fs::Filesystem& fs() const;
  std::shared_ptr<const source::WorkspaceRules> rules() const;

  // ---- agents' changes (the origin is who.origin, e.g. "agent:claude-code")
  // Applies `transform` to the file at `path` (normalised root-relative) as one
  // change, after reconciling what changed on disk. `op` is what the change is
  // for the rules (the transform may turn out an append: see change_op).
  // Errors: kPermissionDenied (a rule, or weft's own configuration) naming the
  // rule; the transform's error; fs errors for the file.
  Result<ChangeOutcome> change_text(std::string_view path, const source::Attribution& who,
                                    source::FileOp op, const TextTransform& transform);
  // Deletes a file or (recursive) a directory. Every text file deleted gets
  // (or keeps) its block with its history, and the delete is one undo step
  // of who.origin on each file: their undo(path) writes the file back with
  // the block's text, redo(path) deletes it again.
  Result<ChangeOutcome> remove(std::string_view path, const source::Attribution& who,
                               bool recursive);
  // Moves a file or directory; blocks move with their history.
  Result<ChangeOutcome> move(std::string_view from, std::string_view to,
                             const source::Attribution& who, bool overwrite);
  // Copies a file or directory; a copied text file starts a block of its own.
  Result<ChangeOutcome> copy(std::string_view from, std::string_view to,
                             const source::Attribution& who, bool overwrite);

  // The file's text through its block (reconciled first). kFailedPrecondition
  // when it is not a text file.
  Result<std::string> read_text(std::string_view path);

  // Makes sure a text file that a tool read has its block, reconciled with
  // the disk (a file gets its block on first access by any tool). Errors as
  // read_text; callers that only read may ignore them.
  Status track(std::string_view path);

  // ---- history
  // kFailedPrecondition "'PATH' is not a text file: NAME has no history"
  // for files without a block.
  Result<std::vector<source::FileHistoryEntry>> history(std::string_view path, size_t limit);
  // Unified diff between two versions (from: the one before `to`; to: now).
  Result<std::string> diff(std::string_view path, std::optional<std::string> from,
                           std::optional<std::string> to);
  Result<ChangeOutcome> rollback(std::string_view path, std::string_view version,
                                 const source::Attribution& who);
  // The caller's (who.origin's) last change to the file, undone / redone
  // (a delete too: see remove). kFailedPrecondition when there is nothing to
  // undo / redo, or when the file the undo would restore exists again (the
  // step is dropped).
  Result<ChangeOutcome> undo(std::string_view path, const source::Attribution& who);
  Result<ChangeOutcome> redo(std::string_view path, const source::Attribution& who);
  // Every file block (under `path` when given, a file or a directory).
  Result<std::vector<FileStatus>> status(std::optional<std::string> path);

  // ---- approvals (people only: no MCP tool reaches these)
  std::vector<Approval> approvals(bool include_decided = false);
  Result<Approval> approval(std::string_view id);
  // Applies the change, merged with whatever happened since; `person` is the
  // approver's name (origin human:<person>... the change keeps its author).
  Result<ChangeOutcome> approve(std::string_view id, std::string_view person);
  Status reject(std::string_view id, std::string_view person);

  // ---- the disk
  // What the watcher saw (also callable by tests and after a shell command).
  void on_disk_changes(const std::vector<source::FileChange>& changes);
  // Compares every block with its file and reconciles what differs.
  Status rescan();

  // ---- shell commands (shell_changes.cc; used by shell_exec's hooks)
  // What the watcher delivered since the log was subscribed: every batch,
  // in order, after the kernel handled it. Bounded: past
  // kMaxDiskLogChanges it holds one kRescan instead.
  class DiskChangeLog {
   public:
    static constexpr size_t kMaxDiskLogChanges = 100'000;
    // The changes so far, emptying the log.
    std::vector<source::FileChange> take();
    void append(const std::vector<source::FileChange>& changes);

   private:
    std::mutex mu_;
    std::vector<source::FileChange> changes_;
  };
  // The log lives while the caller holds it.
  std::shared_ptr<DiskChangeLog> subscribe_disk_changes();
  // Has the watcher read and handle everything queued so far (Watcher::flush),
  // so every change made to the disk before the call is in the blocks and
  // the logs. False without a watcher, or when it did not answer in time.
  bool flush_disk_changes(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // From now until end_shell_command, a change found on disk (by the watcher
  // or any reconcile) is committed as `who` (origin "shell:<agent>", what:
  // the command) instead of source:disk, and goes on `undo_author`'s undo
  // stack too (the agent's fs_undo reverts it). Commands that overlap: the
  // oldest running one's attribution. Returns the id for end_shell_command.
  uint64_t begin_shell_command(source::Attribution who, std::string undo_author);
  void end_shell_command(uint64_t id);
  // Reconciles these files (root-relative) now, as `who` / `undo_author`
  // (above). Per-path errors are returned as "path: reason" lines.
  std::vector<std::string> reconcile_paths(const std::vector<std::string>& paths,
                                           const source::Attribution& who,
                                           const std::string& undo_author);
  // What a shell command did to one file, for revert_shell_change.
  enum class ShellChangeKind : uint8_t { kCreated, kModified, kDeleted };
  // Takes back a change a shell command made to `path` that the rules
  // forbid (strict enforcement), past the rules: a created file is removed,
  // a deleted one written back from its block, a modified one gets the
  // block's newest change reverted when that change is `shell_origin`'s.
  // The revert is committed as `who`. kFailedPrecondition when it cannot be
  // (no block: binary, or weft never had the file's text before the change).
  Result<ChangeOutcome> revert_shell_change(std::string_view path, ShellChangeKind kind,
                                            std::string_view shell_origin,
                                            const source::Attribution& who);
  // A command whose predicted access to `path` needs a person's approval
  // (`rule` says why): queued as an approval with op "shell", the command as
  // proposed_text and `cwd` as target_path, by who.origin (the agent). When a
  // person approves it, approve() runs it through the shell runner.
  Result<Approval> request_shell_approval(std::string_view path, std::string_view command,
                                          std::string_view cwd, const source::Attribution& who,
                                          std::string rule);
  // What runs an approved command (shell_exec sets it: it holds the
  // sandbox). Called by approve() on the approver's thread; its error fails
  // the approval, which then stays pending.
  using ShellRunner = std::function<Status(const Approval& approval)>;
  void set_shell_runner(ShellRunner runner);

  // Called after every commit of a block (agents, disk, approvals): the block
  // id, the new version and the change's origin. Runs on the committing
  // thread with that block's lock held: it must not call back into the kernel.
  using ChangeListener = std::function<void(const std::string& block_id,
                                            const std::string& version,
                                            const std::string& origin)>;
  // Adds a listener (any number may listen: the sync server, tests...);
  // the id removes it. Listeners run in the order they were added.
  uint64_t add_change_listener(ChangeListener listener);
  void remove_change_listener(uint64_t id);
  // Replaces the listener an earlier set_change_listener added (nullptr:
  // removes it); listeners added with add_change_listener stay.
  void set_change_listener(ChangeListener listener);

  // ---- blocks (blocks.h): conversation, file and memory blocks through one
  // set of operations. The facade lives as long as the kernel; the change
  // listener above fires for every block commit too.
  Blocks& blocks();

  // ---- live sync (block_sync.cc): a block's CRDT exchanged as Loro binary
  // updates with editors (server/sync_kernel_backend.h). Block ids of every
  // kind: `file:<path>`, conversation ids, `memory:<agent>/<label>` (Text).
  // SyncJoin and SyncDelta are in blocks.h.
  // What a person (`person`, shown in history as human:<person>) joining
  // with Loro version `client_vv` (VersionVector.encode(); "" : nothing)
  // lacks. File blocks: the path's rule level (read_only -> read; weft's own
  // configuration -> read); conversation blocks: their permission; memory
  // blocks: read unless `person` owns them. Errors: kNotFound (no such block
  // or file), kDataLoss (unreadable version), kFailedPrecondition (a file
  // that is not text).
  Result<SyncJoin> sync_join(std::string_view block_id, std::string_view person,
                             std::string_view client_vv);
  // Imports one Loro update into the block as a change by who.origin (its
  // changes carry the commit message "<origin>\n<what>"), stores it, writes
  // the file of a file block and fires the change listener. All or nothing.
  // Returns whether anything was new. Errors: kInvalidArgument (not a Loro
  // update of this block, missing dependencies, text not valid UTF-8 or over
  // the block size), kPermissionDenied (the person may only read).
  Result<bool> sync_apply(std::string_view block_id, std::string_view update,
                          const source::Attribution& who);
  // sync_apply, also telling the block's version before and after the import
  // (file blocks; see SyncApplied). Same errors, except that an update which
  // depends on changes the block lacks is not an error: `waiting` is set.
  Result<SyncApplied> sync_apply_tracked(std::string_view block_id, std::string_view update,
                                         const source::Attribution& who);
  // The updates since `since` (a Loro version vector, "" : everything) and
  // the block's version now.
  Result<SyncDelta> sync_export_since(std::string_view block_id, std::string_view since);

  struct Impl;

 private:
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// An Approval as a JSON object (every field; proposed_text null for a
// delete or move), and back. Errors: kDataLoss naming what is wrong.
std::string approval_to_json(const Approval& approval);
Result<Approval> approval_from_json(std::string_view json);

// "file:" + path, and back (nullopt for another kind of id).
std::string file_block_id(std::string_view path);
std::optional<std::string> path_of_block_id(std::string_view block_id);

}  // namespace weft::kernel

#endif  // WEFT_KERNEL_KERNEL_H_
