// What a path given as a block database is, checked before and just after
// SQLite opens it, so that a person who names the wrong file gets a message
// saying what it is (SQLite would block on a FIFO, call a directory a disk
// I/O error and treat another program's database as one to migrate).
//
// Thread safety: stateless functions; `db` as sqlite_db.h.
#ifndef WEFT_SRC_STORE_DB_FILE_H_
#define WEFT_SRC_STORE_DB_FILE_H_

#include <cstdint>
#include <string>

#include "store/sqlite_db.h"
#include "weft/base/status.h"

namespace weft::store {

// Before opening. kInvalidArgument for anything but a regular file (directory,
// FIFO, socket, device); kNotFound for a missing file when `read_only`, and for
// an empty (0-byte) one; kDataLoss when the file is not an SQLite database.
// A missing or empty file is fine when writable: it becomes a new database.
// "" and ":memory:" (SQLite's private temporary databases) pass.
Status check_db_file(const std::string& path, bool read_only);

// After opening, with the file's user_version. kDataLoss for an SQLite
// database of another program (tables but no weft schema), which is never
// migrated, and for a weft schema version whose blocks table is missing.
Status check_db_schema(sqlite::Db& db, const std::string& path, int64_t version);

}  // namespace weft::store

#endif  // WEFT_SRC_STORE_DB_FILE_H_
