// MemoryCache: the blocks an agent works with, as StructuredDocuments kept in
// memory over a BlockStore (seeds 002/003). get() loads a block (snapshot +
// updates) on a miss; writes happen on the shared document; persist_block()
// appends only what changed since the last persisted version, and every
// `compact_after_updates` updates folds the block into a snapshot. An LRU
// bounded by `memory_budget_bytes` evicts blocks that are persisted and not
// held by any caller; an unpersisted block is never evicted (the cache
// compares the document's version with the persisted one, so it notices
// changes even without mark_dirty).
//
// Durability: once persist_block / save_document returns OK, the change is in
// the database (see BlockStore for the durability mode).
//
// Several processes may share the database: persist_block first merges
// updates other processes appended since this cache last read the block.
//
// Thread safety: every method is safe from any thread. One mutex guards the
// index and LRU (held only for lookups); a per-block mutex serialises persists
// of that block; documents have their own lock (structured_document.h).
#ifndef WEFT_STORE_MEMORY_CACHE_H_
#define WEFT_STORE_MEMORY_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/base/status.h"
#include "weft/doc/schema.h"
#include "weft/doc/structured_document.h"
#include "weft/store/block_store.h"

namespace weft::store {

struct CacheOptions {
  size_t memory_budget_bytes = 64u << 20;
  // Write a snapshot (dropping the updates it covers) after this many updates.
  size_t compact_after_updates = 128;
};

struct CreateBlockRequest {
  std::string agent_id;
  std::string label;
  std::string description;
  BlockType block_type = BlockType::kWorking;
  doc::BlockSchema schema;
  doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite;
  uint64_t char_limit = 0;
  std::string metadata_json = "{}";
  std::optional<std::string> initial_text;  // Text schemas only
};

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t persists = 0;
  uint64_t compactions = 0;
  size_t entries = 0;
  size_t bytes = 0;  // estimated memory of the cached blocks
};

struct SearchHit {
  BlockInfo info;
  std::string line;  // the first rendered line that contains the query
};

class MemoryCache {
 public:
  explicit MemoryCache(std::shared_ptr<BlockStore> store, CacheOptions options = {});
  ~MemoryCache();
  MemoryCache(const MemoryCache&) = delete;
  MemoryCache& operator=(const MemoryCache&) = delete;

  // The block's document (shared: every caller gets the same one; its
  // accessor is `agent_id`). Errors: kNotFound; kDataLoss (naming the label)
  // when the stored schema or snapshot is corrupt. Corrupt updates are
  // skipped and recorded in problems().
  Result<std::shared_ptr<doc::StructuredDocument>> get(std::string_view agent_id,
                                                       std::string_view label);
  // get() plus a subscription to every change of the block (seed 002's
  // get_with_subscription); keep the Subscription alive as long as needed.
  Result<std::pair<std::shared_ptr<doc::StructuredDocument>, crdt::Subscription>>
  get_with_subscription(std::string_view agent_id, std::string_view label,
                        crdt::EventCallback callback);
  // Creates, persists and caches a block. Errors: kAlreadyExists;
  // kInvalidArgument (bad schema, metadata, or initial_text for a non-Text
  // schema).
  Result<std::shared_ptr<doc::StructuredDocument>> create_block(const CreateBlockRequest& request);

  // Notes that the block changed (the cache also notices commits itself).
  void mark_dirty(std::string_view agent_id, std::string_view label);
  // Writes what changed since the last persist (a no-op when nothing did).
  // Errors: kNotFound when the block is not cached; store errors.
  Status persist_block(std::string_view agent_id, std::string_view label);
  // mark_dirty + persist_block for a document from get() / create_block().
  Status save_document(const doc::StructuredDocument& document);
  // Persists every cached block; returns the first error (after trying all).
  Status persist_all();
  // True when the block is cached with changes not yet persisted.
  bool is_dirty(std::string_view agent_id, std::string_view label);
  bool is_cached(std::string_view agent_id, std::string_view label);

  Result<BlockList> list(const BlockFilter& filter = {});
  // Blocks matching `filter` whose rendered content contains `query`.
  Result<std::vector<SearchHit>> search(std::string_view query, const BlockFilter& filter = {});

  // Deletes the block (history kept in the store until purged). Unless
  // `is_system`, the block's permission must allow Delete (Admin; Human and
  // Partner give "needs approval"). Errors: kNotFound, permission errors.
  Status delete_block(std::string_view agent_id, std::string_view label, bool is_system = false);

  // Problems met while loading blocks (corrupt updates), oldest first.
  std::vector<std::string> problems() const;
  CacheStats stats() const;
  BlockStore& store() { return *store_; }

  struct Entry;

 private:
  Result<std::shared_ptr<Entry>> load_entry(std::string_view agent_id, std::string_view label);
  std::shared_ptr<Entry> find(std::string_view agent_id, std::string_view label);
  Status persist_entry(Entry& entry);
  void insert_and_evict(std::shared_ptr<Entry> entry);

  struct Impl;
  std::shared_ptr<BlockStore> store_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::store

#endif  // WEFT_STORE_MEMORY_CACHE_H_
