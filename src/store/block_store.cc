// BlockStore: opening, migrations, and the blocks table (create, get, list,
// update, delete, purge). Content (updates, snapshots): block_content.cc.
#include "weft/store/block_store.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "store/block_store_impl.h"
#include "store/db_file.h"
#include "store/migrations.h"
#include "weft/base/hash.h"
#include "weft/base/json_depth.h"

namespace weft::store {

using sqlite::Stmt;
using sqlite::Txn;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t blob_checksum(std::string_view data) { return static_cast<int64_t>(checksum32(data)); }

std::string_view block_type_name(BlockType type) {
  switch (type) {
    case BlockType::kCore:
      return "core";
    case BlockType::kWorking:
      return "working";
    case BlockType::kArchival:
      return "archival";
    case BlockType::kLog:
      return "log";
  }
  return "unknown";
}

Result<BlockType> parse_block_type(std::string_view name) {
  for (BlockType t :
       {BlockType::kCore, BlockType::kWorking, BlockType::kArchival, BlockType::kLog}) {
    if (name == block_type_name(t)) return t;
  }
  return invalid_argument("unknown block type '" + std::string(name) +
                          "'; expected one of core, working, archival, log");
}

Result<BlockInfo> BlockStore::Impl::read_info(const Stmt& row) {
  BlockInfo info;
  info.id = row.col_text(0);
  info.agent_id = row.col_text(1);
  info.label = row.col_text(2);
  info.description = row.col_text(3);
  std::string where = "block '" + info.label + "' (" + info.id + ", agent '" + info.agent_id + "')";
  auto type = parse_block_type(row.col_text(4));
  if (!type.ok()) return data_loss(where + " has a corrupt row: " + type.status().to_string());
  info.block_type = *type;
  info.schema_json = row.col_text(5);
  auto perm = doc::parse_memory_permission(row.col_text(6));
  if (!perm.ok()) return data_loss(where + " has a corrupt row: " + perm.status().to_string());
  info.permission = *perm;
  if (row.col_type(7) != SQLITE_INTEGER || row.col_int(7) < 0) {
    return data_loss(where + " has a corrupt row: char_limit is not a whole number");
  }
  info.char_limit = static_cast<uint64_t>(row.col_int(7));
  info.metadata_json = row.col_text(8);
  info.created_at_ms = row.col_int(9);
  info.updated_at_ms = row.col_int(10);
  info.deleted = !row.col_null(11);
  info.deleted_at_ms = info.deleted ? row.col_int(11) : 0;
  info.last_seq = static_cast<uint64_t>(row.col_int(12));
  info.persisted_version = row.col_blob(13);
  // Whoever reads these parses them: nesting that deep would overflow the
  // stack there (a row written by something other than weft).
  for (const auto& [name, text] : {std::pair{"schema_json", &info.schema_json},
                                   std::pair{"metadata_json", &info.metadata_json}}) {
    if (Status depth = check_json_depth(*text); !depth.ok()) {
      return data_loss(where + " has a corrupt row: " + name + ": " + std::string(depth.message()));
    }
  }
  return info;
}

Result<BlockInfo> BlockStore::Impl::info_by_id(std::string_view id) {
  WEFT_ASSIGN_OR_RETURN(
      auto q, db.cached(std::string("SELECT ") + kInfoColumns + " FROM blocks WHERE id = ?1"));
  q->bind(1, id);
  WEFT_ASSIGN_OR_RETURN(bool row, q->step());
  if (!row) return not_found("no block with id '" + std::string(id) + "'");
  return read_info(*q);
}

std::string BlockStore::Impl::new_id() {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "blk_%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

BlockStore::BlockStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockStore::~BlockStore() = default;

int BlockStore::schema_version() { return migration_count(); }
const std::string& BlockStore::path() const { return impl_->path; }

Result<std::unique_ptr<BlockStore>> BlockStore::open(const std::string& path,
                                                     const StoreOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  sqlite::Db& db = impl->db;
  WEFT_RETURN_IF_ERROR(check_db_file(path, options.read_only));
  WEFT_RETURN_IF_ERROR(db.open(path, options.read_only, options.vfs));
  sqlite3_busy_timeout(db.raw(), options.busy_timeout_ms);
  // Reading the schema checks that the file is a database at all.
  auto version = db.query_int("PRAGMA user_version");
  if (!version.ok()) return version.status().with_context("block database '" + path + "'");
  WEFT_RETURN_IF_ERROR(check_db_schema(db, path, *version));
  if (options.read_only && *version == 0) {
    return not_found("'" + path +
                     "' is an empty SQLite database: it holds no blocks (not a block database "
                     "yet; creating a block in it makes it one)");
  }
  if (!options.read_only) {
    // journal_mode=WAL needs the lock briefly; busy_timeout covers it.
    WEFT_RETURN_IF_ERROR(
        db.exec("PRAGMA journal_mode=WAL").with_context("block database '" + path + "'"));
    WEFT_RETURN_IF_ERROR(db.exec(options.durability == Durability::kFull
                                     ? "PRAGMA synchronous=FULL"
                                     : "PRAGMA synchronous=NORMAL"));
    WEFT_RETURN_IF_ERROR(db.exec("PRAGMA foreign_keys=ON"));
    WEFT_RETURN_IF_ERROR(migrate(db).with_context("block database '" + path + "'"));
  } else if (*version != migration_count()) {
    return failed_precondition("block database '" + path + "' has schema version " +
                               std::to_string(*version) + ", expected " +
                               std::to_string(migration_count()) + " (open it writable once)");
  }
  return std::unique_ptr<BlockStore>(new BlockStore(std::move(impl)));
}

Status check_block_metadata(std::string_view metadata_json) {
  WEFT_RETURN_IF_ERROR(check_json_depth(metadata_json).with_context("block metadata"));
  auto v = nlohmann::json::parse(metadata_json, nullptr, false);
  if (v.is_discarded()) return invalid_argument("block metadata is not valid JSON");
  if (!v.is_object()) return invalid_argument("block metadata must be a JSON object");
  return Status();
}

Result<BlockInfo> BlockStore::create_block(const NewBlock& b) {
  if (b.agent_id.empty()) return invalid_argument("create_block: agent id is empty");
  if (b.label.empty()) return invalid_argument("create_block: label is empty");
  WEFT_RETURN_IF_ERROR(check_block_metadata(b.metadata_json).with_context("block '" + b.label + "'"));
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_write());
  WEFT_ASSIGN_OR_RETURN(auto exists, db.cached("SELECT id FROM blocks WHERE agent_id = ?1 AND "
                                               "label = ?2 AND deleted_at IS NULL"));
  exists->bind(1, b.agent_id).bind(2, b.label);
  WEFT_ASSIGN_OR_RETURN(bool found, exists->step());
  if (found) {
    return already_exists("agent '" + b.agent_id + "' already has a block labelled '" + b.label +
                          "'");
  }
  int64_t now = now_ms();
  std::string id = impl_->new_id();
  bool has_content = !b.initial_update.empty();
  WEFT_ASSIGN_OR_RETURN(
      auto ins,
      db.cached("INSERT INTO blocks (id, agent_id, label, description, block_type, schema_json, "
                "permission, char_limit, metadata_json, created_at, updated_at, last_seq, "
                "persisted_version) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?10,?11,?12)"));
  ins->bind(1, id).bind(2, b.agent_id).bind(3, b.label).bind(4, b.description);
  ins->bind(5, block_type_name(b.block_type)).bind(6, b.schema_json);
  ins->bind(7, doc::memory_permission_name(b.permission));
  ins->bind(8, static_cast<int64_t>(b.char_limit)).bind(9, b.metadata_json).bind(10, now);
  ins->bind(11, int64_t{has_content ? 1 : 0}).bind_blob(12, b.initial_version);
  WEFT_RETURN_IF_ERROR(ins->run());
  if (has_content) {
    WEFT_ASSIGN_OR_RETURN(auto up,
                          db.cached("INSERT INTO block_updates (block_id, seq, data, checksum, "
                                    "created_at) VALUES (?1, 1, ?2, ?3, ?4)"));
    up->bind(1, id).bind_blob(2, b.initial_update).bind(3, blob_checksum(b.initial_update));
    up->bind(4, now);
    WEFT_RETURN_IF_ERROR(up->run());
  }
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, impl_->info_by_id(id));
  WEFT_RETURN_IF_ERROR(txn.commit());
  return info;
}

