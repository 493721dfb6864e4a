// The workspace kernel on a real directory: file blocks, attribution, the
// rules of weft.toml and approvals, history, undo, reconcile of disk edits,
// moves and deletes, restarts, and the watcher.
#include "weft/kernel/kernel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "support/test_support.h"

namespace weft::kernel {
namespace kernel_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

source::Attribution agent(std::string name, std::string what = "fs_edit") {
  return {"agent:" + name, std::move(what), std::nullopt};
}

class KernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root());
  }

  std::string root() const { return (dir_.path() / "root").string(); }
  std::string state() const { return (dir_.path() / "state").string(); }

  void write(const std::string& rel, const std::string& text) {
    auto p = std::filesystem::path(root()) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }
  std::string read(const std::string& rel) {
    return weft::testing::read_file(std::filesystem::path(root()) / rel);
  }

  Result<std::unique_ptr<Kernel>> open(bool watch = false, uint64_t max_block_bytes = 16u << 20) {
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    host.limits.max_write_chars = 64ll << 20;
    auto filesystem = fs::make_host_filesystem(root(), host);
    if (!filesystem.ok()) return filesystem.status();
    KernelOptions options;
    options.state_dir = state();
    options.watch = watch;
    options.max_block_bytes = max_block_bytes;
    return Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(*filesystem)), options);
  }

  std::unique_ptr<Kernel> open_ok(bool watch = false) {
    auto k = open(watch);
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? std::move(*k) : nullptr;
  }

  static TextTransform replace_with(std::string text) {
    return [text](const std::optional<std::string>&) -> Result<std::string> { return text; };
  }
  static TextTransform append(std::string text) {
    return [text](const std::optional<std::string>& old) -> Result<std::string> {
      return old.value_or("") + text;
    };
  }

  weft::testing::TempDir dir_;
};

TEST_F(KernelTest, AgentWriteCreatesBlockAndFileWithAttribution) {
  auto k = open_ok();
  auto out = k->change_text("notes/a.md", agent("claude", "fs_write"), source::FileOp::kOverwrite,
                            replace_with("hello\n"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->applied);
  EXPECT_TRUE(out->created);
  EXPECT_FALSE(out->version.empty());
  EXPECT_EQ(read("notes/a.md"), "hello\n");
  auto history = k->history("notes/a.md", 0);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].author, "agent:claude");
  EXPECT_EQ((*history)[0].message, "fs_write");
  EXPECT_EQ((*history)[0].version, out->version);
}

TEST_F(KernelTest, ExistingFileStartsItsHistoryWithItsContent) {
  write("a.txt", "one\ntwo\n");
  auto k = open_ok();
  auto out = k->change_text("a.txt", agent("cursor"), source::FileOp::kOverwrite,
                            replace_with("one\nTWO\n"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->old_text, "one\ntwo\n");
  auto history = k->history("a.txt", 0);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].author, "agent:cursor");
  EXPECT_EQ((*history)[1].author, source::kDiskOrigin);
  auto old_text = k->diff("a.txt", std::nullopt, std::nullopt);
  ASSERT_TRUE(old_text.ok());
  EXPECT_THAT(*old_text, HasSubstr("-two"));
  EXPECT_THAT(*old_text, HasSubstr("+TWO"));
}

TEST_F(KernelTest, DiskEditBeforeAgentEditIsReconciledNotLost) {
  write("a.txt", "alpha\nbeta\ngamma\n");
  auto k = open_ok();
  ASSERT_TRUE(k->read_text("a.txt").ok());  // the block exists now
  write("a.txt", "alpha\nbeta\ngamma\ndelta from the editor\n");
  auto out = k->change_text("a.txt", agent("claude"), source::FileOp::kOverwrite,
                            [](const std::optional<std::string>& old) -> Result<std::string> {
                              std::string t = *old;
                              t.replace(t.find("alpha"), 5, "ALPHA");
                              return t;
                            });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(read("a.txt"), "ALPHA\nbeta\ngamma\ndelta from the editor\n");
  auto history = k->history("a.txt", 0);
  ASSERT_TRUE(history.ok());
  ASSERT_GE(history->size(), 3u);
  EXPECT_EQ((*history)[1].author, source::kDiskOrigin);
}

