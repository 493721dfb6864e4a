#include "store/migrations.h"

#include <string>

namespace weft::store {
namespace {

// Migration N (1-based) brings user_version from N-1 to N.
constexpr const char* kMigrations[] = {
    // 1: blocks, their append-only updates and their compaction snapshots.
    R"sql(
CREATE TABLE blocks (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  label TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  block_type TEXT NOT NULL,
  schema_json TEXT NOT NULL,
  permission TEXT NOT NULL,
  char_limit INTEGER NOT NULL DEFAULT 0,
  metadata_json TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER,
  last_seq INTEGER NOT NULL DEFAULT 0,
  persisted_version BLOB NOT NULL DEFAULT x''
);
CREATE UNIQUE INDEX blocks_live_label ON blocks(agent_id, label) WHERE deleted_at IS NULL;
CREATE INDEX blocks_agent_label ON blocks(agent_id, label);
CREATE TABLE block_updates (
  block_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data BLOB NOT NULL,
  checksum INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (block_id, seq)
) WITHOUT ROWID;
CREATE TABLE block_snapshots (
  block_id TEXT PRIMARY KEY,
  upto_seq INTEGER NOT NULL,
  data BLOB NOT NULL,
  checksum INTEGER NOT NULL,
  version BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
)sql",
    // 2: listing by type without a scan.
    R"sql(
CREATE INDEX blocks_type ON blocks(block_type, agent_id, label);
)sql",
};

}  // namespace

int migration_count() { return static_cast<int>(std::size(kMigrations)); }

Status migrate(sqlite::Db& db) {
  while (true) {
    sqlite::Txn txn(db);
    WEFT_RETURN_IF_ERROR(txn.begin_write());
    // Re-read inside the write lock: another process may have migrated.
    WEFT_ASSIGN_OR_RETURN(int64_t version, db.query_int("PRAGMA user_version"));
    if (version > migration_count()) {
      return data_loss("the block database has schema version " + std::to_string(version) +
                       " but this weft knows only up to " + std::to_string(migration_count()) +
                       "; use a newer weft");
    }
    if (version == migration_count()) return txn.commit();
    WEFT_RETURN_IF_ERROR(
        db.exec(kMigrations[version])
            .with_context("block database migration " + std::to_string(version + 1)));
    WEFT_RETURN_IF_ERROR(db.exec("PRAGMA user_version = " + std::to_string(version + 1)));
    WEFT_RETURN_IF_ERROR(txn.commit());
  }
}

}  // namespace weft::store