Result<BlockInfo> BlockStore::get_block(std::string_view agent_id, std::string_view label) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached(std::string("SELECT ") + Impl::kInfoColumns +
                                          " FROM blocks WHERE agent_id = ?1 AND label = ?2 "
                                          "AND deleted_at IS NULL"));
  q->bind(1, agent_id).bind(2, label);
  WEFT_ASSIGN_OR_RETURN(bool row, q->step());
  if (row) return Impl::read_info(*q);
  // Help the caller: name a few labels the agent does have.
  std::string known;
  WEFT_ASSIGN_OR_RETURN(auto k, db.cached("SELECT label FROM blocks WHERE agent_id = ?1 AND "
                                          "deleted_at IS NULL ORDER BY label LIMIT 6"));
  k->bind(1, agent_id);
  for (int n = 0;; ++n) {
    WEFT_ASSIGN_OR_RETURN(bool more, k->step());
    if (!more) break;
    if (n == 5) {
      known += ", ...";
      break;
    }
    known += (known.empty() ? "" : ", ") + std::string("'") + k->col_text(0) + "'";
  }
  return not_found("agent '" + std::string(agent_id) + "' has no block labelled '" +
                   std::string(label) + "'" +
                   (known.empty() ? " (it has no blocks)" : "; its blocks: " + known));
}

