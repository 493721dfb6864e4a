// Blocks: the kernel's block model (seed 003, issue 25). Every piece of
// content the kernel holds is a block with one set of operations:
//
//   conversation blocks  `<cell>/<agent>/<seq>`   messages, thinking, tool calls and
//                                                 results; a DAG through parent_id
//   file blocks          `file:<path>`            the workspace's text files (kernel.h)
//   memory blocks        `memory:<agent>/<label>` an agent's structured memory (seed 002)
//
// Conversation blocks live in the kernel's database (kernel.db, store owner
// kConversationOwner, label = the block id); their doc is a CRDT whose root
// Text `content` holds the text, with the same versions, history, diff and
// rollback as file blocks. They are never evicted from the store. At open the
// kernel reads every conversation block's row into an in-memory index (id ->
// info, parent -> children), so list() and lookups never touch SQLite; a
// block's doc is loaded on its first content access and stays in memory
// while it has unstored changes (clean docs leave memory past a budget).
//
// Ids. A conversation block is (cell, agent, seq): the cell is the caller's
// (CreateBlock::cell, default "main"), the agent is the caller's name
// (agent_name_of(who.origin)), seq counts from 1 per (cell, agent) and is
// never reused (the next seq comes from the highest one stored, so it
// survives a restart). Cells and agent names are 1..64 bytes of
// [A-Za-z0-9._:-]. Memory labels are 1..128 bytes of [A-Za-z0-9._/-].
//
// Append batching (the streaming hot path). append() adds text to a per-block
// buffer, which is committed (one CRDT commit, one store transaction, one
// change-listener call) when the buffered text holds a line break, reaches
// kAppendBatchBytes bytes, or after kAppendSilenceMs without another append
// to that block (a background thread does that one). Every other operation on
// a block (read, search, list, history, diff, edit, splice, status, undo...)
// commits that block's buffer first, so a reader never misses an append.
// An append by another author commits the buffer first. File blocks are not
// batched (each append is one change to the file, through the rules).
//
// Undo units. undo()/redo() act on the caller's (who.origin's) own changes to
// the block: each content-changing call (create with content, edit, splice,
// apply_patch, rollback, and undo/redo themselves for the other stack) is one
// unit; consecutive appends by one author form ONE unit as long as nothing
// else changes the block in between (any other write, by anyone, or a status
// change, closes the unit). Undo reverts that unit on top of the current text
// (later changes by others stay). Status changes are not undone. The undo log
// (the newest kMaxStoredUndoSteps steps per author) is stored with the block,
// so undo works after a restart.
//
// Line edits (edit()): 0-based lines, exclusive ends, every op addressing the
// lines as they were BEFORE the batch. Lines end at "\n" (text/line_index.h).
// Ops must not overlap: two ranges sharing a line, or an insert strictly
// inside a deleted/replaced range, are refused (kInvalidArgument naming both
// ops). An insert at a range's start goes before the range's replacement; at
// its end, after. Several inserts at one line keep their batch order. Content
// is whole lines: a missing final line break is added, unless the content
// goes at the very end of a block that has no final line break.
// expected_text (replace only) must equal the current lines [start, end)
// with their line breaks (a missing final line break in expected_text is
// tolerated). All or nothing: any failure leaves the block byte-identical.
//
// Permissions. File blocks: the rules of weft.toml, as for the fs_* tools (a
// change that needs a person's approval returns BlockWrite::pending_approval).
// Memory blocks: the block's doc::MemoryPermission and read-only fields and
// sections (doc/doc_errors.h). Conversation blocks: their permission
// (CreateBlock::permission, kReadWrite unless created otherwise; fixed at
// creation) binds every later write, its creator's too: a read_only block
// refuses every write with kPermissionDenied naming it, an append block
// refuses all but append(), partner and human blocks answer
// kFailedPrecondition "needs approval: ...". A person's own call (origin
// "human:<name>") is the approval those wait for: for persons, file blocks'
// `human` and `partner` levels and escalate rules, and the Human and Partner
// permissions of conversation and Text memory blocks, allow the change.
//
// Deleting (remove()). A conversation block is never erased: it gets a
// tombstone (who deleted it, when), stored with its row, and keeps its
// text, history and undo log. A deleted block still answers read(),
// search(), history() and diff() (BlockContent::deleted says so); list()
// and search_all() leave it out (ListFilter::include_deleted lists it);
// every write to it, and a new child under it, is refused with
// kFailedPrecondition naming who deleted it. A block with children that are
// not deleted is refused unless `recursive`, which deletes the whole
// subtree, all or nothing. Who may delete: the block's creator (the agent
// of its id) and persons (origin "human:...") when its permission lets them
// rewrite it (read_write, admin; partner and human need approval); other
// agents only when it is admin (doc::MemoryOp::kDelete). The delete is the
// deleter's undo unit on the block: their undo() restores it (and the
// descendants deleted with it), redo() deletes it again; no one else's
// undo applies while it is deleted. A block is restored only under a
// parent that is not deleted. Memory blocks are deleted in the store
// (doc::MemoryOp::kDelete: admin, or any person; the label becomes free;
// no undo). File blocks delete their file through the rules (Kernel::remove;
// the block keeps its history; the deleter's undo() writes the file back,
// redo() deletes it again, and rollback() writes any version back).
//
// Limits (kInvalidArgument / kResourceExhausted beyond them, saying so):
// content given to one call kMaxContentBytes, one append kMaxAppendBytes, a
// conversation block's text kMaxBlockTextBytes, metadata kMaxMetadataBytes
// (a JSON object), ops in one edit kMaxEditOps, list() results
// ListFilter::limit (at most kMaxListLimit), search matches kMaxSearchMatches.
// Every text must be valid UTF-8 without NUL bytes.
//
// Thread safety: every method is safe from any thread. One mutex guards the
// index (held for lookups and list); each conversation block has its own
// mutex held for the whole of an operation on it. File and memory blocks
// follow Kernel's and MemoryCache's rules.
#ifndef WEFT_KERNEL_BLOCKS_H_
#define WEFT_KERNEL_BLOCKS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/doc/permission.h"
#include "weft/source/file_block.h"

