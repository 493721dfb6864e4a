// Private: the state behind kernel::Blocks, shared by blocks*.cc
// (blocks.cc: the facade and its routing by kind; blocks_conversation.cc:
// conversation blocks, their index, store rows, batching and undo;
// blocks_memory.cc: memory blocks; blocks_text.cc: line edits, splices, reads
// and searches on a text; blocks_names.cc: enums and ids).
#ifndef WEFT_SRC_KERNEL_BLOCKS_IMPL_H_
#define WEFT_SRC_KERNEL_BLOCKS_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kernel/kernel_impl.h"
#include "weft/kernel/blocks.h"
#include "weft/store/memory_cache.h"

namespace weft::kernel {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// One byte-range replacement of a text.
struct TextSplice {
  size_t offset = 0;
  size_t erase = 0;
  std::string insert;
};

// ---- names (blocks_names.cc)
Status check_cell(std::string_view cell);
Status check_memory_label(std::string_view label);

// ---- pure text helpers (blocks_text.cc)
// Where each line of `text` starts (LineIndex's counting: "" has no line, a
// final line break starts no line).
std::vector<size_t> line_starts(std::string_view text);
// Adds the starts of lines that `appended` (now at text's end) begins.
void extend_line_starts(std::string_view text, size_t appended_at, std::vector<size_t>& starts);
// Checks text a caller gives: valid UTF-8, no NUL byte, at most `limit` bytes.
Status check_block_text(std::string_view text, std::string_view what, size_t limit);
// The splices an edit batch makes on `text` (original numbering), ordered by
// descending offset so each can be applied in turn. Errors as Blocks::edit.
Result<std::vector<TextSplice>> plan_line_edits(std::string_view text,
                                                const std::vector<size_t>& starts,
                                                const std::vector<LineEdit>& ops,
                                                std::string_view block_id);
// Checks a byte splice against `text` (bounds, character boundaries, insert).
Result<TextSplice> plan_splice(std::string_view text, uint64_t offset, uint64_t delete_count,
                               std::string_view insert, std::string_view block_id);
// Applies splices ordered by descending offset.
std::string apply_splices(std::string_view text, const std::vector<TextSplice>& splices);
// The line starts of apply_splices(text, splices) from `starts` (text's):
// unchanged lines are shifted, only the inserted text is scanned.
// `new_text` is the result of the splices.
void splice_line_starts(std::string_view new_text, const std::vector<TextSplice>& splices,
                        std::vector<size_t>& starts);
// True when every byte is ASCII (byte offsets are then character offsets).
bool all_ascii(std::string_view text);
// The lines of `text` as read() shows them; fills line_count and shown.
Status render_lines(std::string_view text, const std::vector<size_t>& starts,
                    const ReadOptions& options, BlockContent& out);
Result<BlockSearch> search_text(std::string_view text, const std::vector<size_t>& starts,
                                std::string_view query,
                                const SearchOptions& options);
// First kSummaryChars characters (line breaks shown as " ⏎ "), then "… (N lines)".
std::string summarize(std::string_view text, size_t line_count);
size_t count_lines(std::string_view text);

// A conversation block.
struct ConvEntry {
  std::mutex mu;  // held for every read or change of the fields below
  // Identity (immutable after creation).
  std::string id;
  std::string cell, agent;
  uint64_t seq = 0;
  uint64_t order = 0;  // creation order in this kernel's database
  std::optional<std::string> parent;
  BlockRole role = BlockRole::kUser;
  BlockKind kind = BlockKind::kText;
  std::string store_id;
  // Attributes.
  BlockStatus status = BlockStatus::kPending;
  Json meta = Json::object();
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  std::string version;  // committed version (as stored when not loaded)
  std::string summary;
  size_t line_count = 0;
  bool wrote_since_create = false;  // pending -> running happens once
  // The tombstone (Blocks::remove). `deleted` is also read without mu (a
  // child's restore checks its parent; list() filters), hence atomic.
  std::atomic<bool> deleted{false};
  std::string deleted_by;    // origin
  int64_t deleted_at = 0;    // Unix seconds
  std::string deleted_with;  // the block whose delete took this one (itself, or an ancestor)
  // The doc, loaded on first content access, with a mirror of its text and
  // where each line starts.
  std::optional<source::FileBlock> block;
  std::string text;
  std::vector<size_t> starts;  // byte offset of each line's start
  bool ascii = false;          // text is all ASCII: byte offsets are character offsets
  crdt::VersionVector persisted;
  uint64_t updates_since_snapshot = 0;
  std::map<std::string, UndoStacks> undo;  // by author
  std::string open_unit_author;            // whose append unit is still growing
  // The pending append batch.
  std::string pending;
  source::Attribution pending_who;
  Clock::time_point last_append{};
  bool dirty() const { return !pending.empty(); }
};

struct Blocks::Impl {
  Kernel* kernel = nullptr;
  Kernel::Impl* k = nullptr;
  std::unique_ptr<store::MemoryCache> memory;

