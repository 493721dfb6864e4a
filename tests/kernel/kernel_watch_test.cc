// The kernel with its inotify watcher on a real directory, driven by real
// disk operations: editors' save patterns, `git checkout`, `rm -r`, a
// thousand files at once, directory renames, weft's own writes, weft.toml and
// .gitignore changes, a rescan, a file turning binary and a write burst.
// Everything the watcher does is asynchronous, so each test polls (up to
// kTimeout) for the state it expects, then waits a little more to see that
// nothing else comes. The DISABLED_ tests are known failures of the kernel or
// the watcher, kept as reproductions until those are fixed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "support/test_support.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace kernel_watch_test_local {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Generous: the machine is a loaded 2-core VM.
constexpr auto kTimeout = std::chrono::seconds(10);
// How long to keep watching for changes that should not come.
constexpr auto kSettle = std::chrono::milliseconds(300);

source::Attribution agent(std::string what = "fs_edit") {
  return {"agent:claude", std::move(what), std::nullopt};
}

TextTransform replace_with(std::string text) {
  return [text](const std::optional<std::string>&) -> Result<std::string> { return text; };
}

// Polls `done` every 10 ms until it holds or `timeout` passes.
bool wait_until(const std::function<bool()>& done, Clock::duration timeout = kTimeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Runs a shell command, quietly; its exit status.
int shell(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str());
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

class KernelWatchTest : public ::testing::Test {
 public:  // the save patterns below drive the disk through these
  void SetUp() override { std::filesystem::create_directories(root()); }
  void TearDown() override { kernel_.reset(); }

  std::string root() const { return (dir_.path() / "root").string(); }
  std::string state() const { return (dir_.path() / "state").string(); }
  std::filesystem::path at(const std::string& rel) const {
    return std::filesystem::path(root()) / rel;
  }

  void write(const std::string& rel, const std::string& bytes) {
    std::filesystem::create_directories(at(rel).parent_path());
    std::ofstream(at(rel), std::ios::binary | std::ios::trunc) << bytes;
  }
  // Written and fsynced, as careful editors do before a rename.
  void write_synced(const std::string& rel, const std::string& bytes) {
    std::FILE* f = std::fopen(at(rel).c_str(), "wb");
    ASSERT_NE(f, nullptr) << rel;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fflush(f);
    ::fsync(fileno(f));
    std::fclose(f);
  }
  std::string read(const std::string& rel) const { return weft::testing::read_file(at(rel)); }
  void rename(const std::string& from, const std::string& to) {
    ASSERT_EQ(std::rename(at(from).c_str(), at(to).c_str()), 0) << from << " -> " << to;
  }
  void remove(const std::string& rel) { ASSERT_TRUE(std::filesystem::remove(at(rel))) << rel; }

  // Opens the kernel (watching) and records every commit it reports.
  void open(bool watch = true) {
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    auto filesystem = fs::make_host_filesystem(root(), host);
    ASSERT_TRUE(filesystem.ok()) << filesystem.status();
    KernelOptions options;
    options.state_dir = state();
    options.watch = watch;
    options.log = [this](const std::string& line) {
      std::lock_guard lock(mu_);
      log_.push_back(line);
    };
    auto k = Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(*filesystem)), options);
    ASSERT_TRUE(k.ok()) << k.status();
    kernel_ = std::move(*k);
    kernel_->set_change_listener(
        [this](const std::string& id, const std::string&, const std::string& origin) {
          std::lock_guard lock(mu_);
          commits_.push_back({id, origin});
        });
  }
  Kernel& k() { return *kernel_; }

  // Commits reported for `path` by `origin` ("" : any) so far.
  size_t commits(const std::string& path, const std::string& origin = "") {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& [id, o] : commits_) {
      if (id == file_block_id(path) && (origin.empty() || o == origin)) ++n;
    }
    return n;
  }

  // status() by path (without reconciling anything).
  std::map<std::string, FileStatus> blocks(std::optional<std::string> under = std::nullopt) {
    std::map<std::string, FileStatus> out;
    auto s = k().status(std::move(under));
    if (!s.ok()) return out;
    for (auto& f : *s) {
      if (f.is_block) out[f.path] = f;
    }
    return out;
  }
  // The block of `path` took the file as it is now: present, synced with
  // its current stat, nothing of its own unwritten.
  bool in_sync(const std::string& path) {
    auto b = blocks(path);
    auto it = b.find(path);
    return it != b.end() && !it->second.deleted && !it->second.disk_ahead && !it->second.dirty &&
           it->second.frozen.empty();
  }
  bool shows_deleted(const std::string& path) {
    auto b = blocks(path);
    auto it = b.find(path);
    return it != b.end() && it->second.deleted;
  }

  std::string describe_blocks() {
    std::string out;
    for (const auto& [path, s] : blocks()) {
      out += "  " + path + (s.deleted ? " deleted" : "") + (s.disk_ahead ? " disk_ahead" : "") +
             (s.dirty ? " dirty" : "") + (s.frozen.empty() ? "" : " frozen(" + s.frozen + ")") +
             "\n";
    }
    std::lock_guard lock(mu_);
    for (const auto& line : log_) out += "  log: " + line + "\n";
    return out;
  }

  std::vector<source::FileHistoryEntry> history(const std::string& path) {
    auto h = k().history(path, 0);
    EXPECT_TRUE(h.ok()) << path << ": " << h.status();
    return h.ok() ? *h : std::vector<source::FileHistoryEntry>{};
  }

  weft::testing::TempDir dir_;
  std::unique_ptr<Kernel> kernel_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> commits_;  // block id, origin
  std::vector<std::string> log_;
};

