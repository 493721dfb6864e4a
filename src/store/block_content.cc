// BlockStore: a block's content — the append-only updates, the compaction
// snapshot and loading them back with checksum verification.
#include "store/block_store_impl.h"

namespace weft::store {

using sqlite::Stmt;
using sqlite::Txn;

Result<uint64_t> BlockStore::append_update(std::string_view id, std::string_view data,
                                           std::string_view version,
                                           std::optional<std::string_view> metadata_json) {
  if (metadata_json) WEFT_RETURN_IF_ERROR(check_block_metadata(*metadata_json));
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_write());
  // Read last_seq under the write lock: another process may have appended.
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached("SELECT last_seq, deleted_at, label FROM blocks "
                                          "WHERE id = ?1"));
  q->bind(1, id);
  WEFT_ASSIGN_OR_RETURN(bool row, q->step());
  if (!row) return not_found("no block with id '" + std::string(id) + "'");
  if (!q->col_null(1)) {
    return failed_precondition("block '" + q->col_text(2) + "' is deleted; it takes no updates");
  }
  uint64_t seq = static_cast<uint64_t>(q->col_int(0)) + 1;
  int64_t now = now_ms();
  WEFT_ASSIGN_OR_RETURN(auto ins, db.cached("INSERT INTO block_updates (block_id, seq, data, "
                                            "checksum, created_at) VALUES (?1,?2,?3,?4,?5)"));
  ins->bind(1, id).bind(2, static_cast<int64_t>(seq)).bind_blob(3, data);
  ins->bind(4, blob_checksum(data)).bind(5, now);
  WEFT_RETURN_IF_ERROR(ins->run());
  WEFT_ASSIGN_OR_RETURN(auto up, db.cached("UPDATE blocks SET last_seq = ?2, persisted_version "
                                           "= ?3, updated_at = ?4 WHERE id = ?1"));
  up->bind(1, id).bind(2, static_cast<int64_t>(seq)).bind_blob(3, version).bind(4, now);
  WEFT_RETURN_IF_ERROR(up->run());
  if (metadata_json) {
    WEFT_ASSIGN_OR_RETURN(auto meta, db.cached("UPDATE blocks SET metadata_json = ?2 WHERE id = ?1"));
    meta->bind(1, id).bind(2, *metadata_json);
    WEFT_RETURN_IF_ERROR(meta->run());
  }
  WEFT_RETURN_IF_ERROR(txn.commit());
  return seq;
}

Status BlockStore::write_snapshot(std::string_view id, uint64_t upto_seq, std::string_view data,
                                  std::string_view version) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_write());
  WEFT_ASSIGN_OR_RETURN(BlockInfo info, impl_->info_by_id(id));
  if (upto_seq > info.last_seq) {
    return invalid_argument("snapshot of block '" + info.label + "' claims seq " +
                            std::to_string(upto_seq) + " but the newest update is " +
                            std::to_string(info.last_seq));
  }
  WEFT_ASSIGN_OR_RETURN(auto ins, db.cached("INSERT OR REPLACE INTO block_snapshots (block_id, "
                                            "upto_seq, data, checksum, version, created_at) "
                                            "VALUES (?1,?2,?3,?4,?5,?6)"));
  ins->bind(1, id).bind(2, static_cast<int64_t>(upto_seq)).bind_blob(3, data);
  ins->bind(4, blob_checksum(data)).bind_blob(5, version).bind(6, now_ms());
  WEFT_RETURN_IF_ERROR(ins->run());
  WEFT_ASSIGN_OR_RETURN(auto del, db.cached("DELETE FROM block_updates WHERE block_id = ?1 AND "
                                            "seq <= ?2"));
  del->bind(1, id).bind(2, static_cast<int64_t>(upto_seq));
  WEFT_RETURN_IF_ERROR(del->run());
  return txn.commit();
}