  // Taken before any block's mu by what changes the tree's live shape
  // (remove, restore through undo/redo, a create under a conversation parent).
  std::mutex tree_mu;
  std::mutex index_mu;
  std::unordered_map<std::string, std::shared_ptr<ConvEntry>> by_id;
  std::unordered_map<std::string, std::vector<std::shared_ptr<ConvEntry>>> children;
  std::vector<std::shared_ptr<ConvEntry>> roots;
  std::map<std::pair<std::string, std::string>, uint64_t> last_seq;  // (cell, agent)
  uint64_t next_order = 1;

  // Blocks with a pending batch, for the flusher.
  std::mutex flush_mu;
  std::condition_variable flush_cv;
  std::set<std::shared_ptr<ConvEntry>> pending_set;
  bool stopping = false;
  std::thread flusher;

  ~Impl();
  Status load_index();
  void start_flusher();
  void stop_flusher();

  std::shared_ptr<ConvEntry> find(const std::string& id);
  Result<std::shared_ptr<ConvEntry>> conv(const std::string& id);
  bool exists(const std::string& id);

  // ---- conversation blocks (blocks_conversation.cc). Callers hold e.mu.
  Status ensure_loaded(ConvEntry& e);
  // Commits the pending batch (a no-op without one).
  Status flush_locked(ConvEntry& e);
  // Commits `splices` (descending offsets) as one change by `who`, stores it
  // and records the undo step. `append_unit`: extend the author's open
  // append unit when it is still the newest change.
  Result<BlockWrite> commit_splices(ConvEntry& e, const std::vector<TextSplice>& splices,
                                    const source::Attribution& who, bool append_unit);
  // Commits a whole new text (rollback, undo, redo) through FileBlock.
  Status after_change(ConvEntry& e, const source::ChangeResult& change,
                      const source::Attribution& who, bool undo_step, bool from_undo_or_redo);
  Status persist(ConvEntry& e);
  std::string metadata_json(const ConvEntry& e) const;
  void reset_mirror(ConvEntry& e);
  void notify(const std::string& id, const std::string& version, const std::string& origin);
  BlockWrite write_of(const ConvEntry& e) const;
  // The block's permission for `op`; kFailedPrecondition for a deleted block.
  // With `who`, a person's write needs no approval (is_person).
  Status check_write(const ConvEntry& e, doc::MemoryOp op,
                     const source::Attribution* who = nullptr) const;
  // Whether `who` may delete `e` (Blocks::remove's rule).
  Status check_remove(const ConvEntry& e, const source::Attribution& who) const;
  // Writes the block's row metadata (status, tombstone, undo log) to the store.
  Status store_meta(ConvEntry& e);

  Result<BlockWrite> conv_create(const source::Attribution& who, const CreateBlock& request);
  Result<BlockWrite> conv_append(const source::Attribution& who, ConvEntry& e,
                                 std::string_view text);
  Result<BlockWrite> conv_undo(const source::Attribution& who, ConvEntry& e, bool redo);
  Result<BlockWrite> conv_rollback(const source::Attribution& who, ConvEntry& e,
                                   std::string_view version);
  // Deletes `e` (held locked by the caller) and, recursive, its live
  // descendants; `undo_step` records the delete as who's undo unit (redo
  // passes false and keeps its stacks itself).
  Result<BlockRemoval> conv_remove(const source::Attribution& who, ConvEntry& e, bool recursive,
                                   bool undo_step);
  // Takes the tombstone off `e` (held locked) and the descendants deleted
  // with it. kFailedPrecondition under a deleted parent.
  Status conv_restore(const source::Attribution& who, ConvEntry& e);
  // `e`'s descendants, parents before children (index_mu taken inside).
  std::vector<std::shared_ptr<ConvEntry>> descendants_of(const std::string& id);

  // ---- memory blocks (blocks_memory.cc)
  Result<std::shared_ptr<doc::StructuredDocument>> memory_doc(const BlockId& id);
  Result<BlockWrite> memory_saved(doc::StructuredDocument& d, const BlockId& id,
                                  const source::Attribution& who);
  // Makes a Text memory block's text `transform(old)`. Errors: Map-like
  // schemas are refused pointing to memory_update.
  Result<BlockWrite> memory_text_write(const BlockId& id, const source::Attribution& who,
                                       const std::function<Result<std::string>(std::string)>& f,
                                       bool is_append, std::string_view appended);
  Result<std::string> memory_text(doc::StructuredDocument& d) const;
  Result<BlockContent> memory_read_block(const BlockId& id, const ReadOptions& options);
  Result<std::vector<source::FileHistoryEntry>> memory_history(const BlockId& id, size_t limit);
  Result<std::string> memory_text_at(const BlockId& id, std::string_view version);
};

// "<origin>\n<what>" commit options, as FileBlock writes them.
crdt::CommitOptions commit_options_of(const source::Attribution& who);

}  // namespace weft::kernel

#endif  // WEFT_SRC_KERNEL_BLOCKS_IMPL_H_