namespace weft::kernel {

class Kernel;

// ---------------------------------------------------------------- enums

enum class BlockRole : uint8_t { kUser, kModel, kSystem, kTool };
enum class BlockKind : uint8_t { kText, kThinking, kToolCall, kToolResult, kFile, kMemory };
enum class BlockStatus : uint8_t { kPending, kRunning, kDone, kError };

// Lower-case names as the tools spell them: "user" "model" "system" "tool";
// "text" "thinking" "tool_call" "tool_result" "file" "memory"; "pending"
// "running" "done" "error". parse_* errors: kInvalidArgument listing the
// valid names.
std::string_view block_role_name(BlockRole role);
std::string_view block_kind_name(BlockKind kind);
std::string_view block_status_name(BlockStatus status);
Result<BlockRole> parse_block_role(std::string_view name);
Result<BlockKind> parse_block_kind(std::string_view name);
Result<BlockStatus> parse_block_status(std::string_view name);

// ---------------------------------------------------------------- ids and limits

inline constexpr std::string_view kMemoryBlockPrefix = "memory:";
inline constexpr std::string_view kDefaultCell = "main";
// The store owner of conversation blocks ('#' is never in an agent name).
inline constexpr std::string_view kConversationOwner = "#conversation";

inline constexpr size_t kAppendBatchBytes = 50;
inline constexpr int kAppendSilenceMs = 100;
inline constexpr size_t kMaxContentBytes = 4u << 20;
inline constexpr size_t kMaxAppendBytes = 64u << 10;
inline constexpr size_t kMaxBlockTextBytes = 16u << 20;
inline constexpr size_t kMaxMetadataBytes = 16u << 10;
inline constexpr size_t kMaxEditOps = 1000;
inline constexpr size_t kMaxListLimit = 10000;
inline constexpr size_t kMaxSearchMatches = 1000;
inline constexpr size_t kMaxSearchContextLines = 50;
inline constexpr size_t kMaxNameBytes = 64;
inline constexpr size_t kMaxLabelBytes = 128;
inline constexpr size_t kMaxStoredUndoSteps = 32;
// Characters of a block's text shown as its list() summary.
inline constexpr size_t kSummaryChars = 80;

// What a block id names.
struct BlockId {
  enum class Type : uint8_t { kConversation, kFile, kMemory };
  Type type = Type::kConversation;
  std::string cell, agent;  // conversation: cell, agent; memory: agent
  uint64_t seq = 0;         // conversation
  std::string path;         // file: normalised root-relative path
  std::string label;        // memory
};
// Parses and validates an id. Errors: kInvalidArgument saying which form is
// expected ("<cell>/<agent>/<seq>", "file:<path>", "memory:<agent>/<label>").
Result<BlockId> parse_block_id(std::string_view id);
std::string conversation_block_id(std::string_view cell, std::string_view agent, uint64_t seq);
std::string memory_block_id(std::string_view agent, std::string_view label);
// The caller's agent name: who.origin without "agent:" ("agent:claude" ->
// "claude"), other origins whole ("human:amy"); bytes outside [A-Za-z0-9._:-]
// become '-', cut to kMaxNameBytes; "" -> "anonymous".
std::string agent_name_of(std::string_view origin);

// ---------------------------------------------------------------- requests and results

struct CreateBlock {
  std::optional<std::string> parent_id;  // any existing block (conversation, file, memory)
  BlockRole role = BlockRole::kUser;
  BlockKind kind = BlockKind::kText;
  std::string content;  // initial text ("" : none)
  // A JSON object: "path", "language", "tool_name" and free keys. For kind
  // kFile, "path" names the file to create (it must not exist).
  nlohmann::json metadata = nlohmann::json::object();
  std::string cell = std::string(kDefaultCell);
  // What later writes may do (see Permissions above); ignored for kind kFile
  // (the rules of weft.toml decide).
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
};
// kind kMemory is created with memory_create() instead.

// A block permission by name: doc::parse_memory_permission's names and
// spellings plus "append_only" (the seeds' word for kAppend).
Result<doc::MemoryPermission> parse_block_permission(std::string_view name);

// What a write did.
struct BlockWrite {
  std::string block_id;
  std::string version;           // after the write (before it when pending/unchanged)
  bool changed = false;          // something was committed
  std::string pending_approval;  // file blocks: the approval a person must give first
  std::string rule;              // the rule that asked for approval
  size_t buffered_bytes = 0;     // append: bytes waiting in the batch (0: committed)
  BlockStatus status = BlockStatus::kPending;  // the block's status after the write
};

// One line edit (see the file comment for the rules).
struct LineEdit {
  enum class Op : uint8_t { kInsert, kDelete, kReplace };
  Op op = Op::kInsert;
  size_t line = 0;                           // insert: before this line (line_count: at the end)
  size_t start_line = 0, end_line = 0;       // delete, replace: [start, end)
  std::string content;                       // insert, replace
  std::optional<std::string> expected_text;  // replace: compare-and-set guard

