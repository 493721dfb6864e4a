// MemoryCache: blocks as shared StructuredDocuments over a BlockStore, with
// incremental persistence, compaction and LRU eviction within a budget.
#include "weft/store/memory_cache.h"

#include <atomic>
#include <list>
#include <mutex>
#include <unordered_map>

#include "store/version_codec.h"
#include "weft/doc/schema_json.h"

namespace weft::store {

struct MemoryCache::Entry {
  std::string key;
  BlockInfo info;
  std::shared_ptr<doc::StructuredDocument> doc;
  // Set by mark_dirty; changes made without it are still seen by comparing
  // the document's version with `persisted` (no subscription: events cost
  // a diff per commit).
  std::atomic<bool> dirty{false};
  size_t bytes = 0;
  std::list<std::string>::iterator lru;
  std::mutex persist_mu;  // guards the fields below
  crdt::VersionVector persisted;
  uint64_t last_seq = 0;
  size_t updates_since_snapshot = 0;
};

struct MemoryCache::Impl {
  CacheOptions options;
  mutable std::mutex mu;  // guards everything below
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries;
  std::list<std::string> lru;  // front: most recently used
  size_t bytes = 0;
  CacheStats stats;
  std::vector<std::string> problems;
};

namespace {

std::string cache_key(std::string_view agent_id, std::string_view label) {
  std::string k(agent_id);
  k.push_back('\0');
  k.append(label);
  return k;
}

// A rough in-memory size: CRDT state and history run a few times the encoded size.
size_t estimate_bytes(size_t encoded) { return 1024 + 4 * encoded; }

}  // namespace

MemoryCache::MemoryCache(std::shared_ptr<BlockStore> store, CacheOptions options)
    : store_(std::move(store)), impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

MemoryCache::~MemoryCache() = default;

std::shared_ptr<MemoryCache::Entry> MemoryCache::find(std::string_view agent_id,
                                                      std::string_view label) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(cache_key(agent_id, label));
  if (it == impl_->entries.end()) return nullptr;
  impl_->lru.splice(impl_->lru.begin(), impl_->lru, it->second->lru);
  return it->second;
}

Result<std::shared_ptr<doc::StructuredDocument>> MemoryCache::get(std::string_view agent_id,
                                                                  std::string_view label) {
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->entries.find(cache_key(agent_id, label));
    if (it != impl_->entries.end()) {
      impl_->lru.splice(impl_->lru.begin(), impl_->lru, it->second->lru);
      ++impl_->stats.hits;
      return it->second->doc;
    }
    ++impl_->stats.misses;
  }
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, load_entry(agent_id, label));
  // Another thread may have loaded it meanwhile: keep the first one.
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->entries.find(entry->key);
    if (it != impl_->entries.end()) return it->second->doc;
  }
  auto doc = entry->doc;
  insert_and_evict(std::move(entry));
  return doc;
}

Result<std::pair<std::shared_ptr<doc::StructuredDocument>, crdt::Subscription>>
MemoryCache::get_with_subscription(std::string_view agent_id, std::string_view label,
                                   crdt::EventCallback callback) {
  WEFT_ASSIGN_OR_RETURN(auto doc, get(agent_id, label));
  crdt::Subscription sub = doc->subscribe_root(std::move(callback));
  return std::make_pair(std::move(doc), std::move(sub));
}

Result<std::shared_ptr<MemoryCache::Entry>> MemoryCache::load_entry(std::string_view agent_id,
                                                                    std::string_view label) {
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, store_->get_block(agent_id, label));
  WEFT_ASSIGN_OR_RETURN(LoadedBlock loaded, store_->load(info.id));
  auto schema = doc::schema_from_json(info.schema_json);
  if (!schema.ok()) {
    return data_loss("block '" + info.label +
                     "' has a corrupt schema: " + std::string(schema.status().message()));
  }
  crdt::Doc crdt_doc;
  size_t encoded = 0;
  std::vector<std::string> problems = loaded.problems;
  if (loaded.snapshot) {
    encoded += loaded.snapshot->data.size();
    auto st = crdt_doc.import(loaded.snapshot->data, "store");
    if (!st.ok()) {
      return data_loss("block '" + info.label + "': its snapshot cannot be read (" +
                       st.status().to_string() + "); refusing to load");
    }
  }
  for (const UpdateRecord& u : loaded.updates) {
    encoded += u.data.size();
    auto st = crdt_doc.import(u.data, "store");
    if (!st.ok()) {
      problems.push_back("block '" + info.label + "': update " + std::to_string(u.seq) +
                         " cannot be read (" + st.status().to_string() + "); skipped");
    }
  }
  doc::DocumentOptions o;
  o.label = info.label;
  o.schema = std::move(*schema);
  o.permission = info.permission;
  o.accessor_agent_id = info.agent_id;
  o.char_limit = info.char_limit;
  WEFT_ASSIGN_OR_RETURN(auto document, doc::StructuredDocument::wrap(o, std::move(crdt_doc)));
  auto entry = std::make_shared<Entry>();
  entry->key = cache_key(agent_id, label);
  entry->doc = std::shared_ptr<doc::StructuredDocument>(std::move(document));
  entry->persisted = entry->doc->version();
  entry->last_seq = loaded.info.last_seq;  // read in the same transaction as the content
  entry->updates_since_snapshot = loaded.updates.size();
  entry->bytes = estimate_bytes(encoded);
  entry->info = std::move(info);
  if (!problems.empty()) {
    std::lock_guard lock(impl_->mu);
    for (auto& p : problems) impl_->problems.push_back(std::move(p));
  }
  return entry;
}

