// BlockStore: the durable SQLite home of blocks. One row per block (owner
// agent, label, description, type, schema JSON, permission, char limit,
// metadata JSON, timestamps, deleted flag), an append-only table of update
// blobs per block, one compaction snapshot per block, and the last persisted
// version per block. Update and snapshot blobs are opaque bytes here (the
// CRDT encodes them); each is stored with a checksum so corruption is found
// on load and reported with the block's label, never crashes the store.
//
// Durability: WAL journal. Durability::kNormal (synchronous=NORMAL, the
// default) survives a crash or kill -9 of the process at any point: every
// call that returned has its data on disk once the OS writes it back; a power
// cut may roll back the last few commits but never corrupts the database.
// Durability::kFull (synchronous=FULL) also keeps every returned commit across
// a power cut, at the cost of an fsync per commit.
//
// Several processes may open one database: writers take the lock with BEGIN
// IMMEDIATE and wait up to busy_timeout_ms (then kUnavailable), readers never
// block writers (WAL).
//
// Thread safety: a BlockStore is safe to use from any number of threads. It
// owns one SQLite connection; every public method holds an internal mutex for
// its whole duration (including its transaction), so calls are serialised.
#ifndef WEFT_STORE_BLOCK_STORE_H_
#define WEFT_STORE_BLOCK_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/doc/permission.h"

namespace weft::store {

// How a block is used (persisted by name; never rename).
enum class BlockType : uint8_t {
  kCore,      // always in the agent's context
  kWorking,   // in context while relevant (files, scratch)
  kArchival,  // searched, not shown
  kLog,       // history / activity log
};
std::string_view block_type_name(BlockType type);  // "core", "working", "archival", "log"
// Errors: kInvalidArgument listing the valid names.
Result<BlockType> parse_block_type(std::string_view name);

enum class Durability : uint8_t { kNormal, kFull };

struct StoreOptions {
  Durability durability = Durability::kNormal;
  int busy_timeout_ms = 10000;
  bool read_only = false;
  // SQLite VFS name (tests use a fault-injecting one); empty: the default.
  std::string vfs;
};

// Everything about a block except its content.
struct BlockInfo {
  std::string id;  // "blk_" + 16 hex digits, unique in the database
  std::string agent_id;
  std::string label;
  std::string description;
  BlockType block_type = BlockType::kWorking;
  std::string schema_json = R"({"type":"text"})";
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  uint64_t char_limit = 0;  // 0: unlimited
  std::string metadata_json = "{}";
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  bool deleted = false;
  int64_t deleted_at_ms = 0;      // when deleted
  uint64_t last_seq = 0;          // seq of the newest update (0: none)
  std::string persisted_version;  // opaque: the version the stored data reaches
};

// What create_block needs (id and times are assigned).
struct NewBlock {
  std::string agent_id;
  std::string label;
  std::string description;
  BlockType block_type = BlockType::kWorking;
  std::string schema_json = R"({"type":"text"})";
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  uint64_t char_limit = 0;
  std::string metadata_json = "{}";
  // Optional initial content (stored as the first update, seq 1).
  std::string initial_update;
  std::string initial_version;
};

// Changes to a block's label/description/permission/limit/metadata (unset: keep).
struct BlockPatch {
  std::optional<std::string> label;  // kAlreadyExists when the owner has a live block so named
  std::optional<std::string> description;
  std::optional<doc::MemoryPermission> permission;
  std::optional<uint64_t> char_limit;
  std::optional<std::string> metadata_json;
  std::optional<std::string> schema_json;
};

struct UpdateRecord {
  uint64_t seq = 0;
  std::string data;
  int64_t created_at_ms = 0;
};

struct SnapshotRecord {
  uint64_t upto_seq = 0;  // the snapshot includes every update with seq <= this
  std::string data;
  std::string version;
  int64_t created_at_ms = 0;
};

// A block's stored content: the snapshot (if compacted) and the updates after
// it, oldest first. Corrupt updates are left out and described in `problems`
// (each message names the block's label and the seq).
struct LoadedBlock {
  BlockInfo info;
  std::optional<SnapshotRecord> snapshot;
  std::vector<UpdateRecord> updates;
  std::vector<std::string> problems;
};

// One row of a block's history (no blob).
struct HistoryEntry {
  enum class Kind : uint8_t { kSnapshot, kUpdate };
  Kind kind = Kind::kUpdate;
  uint64_t seq = 0;  // the update's seq, or the snapshot's upto_seq
  size_t bytes = 0;
  int64_t created_at_ms = 0;
};

struct BlockFilter {
  std::optional<std::string> agent_id;
  std::optional<std::string> label_prefix;
  std::optional<BlockType> block_type;
  bool include_deleted = false;
  size_t limit = 0;  // 0: all
};

// list_blocks result: blocks ordered by (agent_id, label, created); rows that
// cannot be read are skipped and described in `problems`.
struct BlockList {
  std::vector<BlockInfo> blocks;
  std::vector<std::string> problems;
};

struct StoreStats {
  uint64_t blocks = 0;
  uint64_t updates = 0;
  uint64_t snapshots = 0;
  uint64_t update_bytes = 0;
  uint64_t snapshot_bytes = 0;
};

class BlockStore {
 public:
  // Opens (creating if needed) the database at `path` and migrates its
  // schema to the current version. Errors: kUnavailable when locked past the
  // busy timeout; kDataLoss when the file is not a database or is from a
  // newer weft (user_version too high); kFailedPrecondition for read-only
  // open of a missing file.
  static Result<std::unique_ptr<BlockStore>> open(const std::string& path,
                                                  const StoreOptions& options = {});
  ~BlockStore();
  BlockStore(const BlockStore&) = delete;
  BlockStore& operator=(const BlockStore&) = delete;