TEST_F(KernelTest, ReadOnlyRuleRefusesAndNamesTheRule) {
  write("weft.toml",
        "[permissions]\nrules = [\n  { glob = \"vendor/**\", level = \"read_only\" },\n]\n");
  write("vendor/lib.c", "int x;\n");
  auto k = open_ok();
  auto out = k->change_text("vendor/lib.c", agent("claude"), source::FileOp::kOverwrite,
                            replace_with("int y;\n"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("vendor/**"));
  EXPECT_EQ(read("vendor/lib.c"), "int x;\n");
  auto removed = k->remove("vendor/lib.c", agent("claude", "fs_delete"), false);
  EXPECT_EQ(removed.status().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(root()) / "vendor/lib.c"));
}

TEST_F(KernelTest, ConfigurationIsNeverChangedByAnAgent) {
  write("weft.toml", "[permissions]\ndefault = \"admin\"\n");
  auto k = open_ok();
  for (const char* path : {"weft.toml", ".weftignore"}) {
    auto out = k->change_text(path, agent("claude"), source::FileOp::kOverwrite,
                              replace_with("x"));
    EXPECT_EQ(out.status().code(), StatusCode::kPermissionDenied) << path;
  }
  EXPECT_EQ(k->remove("weft.toml", agent("claude"), false).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(k->move("a.txt", "weft.toml", agent("claude"), true).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(read("weft.toml"), "[permissions]\ndefault = \"admin\"\n");
}

TEST_F(KernelTest, HumanRuleQueuesApprovalAndApproveMergesWithLaterChanges) {
  write("weft.toml",
        "[permissions]\nrules = [ { glob = \"docs/**\", level = \"human\" } ]\n");
  write("docs/guide.md", "intro\nbody\nend\n");
  auto k = open_ok();
  auto out = k->change_text("docs/guide.md", agent("claude"), source::FileOp::kOverwrite,
                            replace_with("intro\nbody, improved\nend\n"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->applied);
  ASSERT_FALSE(out->pending_approval.empty());
  EXPECT_EQ(read("docs/guide.md"), "intro\nbody\nend\n");  // unchanged until approved
  auto pending = k->approvals();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].id, out->pending_approval);
  EXPECT_EQ(pending[0].author, "agent:claude");
  EXPECT_THAT(pending[0].diff, HasSubstr("+body, improved"));
  auto status = k->status(std::string("docs/guide.md"));
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->size(), 1u);
  EXPECT_EQ((*status)[0].pending_approvals, std::vector<std::string>{out->pending_approval});
  // A person edits the file meanwhile; approving merges both.
  write("docs/guide.md", "intro, by a person\nbody\nend\n");
  auto approved = k->approve(out->pending_approval, "alice");
  ASSERT_TRUE(approved.ok()) << approved.status();
  EXPECT_EQ(read("docs/guide.md"), "intro, by a person\nbody, improved\nend\n");
  EXPECT_TRUE(k->approvals().empty());
  auto again = k->approve(out->pending_approval, "alice");
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  auto history = k->history("docs/guide.md", 1);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ((*history)[0].author, "agent:claude");
  EXPECT_THAT((*history)[0].message, HasSubstr("approved by human:alice"));
}

TEST_F(KernelTest, RejectLeavesTheFileAndApprovalsSurviveARestart) {
  write("weft.toml", "[permissions]\ndefault = \"human\"\n");
  write("a.txt", "keep\n");
  std::string first, second;
  {
    auto k = open_ok();
    auto a = k->change_text("a.txt", agent("claude"), source::FileOp::kOverwrite,
                            replace_with("drop\n"));
    auto b = k->remove("a.txt", agent("claude", "fs_delete"), false);
    ASSERT_TRUE(a.ok() && b.ok());
    first = a->pending_approval;
    second = b->pending_approval;
    ASSERT_FALSE(first.empty());
    ASSERT_FALSE(second.empty());
  }
  auto k = open_ok();
  ASSERT_EQ(k->approvals().size(), 2u);
  ASSERT_TRUE(k->reject(first, "bob").ok());
  EXPECT_EQ(read("a.txt"), "keep\n");
  EXPECT_EQ(k->approvals().size(), 1u);
  EXPECT_EQ(k->approvals(true).size(), 2u);
  ASSERT_TRUE(k->approve(second, "bob").ok());
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(root()) / "a.txt"));
  EXPECT_EQ(k->approval("apr_nope").status().code(), StatusCode::kNotFound);
}

