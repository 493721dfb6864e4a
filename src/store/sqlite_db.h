// A thin RAII layer over the sqlite3 C API for the store: Db (a connection),
// Stmt (a prepared statement with typed binds and column reads) and Txn (a
// transaction that rolls back unless committed). Errors become weft::Status:
// SQLITE_BUSY/LOCKED -> kUnavailable, CORRUPT/NOTADB -> kDataLoss, others kInternal.
//
// Thread safety: none; BlockStore serialises all use of one Db with its mutex.
#ifndef WEFT_SRC_STORE_SQLITE_DB_H_
#define WEFT_SRC_STORE_SQLITE_DB_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "weft/base/status.h"

namespace weft::store::sqlite {

// Maps an SQLite result code to a Status whose message starts with `what`.
Status to_status(int rc, sqlite3* db, std::string_view what);

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(Stmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Binds are 1-based. Text/blob binds copy the bytes (SQLITE_TRANSIENT).
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, std::string_view text);
  Stmt& bind_blob(int i, std::string_view bytes);
  Stmt& bind_null(int i);

  // Steps once: true when a row is ready, false when done. Errors as to_status.
  Result<bool> step();
  // Steps to completion (for statements without rows).
  Status run();
  // Resets and clears bindings so the statement can be reused.
  void reset();

  int64_t col_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  bool col_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  int col_type(int i) const { return sqlite3_column_type(stmt_, i); }
  std::string col_text(int i) const;
  std::string col_blob(int i) const;
  size_t col_bytes(int i) const { return static_cast<size_t>(sqlite3_column_bytes(stmt_, i)); }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// A borrowed cached statement, reset when the borrow ends so no statement
// stays active (an active statement keeps a read transaction open and the
// connection would keep seeing an old snapshot).
class CachedStmt {
 public:
  explicit CachedStmt(Stmt* s) : s_(s) {}
  ~CachedStmt() {
    if (s_) s_->reset();
  }
  CachedStmt(CachedStmt&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  CachedStmt& operator=(CachedStmt&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  CachedStmt(const CachedStmt&) = delete;
  CachedStmt& operator=(const CachedStmt&) = delete;
  Stmt* operator->() const { return s_; }
  Stmt& operator*() const { return *s_; }

 private:
  Stmt* s_;
};

class Db {
 public:
  Db() = default;
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Opens `path`; `vfs` empty for the default. Errors as to_status.
  Status open(const std::string& path, bool read_only, const std::string& vfs);
  sqlite3* raw() const { return db_; }

  // Runs one or more statements without results.
  Status exec(std::string_view sql);
  // A prepared statement, cached by its SQL text and reset before reuse.
  Result<CachedStmt> cached(const std::string& sql);
  // A one-off prepared statement.
  Result<Stmt> prepare(std::string_view sql);
  // The first column of the first row as an integer (0 when no row).
  Result<int64_t> query_int(std::string_view sql);

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, Stmt> cache_;
};

// BEGIN IMMEDIATE (takes the write lock now, so busy waits happen here and
// never as a deadlock on upgrade) ... COMMIT; rolls back when not committed.
class Txn {
 public:
  explicit Txn(Db& db) : db_(db) {}
  ~Txn();
  Status begin_write();
  Status begin_read();
  Status commit();

 private:
  Db& db_;
  bool open_ = false;
};

}  // namespace weft::store::sqlite

#endif  // WEFT_SRC_STORE_SQLITE_DB_H_