Result<BlockInfo> BlockStore::get_block_by_id(std::string_view id) {
  std::lock_guard lock(impl_->mu);
  return impl_->info_by_id(id);
}

namespace {

// The smallest string greater than every string starting with `prefix`, or
// "" when there is none (all 0xFF bytes).
std::string prefix_successor(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

}  // namespace

Result<BlockList> BlockStore::list_blocks(const BlockFilter& filter) {
  std::string sql = std::string("SELECT ") + Impl::kInfoColumns + " FROM blocks WHERE 1";
  if (!filter.include_deleted) sql += " AND deleted_at IS NULL";
  if (filter.agent_id) sql += " AND agent_id = ?1";
  std::string upper;
  if (filter.label_prefix && !filter.label_prefix->empty()) {
    sql += " AND label >= ?2";
    upper = prefix_successor(*filter.label_prefix);
    if (!upper.empty()) sql += " AND label < ?3";
  }
  if (filter.block_type) sql += " AND block_type = ?4";
  sql += " ORDER BY agent_id, label, created_at";
  if (filter.limit) sql += " LIMIT " + std::to_string(filter.limit);
  std::lock_guard lock(impl_->mu);
  WEFT_ASSIGN_OR_RETURN(auto q, impl_->db.cached(sql));
  if (filter.agent_id) q->bind(1, *filter.agent_id);
  if (filter.label_prefix && !filter.label_prefix->empty()) {
    q->bind(2, *filter.label_prefix);
    if (!upper.empty()) q->bind(3, upper);
  }
  if (filter.block_type) q->bind(4, block_type_name(*filter.block_type));
  BlockList out;
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool row, q->step());
    if (!row) break;
    auto info = Impl::read_info(*q);
    if (info.ok()) {
      out.blocks.push_back(std::move(*info));
    } else {
      out.problems.push_back(std::string(info.status().message()) + " (skipped)");
    }
  }
  return out;
}

