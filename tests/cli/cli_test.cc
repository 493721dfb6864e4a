// Runs the `weft` executable as a user or an external checker would, in the
// exact command forms the README documents, and checks output and exit codes.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.h"

namespace {

using weft::testing::shell_quote;

struct CliRun {
  int exit_code;
  std::string out;  // stdout only; stderr goes to the test log
};

// Runs `weft ARGS` in `cwd`; with `raw`, ARGS is the whole shell command.
CliRun weft(const std::string& args, const std::filesystem::path& cwd, bool raw = false) {
  std::string command =
      "cd " + shell_quote(cwd.string()) + " && " + (raw ? args : shell_quote(WEFT_BIN) + " " + args);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, ""};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// One change by peer 1 inserting "a" into root text "text".
const char* kUpdate =
    R"({"schema_version":1,"start_version":{},"peers":["1"],"changes":[{"id":"0@0",)"
    R"("timestamp":0,"deps":[],"lamport":0,"msg":null,"ops":[{"container":)"
    R"("cid:root-text:Text","content":{"type":"insert","pos":0,"text":"a"},"counter":0}]}]})";

// Peer 2 appends "b" after seeing peer 1's op.
const char* kUpdate2 =
    R"({"schema_version":1,"start_version":{},"peers":["2","1"],"changes":[{"id":"0@0",)"
    R"("timestamp":0,"deps":["0@1"],"lamport":1,"msg":"second","ops":[{"container":)"
    R"("cid:root-text:Text","content":{"type":"insert","pos":1,"text":"b"},"counter":0}]}]})";

class CliTest : public ::testing::Test {
 protected:
  weft::testing::TempDir dir_;
  const std::filesystem::path& dir() { return dir_.path(); }
};

TEST_F(CliTest, HelpAndVersion) {
  CliRun help = weft("--help", dir());
  EXPECT_EQ(help.exit_code, 0);
  for (const char* command : {"serve", "mcp", "fs", "block", "loro", "doc"}) {
    EXPECT_NE(help.out.find(command), std::string::npos) << command;
  }
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
  EXPECT_EQ(weft("version", dir()).exit_code, 0);
  EXPECT_EQ(weft("no-such-command", dir()).exit_code, 2);
}

TEST_F(CliTest, McpAndServeOfferFsyncAndMcpReportsIt) {
  for (const char* command : {"mcp --help", "serve --help"}) {
    CliRun help = weft(command, dir());
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.out.find("--fsync"), std::string::npos) << command;
  }
  // End of input ends the server cleanly; the banner (stderr) says writes are fsync'd.
  CliRun durable = weft("mcp --root . --fsync </dev/null 2>&1", dir());
  EXPECT_EQ(durable.exit_code, 0);
  EXPECT_NE(durable.out.find("fsync on every write"), std::string::npos) << durable.out;
  CliRun fast = weft("mcp --root . </dev/null 2>&1", dir());
  EXPECT_EQ(fast.exit_code, 0);
  EXPECT_EQ(fast.out.find("fsync"), std::string::npos) << fast.out;
}

TEST_F(CliTest, ServeStopsCleanlyOnSigterm) {
  // The server started, a SIGTERM: it shuts down (exit 0), says so and
  // removes its kernel socket, as a service manager expects.
  std::filesystem::create_directories(dir() / "ws");
  const std::string script =
      "(" + shell_quote(WEFT_BIN) + " serve --root ws --state st --port 0 >out.txt 2>err.txt & pid=$!;"
      " for i in $(seq 200); do grep -q Ctrl-C out.txt 2>/dev/null && break; sleep 0.05; done;"
      " kill -TERM $pid; wait $pid; echo \"exit=$?\")";
  CliRun run = weft(script, dir(), /*raw=*/true);
  EXPECT_EQ(run.out, "exit=0\n") << weft::testing::read_file(dir() / "err.txt");
  EXPECT_NE(weft::testing::read_file(dir() / "err.txt").find("stopped by SIGTERM"), std::string::npos)
      << weft::testing::read_file(dir() / "err.txt");
  EXPECT_FALSE(std::filesystem::exists(dir() / "st" / "kernel.sock"));
}