  static LineEdit insert(size_t line, std::string content);
  static LineEdit erase(size_t start, size_t end);
  static LineEdit replace(size_t start, size_t end, std::string content,
                          std::optional<std::string> expected = std::nullopt);
};
std::string_view line_edit_op_name(LineEdit::Op op);  // "insert" "delete" "replace"
Result<LineEdit::Op> parse_line_edit_op(std::string_view name);

struct LineRange {
  size_t start = 0;
  size_t end = 0;  // exclusive; past line_count it is clamped
};

struct ReadOptions {
  bool line_numbers = true;  // prefix each line with its 0-based number and a tab
  std::optional<LineRange> range;
};

struct BlockContent {
  std::string block_id;
  std::optional<std::string> parent_id;
  BlockRole role = BlockRole::kUser;
  BlockKind kind = BlockKind::kText;
  BlockStatus status = BlockStatus::kPending;
  std::string content;  // the lines asked for (numbered when asked)
  nlohmann::json metadata = nlohmann::json::object();  // includes "path" for files
  std::string version;
  size_t line_count = 0;  // of the whole block
  LineRange shown;        // the lines `content` holds
  bool dirty = false;
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  bool deleted = false;     // a conversation block's tombstone (remove())
  std::string deleted_by;   // the origin that deleted it
  int64_t deleted_at = 0;   // when (Unix seconds)
};

struct SearchOptions {
  size_t context_lines = 2;  // at most kMaxSearchContextLines
  size_t max_matches = 20;   // 1..kMaxSearchMatches
};
struct BlockMatch {
  size_t line = 0;         // 0-based line of the match
  std::string content;     // that line with context_lines before and after
  size_t first_line = 0;   // the line `content` starts with
  size_t match_start = 0;  // byte column of the match in its line
  size_t match_end = 0;    // exclusive (the match's end when it spans lines: its line's end)
};
struct BlockSearch {
  std::vector<BlockMatch> matches;
  bool literal = false;  // the query was taken literally (not a valid RE2 regex)
  std::string note;      // why it was taken literally
  bool truncated = false;  // more matches than max_matches
};

struct ListFilter {
  std::optional<std::string> parent_id;  // children of this block (else roots)
  std::optional<BlockKind> kind;
  std::optional<BlockStatus> status;
  std::optional<std::string> path_prefix;  // file blocks under this path (files only)
  size_t depth = 1;                        // 1: direct children / roots only
  size_t limit = 1000;                     // 1..kMaxListLimit
  bool include_deleted = false;            // list deleted conversation blocks too
};
struct BlockSummary {
  std::string block_id;
  std::optional<std::string> parent_id;
  BlockRole role = BlockRole::kUser;
  BlockKind kind = BlockKind::kText;
  BlockStatus status = BlockStatus::kPending;
  std::string path;     // file blocks
  std::string summary;  // the first kSummaryChars characters, then "… (N lines)"
  std::string version;
  bool dirty = false;   // changes not yet stored (conversation), not yet on disk (file)
  size_t depth = 1;     // distance from the listed parent (roots: 1)
  bool deleted = false;  // listed with include_deleted
};
struct BlockListing {
  std::vector<BlockSummary> blocks;  // conversation blocks by id creation order
  bool truncated = false;            // more matched than limit
};

// What remove() did.
struct BlockRemoval {
  std::string block_id;
  // The blocks deleted: the block, then (recursive) its descendants, parents
  // before children. Empty when it was deleted already or waits for approval.
  std::vector<std::string> removed;
  bool changed = false;
  std::string version;           // the block's version (a delete keeps the text)
  std::string pending_approval;  // file blocks: the approval a person must give first
  std::string rule;              // the rule that asked for approval
};

struct PatchResult {
  bool success = false;
  std::vector<std::string> errors;  // per failing hunk
  std::string version;              // when applied
  std::string pending_approval;     // file blocks
  std::string diff;                 // dry run: unified diff of what it would do
};

// ---------------------------------------------------------------- search across blocks

// kernel_search: one query over conversation blocks, the caller's memory
// blocks and the workspace's text files (every file the fs layer's grep
// reaches under the ignore rules, with a block or not; a file block with
// changes not yet on disk is searched in its block text instead).
struct KernelSearchRequest {
  std::string query;             // RE2, or literal when not a valid regex
  std::vector<BlockKind> kinds;  // empty: every kind
  // Files under this root-relative path only; with it, conversation and
  // memory blocks are searched only when `kinds` names them.
  std::optional<std::string> path_prefix;
  size_t context_lines = 0;          // at most kMaxSearchContextLines
  size_t max_matches_per_block = 5;  // 1..kMaxSearchMatches
  size_t max_blocks = 50;            // 1..kMaxKernelSearchBlocks
  const std::atomic<bool>* cancel = nullptr;  // polled; kCancelled once it reads true
};
inline constexpr size_t kMaxKernelSearchBlocks = 1000;
struct KernelSearchHit {
  std::string block_id;  // "file:<path>" for files, with a block or not
  BlockKind kind = BlockKind::kText;
  BlockRole role = BlockRole::kUser;
  std::string path;      // files
  std::vector<BlockMatch> matches;
  bool truncated = false;  // more than max_matches_per_block in this block
};
struct KernelSearchResult {
  std::vector<KernelSearchHit> hits;  // memory, conversation (creation order), then files
  bool literal = false;
  std::string note;        // why the query was taken literally
  bool truncated = false;  // more blocks matched than max_blocks (or the file scan hit its cap)
  size_t blocks_searched = 0;  // conversation and memory blocks
};

// ---------------------------------------------------------------- memory blocks

struct MemoryCreate {
  std::string label;
  std::string schema_json = R"({"type":"text"})";  // as doc::schema_from_json reads it
  std::string description{};
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  uint64_t char_limit = 0;                    // 0: unlimited
  std::optional<std::string> initial_text{};  // Text schemas only
};
struct MemoryContent {
  std::string block_id;
  std::string label;
  std::string rendered;     // StructuredDocument::render(): read-only marks included
  std::string schema_json;
  std::string description;
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  std::string version;
};

// ---------------------------------------------------------------- live sync

// What a person joining a block's live sync gets (Kernel::sync_join).
struct SyncJoin {
  bool writable = false;  // whether the person may change the block
  std::string rule;       // why not, when not writable
  std::string updates;    // Loro FastUpdates the client lacks ("" : none)
  std::string version;    // Loro VersionVector.encode() of the block's history
};
// What Kernel::sync_apply_tracked did: whether the update was new, and the
// block's history version (Loro VersionVector.encode()) just before and just
// after its import, taken atomically with it ("" when not known: a block
// kind that does not report them). A relay that has sent everything up to
// `version_before` has, with the update itself, sent up to `version_after`.
struct SyncApplied {
  bool changed = false;
  // Nothing was applied because the update depends on changes the block
  // does not have yet (sync_apply's kInvalidArgument); the caller may retry
  // it once the block has more.
  bool waiting = false;
  std::string version_before;
  std::string version_after;
};
// Updates since a version, and the version now (Kernel::sync_export_since).
struct SyncDelta {
  std::string updates;  // Loro FastUpdates ("" : none)
  std::string version;  // Loro VersionVector.encode()
};

// ---------------------------------------------------------------- the facade

class Blocks {
 public:
  // ---- lifecycle
  // A conversation block (or, kind kFile, a new file at metadata.path through
  // the rules). Status starts kPending; the first write after it makes the
  // block kRunning. Errors: kInvalidArgument (cell, kind kMemory, metadata,
  // content), kNotFound (parent), kAlreadyExists (file exists).
  Result<BlockWrite> create(const source::Attribution& who, const CreateBlock& request);
  // Deletes a block (see Deleting in the file comment). Deleting a block
  // that is deleted already changes nothing. Errors: kNotFound,
  // kFailedPrecondition (children without `recursive`, listed; needs
  // approval), kPermissionDenied naming the block and its permission.
  Result<BlockRemoval> remove(const source::Attribution& who, std::string_view block_id,
                              bool recursive = false);
  // Sets a conversation block's status (any transition). File and memory
  // blocks have no status (always done): kFailedPrecondition.
  Result<BlockWrite> set_status(const source::Attribution& who, std::string_view block_id,
                                BlockStatus status);