Result<BlockInfo> BlockStore::update_block(std::string_view id, const BlockPatch& patch) {
  if (patch.metadata_json) WEFT_RETURN_IF_ERROR(check_block_metadata(*patch.metadata_json));
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_write());
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, impl_->info_by_id(id));
  if (patch.label && *patch.label != info.label) {
    if (patch.label->empty()) return invalid_argument("update_block: label is empty");
    WEFT_ASSIGN_OR_RETURN(auto exists, db.cached("SELECT id FROM blocks WHERE agent_id = ?1 AND "
                                                 "label = ?2 AND deleted_at IS NULL"));
    exists->bind(1, info.agent_id).bind(2, *patch.label);
    WEFT_ASSIGN_OR_RETURN(bool found, exists->step());
    if (found) {
      return already_exists("agent '" + info.agent_id + "' already has a block labelled '" +
                            *patch.label + "'");
    }
    info.label = *patch.label;
  }
  if (patch.description) info.description = *patch.description;
  if (patch.permission) info.permission = *patch.permission;
  if (patch.char_limit) info.char_limit = *patch.char_limit;
  if (patch.metadata_json) info.metadata_json = *patch.metadata_json;
  if (patch.schema_json) info.schema_json = *patch.schema_json;
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached("UPDATE blocks SET description = ?2, permission = ?3, "
                                          "char_limit = ?4, metadata_json = ?5, schema_json = "
                                          "?6, updated_at = ?7, label = ?8 WHERE id = ?1"));
  q->bind(1, id).bind(2, info.description).bind(3, doc::memory_permission_name(info.permission));
  q->bind(4, static_cast<int64_t>(info.char_limit)).bind(5, info.metadata_json);
  q->bind(6, info.schema_json).bind(7, now_ms()).bind(8, info.label);
  WEFT_RETURN_IF_ERROR(q->run());
  WEFT_ASSIGN_OR_RETURN(BlockInfo updated, impl_->info_by_id(id));
  WEFT_RETURN_IF_ERROR(txn.commit());
  return updated;
}

Status BlockStore::delete_block(std::string_view id) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_write());
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, impl_->info_by_id(id));
  if (info.deleted) return Status();
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached("UPDATE blocks SET deleted_at = ?2, updated_at = ?2 "
                                          "WHERE id = ?1"));
  q->bind(1, id).bind(2, now_ms());
  WEFT_RETURN_IF_ERROR(q->run());
  return txn.commit();
}

Status BlockStore::purge_block(std::string_view id) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_write());
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, impl_->info_by_id(id));
  for (const char* sql :
       {"DELETE FROM block_updates WHERE block_id = ?1",
        "DELETE FROM block_snapshots WHERE block_id = ?1", "DELETE FROM blocks WHERE id = ?1"}) {
    WEFT_ASSIGN_OR_RETURN(auto q, db.cached(sql));
    q->bind(1, id);
    WEFT_RETURN_IF_ERROR(q->run());
  }
  return txn.commit();
}

Result<uint64_t> BlockStore::purge_deleted(int64_t before_ms) {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(impl_->mu);
    WEFT_ASSIGN_OR_RETURN(auto q, impl_->db.cached("SELECT id FROM blocks WHERE deleted_at IS "
                                                   "NOT NULL AND deleted_at < ?1"));
    q->bind(1, before_ms);
    while (true) {
      WEFT_ASSIGN_OR_RETURN(bool row, q->step());
      if (!row) break;
      ids.push_back(q->col_text(0));
    }
  }
  for (const auto& id : ids) WEFT_RETURN_IF_ERROR(purge_block(id));
  return static_cast<uint64_t>(ids.size());
}

Status BlockStore::check_integrity() {
  std::lock_guard lock(impl_->mu);
  WEFT_ASSIGN_OR_RETURN(Stmt q, impl_->db.prepare("PRAGMA integrity_check"));
  std::string report;
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    std::string line = q.col_text(0);
    if (line != "ok") report += (report.empty() ? "" : "; ") + line;
  }
  if (report.empty()) return Status();
  return data_loss("block database '" + impl_->path + "' failed integrity_check: " + report);
}

Status BlockStore::checkpoint() {
  std::lock_guard lock(impl_->mu);
  return impl_->db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

Result<StoreStats> BlockStore::stats() {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  StoreStats s;
  WEFT_ASSIGN_OR_RETURN(int64_t blocks, db.query_int("SELECT count(*) FROM blocks"));
  WEFT_ASSIGN_OR_RETURN(int64_t updates, db.query_int("SELECT count(*) FROM block_updates"));
  WEFT_ASSIGN_OR_RETURN(int64_t snaps, db.query_int("SELECT count(*) FROM block_snapshots"));
  WEFT_ASSIGN_OR_RETURN(int64_t ub,
                        db.query_int("SELECT coalesce(sum(length(data)),0) FROM block_updates"));
  WEFT_ASSIGN_OR_RETURN(int64_t sb,
                        db.query_int("SELECT coalesce(sum(length(data)),0) FROM block_snapshots"));
  s.blocks = blocks;
  s.updates = updates;
  s.snapshots = snaps;
  s.update_bytes = ub;
  s.snapshot_bytes = sb;
  return s;
}

}  // namespace weft::store
