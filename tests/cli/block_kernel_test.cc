// `weft block edit|append|search|read|undo|redo|rollback|rm`: the block tools
// run in a workspace root's kernel, alone and while a `weft mcp` runs it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/test_support.h"

namespace {

using weft::testing::shell_quote;

using nlohmann::json;

struct CliResult {
  int exit_code;
  std::string out;
};

class BlockKernelCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root());
    std::ofstream(root() / "notes.md") << "one\ntwo\nthree\n";
  }
  std::filesystem::path root() const { return dir_.path() / "ws"; }
  std::string state() const { return (dir_.path() / "state").string(); }
  std::string notes() const { return weft::testing::read_file((root() / "notes.md").string()); }

  // `weft block ARGS --root R --state S`, with `input` on stdin.
  CliResult block(const std::string& args, const std::string& input = "") {
    std::string command = "printf %s " + shell_quote(input) + " | " + shell_quote(WEFT_BIN) + " block " +
                          args + " --root " + shell_quote(root().string()) + " --state " +
                          shell_quote(state());
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return {-1, ""};
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }
  json block_json(const std::string& args, const std::string& input = "") {
    CliResult r = block(args + " --json", input);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    return json::parse(r.out, nullptr, false);
  }

  weft::testing::TempDir dir_;
};

TEST_F(BlockKernelCliTest, AppendEditReadSearchAFileBlock) {
  CliResult appended = block("append file:notes.md 'four\n'");
  ASSERT_EQ(appended.exit_code, 0) << appended.out;
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\n");

  EXPECT_EQ(block("append file:notes.md", "five\n").exit_code, 0);  // stdin
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\nfive\n");

  EXPECT_EQ(block("edit file:notes.md --replace 1:2 --text 'TWO\n'").exit_code, 0);
  EXPECT_EQ(block("edit file:notes.md --delete 3").exit_code, 0);
  EXPECT_EQ(block("edit file:notes.md --insert 0", "zero\n").exit_code, 0);
  EXPECT_EQ(notes(), "zero\none\nTWO\nthree\nfive\n");

  json batch = block_json(
      "edit file:notes.md --ops " +
      shell_quote(R"([{"op":"delete","start_line":0,"end_line":1},)"
            R"({"op":"replace","start_line":4,"end_line":5,"content":"FIVE\n"}])"));
  EXPECT_EQ(batch.value("block_id", ""), "file:notes.md");
  EXPECT_TRUE(batch.value("changed", false));
  EXPECT_EQ(notes(), "one\nTWO\nthree\nFIVE\n");

  CliResult read = block("read file:notes.md --lines 1:3");
  EXPECT_EQ(read.exit_code, 0);
  EXPECT_EQ(read.out, "TWO\nthree\n");
  json read_json = block_json("read file:notes.md");
  EXPECT_EQ(read_json.value("line_count", 0), 4);

  json found = block_json("search file:notes.md 'T.O' --context 0");
  ASSERT_TRUE(found.contains("matches")) << found.dump();
  ASSERT_EQ(found["matches"].size(), 1u);
  EXPECT_EQ(found["matches"][0].value("line", -1), 1);
  CliResult text = block("search file:notes.md three");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("three"), std::string::npos);
}

TEST_F(BlockKernelCliTest, UndoRedoAndRollback) {
  json first = block_json("append file:notes.md 'four\n'");
  std::string v_after_append = first.value("version", "");
  ASSERT_FALSE(v_after_append.empty()) << first.dump();
  EXPECT_EQ(block("edit file:notes.md --replace 0 --text 'ONE\n'").exit_code, 0);
  EXPECT_EQ(notes(), "ONE\ntwo\nthree\nfour\n");

  EXPECT_EQ(block("undo file:notes.md").exit_code, 0);
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\n");
  EXPECT_EQ(block("redo file:notes.md").exit_code, 0);
  EXPECT_EQ(notes(), "ONE\ntwo\nthree\nfour\n");

  // Another agent's undo stack is its own: it has nothing to undo here.
  EXPECT_NE(block("undo file:notes.md --agent someone-else").exit_code, 0);
  EXPECT_EQ(notes(), "ONE\ntwo\nthree\nfour\n");

  json back = block_json("rollback file:notes.md --to " + shell_quote(v_after_append));
  EXPECT_TRUE(back.value("changed", false)) << back.dump();
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\n");
}