  // ---- content writes
  // Appends `text` (batched; see the file comment). The append is accepted
  // even while buffered: BlockWrite::buffered_bytes > 0 and version is the
  // last committed one.
  Result<BlockWrite> append(const source::Attribution& who, std::string_view block_id,
                            std::string_view text);
  // Commits a block's pending append batch now (a no-op without one).
  Result<BlockWrite> flush(std::string_view block_id);
  // Commits every pending batch (also done by the kernel's destructor).
  void flush_all();
  // Errors: kInvalidArgument (op fields, overlap, out of range: the message
  // shows the block's line count), kFailedPrecondition (expected_text
  // mismatch: the message shows the current text of those lines).
  Result<BlockWrite> edit(const source::Attribution& who, std::string_view block_id,
                          const std::vector<LineEdit>& ops);
  // Byte offsets. Errors: kOutOfRange past the end; kInvalidArgument for an
  // offset or end inside a UTF-8 character (the message gives the nearest
  // character boundaries).
  Result<BlockWrite> splice(const source::Attribution& who, std::string_view block_id,
                            uint64_t offset, uint64_t delete_count, std::string_view insert);
  // A unified diff (text/patch.h) against the block's text. A patch that does
  // not apply is not an error: success=false with errors.
  Result<PatchResult> apply_patch(const source::Attribution& who, std::string_view block_id,
                                  std::string_view patch, bool dry_run);