void MemoryCache::insert_and_evict(std::shared_ptr<Entry> entry) {
  std::vector<std::shared_ptr<Entry>> evicted;  // destroyed after unlocking
  std::lock_guard lock(impl_->mu);
  impl_->lru.push_front(entry->key);
  entry->lru = impl_->lru.begin();
  impl_->bytes += entry->bytes;
  impl_->entries.emplace(entry->key, std::move(entry));
  auto it = impl_->lru.end();
  while (impl_->bytes > impl_->options.memory_budget_bytes && it != impl_->lru.begin()) {
    --it;
    auto e = impl_->entries.find(*it);
    Entry& victim = *e->second;
    // Only blocks nobody holds (so nobody can be writing) and with nothing
    // unpersisted may go; use_count is exact under the index lock for that.
    if (victim.doc.use_count() > 1 || victim.dirty.load()) continue;
    if (!victim.persist_mu.try_lock()) continue;
    bool clean = victim.doc->version() == victim.persisted;
    victim.persist_mu.unlock();
    if (!clean) continue;
    impl_->bytes -= victim.bytes;
    ++impl_->stats.evictions;
    evicted.push_back(std::move(e->second));
    impl_->entries.erase(e);
    it = impl_->lru.erase(it);
  }
}

Result<std::shared_ptr<doc::StructuredDocument>> MemoryCache::create_block(
    const CreateBlockRequest& r) {
  WEFT_RETURN_IF_ERROR(doc::check_schema(r.schema).with_context("block '" + r.label + "'"));
  if (r.initial_text && r.schema.kind() != doc::SchemaKind::kText) {
    return invalid_argument("block '" + r.label + "': initial text needs a text schema");
  }
  doc::DocumentOptions o;
  o.label = r.label;
  o.schema = r.schema;
  o.permission = r.permission;
  o.accessor_agent_id = r.agent_id;
  o.char_limit = r.char_limit;
  WEFT_ASSIGN_OR_RETURN(auto document, doc::StructuredDocument::create(o));
  if (r.initial_text) {
    document->set_attribution(doc::StructuredDocument::system_attribution("create"));
    WEFT_RETURN_IF_ERROR(document->set_text(*r.initial_text, std::nullopt, true));
  }
  NewBlock nb;
  nb.agent_id = r.agent_id;
  nb.label = r.label;
  nb.description = r.description;
  nb.block_type = r.block_type;
  nb.schema_json = doc::schema_to_json(r.schema);
  nb.permission = r.permission;
  nb.char_limit = r.char_limit;
  nb.metadata_json = r.metadata_json;
  crdt::VersionVector vv = document->version();
  if (!vv.empty()) {
    nb.initial_update = document->export_updates();
    nb.initial_version = encode_version(vv);
  }
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, store_->create_block(nb));
  auto entry = std::make_shared<Entry>();
  entry->key = cache_key(r.agent_id, r.label);
  entry->doc = std::shared_ptr<doc::StructuredDocument>(std::move(document));
  entry->persisted = vv;
  entry->last_seq = info.last_seq;
  entry->bytes = estimate_bytes(nb.initial_update.size());
  entry->info = std::move(info);
  auto doc = entry->doc;
  {
    // A stale cached copy (of a block deleted elsewhere) must not shadow the new one.
    std::lock_guard lock(impl_->mu);
    auto it = impl_->entries.find(entry->key);
    if (it != impl_->entries.end()) {
      impl_->bytes -= it->second->bytes;
      impl_->lru.erase(it->second->lru);
      impl_->entries.erase(it);
    }
  }
  insert_and_evict(std::move(entry));
  return doc;
}

void MemoryCache::mark_dirty(std::string_view agent_id, std::string_view label) {
  if (auto e = find(agent_id, label)) e->dirty.store(true);
}

bool MemoryCache::is_dirty(std::string_view agent_id, std::string_view label) {
  auto e = find(agent_id, label);
  if (!e) return false;
  std::lock_guard lock(e->persist_mu);
  return e->dirty.load() || e->doc->version() != e->persisted;
}