// ------------------------------------------------------------ editors' saves

struct SavePattern {
  std::string name;
  std::function<void(KernelWatchTest&, const std::string& text)> save;
};
void PrintTo(const SavePattern& p, std::ostream* os) { *os << p.name; }

class EditorSaveTest : public KernelWatchTest, public ::testing::WithParamInterface<SavePattern> {};

// Each save of f.txt, however the editor does it, is one source:disk change
// of f.txt's block (its history kept) with the saved text, and the editor's
// temporary names leave no block behind.
TEST_P(EditorSaveTest, EachSaveIsOneDiskChangeOfTheSameBlock) {
  write("f.txt", "first\n");
  open();
  ASSERT_TRUE(k().read_text("f.txt").ok());  // f.txt is a block now
  ASSERT_TRUE(k().change_text("f.txt", agent(), source::FileOp::kOverwrite,
                              replace_with("first\nby an agent\n"))
                  .ok());
  size_t entries = history("f.txt").size();
  ASSERT_EQ(entries, 2u);
  for (int i = 1; i <= 3; ++i) {
    std::string text = "first\nby an agent\nsave " + std::to_string(i) + "\n";
    size_t disk_commits = commits("f.txt", std::string(source::kDiskOrigin));
    GetParam().save(*this, text);
    ASSERT_TRUE(wait_until([&] {
      return commits("f.txt", std::string(source::kDiskOrigin)) > disk_commits && in_sync("f.txt");
    })) << "save "
        << i << ": f.txt's block did not take the save in time\n"
        << describe_blocks();
    std::this_thread::sleep_for(kSettle);
    EXPECT_EQ(commits("f.txt", std::string(source::kDiskOrigin)), disk_commits + 1) << "save " << i;
    auto h = history("f.txt");
    ASSERT_EQ(h.size(), entries + 1) << "save " << i << ": f.txt lost its history\n"
                                     << describe_blocks();
    entries = h.size();
    EXPECT_EQ(h[0].author, source::kDiskOrigin);
    EXPECT_EQ(h.back().message, "initial content");  // the same block as before
    EXPECT_EQ(*k().read_text("f.txt"), text);
    EXPECT_EQ(read("f.txt"), text);
  }
  auto all = blocks();
  std::vector<std::string> paths;
  for (const auto& [path, s] : all) paths.push_back(path);
  EXPECT_EQ(paths, std::vector<std::string>{"f.txt"}) << describe_blocks();
}

std::string save_name(const ::testing::TestParamInfo<SavePattern>& info) { return info.param.name; }

// Write a temporary file, rename it over the file (many editors, sed -i).
const SavePattern kTempThenRename{"TempThenRename",
                                  [](KernelWatchTest& t, const std::string& text) {
                                    t.write("f.txt.tmp", text);
                                    t.rename("f.txt.tmp", "f.txt");
                                  }};
// In place (truncate and write), as VS Code and nano do.
const SavePattern kInPlace{
    "InPlace", [](KernelWatchTest& t, const std::string& text) { t.write("f.txt", text); }};
