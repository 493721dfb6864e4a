// Block database file checks (see db_file.h).
#include "store/db_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "weft/base/input_file.h"

namespace weft::store {
namespace {

constexpr char kSqliteMagic[16] = "SQLite format 3";  // 15 characters and the NUL

std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool nonempty_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

}  // namespace

Status check_db_file(const std::string& path, bool read_only) {
  if (path.empty() || path == ":memory:") return Status();  // SQLite's private databases
  Status kind = check_regular_file(path, "block database file");
  if (kind.code() == StatusCode::kNotFound) {
    if (!read_only) return Status();  // SQLite creates it
    return not_found("no block database at " + quoted(path));
  }
  WEFT_RETURN_IF_ERROR(kind);
  // Regular, so opening cannot block; O_NONBLOCK still guards a file swapped meanwhile.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == EACCES) return permission_denied("cannot read " + quoted(path));
    return Status();  // let SQLite report it
  }
  char head[sizeof kSqliteMagic] = {};
  ssize_t n = ::pread(fd, head, sizeof head, 0);
  ::close(fd);
  if (n == 0) {
    // A new WAL database can hold everything in its -wal file for a moment.
    if (read_only && !nonempty_file(path + "-wal")) {
      return not_found(quoted(path) +
                       " is empty (0 bytes): it holds no blocks (not a block database yet; "
                       "creating a block in it makes it one)");
    }
    return Status();
  }
  if (n != static_cast<ssize_t>(sizeof head) || std::memcmp(head, kSqliteMagic, sizeof head) != 0) {
    return data_loss(quoted(path) + " is not a weft block database (not an SQLite file)");
  }
  return Status();
}

Status check_db_schema(sqlite::Db& db, const std::string& path, int64_t version) {
  WEFT_ASSIGN_OR_RETURN(int64_t tables,
                        db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table'"));
  WEFT_ASSIGN_OR_RETURN(
      int64_t blocks,
      db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'blocks'"));
  if (version == 0 && tables > 0) {
    return data_loss(quoted(path) +
                     " is an SQLite database but not a weft block database (it has tables and no "
                     "weft schema); weft does not add its tables to another program's database");
  }
  if (version > 0 && blocks == 0) {
    return data_loss(quoted(path) + " has weft schema version " + std::to_string(version) +
                     " but no blocks table: it is damaged or not a weft block database");
  }
  return Status();
}

}  // namespace weft::store