bool MemoryCache::is_cached(std::string_view agent_id, std::string_view label) {
  std::lock_guard lock(impl_->mu);
  return impl_->entries.count(cache_key(agent_id, label)) > 0;
}

Status MemoryCache::persist_block(std::string_view agent_id, std::string_view label) {
  auto e = find(agent_id, label);
  if (!e) {
    return not_found("block '" + std::string(label) + "' of agent '" + std::string(agent_id) +
                     "' is not loaded in the cache; nothing to persist");
  }
  return persist_entry(*e);
}

Status MemoryCache::persist_entry(Entry& e) {
  std::lock_guard lock(e.persist_mu);
  // Clear first: a commit racing with this persist sets it again.
  e.dirty.store(false);
  crdt::VersionVector vv = e.doc->version();
  if (vv == e.persisted) return Status();
  std::string update = e.doc->export_updates(e.persisted);
  auto seq = store_->append_update(e.info.id, update, encode_version(vv));
  if (!seq.ok()) {
    e.dirty.store(true);
    return seq.status().with_context("persisting block '" + e.info.label + "'");
  }
  if (*seq != e.last_seq + 1) {
    // Another process appended in between: merge its updates (importing
    // our own again is a no-op).
    auto others = store_->load_updates_after(e.info.id, e.last_seq);
    if (others.ok()) {
      for (const UpdateRecord& u : others->updates)
        e.doc->import(u.data, "store").status().ignore_error();
    }
  }
  e.last_seq = *seq;
  e.persisted = vv;
  ++e.updates_since_snapshot;
  bool compacted = false;
  if (e.updates_since_snapshot >= impl_->options.compact_after_updates) {
    // Everything up to `seq` is in the document now, so a snapshot covers it.
    crdt::VersionVector now = e.doc->version();
    Status s = store_->write_snapshot(e.info.id, e.last_seq,
                                      e.doc->export_snapshot(crdt::SnapshotCompression::kFast),
                                      encode_version(now));
    if (s.ok()) {
      e.updates_since_snapshot = 0;
      compacted = true;
    }
  }
  std::lock_guard stats_lock(impl_->mu);
  ++impl_->stats.persists;
  if (compacted) ++impl_->stats.compactions;
  return Status();
}

Status MemoryCache::save_document(const doc::StructuredDocument& document) {
  const auto& agent = document.accessor_agent_id();
  if (!agent) {
    return invalid_argument("save_document: document '" + document.label() +
                            "' has no accessor agent; use persist_block(agent, label)");
  }
  mark_dirty(*agent, document.label());
  return persist_block(*agent, document.label());
}

Status MemoryCache::persist_all() {
  std::vector<std::shared_ptr<Entry>> all;
  {
    std::lock_guard lock(impl_->mu);
    for (auto& [k, e] : impl_->entries) all.push_back(e);
  }
  Status first;
  for (auto& e : all) {
    Status s = persist_entry(*e);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Result<BlockList> MemoryCache::list(const BlockFilter& filter) {
  return store_->list_blocks(filter);
}

Result<std::vector<SearchHit>> MemoryCache::search(std::string_view query,
                                                   const BlockFilter& filter) {
  WEFT_ASSIGN_OR_RETURN(BlockList blocks, store_->list_blocks(filter));
  std::vector<SearchHit> hits;
  for (BlockInfo& info : blocks.blocks) {
    auto d = get(info.agent_id, info.label);
    if (!d.ok()) continue;
    std::string text = (*d)->render();
    size_t at = text.find(query);
    if (at == std::string::npos) continue;
    size_t begin = text.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    size_t end = text.find('\n', at);
    hits.push_back(
        {std::move(info), text.substr(begin, end == std::string::npos ? end : end - begin)});
  }
  return hits;
}

Status MemoryCache::delete_block(std::string_view agent_id, std::string_view label,
                                 bool is_system) {
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, store_->get_block(agent_id, label));
  if (!is_system) {
    WEFT_RETURN_IF_ERROR(doc::check_permission(info.permission, doc::MemoryOp::kDelete, label));
  }
  WEFT_RETURN_IF_ERROR(store_->delete_block(info.id));
  std::shared_ptr<Entry> dropped;
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(cache_key(agent_id, label));
  if (it != impl_->entries.end()) {
    dropped = std::move(it->second);
    impl_->bytes -= dropped->bytes;
    impl_->lru.erase(dropped->lru);
    impl_->entries.erase(it);
  }
  return Status();
}

std::vector<std::string> MemoryCache::problems() const {
  std::lock_guard lock(impl_->mu);
  return impl_->problems;
}

CacheStats MemoryCache::stats() const {
  std::lock_guard lock(impl_->mu);
  CacheStats s = impl_->stats;
  s.entries = impl_->entries.size();
  s.bytes = impl_->bytes;
  return s;
}

}  // namespace weft::store
