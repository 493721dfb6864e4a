// BlockStore::open on paths that are not block databases: each gets a message
// saying what the path is, a FIFO never blocks, and another program's SQLite
// database is left untouched.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "weft/store/block_store.h"

namespace weft::store {
namespace {

Result<std::unique_ptr<BlockStore>> open_store(const std::string& path, bool read_only) {
  StoreOptions o;
  o.read_only = read_only;
  return BlockStore::open(path, o);
}

// Opens `path` in a child process that an alarm kills after 10 s; returns the status code of
// the open (as an int), or -1 when the child hung or crashed.
int open_in_child(const std::string& path, bool read_only) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(10);
    auto s = open_store(path, read_only);
    ::_exit(static_cast<int>(s.status().code()) & 0xff);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int64_t sqlite_tables(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", -1, &st,
                     nullptr);
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

void raw_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

// Both opens (read-only and writable) of `path` fail with `code` and a message containing `text`.
void expect_refused(const std::string& path, StatusCode code, const std::string& text) {
  for (bool read_only : {true, false}) {
    auto s = open_store(path, read_only);
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.status().code(), code) << s.status();
    EXPECT_NE(s.status().message().find(text), std::string::npos) << s.status();
  }
}

class DbFileTest : public ::testing::Test {
 protected:
  std::string path(const char* name) { return (dir_.path() / name).string(); }
  weft::testing::TempDir dir_;
};

TEST_F(DbFileTest, DirectoryIsNamedAsSuch) {
  expect_refused(dir_.path().string(), StatusCode::kInvalidArgument,
                 "is a directory, not a block database file");
}

TEST_F(DbFileTest, FifoAndSocketAreRefusedWithoutBlocking) {
  std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (bool read_only : {true, false}) {
    EXPECT_EQ(open_in_child(fifo, read_only), static_cast<int>(StatusCode::kInvalidArgument));
  }
  auto s = open_store(fifo, true);
  EXPECT_NE(s.status().message().find("is a FIFO (named pipe), not a block database file"),
            std::string::npos)
      << s.status();

  std::string sock = path("sock");
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto on_socket = open_store(sock, false);
  ::close(fd);
  EXPECT_EQ(on_socket.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(on_socket.status().message().find("is a socket"), std::string::npos);
  // A character device too (opened read-write SQLite would even write to it).
  EXPECT_EQ(open_store("/dev/null", false).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(DbFileTest, EmptyFileHoldsNoBlocksAndBecomesADatabaseWhenWritten) {
  std::string p = path("empty.db");
  std::ofstream(p).close();
  auto ro = open_store(p, true);
  ASSERT_FALSE(ro.ok());
  EXPECT_EQ(ro.status().code(), StatusCode::kNotFound);
  EXPECT_NE(ro.status().message().find("is empty (0 bytes): it holds no blocks"),
            std::string::npos)
      << ro.status();
  auto rw = open_store(p, false);
  ASSERT_TRUE(rw.ok()) << rw.status();
  rw->reset();
  EXPECT_TRUE(open_store(p, true).ok());
  // A missing file: not found when reading, created when writing.
  EXPECT_EQ(open_store(path("missing.db"), true).status().code(), StatusCode::kNotFound);
}

TEST_F(DbFileTest, FileThatIsNotSqliteIsNamedAsSuch) {
  for (std::string content : {std::string("hello"), std::string(4096, 'x')}) {
    std::string p = path("junk.db");
    std::ofstream(p, std::ios::trunc) << content;
    expect_refused(p, StatusCode::kDataLoss, "is not a weft block database (not an SQLite file)");
  }
}

TEST_F(DbFileTest, AnotherProgramsSqliteDatabaseIsRefusedAndLeftUntouched) {
  std::string p = path("other.sqlite");
  raw_sql(p, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  expect_refused(p, StatusCode::kDataLoss, "is an SQLite database but not a weft block database");
  EXPECT_EQ(sqlite_tables(p), 1);  // no weft tables were added
}

TEST_F(DbFileTest, WeftVersionWithoutBlocksTableIsDamaged) {
  std::string p = path("damaged.db");
  raw_sql(p, "CREATE TABLE other (x); PRAGMA user_version = 2");
  auto s = open_store(p, false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(s.status().message().find("but no blocks table"), std::string::npos) << s.status();
}

TEST_F(DbFileTest, EmptySqliteDatabaseHoldsNoBlocks) {
  std::string p = path("fresh.sqlite");
  raw_sql(p, "PRAGMA user_version = 0; VACUUM");
  auto s = open_store(p, true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("empty SQLite database"), std::string::npos) << s.status();
  EXPECT_TRUE(open_store(p, false).ok());  // writable: it becomes a block database
}

}  // namespace
}  // namespace weft::store