// The same as kTempThenRename with an fsync and a pause before the rename,
// long enough for the watcher to report the temporary file on its own.
const SavePattern kTempFsyncPauseThenRename{
    "TempFsyncPauseThenRename", [](KernelWatchTest& t, const std::string& text) {
      t.write_synced(".f.txt.tmp", text);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      t.rename(".f.txt.tmp", "f.txt");
    }};
// Vim (writebackup, backupcopy=no): a swap file while editing, the "4913"
// probe, rename the file to its backup, write the file anew, delete the backup.
const SavePattern kVim{"Vim", [](KernelWatchTest& t, const std::string& text) {
                         t.write(".f.txt.swp", std::string("b0VIM 9.0\0\0\0", 12));
                         t.write("4913", "");
                         t.remove("4913");
                         t.rename("f.txt", "f.txt~");
                         t.write_synced("f.txt", text);
                         t.remove("f.txt~");
                         t.remove(".f.txt.swp");
                       }};
// JetBrains' safe write: temp, old file aside, temp in place, old deleted.
const SavePattern kJetBrains{"JetBrains", [](KernelWatchTest& t, const std::string& text) {
                               t.write_synced("f.txt___jb_tmp___", text);
                               t.rename("f.txt", "f.txt___jb_old___");
                               t.rename("f.txt___jb_tmp___", "f.txt");
                               t.remove("f.txt___jb_old___");
                             }};

INSTANTIATE_TEST_SUITE_P(Editors, EditorSaveTest,
                         ::testing::Values(kTempThenRename, kInPlace, kTempFsyncPauseThenRename, kVim,
                                           kJetBrains),
                         save_name);

// ------------------------------------------------------------------ git

TEST_F(KernelWatchTest, GitCheckoutBringsEveryBlockToTheBranch) {
  if (shell("git --version") != 0) GTEST_SKIP() << "git is not installed";
  open();
  const std::string git = "git -C " + quoted(root()) +
                          " -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "
                          "-c core.hooksPath=/dev/null";
  ASSERT_EQ(shell(git + " init -q -b main"), 0);
  write("keep.txt", "unchanged\n");
  write("changed.txt", "main's line\nshared\n");
  write("gone.txt", "only on main\n");
  write("src/lib.c", "int main_version;\n");
  ASSERT_EQ(shell(git + " add -A && " + git + " commit -q -m main"), 0);
  ASSERT_TRUE(wait_until([&] {
    return in_sync("keep.txt") && in_sync("changed.txt") && in_sync("gone.txt") &&
           in_sync("src/lib.c");
  })) << "the files written on main did not become blocks\n"
      << describe_blocks();
  ASSERT_EQ(shell(git + " checkout -q -b feature"), 0);
  write("changed.txt", "feature's line\nshared\n");
  write("src/lib.c", "int feature_version;\n");
  write("added.txt", "only on feature\n");
  write("src/new/deep.h", "#pragma once\n");
  ASSERT_EQ(shell(git + " rm -q gone.txt"), 0);
  ASSERT_EQ(shell(git + " add -A && " + git + " commit -q -m feature"), 0);
  const std::vector<std::string> feature_files = {"keep.txt", "changed.txt", "src/lib.c",
                                                  "added.txt", "src/new/deep.h"};
  ASSERT_TRUE(wait_until([&] {
    for (const auto& f : feature_files) {
      if (!in_sync(f)) return false;
    }
    return shows_deleted("gone.txt");
  })) << describe_blocks();

  auto check_branch = [&](const std::vector<std::string>& present,
                          const std::vector<std::string>& absent) {
    ASSERT_TRUE(wait_until([&] {
      for (const auto& f : present) {
        if (!in_sync(f)) return false;
      }
      for (const auto& f : absent) {
        if (!shows_deleted(f)) return false;
      }
      return true;
    })) << describe_blocks();
    for (const auto& f : present) {
      auto text = k().read_text(f);
      ASSERT_TRUE(text.ok()) << f << ": " << text.status();
      EXPECT_EQ(*text, read(f)) << f;
    }
    for (const auto& f : absent) {
      EXPECT_FALSE(std::filesystem::exists(at(f))) << f;
      EXPECT_FALSE(history(f).empty()) << f << " lost its history";
    }
    for (const auto& [path, s] : blocks()) {
      EXPECT_NE(path.rfind(".git", 0), 0u) << "a block for git's own file " << path;
    }
  };

  ASSERT_EQ(shell(git + " checkout -q main"), 0);
  check_branch({"keep.txt", "changed.txt", "gone.txt", "src/lib.c"},
               {"added.txt", "src/new/deep.h"});
  EXPECT_EQ(*k().read_text("changed.txt"), "main's line\nshared\n");
  ASSERT_EQ(shell(git + " checkout -q feature"), 0);
  check_branch(feature_files, {"gone.txt"});
  EXPECT_EQ(*k().read_text("src/lib.c"), "int feature_version;\n");
  // The switches are recorded as disk changes of the same blocks.
  auto h = history("changed.txt");
  ASSERT_GE(h.size(), 3u);
  EXPECT_EQ(h[0].author, source::kDiskOrigin);
  EXPECT_EQ(h.back().message, "initial content");
}

