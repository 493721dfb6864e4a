// Private: the Kernel's state, shared by its .cc files (kernel.cc: opening
// and agents' text changes; file_index.cc: the index of files and their
// blocks in the store; tree_changes.cc: delete, move, copy; disk_sync.cc:
// reading the disk, reconcile, the watcher; history.cc: history, diff,
// rollback, undo; approvals.cc: the queue).
#ifndef WEFT_SRC_KERNEL_KERNEL_IMPL_H_
#define WEFT_SRC_KERNEL_KERNEL_IMPL_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/kernel/kernel.h"
#include "weft/source/ignore.h"
#include "weft/source/watcher.h"
#include "weft/store/block_store.h"

namespace weft::kernel {

// The store's owner id for everything the kernel keeps.
inline constexpr std::string_view kWorkspaceOwner = "workspace";
inline constexpr std::string_view kApprovalPrefix = "approval:";
// Undo entries kept per author and file.
inline constexpr size_t kMaxUndoEntries = 100;
// Of those, the newest ones kept in the store with every change.
inline constexpr size_t kMaxStoredUndoEntries = 32;
// evict_if_needed walks the loaded blocks at most once in this many calls
// while no file joins the index.
inline constexpr size_t kEvictCheckEvery = 32;

// One change an author can undo: the versions before and after it.
struct UndoStep {
  std::string before;
  std::string after;
};
struct UndoStacks {
  std::vector<UndoStep> undo;
  std::vector<UndoStep> redo;
};

// A file the kernel knows: loaded or not, a block or not.
struct FileEntry {
  std::mutex mu;  // held for every read or change of the fields below
  std::string path;
  std::string store_id;  // the store's row ("" : never persisted)
  std::optional<source::FileBlock> block;
  crdt::VersionVector persisted;      // what the store holds of block's history
  std::string synced_version;         // as stored, while the block is not loaded
  source::DiskState disk;             // as stored, while the block is not loaded
  std::string frozen;                 // why the block takes no changes
  bool deleted = false;               // the file is gone; the history stays
  std::map<std::string, UndoStacks> undo;  // by author (origin)
  // A change committed and stored but maybe not yet in the file: its version
  // and the hash of its text. Stored with the change, so that a start after a
  // crash tells a file that got the change (hash equal) from one that did not.
  struct Writing {
    std::string version;
    std::string hash;
  };
  std::optional<Writing> writing;
  // The synced version and disk state in memory are newer than the stored
  // ones (a change's write to the file records them here only; the next
  // store write, an eviction or the kernel's end stores them).
  bool meta_stale = false;
  uint64_t updates_since_snapshot = 0;
  std::atomic<uint64_t> last_used{0};  // the index's clock at the last use (LRU)
  bool known_in_store = false;  // looked up in the store already
};

struct Kernel::Impl {
  std::shared_ptr<fs::Filesystem> fs;
  std::string root;  // absolute, no trailing '/'
  KernelOptions options;
  std::shared_ptr<store::BlockStore> store;

  mutable std::mutex rules_mu;
  std::shared_ptr<const source::WorkspaceRules> rules;
  std::shared_ptr<const source::IgnoreRules> ignore;

  std::mutex index_mu;
  std::unordered_map<std::string, std::shared_ptr<FileEntry>> files;
  size_t files_at_last_evict_check = 0;  // guarded by index_mu
  size_t calls_since_evict_check = 0;    // guarded by index_mu
  std::atomic<uint64_t> clock{0};

  std::mutex decide_mu;  // one approve / reject at a time
  std::mutex approvals_mu;
  std::map<std::string, Approval> approvals;          // by id
  std::map<std::string, std::string> approval_rows;   // id -> store id

  // Copy-on-write list of the change listeners: a commit takes the current
  // list under listener_mu and calls it without the lock.
  std::mutex listener_mu;
  std::shared_ptr<const std::vector<std::pair<uint64_t, ChangeListener>>> listeners;
  uint64_t next_listener_id = 1;  // guarded by listener_mu
  uint64_t set_listener_id = 0;   // the one set_change_listener owns (0: none)
  // Calls every change listener (after a commit of `block_id`).
  void notify_listeners(const std::string& block_id, const std::string& version,
                        const std::string& origin);

  std::unique_ptr<source::Watcher> watcher;
  std::unique_ptr<Blocks> blocks;  // made last at open, gone first at close

  // ---- shell commands (shell_changes.cc)
  struct ShellRun {
    uint64_t id = 0;
    source::Attribution who;
    std::string undo_author;
  };
  mutable std::mutex shell_mu;
  std::vector<ShellRun> shell_runs;  // running commands, oldest first
  uint64_t next_shell_run = 1;
  std::vector<std::weak_ptr<DiskChangeLog>> disk_logs;
  ShellRunner shell_runner;  // guarded by shell_mu
  // approve() of an approval with op "shell": runs it through shell_runner.
  Status run_approved_shell(const Approval& approval);
  // Who a change found on disk is committed as now: the oldest running shell
  // command (with the author whose undo stack also gets it), else
  // source:disk with `what`, no undo author.
  ShellRun disk_author(std::string what) const;
  // Hands a handled watcher batch to the subscribed logs.
  void publish_disk_changes(const std::vector<source::FileChange>& changes);

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }
  std::shared_ptr<const source::WorkspaceRules> current_rules() const {
    std::lock_guard lock(rules_mu);
    return rules;
  }
  std::shared_ptr<const source::IgnoreRules> current_ignore() const {
    std::lock_guard lock(rules_mu);
    return ignore;
  }
  // Paths the kernel leaves alone: the ignore rules' and the filesystem's own
  // temporary files (a write's temp file renamed over its target).
  bool ignored(const std::string& path, bool is_dir) const;