  // ---- reading
  Result<BlockContent> read(std::string_view block_id, const ReadOptions& options = {});
  // RE2 regex, or literal when the query is not a valid regex (literal=true).
  Result<BlockSearch> search(std::string_view block_id, std::string_view query,
                             const SearchOptions& options = {});
  // Conversation blocks (children of parent_id, or roots), the caller's
  // memory blocks (kind memory, or no kind with no parent), file blocks
  // (kind file or path_prefix). Errors: kNotFound (parent), kInvalidArgument.
  Result<BlockListing> list(const source::Attribution& who, const ListFilter& filter);

  // Searches across blocks and files (KernelSearchRequest). Errors:
  // kInvalidArgument (query, limits), kCancelled, fs errors for path_prefix.
  Result<KernelSearchResult> search_all(const source::Attribution& who,
                                        const KernelSearchRequest& request);

  // ---- history
  // Changes, newest first (limit 0: all), as Kernel::history gives them.
  Result<std::vector<source::FileHistoryEntry>> history(std::string_view block_id,
                                                        size_t limit = 0);
  // Unified diff between two versions (from: the one before `to`; to: now).
  Result<std::string> diff(std::string_view block_id, std::optional<std::string> from,
                           std::optional<std::string> to);
  Result<BlockWrite> rollback(const source::Attribution& who, std::string_view block_id,
                              std::string_view version);
  // kFailedPrecondition "nothing to undo" when the caller has no change left.
  Result<BlockWrite> undo(const source::Attribution& who, std::string_view block_id);
  Result<BlockWrite> redo(const source::Attribution& who, std::string_view block_id);