  // The schema version this build writes (PRAGMA user_version).
  static int schema_version();
  const std::string& path() const;

  // Creates a block. Errors: kAlreadyExists when the agent has a live block
  // with that label; kInvalidArgument for an empty agent or label, or
  // metadata that is not a JSON object or nests deeper than kMaxJsonDepth.
  Result<BlockInfo> create_block(const NewBlock& block);

  // The live block `label` of `agent_id`. Errors: kNotFound (the message
  // lists a few of the agent's labels); kDataLoss for a corrupt row.
  Result<BlockInfo> get_block(std::string_view agent_id, std::string_view label);
  // By id (also deleted blocks). Errors: kNotFound, kDataLoss.
  Result<BlockInfo> get_block_by_id(std::string_view id);

  Result<BlockList> list_blocks(const BlockFilter& filter = {});

  // Errors: kNotFound; kInvalidArgument for metadata that is not an object
  // or nests deeper than kMaxJsonDepth.
  Result<BlockInfo> update_block(std::string_view id, const BlockPatch& patch);

  // Appends one update blob and records `version` as the persisted version,
  // atomically; with `metadata_json`, the block's metadata is replaced in the
  // same transaction. Returns the new seq. Errors: kNotFound; kFailedPrecondition
  // for a deleted block; kUnavailable when another process holds the lock
  // past the busy timeout; kInvalidArgument for metadata as update_block.
  Result<uint64_t> append_update(std::string_view id, std::string_view data,
                                 std::string_view version,
                                 std::optional<std::string_view> metadata_json = std::nullopt);

  // Replaces the block's snapshot by `data` (which must include every update
  // with seq <= upto_seq) and drops those updates, atomically. Errors:
  // kNotFound; kInvalidArgument when upto_seq > last_seq.
  Status write_snapshot(std::string_view id, uint64_t upto_seq, std::string_view data,
                        std::string_view version);

  // Snapshot + updates. Errors: kNotFound; kDataLoss (naming the label) when
  // the snapshot is corrupt; corrupt updates are skipped into `problems`.
  Result<LoadedBlock> load(std::string_view id);
  // Updates with seq > after_seq (corrupt ones skipped into `problems`).
  Result<LoadedBlock> load_updates_after(std::string_view id, uint64_t after_seq);

  Result<std::vector<HistoryEntry>> history(std::string_view id);

  // Marks the block deleted (its label becomes free; content kept until
  // purge). Errors: kNotFound.
  Status delete_block(std::string_view id);
  // Removes a block and all its content for good. Errors: kNotFound.
  Status purge_block(std::string_view id);
  // Purges every block deleted before `before_ms`; returns how many.
  Result<uint64_t> purge_deleted(int64_t before_ms);

  // PRAGMA integrity_check: OK, or kDataLoss with SQLite's report.
  Status check_integrity();
  Result<StoreStats> stats();
  // Copies the WAL into the main database file (PRAGMA wal_checkpoint).
  Status checkpoint();

  struct Impl;

 private:
  explicit BlockStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Milliseconds since the Unix epoch (the store's clock).
int64_t now_ms();

}  // namespace weft::store

#endif  // WEFT_STORE_BLOCK_STORE_H_