TEST_F(KernelTest, UndoTakesBackOnlyTheCallersChange) {
  write("a.txt", "one\ntwo\nthree\n");
  auto k = open_ok();
  auto edit = [&](const std::string& who, const std::string& from, const std::string& to) {
    auto out = k->change_text("a.txt", agent(who), source::FileOp::kOverwrite,
                              [&](const std::optional<std::string>& old) -> Result<std::string> {
                                std::string t = *old;
                                t.replace(t.find(from), from.size(), to);
                                return t;
                              });
    ASSERT_TRUE(out.ok()) << out.status();
  };
  edit("a", "one", "ONE");
  edit("b", "three", "THREE");
  auto undone = k->undo("a.txt", agent("a", "fs_undo"));
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_EQ(read("a.txt"), "one\ntwo\nTHREE\n");
  EXPECT_EQ(k->undo("a.txt", agent("a", "fs_undo")).status().code(),
            StatusCode::kFailedPrecondition);
  auto redone = k->redo("a.txt", agent("a", "fs_redo"));
  ASSERT_TRUE(redone.ok()) << redone.status();
  EXPECT_EQ(read("a.txt"), "ONE\ntwo\nTHREE\n");
  ASSERT_TRUE(k->undo("a.txt", agent("b", "fs_undo")).ok());
  EXPECT_EQ(read("a.txt"), "ONE\ntwo\nthree\n");
}

TEST_F(KernelTest, RollbackIsANewChangeAndUndoSurvivesRestart) {
  auto k = open_ok();
  auto v1 = k->change_text("a.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                           replace_with("first\n"));
  ASSERT_TRUE(v1.ok());
  ASSERT_TRUE(k->change_text("a.txt", agent("a"), source::FileOp::kOverwrite,
                             replace_with("second\n"))
                  .ok());
  auto back = k->rollback("a.txt", v1->version, {"human:alice", "rollback", std::nullopt});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(read("a.txt"), "first\n");
  auto history = k->history("a.txt", 0);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[0].author, "human:alice");
  EXPECT_EQ(k->rollback("a.txt", "v1-nonsense", agent("a")).status().code(),
            StatusCode::kInvalidArgument);
  k.reset();
  k = open_ok();
  EXPECT_EQ(k->history("a.txt", 0)->size(), 3u);
  // The agent's undo log is in the state directory: its last change ("second") is undone.
  auto undone = k->undo("a.txt", agent("a", "fs_undo"));
  ASSERT_TRUE(undone.ok()) << undone.status();
}