// ------------------------------------------------------------ rm -r, many files

TEST_F(KernelWatchTest, RemovingAFolderOfFiftyBlocksMarksEveryOneDeleted) {
  constexpr int kFiles = 50;
  auto name = [](int i) {
    return "doomed/sub" + std::to_string(i % 3) + "/f" + std::to_string(i) + ".txt";
  };
  for (int i = 0; i < kFiles; ++i) write(name(i), "file " + std::to_string(i) + "\n");
  open();
  for (int i = 0; i < kFiles; ++i) ASSERT_TRUE(k().read_text(name(i)).ok()) << name(i);
  ASSERT_EQ(shell("rm -r " + quoted(at("doomed").string())), 0);
  ASSERT_TRUE(wait_until([&] {
    auto b = blocks();
    int deleted = 0;
    for (const auto& [path, s] : b) deleted += s.deleted ? 1 : 0;
    return deleted == kFiles;
  })) << describe_blocks();
  EXPECT_EQ(blocks().size(), static_cast<size_t>(kFiles));
  for (int i = 0; i < kFiles; ++i) {
    auto h = history(name(i));
    ASSERT_EQ(h.size(), 1u) << name(i);
    auto text = k().diff(name(i), std::string("v0"), h[0].version);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_THAT(*text, HasSubstr("+file " + std::to_string(i))) << name(i);
  }
}

TEST_F(KernelWatchTest, AThousandFilesCreatedAtOnceAllBecomeBlocks) {
  constexpr int kFiles = 1000;
  open();
  std::filesystem::create_directories(at("many"));
  auto start = Clock::now();
  for (int i = 0; i < kFiles; ++i) {
    // Half straight into an existing directory, half into directories made
    // during the burst (watched only once they exist).
    std::string rel = i % 2
                          ? "many/f" + std::to_string(i) + ".txt"
                          : "fresh/d" + std::to_string(i % 20) + "/f" + std::to_string(i) + ".txt";
    write(rel, "content of " + std::to_string(i) + "\n");
  }
  auto written = Clock::now();
  size_t seen = 0;
  bool all = wait_until(
      [&] {
        seen = 0;
        for (const auto& [path, s] : blocks()) seen += !s.deleted && s.frozen.empty() ? 1 : 0;
        return seen == kFiles;
      },
      std::chrono::seconds(30));
  auto done = Clock::now();
  auto ms = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  std::printf(
      "[ measure  ] %d files written in %lld ms; all blocks %lld ms after the first write\n",
      kFiles, static_cast<long long>(ms(written - start)),
      static_cast<long long>(ms(done - start)));
  ASSERT_TRUE(all) << seen << " of " << kFiles << " files became blocks";
  EXPECT_LE(done - start, kTimeout) << "all blocks only after " << ms(done - start) << " ms";
  for (int i : {0, 1, 498, 999}) {
    std::string rel = i % 2
                          ? "many/f" + std::to_string(i) + ".txt"
                          : "fresh/d" + std::to_string(i % 20) + "/f" + std::to_string(i) + ".txt";
    EXPECT_TRUE(in_sync(rel)) << rel;
    EXPECT_EQ(*k().read_text(rel), "content of " + std::to_string(i) + "\n");
  }
}

// ----------------------------------------------------------- renames, own writes