  // ---- memory blocks (the caller's own: agent_name_of(who.origin) + label)
  Result<BlockWrite> memory_create(const source::Attribution& who, const MemoryCreate& request);
  Result<MemoryContent> memory_read(const source::Attribution& who, std::string_view label);
  // `field` names a Map field (of the schema, or of `section` in a
  // Composite); omit it for a Text schema or section: update replaces the
  // text, append adds to it. append on a List / Log target pushes `value`.
  Result<BlockWrite> memory_update(const source::Attribution& who, std::string_view label,
                                   std::optional<std::string> field, const nlohmann::json& value,
                                   std::optional<std::string> section = std::nullopt);
  Result<BlockWrite> memory_append(const source::Attribution& who, std::string_view label,
                                   std::optional<std::string> field, const nlohmann::json& item,
                                   std::optional<std::string> section = std::nullopt);

  // ---- live sync (block_sync.cc; Kernel::sync_* route conversation and
  // memory blocks here). Same contracts as Kernel::sync_join / sync_apply /
  // sync_export_since.
  Result<SyncJoin> sync_join(std::string_view block_id, std::string_view person,
                                     std::string_view client_vv);
  Result<bool> sync_apply(std::string_view block_id, std::string_view update,
                          const source::Attribution& who);
  Result<SyncDelta> sync_export_since(std::string_view block_id, std::string_view since);

  struct Impl;
  explicit Blocks(std::unique_ptr<Impl> impl);
  ~Blocks();
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::kernel

#endif  // WEFT_KERNEL_BLOCKS_H_