TEST_F(KernelTest, DeleteKeepsHistoryAndMoveCarriesIt) {
  auto k = open_ok();
  ASSERT_TRUE(k->change_text("a.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                             replace_with("content\n"))
                  .ok());
  ASSERT_TRUE(k->move("a.txt", "dir/b.txt", agent("a", "fs_move"), false).ok());
  EXPECT_EQ(read("dir/b.txt"), "content\n");
  auto moved = k->history("dir/b.txt", 0);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->size(), 1u);
  EXPECT_EQ(k->history("a.txt", 0).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(k->remove("dir/b.txt", agent("a", "fs_delete"), false).ok());
  auto status = k->status(std::nullopt);
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->size(), 1u);
  EXPECT_TRUE((*status)[0].deleted);
  ASSERT_TRUE(k->change_text("dir/b.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                             replace_with("back\n"))
                  .ok());
  EXPECT_EQ(k->history("dir/b.txt", 0)->size(), 2u);
}

TEST_F(KernelTest, BinaryAndNonRegularFilesAreRefusedClearly) {
  write("bin.dat", std::string("\x00\x01\x02", 3));
  auto k = open_ok();
  auto history = k->history("bin.dat", 0);
  EXPECT_EQ(history.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(history.status().message()), HasSubstr("not a text file"));
  ASSERT_EQ(::mkfifo((root() + "/pipe").c_str(), 0600), 0);
  auto fifo = k->change_text("pipe", agent("a"), source::FileOp::kOverwrite, replace_with("x"));
  EXPECT_EQ(fifo.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(fifo.status().message()), HasSubstr("FIFO"));
  // A text file that turns binary freezes its block; the kernel keeps going.
  ASSERT_TRUE(k->change_text("t.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                             replace_with("text\n"))
                  .ok());
  write("t.txt", std::string("bin\x00", 4));
  auto read_back = k->read_text("t.txt");
  EXPECT_EQ(read_back.status().code(), StatusCode::kFailedPrecondition);
  auto status = k->status(std::string("t.txt"));
  ASSERT_TRUE(status.ok());
  EXPECT_THAT((*status)[0].frozen, HasSubstr("binary"));
}

TEST_F(KernelTest, AFileOverTheBlockLimitIsAPlainFileAndFreezesItsBlock) {
  write("big.txt", std::string(2000, 'x') + "\n");
  auto opened = open(/*watch=*/false, /*max_block_bytes=*/1024);
  ASSERT_TRUE(opened.ok()) << opened.status();
  auto k = std::move(*opened);
  auto history = k->history("big.txt", 0);
  EXPECT_EQ(history.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(history.status().message()), HasSubstr("too large"));
  // Tools still change it, as a plain file under the same rules.
  ASSERT_TRUE(k->change_text("big.txt", agent("a"), source::FileOp::kOverwrite, append("y\n")).ok());
  EXPECT_EQ(read("big.txt"), std::string(2000, 'x') + "\ny\n");
  // A block whose file outgrows the limit is frozen with that reason; small again, it thaws.
  ASSERT_TRUE(k->change_text("small.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                             replace_with("small\n"))
                  .ok());
  write("small.txt", std::string(3000, 'z'));
  auto grown = k->read_text("small.txt");  // a tool touching it syncs the block
  EXPECT_EQ(grown.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(grown.status().message()), HasSubstr("too large"));
  auto status = k->status(std::string("small.txt"));
  ASSERT_TRUE(status.ok());
  EXPECT_THAT((*status)[0].frozen, HasSubstr("too large"));
  write("small.txt", "small again\n");
  auto text = k->read_text("small.txt");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "small again\n");
  EXPECT_GE(k->history("small.txt", 0)->size(), 2u);
}

TEST_F(KernelTest, BadWeftTomlRefusesToOpenNamingTheLine) {
  write("weft.toml", "[permissions]\ndefault = \"read_write\"\nrules = [\n  { glob = \"x\", "
                     "level = \"reed_only\" },\n]\n");
  auto k = open();
  ASSERT_FALSE(k.ok());
  EXPECT_THAT(std::string(k.status().message()), HasSubstr("weft.toml:4"));
}

TEST_F(KernelTest, ChangesWhileNoKernelRanAreReconciledAtStart) {
  {
    auto k = open_ok();
    ASSERT_TRUE(k->change_text("a.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                               replace_with("agent\n"))
                    .ok());
  }
  write("a.txt", "agent\nand an editor\n");
  auto k = open_ok();
  auto status = k->status(std::nullopt);
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->size(), 1u);
  EXPECT_FALSE((*status)[0].disk_ahead);
  auto history = k->history("a.txt", 0);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].author, source::kDiskOrigin);
}

TEST_F(KernelTest, WatcherCommitsDiskEditsAndReportsThem) {
  auto k = open_ok(/*watch=*/true);
  std::mutex mu;
  std::vector<std::string> seen;
  k->set_change_listener([&](const std::string& id, const std::string&, const std::string& origin) {
    std::lock_guard lock(mu);
    seen.push_back(id + " " + origin);
  });
  write("w.txt", "from an editor\n");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mu);
      if (!seen.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::lock_guard lock(mu);
  ASSERT_FALSE(seen.empty()) << "the watcher reported nothing in 5 s";
  EXPECT_EQ(seen[0], "file:w.txt source:disk");
}