TEST_F(BlockKernelCliTest, RmDeletesBlocksAndErrorsHaveExitCodes) {
  EXPECT_EQ(block("rm file:notes.md").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(root() / "notes.md"));

  // A conversation block is marked deleted: still readable, and its deleter's undo restores it.
  json created = block_json("new --text hello");
  const std::string id = created.value("block_id", "");
  ASSERT_FALSE(id.empty()) << created.dump();
  EXPECT_EQ(block("rm " + shell_quote(id)).exit_code, 0);
  json gone = block_json("read " + shell_quote(id));
  EXPECT_TRUE(gone.value("deleted", false)) << gone.dump();
  EXPECT_NE(block("append " + shell_quote(id) + " 'more'").exit_code, 0);
  EXPECT_EQ(block("undo " + shell_quote(id)).exit_code, 0);
  EXPECT_FALSE(block_json("read " + shell_quote(id)).value("deleted", true));

  EXPECT_EQ(block("rm main/amy/1").exit_code, 3);       // not found
  EXPECT_EQ(block("rm memory:amy/plan").exit_code, 3);  // not found

  EXPECT_EQ(block("read file:missing.md").exit_code, 3);   // not found
  EXPECT_EQ(block("read main/nobody/7").exit_code, 3);     // not found
  EXPECT_EQ(block("read 'not an id'").exit_code, 2);       // bad argument
  EXPECT_EQ(block("edit file:x.md --delete 5:2").exit_code, 2);
  EXPECT_EQ(block("edit file:x.md").exit_code, 2);         // nothing to do
  EXPECT_EQ(block("rollback file:x.md").exit_code, 2);     // --to is required
}

TEST_F(BlockKernelCliTest, RmOfAFileIsUndoneByWhoeverDeletedIt) {
  EXPECT_EQ(block("rm file:notes.md").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(root() / "notes.md"));
  // Another author's stack has nothing of it.
  EXPECT_NE(block("undo file:notes.md --agent bot").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(root() / "notes.md"));
  json undone = block_json("undo file:notes.md");
  EXPECT_TRUE(undone.value("changed", false)) << undone.dump();
  EXPECT_EQ(notes(), "one\ntwo\nthree\n");
  EXPECT_EQ(block("redo file:notes.md").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(root() / "notes.md"));
  EXPECT_EQ(block("undo file:notes.md").exit_code, 0);  // a new process: the log was stored
  EXPECT_EQ(notes(), "one\ntwo\nthree\n");
}

TEST_F(BlockKernelCliTest, APersonNeedsNoApprovalUnderHumanRulesAnAgentDoes) {
  std::ofstream(root() / "other.md") << "other\n";
  std::ofstream(root() / "weft.toml")
      << "[permissions]\nrules = [ { glob = \"*.md\", level = \"human\" } ]\n";
  json asked = block_json("rm file:other.md --agent bot");
  EXPECT_FALSE(asked.value("pending_approval", "").empty()) << asked.dump();
  EXPECT_TRUE(std::filesystem::exists(root() / "other.md"));
  json edit = block_json("append file:other.md 'x\n' --agent bot");
  EXPECT_FALSE(edit.value("pending_approval", "").empty()) << edit.dump();

  json appended = block_json("append file:notes.md 'four\n'");
  EXPECT_TRUE(appended.value("pending_approval", "").empty()) << appended.dump();
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\n");
  json removed = block_json("rm file:notes.md");
  EXPECT_TRUE(removed.value("pending_approval", "").empty()) << removed.dump();
  EXPECT_FALSE(std::filesystem::exists(root() / "notes.md"));
  EXPECT_EQ(block("undo file:notes.md").exit_code, 0);
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\n");
}

TEST_F(BlockKernelCliTest, RulesApplyToFileBlocks) {
  std::ofstream(root() / "weft.toml")
      << "[permissions]\nrules = [ { glob = \"notes.md\", level = \"read_only\" } ]\n";
  CliResult denied = block("append file:notes.md 'x\n' --agent bot");
  EXPECT_EQ(denied.exit_code, 4);  // permission denied
  EXPECT_EQ(notes(), "one\ntwo\nthree\n");
}

TEST_F(BlockKernelCliTest, CommandsGoThroughARunningWeftMcp) {
  std::signal(SIGPIPE, SIG_IGN);
  // A `weft mcp` on the root runs its kernel while its stdin stays open.
  std::string command = shell_quote(WEFT_BIN) + " mcp --root " + shell_quote(root().string()) +
                        " --state " + shell_quote(state()) + " > /dev/null";
  FILE* mcp = popen(command.c_str(), "w");
  ASSERT_NE(mcp, nullptr);
  auto socket = std::filesystem::path(state()) / "kernel.sock";
  for (int i = 0; i < 200 && !std::filesystem::exists(socket); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(std::filesystem::exists(socket));

  EXPECT_EQ(block("append file:notes.md 'four\n'").exit_code, 0);
  EXPECT_EQ(block("edit file:notes.md --delete 0").exit_code, 0);
  EXPECT_EQ(notes(), "two\nthree\nfour\n");
  EXPECT_EQ(block("undo file:notes.md").exit_code, 0);  // the undo log is in that kernel
  EXPECT_EQ(notes(), "one\ntwo\nthree\nfour\n");
  json found = block_json("search file:notes.md four");
  EXPECT_EQ(found["matches"].size(), 1u);
  pclose(mcp);
}

}  // namespace