TEST_F(CliTest, LoroMergePrintsValueAndVersion) {
  write_file(dir() / "u1.json", kUpdate);
  write_file(dir() / "u2.json", kUpdate2);
  CliRun plain = weft("loro merge u1.json u2.json", dir());
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.out, "{\"text\":\"ab\"}\n");
  CliRun each = weft("loro merge --each u1.json u2.json", dir());
  EXPECT_EQ(each.out, "{\"text\":\"a\"}\n{\"text\":\"ab\"}\n");
  CliRun versioned = weft("loro merge --with-version u1.json u2.json", dir());
  EXPECT_EQ(versioned.out, "{\"value\":{\"text\":\"ab\"},\"version\":{\"1\":1,\"2\":1}}\n");
}

TEST_F(CliTest, LoroMergeWaitsForMissingDependencies) {
  write_file(dir() / "u1.json", kUpdate);
  write_file(dir() / "u2.json", kUpdate2);
  // The second change arrives first and waits for its dependency.
  EXPECT_EQ(weft("loro merge u2.json u1.json", dir()).out, "{\"text\":\"ab\"}\n");
}

TEST_F(CliTest, LoroExportRoundTrips) {
  write_file(dir() / "u1.json", kUpdate);
  write_file(dir() / "u2.json", kUpdate2);
  ASSERT_EQ(weft("loro export u1.json u2.json --out all.json", dir()).exit_code, 0);
  auto exported = nlohmann::json::parse(weft::testing::read_file(dir() / "all.json"));
  EXPECT_EQ(exported["schema_version"], 1);
  EXPECT_EQ(weft("loro merge all.json", dir()).out, "{\"text\":\"ab\"}\n");
}

