// The kernel's entry points for shell commands: changes found on disk while
// a command runs are committed as shell:<agent> with the command as the
// message (and are the agent's to undo), the disk logs, the watcher flush,
// reconcile of given paths, and the revert of a forbidden change.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace kernel_shell_test_local {

namespace stdfs = std::filesystem;

class KernelShellTest : public ::testing::Test {
 protected:
  void SetUp() override { stdfs::create_directories(root()); }
  void TearDown() override { kernel_.reset(); }
  std::string root() const { return (dir_.path() / "root").string(); }
  void write(const std::string& rel, const std::string& bytes) {
    stdfs::create_directories((stdfs::path(root()) / rel).parent_path());
    std::ofstream(stdfs::path(root()) / rel, std::ios::binary | std::ios::trunc) << bytes;
  }
  std::string read(const std::string& rel) {
    return weft::testing::read_file(stdfs::path(root()) / rel);
  }
  void open(bool watch) {
    auto filesystem = fs::make_host_filesystem(root(), fs::HostOptions{});
    ASSERT_TRUE(filesystem.ok()) << filesystem.status();
    KernelOptions options;
    options.state_dir = (dir_.path() / "state").string();
    options.watch = watch;
    auto k = Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(*filesystem)), options);
    ASSERT_TRUE(k.ok()) << k.status();
    kernel_ = std::move(*k);
  }
  const source::Attribution kShell{"shell:claude", "sed -i s/a/b/ f.txt", std::nullopt};
  const source::Attribution kAgent{"agent:claude", "fs_undo", std::nullopt};
  weft::testing::TempDir dir_;
  std::unique_ptr<Kernel> kernel_;
};

TEST_F(KernelShellTest, WatcherChangesDuringACommandAreTheShells) {
  write("f.txt", "a\n");
  open(/*watch=*/true);
  ASSERT_TRUE(kernel_->track("f.txt").ok());
  auto log = kernel_->subscribe_disk_changes();
  uint64_t run = kernel_->begin_shell_command(kShell, "agent:claude");
  write("f.txt", "b\n");
  write("new/g.txt", "g\n");
  ASSERT_TRUE(kernel_->flush_disk_changes());
  kernel_->end_shell_command(run);

  auto history = kernel_->history("f.txt", 0);
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->front().author, "shell:claude");
  EXPECT_EQ(history->front().message, "sed -i s/a/b/ f.txt");
  auto created = kernel_->history("new/g.txt", 0);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->front().author, "shell:claude");
  std::vector<std::string> paths;
  for (const auto& c : log->take()) paths.push_back(c.path);
  EXPECT_NE(std::find(paths.begin(), paths.end(), "f.txt"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "new/g.txt"), paths.end());
  EXPECT_TRUE(log->take().empty());

  // The agent's fs_undo takes the shell's change back.
  auto undone = kernel_->undo("f.txt", kAgent);
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_EQ(read("f.txt"), "a\n");

  // After the command, a change on disk is source:disk again.
  write("f.txt", "c\n");
  ASSERT_TRUE(kernel_->flush_disk_changes());
  EXPECT_EQ(kernel_->history("f.txt", 1)->front().author, source::kDiskOrigin);
}

TEST_F(KernelShellTest, ReconcilePathsWithoutAWatcher) {
  write("f.txt", "a\n");
  open(/*watch=*/false);
  EXPECT_FALSE(kernel_->flush_disk_changes());
  ASSERT_TRUE(kernel_->track("f.txt").ok());
  write("f.txt", "b\n");
  write("h.txt", "h\n");
  auto problems = kernel_->reconcile_paths({"f.txt", "h.txt", "gone.txt"}, kShell, "agent:claude");
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(kernel_->history("f.txt", 1)->front().author, "shell:claude");
  EXPECT_EQ(kernel_->history("h.txt", 1)->front().author, "shell:claude");
  EXPECT_EQ(kernel_->history("gone.txt", 1).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(kernel_->undo("f.txt", kAgent).ok());
  EXPECT_EQ(read("f.txt"), "a\n");
}

TEST_F(KernelShellTest, RevertTakesBackEachKindOfChange) {
  write("vendor/m.c", "original\n");
  write("vendor/d.c", "keep me\n");
  open(/*watch=*/false);
  ASSERT_TRUE(kernel_->track("vendor/m.c").ok());
  ASSERT_TRUE(kernel_->track("vendor/d.c").ok());
  write("vendor/m.c", "evil\n");
  stdfs::remove(stdfs::path(root()) / "vendor/d.c");
  write("vendor/new.c", "planted\n");
  kernel_->reconcile_paths({"vendor/m.c", "vendor/d.c", "vendor/new.c"}, kShell, "agent:claude");
  source::Attribution system{"system:shell-enforcement", "revert", std::nullopt};
  using K = Kernel::ShellChangeKind;
  auto m = kernel_->revert_shell_change("vendor/m.c", K::kModified, "shell:claude", system);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(read("vendor/m.c"), "original\n");
  EXPECT_EQ(kernel_->history("vendor/m.c", 1)->front().author, "system:shell-enforcement");
  ASSERT_TRUE(kernel_->revert_shell_change("vendor/d.c", K::kDeleted, "shell:claude", system).ok());
  EXPECT_EQ(read("vendor/d.c"), "keep me\n");
  ASSERT_TRUE(
      kernel_->revert_shell_change("vendor/new.c", K::kCreated, "shell:claude", system).ok());
  EXPECT_FALSE(stdfs::exists(stdfs::path(root()) / "vendor/new.c"));
  // A file weft never read: no earlier text to go back to.
  write("vendor/u.c", "u\n");
  write("vendor/u.c", "u2\n");
  kernel_->reconcile_paths({"vendor/u.c"}, kShell, "agent:claude");
  auto u = kernel_->revert_shell_change("vendor/u.c", K::kModified, "shell:claude", system);
  EXPECT_EQ(u.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(KernelShellTest, DiskLogIsBoundedToOneRescan) {
  open(/*watch=*/false);
  Kernel::DiskChangeLog log;
  std::vector<source::FileChange> many(Kernel::DiskChangeLog::kMaxDiskLogChanges,
                                       source::FileChange{source::FileChange::Kind::kChanged,
                                                          "x", "", false});
  log.append(many);
  log.append(many);
  auto got = log.take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, source::FileChange::Kind::kRescan);
}

}  // namespace kernel_shell_test_local
}  // namespace weft::kernel