class DirectoryRenameTest : public KernelWatchTest {
 protected:
  // old/a.txt and old/deep/b.txt, blocks with an agent's change each.
  void make_blocks() {
    write("old/a.txt", "a\n");
    write("old/deep/b.txt", "b\n");
    open();
    for (const char* f : {"old/a.txt", "old/deep/b.txt"}) {
      ASSERT_TRUE(k().change_text(f, agent(), source::FileOp::kAppend,
                                  [](const std::optional<std::string>& old) -> Result<std::string> {
                                    return *old + "agent line\n";
                                  })
                      .ok());
    }
  }
  void expect_moved_to(const std::string& dir) {
    const std::string a = dir + "/a.txt", b = dir + "/deep/b.txt";
    ASSERT_TRUE(wait_until([&] { return blocks().size() == 2 && in_sync(a) && in_sync(b); }))
        << describe_blocks();
    for (const auto& f : {a, b}) {
      auto h = history(f);
      ASSERT_EQ(h.size(), 2u) << f;
      EXPECT_EQ(h[0].author, "agent:claude") << f;
      EXPECT_EQ(h[1].message, "initial content") << f;
    }
    EXPECT_EQ(k().history("old/a.txt", 0).status().code(), StatusCode::kNotFound);
  }
};

TEST_F(DirectoryRenameTest, RenameMovesTheHistories) {
  std::filesystem::create_directories(at("new"));
  ASSERT_NO_FATAL_FAILURE(make_blocks());
  rename("old", "new/inner");
  expect_moved_to("new/inner");
}

TEST_F(DirectoryRenameTest, RenameInPlaceMovesTheHistories) {
  ASSERT_NO_FATAL_FAILURE(make_blocks());
  rename("old", "renamed");
  expect_moved_to("renamed");
}

// A directory renamed into a directory made a moment before (its watch
// likely not yet in place, so the rename's MOVED_TO is missed) still moves
// the histories, nested ones included.
TEST_F(DirectoryRenameTest, RenameIntoAFreshDirectoryMovesTheHistories) {
  ASSERT_NO_FATAL_FAILURE(make_blocks());
  std::filesystem::create_directories(at("new"));
  rename("old", "new/inner");
  expect_moved_to("new/inner");
}

// A tree moved in from outside the root: every file in it becomes a block.
TEST_F(KernelWatchTest, ATreeMovedInFromOutsideBecomesBlocks) {
  open();
  auto outside = dir_.path() / "outside";
  std::filesystem::create_directories(outside / "x/y/z");
  std::ofstream(outside / "top.txt") << "top\n";
  std::ofstream(outside / "x/one.txt") << "one\n";
  std::ofstream(outside / "x/y/two.txt") << "two\n";
  std::ofstream(outside / "x/y/z/three.txt") << "three\n";
  ASSERT_EQ(std::rename(outside.c_str(), at("tree").c_str()), 0);
  EXPECT_TRUE(wait_until([&] {
    return in_sync("tree/top.txt") && in_sync("tree/x/one.txt") && in_sync("tree/x/y/two.txt") &&
           in_sync("tree/x/y/z/three.txt");
  })) << describe_blocks();
}

TEST_F(KernelWatchTest, WeftsOwnWritesAreNotSeenAsDiskEdits) {
  open();
  ASSERT_TRUE(
      k().change_text("own.txt", agent("fs_write"), source::FileOp::kCreate, replace_with("one\n"))
          .ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(k().change_text("own.txt", agent(), source::FileOp::kAppend,
                                [i](const std::optional<std::string>& old) -> Result<std::string> {
                                  return *old + "line " + std::to_string(i) + "\n";
                                })
                    .ok());
  }
  std::this_thread::sleep_for(kSettle);
  EXPECT_EQ(commits("own.txt", std::string(source::kDiskOrigin)), 0u);
  auto h = history("own.txt");
  EXPECT_EQ(h.size(), 6u);
  for (const auto& e : h) EXPECT_EQ(e.author, "agent:claude");
  EXPECT_TRUE(in_sync("own.txt"));
}

// ------------------------------------------------------- configuration files