TEST_F(CliTest, DocExportAndInfo) {
  write_file(dir() / "u1.json", kUpdate);
  write_file(dir() / "u2.json", kUpdate2);
  for (const char* mode : {"snapshot", "updates"}) {
    std::string out = std::string("doc.") + mode;
    ASSERT_EQ(weft("doc export u1.json u2.json --out " + out + " --mode " + mode, dir()).exit_code,
              0);
    // Binary files are detected by content wherever a FILE is taken.
    EXPECT_EQ(weft("loro merge " + out, dir()).out, "{\"text\":\"ab\"}\n") << mode;
    CliRun info = weft("doc info " + out, dir());
    EXPECT_EQ(info.exit_code, 0);
    auto parsed = nlohmann::json::parse(info.out, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << info.out;
    EXPECT_EQ(parsed["version"], nlohmann::json({{"1", 1}, {"2", 1}}));
  }
}

TEST_F(CliTest, BadInputGetsAnErrorExitCode) {
  write_file(dir() / "garbage.json", "{not json");
  write_file(dir() / "random.bin", std::string("\x00\x01\xff\xfe garbage", 12));
  EXPECT_EQ(weft("loro merge garbage.json", dir()).exit_code, 5);
  EXPECT_EQ(weft("loro merge random.bin", dir()).exit_code, 5);
  EXPECT_EQ(weft("doc info random.bin", dir()).exit_code, 5);
  EXPECT_EQ(weft("loro merge missing.json", dir()).exit_code, 3);
}

TEST_F(CliTest, FsWriteReadSnapshotRestore) {
  std::filesystem::create_directory(dir() / "ws");
  std::string common = " --root ws --git-dir " + shell_quote((dir() / "snapshots.git").string());
  ASSERT_EQ(weft("fs write" + common + " a.txt --content hello", dir()).exit_code, 0);
  CliRun read = weft("fs read" + common + " a.txt --json", dir());
  ASSERT_EQ(read.exit_code, 0);
  auto parsed = nlohmann::json::parse(read.out);
  EXPECT_EQ(parsed["content"], "hello");
  EXPECT_EQ(parsed["total_lines"], 1);
  CliRun snap = weft("fs snapshot" + common + " --tag first --json", dir());
  ASSERT_EQ(snap.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(snap.out)["tag"], "first");
  ASSERT_EQ(weft("fs write" + common + " a.txt --mode overwrite --content bye", dir()).exit_code,
            0);
  ASSERT_EQ(weft("fs write" + common + " b.txt --content new", dir()).exit_code, 0);
  ASSERT_EQ(weft("fs restore" + common + " first", dir()).exit_code, 0);
  EXPECT_EQ(weft::testing::read_file(dir() / "ws" / "a.txt"), "hello");
  EXPECT_FALSE(std::filesystem::exists(dir() / "ws" / "b.txt"));
}

TEST_F(CliTest, FsRefusesPathsOutsideTheRoot) {
  std::filesystem::create_directory(dir() / "ws");
  write_file(dir() / "secret.txt", "secret");
  EXPECT_EQ(weft("fs read --root ws ../secret.txt", dir()).exit_code, 4);
  EXPECT_EQ(weft("fs write --root ws ../evil.txt --content x", dir()).exit_code, 4);
  EXPECT_FALSE(std::filesystem::exists(dir() / "evil.txt"));
  EXPECT_EQ(weft("fs read --root ws nothing.txt", dir()).exit_code, 3);
}

TEST_F(CliTest, BlockCreateListRender) {
  ASSERT_EQ(weft("block create --db b.db alice notes --text 'hi there'", dir()).exit_code, 0);
  CliRun ls = weft("block ls --db b.db --json", dir());
  ASSERT_EQ(ls.exit_code, 0);
  EXPECT_NE(ls.out.find("notes"), std::string::npos);
  CliRun render = weft("block render --db b.db alice notes", dir());
  EXPECT_EQ(render.exit_code, 0);
  EXPECT_NE(render.out.find("hi there"), std::string::npos);
  EXPECT_EQ(weft("block show --db b.db alice nothere", dir()).exit_code, 3);
  EXPECT_EQ(
      weft("block create --db b.db alice bad --schema '{\"kind\":\"nope\"}'", dir()).exit_code, 2);
}

// Sets column `column` of every block row, as a tool other than weft might.
void set_block_column(const std::filesystem::path& db, const char* column,
                      const std::string& value) {
  sqlite3* conn = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &conn), SQLITE_OK);
  std::string sql = std::string("UPDATE blocks SET ") + column + " = ?1";
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(conn, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
  sqlite3_bind_text(stmt, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(conn);
}

std::string nested_objects(size_t depth) {
  std::string text;
  for (size_t i = 0; i < depth; ++i) text += "{\"a\":";
  return text + "1" + std::string(depth, '}');
}

TEST_F(CliTest, DeepJsonInABlockDatabaseIsCorruptDataNotACrash) {
  ASSERT_EQ(weft("block create --db b.db alice notes --text hi", dir()).exit_code, 0);
  ASSERT_EQ(weft("block create --db b.db alice other --text ho", dir()).exit_code, 0);
  set_block_column(dir() / "b.db", "metadata_json", nested_objects(100'000));
  EXPECT_EQ(weft("block show --db b.db alice notes --json", dir()).exit_code, 5);
  CliRun err = weft("block show --db b.db alice notes --json 2>&1", dir());
  EXPECT_EQ(err.exit_code, 5);
  EXPECT_NE(err.out.find("corrupt row: metadata_json: JSON nested deeper than 64 levels"),
            std::string::npos)
      << err.out;
  // `ls` lists what it can read, warns about the rest and exits 5.
  CliRun ls = weft("block ls --db b.db --json", dir());
  EXPECT_EQ(ls.exit_code, 5);
  auto listed = nlohmann::json::parse(ls.out, nullptr, false);
  ASSERT_TRUE(listed.is_array()) << ls.out;
  EXPECT_TRUE(listed.empty());
  CliRun plain = weft("block ls --db b.db 2>&1", dir());
  EXPECT_EQ(plain.exit_code, 5);
  EXPECT_NE(plain.out.find("(skipped)"), std::string::npos) << plain.out;
  set_block_column(dir() / "b.db", "metadata_json", "{}");
  set_block_column(dir() / "b.db", "schema_json",
                   std::string(150'000, '[') + std::string(150'000, ']'));
  EXPECT_EQ(weft("block show --db b.db alice notes --json", dir()).exit_code, 5);
}

TEST_F(CliTest, DeepJsonInputIsRefusedWithAClearMessage) {
  write_file(dir() / "deep_schema.json", nested_objects(100'000));
  CliRun schema = weft("block create --db b.db alice s --schema @deep_schema.json 2>&1", dir());
  EXPECT_EQ(schema.exit_code, 2);
  EXPECT_NE(schema.out.find("block schema: JSON nested deeper than 64 levels"), std::string::npos)
      << schema.out;
  // An argument is at most 128 KiB: 1,000 levels.
  write_file(dir() / "deep_meta.json", nested_objects(1000));
  CliRun meta =
      weft("block create --db b.db alice m --metadata \"$(cat deep_meta.json)\" 2>&1", dir());
  EXPECT_EQ(meta.exit_code, 2);
  EXPECT_NE(meta.out.find("block metadata: JSON nested deeper than 64 levels"), std::string::npos)
      << meta.out.substr(0, 500);
  // Loro JSON updates: a value may nest 256 levels, so the text may nest 263.
  write_file(dir() / "deep.json", std::string(150'000, '[') + std::string(150'000, ']'));
  CliRun loro = weft("loro merge deep.json 2>&1", dir());
  EXPECT_EQ(loro.exit_code, 5);
  EXPECT_NE(loro.out.find("JSON nested deeper than 263 levels"), std::string::npos) << loro.out;
}

// A command line, the exit code it must end with and text its output (stderr included) holds.
struct ExpectedRun {
  std::string args;
  int exit_code;
  std::string message;
};

void expect_run(const ExpectedRun& c, const CliRun& run) {
  EXPECT_EQ(run.exit_code, c.exit_code) << c.args << "\n" << run.out;
  EXPECT_NE(run.out.find(c.message), std::string::npos) << c.args << "\n" << run.out;
}

// Each command that opens a path a person gave refuses what is not a regular file, at once
// (a FIFO would block a reader forever), with a message naming what the path is.
TEST_F(CliTest, PathsThatAreNotRegularFilesAreRefusedWithoutHanging) {
  ASSERT_EQ(::mkfifo((dir() / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir() / "ws");
  const ExpectedRun cases[] = {
      {"block ls --db fifo", 2, "--db: 'fifo' is a FIFO (named pipe), not a block database file"},
      {"block create --db fifo a b", 2, "'fifo' is a FIFO (named pipe)"},
      {"block ls --db ws", 2, "--db: 'ws' is a directory, not a block database file"},
      {"block show --db /dev/null a b", 2, "is a character device"},
      {"block create --db b.db a b --schema @fifo", 2, "--schema: 'fifo' is a FIFO"},
      {"doc info fifo", 2, "'fifo' is a FIFO (named pipe), not a weft document file"},
      {"doc export fifo --out x.bin", 2, "'fifo' is a FIFO"},
      {"loro merge fifo", 2, "'fifo' is a FIFO (named pipe), not a Loro JSON, Loro binary or weft binary file"},
      {"loro merge ws", 2, "'ws' is a directory"},
      {"fs restore --root ws fifo", 2, "'fifo' is a FIFO (named pipe), not a snapshot record"},
      {"fs ls --root fifo", 1, "fifo' is a FIFO (named pipe), not a directory"},
      {"mcp --root fifo", 1, "fifo' is a FIFO (named pipe), not a directory"},
  };
  for (const ExpectedRun& c : cases) {
    expect_run(c, weft("timeout 20 " + shell_quote(WEFT_BIN) + " " + c.args + " </dev/null 2>&1", dir(),
                       /*raw=*/true));
  }
  EXPECT_FALSE(std::filesystem::exists(dir() / "b.db"));
}

TEST_F(CliTest, BlockDatabasesThatAreEmptyOrForeignAreNamedAsSuch) {
  write_file(dir() / "empty.db", "");
  write_file(dir() / "junk.db", "just some text, not a database\n");
  const ExpectedRun cases[] = {
      {"block ls --db empty.db", 3, "'empty.db' is empty (0 bytes): it holds no blocks"},
      {"block ls --db missing.db", 3, "no block database at 'missing.db'"},
      {"block ls --db junk.db", 5, "'junk.db' is not a weft block database (not an SQLite file)"},
      {"block create --db junk.db a b", 5, "not an SQLite file"},
  };
  for (const ExpectedRun& c : cases) expect_run(c, weft(c.args + " 2>&1", dir()));
  // An empty file is a new database for a writing command.
  EXPECT_EQ(weft("block create --db empty.db alice notes", dir()).exit_code, 0);
  EXPECT_EQ(weft("block ls --db empty.db", dir()).exit_code, 0);
}

}  // namespace