  // ---- the index (kernel.cc)
  // The entry of `path`, created (and looked up in the store, unless `stored`
  // is its row already read) on first use.
  Result<std::shared_ptr<FileEntry>> entry(const std::string& path,
                                           const store::BlockInfo* stored = nullptr);
  std::shared_ptr<FileEntry> find_entry(const std::string& path);
  std::vector<std::shared_ptr<FileEntry>> entries_under(const std::string& dir);
  void forget_entry(const std::string& path);
  void rekey_entry(const std::string& from, const std::string& to);
  void notify(const FileEntry& e, const std::string& origin);
  // Gives the blocks under `from` the paths under `to` (history kept) and
  // syncs them with the files there. Takes e->mu.
  void rename_block(const std::shared_ptr<FileEntry>& e, const std::string& from,
                    const std::string& to);
  // The file operations once the rules allowed them (or a person approved).
  // apply_remove gives every text file it deletes a block first (so its
  // history and text are kept) and, with an `undo_author`, records the
  // delete as that author's undo step on each file it deleted.
  Status apply_remove(const std::string& path, bool recursive,
                      const std::string& undo_author = "");
  // Marks `e` (locked) deleted after its file went; with an `undo_author`,
  // records the delete on that author's undo stack. Stores it.
  void mark_removed(FileEntry& e, const std::string& undo_author);
  Status apply_move(const std::string& from, const std::string& to, bool overwrite);
  Status apply_copy(const std::string& from, const std::string& to, bool overwrite);
  void evict_if_needed();

  // ---- persistence (kernel.cc). Callers hold e.mu.
  Status ensure_loaded(FileEntry& e);
  // Stores what changed of the block since the last time (its new history
  // and its metadata) in one transaction.
  Status persist(FileEntry& e);
  Status persist_now(FileEntry& e);
  std::string metadata_of(const FileEntry& e) const;
  Status read_metadata(FileEntry& e, const std::string& metadata_json);

  // ---- the disk (disk_sync.cc). Callers hold e.mu.
  // Brings the block up to date with the file: creates it for a new text file,
  // reconciles a changed file, freezes it for a file that is no longer text,
  // marks it deleted when the file is gone. kFailedPrecondition for a path
  // that is a symlink, FIFO, socket or device.
  Status sync_from_disk(FileEntry& e);
  // Writes the block's text to the file atomically, records the disk state
  // and stores it.
  Status write_block_to_disk(FileEntry& e);
  // Writes `text`, which is the block's text, to the file atomically and
  // records the disk state in memory only (meta_stale).
  Status write_text(FileEntry& e, std::string_view text);
  // The file's metadata now (size -1 when absent); kFailedPrecondition for a
  // non-regular file (named in the message), kUnavailable for a stat error.
  Result<source::DiskState> stat_file(const std::string& path, bool* is_dir) const;
  // Text of the file, or the reason it is not text ("binary", "too large ...").
  struct FileText {
    std::optional<std::string> text;
    std::string bytes;
    std::string not_text;
  };
  Result<FileText> read_file(const std::string& path) const;
  void handle_changes(const std::vector<source::FileChange>& changes);
  void reload_configuration(const std::string& path);
  Status start_watcher();
  Status recover_and_reconcile_all();

  // ---- approvals (approvals.cc)
  Status load_approvals();
  Result<Approval> add_approval(Approval approval);
  Status save_approval(const Approval& approval);
  std::vector<std::string> pending_for(const std::string& path);

  // ---- undo bookkeeping (history.cc). Callers hold e.mu.
  void record_undo(FileEntry& e, const std::string& author, const source::ChangeResult& change,
                   bool from_undo_or_redo);
};

// A person's origin ("human:<name>": the CLI as its user, the web page, a
// live-sync editor). A person's own action is the decision that the
// `human` and `partner` levels, an escalate rule and a block's Human or
// Partner permission wait for, so it needs no approval; a denial still binds.
bool is_person(std::string_view origin);
// `decision` as it binds `who`: kNeedsApproval is kAllowed for a person.
doc::PermissionDecision decision_for(const source::Attribution& who,
                                     doc::PermissionDecision decision);
// The rules' decision `d` as it binds `who` (its decision through the above).
source::RuleDecision decision_for(const source::Attribution& who, source::RuleDecision d);

// The `before` of a file's undo step that deleted the file (its `after`: the
// block's version then). The deleter's undo writes the file back; redo
// deletes it again.
inline constexpr std::string_view kFileDeleteStep = "#delete";

// The rule's message for a denied or approval-bound operation.
std::string describe_decision(const source::RuleDecision& decision, std::string_view path,
                              source::FileOp op);
// What a file block may hold: UTF-8 without a NUL byte.
bool is_text(std::string_view bytes);

// A unified diff old -> new with the labels a/PATH and b/PATH.
std::string path_diff(std::string_view old_text, std::string_view new_text, std::string_view path);

}  // namespace weft::kernel

#endif  // WEFT_SRC_KERNEL_KERNEL_IMPL_H_