namespace {

// Reads updates with seq > after (verifying checksums) into `out`.
Status read_updates(sqlite::Db& db, std::string_view id, uint64_t after, LoadedBlock& out) {
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached("SELECT seq, data, checksum, created_at FROM "
                                          "block_updates WHERE block_id = ?1 AND seq > ?2 "
                                          "ORDER BY seq"));
  q->bind(1, id).bind(2, static_cast<int64_t>(after));
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool row, q->step());
    if (!row) break;
    UpdateRecord u;
    u.seq = static_cast<uint64_t>(q->col_int(0));
    bool is_blob = q->col_type(1) == SQLITE_BLOB;
    u.data = q->col_blob(1);
    u.created_at_ms = q->col_int(3);
    if (!is_blob || q->col_type(2) != SQLITE_INTEGER || blob_checksum(u.data) != q->col_int(2)) {
      out.problems.push_back("block '" + out.info.label + "': update " + std::to_string(u.seq) +
                             " is corrupt (checksum mismatch); skipped");
      continue;
    }
    out.updates.push_back(std::move(u));
  }
  return Status();
}

}  // namespace

Result<LoadedBlock> BlockStore::load(std::string_view id) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  // One read transaction: the snapshot and the updates come from one state
  // even while another process compacts.
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_read());
  LoadedBlock out;
  WEFT_ASSIGN_OR_RETURN(out.info, impl_->info_by_id(id));
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached("SELECT upto_seq, data, checksum, version, created_at "
                                          "FROM block_snapshots WHERE block_id = ?1"));
  q->bind(1, id);
  WEFT_ASSIGN_OR_RETURN(bool row, q->step());
  uint64_t after = 0;
  if (row) {
    SnapshotRecord s;
    s.upto_seq = static_cast<uint64_t>(q->col_int(0));
    s.data = q->col_blob(1);
    s.version = q->col_blob(3);
    s.created_at_ms = q->col_int(4);
    if (q->col_type(2) != SQLITE_INTEGER || blob_checksum(s.data) != q->col_int(2)) {
      // The updates before upto_seq are gone: loading without the snapshot
      // would silently lose content, so refuse.
      return data_loss("block '" + out.info.label + "' (" + out.info.id +
                       "): its snapshot is corrupt (checksum mismatch); refusing to load");
    }
    after = s.upto_seq;
    out.snapshot = std::move(s);
  }
  WEFT_RETURN_IF_ERROR(read_updates(db, id, after, out));
  WEFT_RETURN_IF_ERROR(txn.commit());
  return out;
}

Result<LoadedBlock> BlockStore::load_updates_after(std::string_view id, uint64_t after_seq) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_read());
  LoadedBlock out;
  WEFT_ASSIGN_OR_RETURN(out.info, impl_->info_by_id(id));
  WEFT_RETURN_IF_ERROR(read_updates(db, id, after_seq, out));
  WEFT_RETURN_IF_ERROR(txn.commit());
  return out;
}

Result<std::vector<HistoryEntry>> BlockStore::history(std::string_view id) {
  std::lock_guard lock(impl_->mu);
  sqlite::Db& db = impl_->db;
  Txn txn(db);
  WEFT_RETURN_IF_ERROR(txn.begin_read());
  WEFT_RETURN_IF_ERROR(impl_->info_by_id(id).status());
  std::vector<HistoryEntry> out;
  WEFT_ASSIGN_OR_RETURN(auto s, db.cached("SELECT upto_seq, length(data), created_at FROM "
                                          "block_snapshots WHERE block_id = ?1"));
  s->bind(1, id);
  WEFT_ASSIGN_OR_RETURN(bool row, s->step());
  if (row) {
    out.push_back({HistoryEntry::Kind::kSnapshot, static_cast<uint64_t>(s->col_int(0)),
                   static_cast<size_t>(s->col_int(1)), s->col_int(2)});
  }
  WEFT_ASSIGN_OR_RETURN(auto q, db.cached("SELECT seq, length(data), created_at FROM "
                                          "block_updates WHERE block_id = ?1 ORDER BY seq"));
  q->bind(1, id);
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool more, q->step());
    if (!more) break;
    out.push_back({HistoryEntry::Kind::kUpdate, static_cast<uint64_t>(q->col_int(0)),
                   static_cast<size_t>(q->col_int(1)), q->col_int(2)});
  }
  WEFT_RETURN_IF_ERROR(txn.commit());
  return out;
}

}  // namespace weft::store