TEST_F(KernelWatchTest, RewrittenWeftTomlReloadsTheRules) {
  write("weft.toml", "[permissions]\ndefault = \"read_write\"\n");
  write("locked/a.txt", "original\n");
  open();
  ASSERT_TRUE(k().change_text("locked/a.txt", agent(), source::FileOp::kOverwrite,
                              replace_with("allowed\n"))
                  .ok());
  write("weft.toml",
        "[permissions]\ndefault = \"read_write\"\n"
        "rules = [ { glob = \"locked/**\", level = \"read_only\" } ]\n");
  ASSERT_TRUE(wait_until([&] {
    return k().rules()->permission_for("locked/a.txt") == doc::MemoryPermission::kReadOnly;
  })) << "weft.toml was not reloaded\n"
      << describe_blocks();
  auto refused = k().change_text("locked/a.txt", agent(), source::FileOp::kOverwrite,
                                 replace_with("refused\n"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("locked/**"));
  EXPECT_EQ(read("locked/a.txt"), "allowed\n");
}

TEST_F(KernelWatchTest, GitignoredPathsGetNoBlocks) {
  write(".gitignore", "build/\n*.log\n");
  open();
  write("build/out.txt", "generated\n");
  write("build/deep/obj.txt", "generated\n");
  write("run.log", "log line\n");
  write("src/sub/run.log", "log line\n");
  write("src/main.c", "int main;\n");  // a sentinel that does become a block
  ASSERT_TRUE(wait_until([&] { return in_sync("src/main.c"); })) << describe_blocks();
  // A pattern added to .gitignore while the kernel runs counts too.
  write(".gitignore", "build/\n*.log\ntmp/\n");
  std::this_thread::sleep_for(kSettle);
  write("tmp/scratch.txt", "scratch\n");
  write("src/other.c", "int other;\n");
  ASSERT_TRUE(wait_until([&] { return in_sync("src/other.c"); })) << describe_blocks();
  std::this_thread::sleep_for(kSettle);
  for (const auto& [path, s] : blocks()) {
    EXPECT_TRUE(path == "src/main.c" || path == "src/other.c" || path == ".gitignore")
        << "an ignored path has a block: " << path;
  }
}

// What the watcher sends after IN_Q_OVERFLOW: every block is compared with
// its file.
TEST_F(KernelWatchTest, RescanReconcilesEveryBlock) {
  write("a.txt", "a\n");
  write("b.txt", "b\n");
  write("sub/c.txt", "c\n");
  open(/*watch=*/false);
  for (const char* f : {"a.txt", "b.txt", "sub/c.txt"}) ASSERT_TRUE(k().read_text(f).ok());
  write("a.txt", "a, changed\n");
  remove("b.txt");
  EXPECT_FALSE(in_sync("a.txt"));
  source::FileChange rescan;
  rescan.kind = source::FileChange::Kind::kRescan;
  k().on_disk_changes({rescan});
  EXPECT_TRUE(in_sync("a.txt")) << describe_blocks();
  EXPECT_TRUE(shows_deleted("b.txt")) << describe_blocks();
  EXPECT_TRUE(in_sync("sub/c.txt")) << describe_blocks();
  EXPECT_EQ(commits("a.txt", std::string(source::kDiskOrigin)), 2u);  // created, changed
  EXPECT_EQ(commits("sub/c.txt"), 1u);
  EXPECT_EQ(*k().read_text("a.txt"), "a, changed\n");
}

// ------------------------------------------------------- binary, write bursts

TEST_F(KernelWatchTest, AFileTurningBinaryFreezesOnlyItsBlock) {
  open();
  write("t.txt", "text\n");
  ASSERT_TRUE(wait_until([&] { return in_sync("t.txt"); })) << describe_blocks();
  write("t.txt", std::string("\x7f"
                             "ELF\0\0\x01\x02",
                             8));
  ASSERT_TRUE(wait_until([&] {
    auto b = blocks("t.txt");
    return b.count("t.txt") && b["t.txt"].frozen.find("binary") != std::string::npos;
  })) << describe_blocks();
  auto h = history("t.txt");
  ASSERT_EQ(h.size(), 1u);  // the text it had stays its history
  // The kernel goes on with other files.
  write("other.txt", "still text\n");
  ASSERT_TRUE(wait_until([&] { return in_sync("other.txt"); })) << describe_blocks();
  ASSERT_TRUE(k().change_text("other.txt", agent(), source::FileOp::kAppend,
                              [](const std::optional<std::string>& old) -> Result<std::string> {
                                return *old + "more\n";
                              })
                  .ok());
  EXPECT_EQ(read("other.txt"), "still text\nmore\n");
  // Text again: the block thaws and takes it.
  write("t.txt", "text again\n");
  ASSERT_TRUE(wait_until([&] { return in_sync("t.txt"); })) << describe_blocks();
  EXPECT_EQ(*k().read_text("t.txt"), "text again\n");
}

TEST_F(KernelWatchTest, ABurstOfWritesIsCoalescedWithTheFinalContent) {
  constexpr int kWrites = 50;
  write("burst.txt", "start\n");
  open();
  ASSERT_TRUE(k().read_text("burst.txt").ok());
  const size_t before = commits("burst.txt");  // the block's creation
  std::string text = "start\n";
  auto start = Clock::now();
  for (int i = 0; i < kWrites; ++i) {
    text += "line " + std::to_string(i) + "\n";
    write("burst.txt", text);
  }
  const long long burst_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  ASSERT_TRUE(wait_until([&] { return commits("burst.txt") > before && in_sync("burst.txt"); }))
      << describe_blocks();
  std::this_thread::sleep_for(kSettle);
  size_t n = commits("burst.txt", std::string(source::kDiskOrigin)) - before;
  std::printf("[ measure  ] %d writes to one file in %lld ms -> %zu source:disk changes\n", kWrites,
              burst_ms, n);
  // The watcher holds a path at most 50 ms: a slow burst (a loaded machine)
  // may be cut into a few more pieces.
  EXPECT_LE(n, 5u + static_cast<size_t>(burst_ms / 50));
  EXPECT_EQ(history("burst.txt").size(), n + 1);
  EXPECT_EQ(*k().read_text("burst.txt"), text);
  EXPECT_EQ(read("burst.txt"), text);
}

// ------------------------------------------ the same saves, batch by batch
//
// The watcher's batches for the saves that lose f.txt's history above, fed
// to a kernel that does not watch, so the outcome does not depend on timing.
// Disabled: they fail (see the report of the watch tests); enable them once
// the kernel keeps a saved file's history through these patterns.

class SaveBatchTest : public KernelWatchTest {
 protected:
  // f.txt with a block of two changes.
  void SetUp() override {
    KernelWatchTest::SetUp();
    write("f.txt", "one\n");
    open(/*watch=*/false);
    ASSERT_TRUE(
        k().change_text("f.txt", agent(), source::FileOp::kOverwrite, replace_with("one\ntwo\n"))
            .ok());
    ASSERT_EQ(history("f.txt").size(), 2u);
  }
  static source::FileChange change(source::FileChange::Kind kind, std::string path,
                                   std::string from = "") {
    source::FileChange c;
    c.kind = kind;
    c.path = std::move(path);
    c.from = std::move(from);
    return c;
  }
};

// Vim and Emacs: the file is renamed to its backup, written anew, and the
// backup deleted. The history stays with f.txt.
TEST_F(SaveBatchTest, BackupRenameSaveKeepsTheHistory) {
  using Kind = source::FileChange::Kind;
  rename("f.txt", "f.txt~");
  write("f.txt", "one\ntwo\nsaved\n");
  remove("f.txt~");
  k().on_disk_changes({change(Kind::kRenamed, "f.txt~", "f.txt"), change(Kind::kChanged, "f.txt"),
                       change(Kind::kDeleted, "f.txt~")});
  EXPECT_EQ(history("f.txt").size(), 3u) << describe_blocks();
  EXPECT_EQ(blocks().count("f.txt~"), 0u) << describe_blocks();
}

// A temporary file reported on its own (the editor paused past the
// watcher's quiet period) gets a block; renamed over f.txt, f.txt's block
// takes its content and keeps its history.
TEST_F(SaveBatchTest, TempReportedAloneThenRenamedOverKeepsTheHistory) {
  using Kind = source::FileChange::Kind;
  write(".f.txt.tmp", "one\ntwo\nsaved\n");
  k().on_disk_changes({change(Kind::kChanged, ".f.txt.tmp")});
  rename(".f.txt.tmp", "f.txt");
  k().on_disk_changes({change(Kind::kRenamed, "f.txt", ".f.txt.tmp")});
  EXPECT_EQ(history("f.txt").size(), 3u) << describe_blocks();
  EXPECT_EQ(*k().read_text("f.txt"), "one\ntwo\nsaved\n");
}

}  // namespace kernel_watch_test_local
}  // namespace weft::kernel
