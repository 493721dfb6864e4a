#include "store/sqlite_db.h"

#include <string>

namespace weft::store::sqlite {

Status to_status(int rc, sqlite3* db, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return unavailable(msg + " (the database is busy: another process holds the lock)");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return data_loss(msg);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return permission_denied(msg);
    case SQLITE_CANTOPEN:
      return failed_precondition(msg);
    case SQLITE_FULL:
      return resource_exhausted(msg);
    case SQLITE_CONSTRAINT:
      return already_exists(msg);
    default:
      return internal_error(msg);
  }
}

Stmt::~Stmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view text) {
  sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Stmt& Stmt::bind_blob(int i, std::string_view bytes) {
  // A zero-length blob must stay a blob, not NULL: pass a non-null pointer.
  static const char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, i, bytes.empty() ? &kEmpty : bytes.data(), bytes.size(),
                      SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return to_status(rc, db_, "sqlite step");
}

Status Stmt::run() {
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return Status();
  }
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::col_text(int i) const {
  const unsigned char* p = sqlite3_column_text(stmt_, i);
  int n = sqlite3_column_bytes(stmt_, i);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

std::string Stmt::col_blob(int i) const {
  const void* p = sqlite3_column_blob(stmt_, i);
  int n = sqlite3_column_bytes(stmt_, i);
  return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

Db::~Db() {
  cache_.clear();  // statements must be finalised before the connection closes
  if (db_) sqlite3_close_v2(db_);
}

Status Db::open(const std::string& path, bool read_only, const std::string& vfs) {
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX;  // BlockStore's mutex serialises use
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, vfs.empty() ? nullptr : vfs.c_str());
  if (rc != SQLITE_OK) {
    Status s = to_status(rc, db_, "cannot open block database '" + path + "'");
    if (db_) sqlite3_close_v2(db_);
    db_ = nullptr;
    return s;
  }
  sqlite3_extended_result_codes(db_, 1);
  return Status();
}

Status Db::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return to_status(rc, db_, "sqlite exec");
  return Status();
}

Result<Stmt> Db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return to_status(rc, db_, "sqlite prepare");
  return Stmt(db_, stmt);
}

Result<CachedStmt> Db::cached(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    WEFT_ASSIGN_OR_RETURN(Stmt stmt, prepare(sql));
    it = cache_.emplace(sql, std::move(stmt)).first;
  }
  it->second.reset();
  return CachedStmt(&it->second);
}

Result<int64_t> Db::query_int(std::string_view sql) {
  WEFT_ASSIGN_OR_RETURN(Stmt stmt, prepare(sql));
  WEFT_ASSIGN_OR_RETURN(bool row, stmt.step());
  return row ? stmt.col_int(0) : 0;
}

Txn::~Txn() {
  if (open_) db_.exec("ROLLBACK").ignore_error();
}

Status Txn::begin_write() {
  WEFT_RETURN_IF_ERROR(db_.exec("BEGIN IMMEDIATE"));
  open_ = true;
  return Status();
}

Status Txn::begin_read() {
  WEFT_RETURN_IF_ERROR(db_.exec("BEGIN"));
  open_ = true;
  return Status();
}

Status Txn::commit() {
  Status s = db_.exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace weft::store::sqlite