TEST_F(KernelTest, ARenameOverAFileWithABlockContinuesItsHistory) {
  auto k = open_ok();
  ASSERT_TRUE(k->change_text("f.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                             replace_with("one\n"))
                  .ok());
  // An editor's save: a scratch file that got a block of its own, renamed over f.txt.
  write("f.txt.tmp", "two\n");
  k->on_disk_changes({{source::FileChange::Kind::kChanged, "f.txt.tmp", "", false}});
  std::filesystem::rename(std::filesystem::path(root()) / "f.txt.tmp",
                          std::filesystem::path(root()) / "f.txt");
  k->on_disk_changes({{source::FileChange::Kind::kRenamed, "f.txt", "f.txt.tmp", false}});
  auto history = k->history("f.txt", 0);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].author, source::kDiskOrigin);
  EXPECT_EQ((*history)[1].author, "agent:a");
  // The block goes on taking changes (it was once deleted from under the kernel here).
  auto out = k->change_text("f.txt", agent("a"), source::FileOp::kOverwrite, append("three\n"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(read("f.txt"), "two\nthree\n");
  // weft's own temporary files never become blocks.
  write(".weft-tmp-123", "scratch\n");
  k->on_disk_changes({{source::FileChange::Kind::kChanged, ".weft-tmp-123", "", false}});
  auto status = k->status(std::nullopt);
  ASSERT_TRUE(status.ok());
  for (const auto& f : *status) EXPECT_NE(f.path, ".weft-tmp-123");
}

// A crash (kill -9) leaves the database as it was at the last committed
// transaction: copying the state directory while the kernel runs gives the
// same files. Both sides of the write to the file are covered.
TEST_F(KernelTest, AStartAfterACrashKeepsEveryStoredChangeOnDisk) {
  auto k = open_ok();
  ASSERT_TRUE(k->change_text("a.txt", agent("a", "fs_write"), source::FileOp::kOverwrite,
                             replace_with("one\n"))
                  .ok());
  ASSERT_TRUE(k->change_text("a.txt", agent("a"), source::FileOp::kOverwrite,
                             replace_with("one\ntwo\n"))
                  .ok());
  auto crashed = dir_.path() / "crashed";
  std::filesystem::copy(state(), crashed, std::filesystem::copy_options::recursive);
  k.reset();
  auto reopen = [&]() {
    std::filesystem::remove_all(state());
    std::filesystem::copy(crashed, state(), std::filesystem::copy_options::recursive);
    return open_ok();
  };
  // The file got the last change before the crash: synced, no disk change recorded.
  k = reopen();
  auto history = k->history("a.txt", 0);
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].author, "agent:a");
  auto status = k->status(std::string("a.txt"));
  ASSERT_TRUE(status.ok());
  EXPECT_FALSE((*status)[0].dirty);
  EXPECT_FALSE((*status)[0].disk_ahead);
  k.reset();
  // The crash came between storing the change and writing the file: the file
  // still has the content before it, and the start writes the change.
  write("a.txt", "one\n");
  k = reopen();
  EXPECT_EQ(read("a.txt"), "one\ntwo\n");
  EXPECT_EQ(k->history("a.txt", 0)->size(), 2u);
}

TEST_F(KernelTest, ConcurrentAgentsOnOneFileLoseNothing) {
  write("log.txt", "");
  auto k = open_ok();
  constexpr int kThreads = 4, kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto out = k->change_text("log.txt", agent("t" + std::to_string(t), "fs_write"),
                                  source::FileOp::kAppend,
                                  append("t" + std::to_string(t) + "-" + std::to_string(i) + "\n"));
        ASSERT_TRUE(out.ok()) << out.status();
      }
    });
  }
  for (auto& th : threads) th.join();
  std::string text = read("log.txt");
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) {
      EXPECT_THAT(text, HasSubstr("t" + std::to_string(t) + "-" + std::to_string(i) + "\n"));
    }
  }
  // The empty file it started as has no change of its own.
  EXPECT_EQ(k->history("log.txt", 0)->size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace kernel_test_local
}  // namespace weft::kernel

namespace weft::kernel {
namespace kernel_test_local {

TEST_F(KernelTest, EveryChangeListenerHearsACommitUntilRemoved) {
  auto k = open_ok();
  ASSERT_NE(k, nullptr);
  std::vector<std::string> heard;
  std::mutex mu;
  auto listen = [&](std::string who) {
    return [&, who](const std::string& block, const std::string&, const std::string&) {
      std::lock_guard lock(mu);
      heard.push_back(who + " " + block);
    };
  };
  const uint64_t a = k->add_change_listener(listen("a"));
  k->add_change_listener(listen("b"));
  k->set_change_listener(listen("set"));
  ASSERT_TRUE(k->change_text("x.md", agent("claude"), source::FileOp::kOverwrite,
                             replace_with("one\n")).ok());
  EXPECT_EQ(heard, (std::vector<std::string>{"a file:x.md", "b file:x.md", "set file:x.md"}));
  heard.clear();
  k->remove_change_listener(a);
  k->set_change_listener(nullptr);  // removes only its own
  ASSERT_TRUE(k->change_text("x.md", agent("claude"), source::FileOp::kOverwrite,
                             replace_with("two\n")).ok());
  EXPECT_EQ(heard, (std::vector<std::string>{"b file:x.md"}));
}

}  // namespace kernel_test_local
}  // namespace weft::kernel
