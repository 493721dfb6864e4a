// Spare temp files (DeferredCloser::take_spare / want_spare, link_tmpfile):
// the host write path takes an O_TMPFILE made ahead on a background thread
// instead of creating its temp file, and falls back to creating one whenever
// there is no spare or it cannot be linked. Checked: the spare is used, the
// fallback works, modes and ownership are what a created file gets, no file
// is left in the tree, concurrent writers (fork: deferred_close_test.cc). Run
// under TSan too.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "fs/host_io.h"
#include "support/test_support.h"
#include "weft/fs/filesystem.h"

namespace weft::fs {
namespace {

using weft::testing::open_fd_count;

using internal::DeferredCloser;
using internal::UniqueFd;
namespace stdfs = std::filesystem;

struct stat stat_of(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return st;
}

struct stat stat_of(const stdfs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st;
}

mode_t current_umask() {
  mode_t m = ::umask(022);
  ::umask(m);
  return m;
}

std::vector<std::string> names_in(const stdfs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : stdfs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Waits (up to 5 s) until the spares made in this process exceed `made`.
bool wait_for_spare(size_t made) {
  for (int i = 0; i < 500; ++i) {
    if (internal::spare_stats().made > made) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::unique_ptr<Filesystem> host_fs(const weft::testing::TempDir& root,
                                    const weft::testing::TempDir& state,
                                    WriteDurability durability = WriteDurability::kAtomicRename) {
  HostOptions o;
  o.durability = durability;
  o.git_dir = (state.path() / "snapshots.git").string();
  auto fs = make_host_filesystem(root.path().string(), o);
  EXPECT_TRUE(fs.ok()) << fs.status();
  return fs.ok() ? std::move(*fs) : nullptr;
}

TEST(SpareTmpfile, MadeFromTheSecondWantForADirectoryAndTakenOnlyThere) {
  weft::testing::TempDir dir;
  weft::testing::TempDir other;
  UniqueFd dfd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd ofd(::open(other.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const struct stat dst = stat_of(dfd.get());
  const struct stat ost = stat_of(ofd.get());
  DeferredCloser closer;
  EXPECT_FALSE(closer.take_spare(dst).valid());
  closer.want_spare(dfd.get(), dst);  // the first write there: no spare yet
  closer.drain();
  EXPECT_FALSE(closer.take_spare(dst).valid());
  closer.want_spare(dfd.get(), dst);
  closer.drain();
  EXPECT_FALSE(closer.take_spare(ost).valid());  // made for `dir`, not `other`
  UniqueFd spare = closer.take_spare(dst);
  ASSERT_TRUE(spare.valid());
  EXPECT_FALSE(closer.take_spare(dst).valid());  // handed out once
  // An empty, unnamed regular file in `dir`, with a created file's mode.
  const struct stat sst = stat_of(spare.get());
  EXPECT_TRUE(S_ISREG(sst.st_mode));
  EXPECT_EQ(sst.st_size, 0);
  EXPECT_EQ(sst.st_nlink, 0u);
  EXPECT_EQ(sst.st_mode & 07777, 0666 & ~current_umask());
  EXPECT_EQ(sst.st_dev, dst.st_dev);
  EXPECT_TRUE(names_in(dir.path()).empty());
  // Named by link_tmpfile, with what was written.
  ASSERT_EQ(::write(spare.get(), "abc", 3), 3);
  ASSERT_EQ(internal::link_tmpfile(spare.get(), dfd.get(), "named"), 0);
  EXPECT_EQ(weft::testing::read_file(dir.path() / "named"), "abc");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"named"});
}

TEST(SpareTmpfile, AWantForAnotherDirectoryReplacesTheSpareAndDisableDropsIt) {
  weft::testing::TempDir a;
  weft::testing::TempDir b;
  UniqueFd afd(::open(a.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd bfd(::open(b.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const struct stat ast = stat_of(afd.get());
  const struct stat bst = stat_of(bfd.get());
  const size_t fds_before = open_fd_count();
  {
    DeferredCloser closer;
    closer.want_spare(afd.get(), ast);
    closer.want_spare(afd.get(), ast);
    closer.drain();
    closer.want_spare(bfd.get(), bst);
    closer.want_spare(bfd.get(), bst);
    closer.drain();
    EXPECT_FALSE(closer.take_spare(ast).valid());
    closer.disable_spares();
    EXPECT_FALSE(closer.take_spare(bst).valid());  // dropped
    closer.want_spare(bfd.get(), bst);
    closer.want_spare(bfd.get(), bst);
    closer.drain();
    EXPECT_FALSE(closer.take_spare(bst).valid());  // no more spares
  }
  EXPECT_EQ(open_fd_count(), fds_before);  // spares and directory fds all closed
}

TEST(SpareTmpfile, HostWritesUseTheSpareKeepModeAndLeaveNoFiles) {
  weft::testing::TempDir root;
  weft::testing::TempDir state;
  auto fs = host_fs(root, state);
  ASSERT_TRUE(fs);
  const stdfs::path file = root.path() / "f.txt";
  ASSERT_TRUE(fs->write("f.txt", "v0", WriteMode::kCreate).ok());
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  const size_t made = internal::spare_stats().made;
  ASSERT_TRUE(fs->write("f.txt", "v1", WriteMode::kOverwrite).ok());  // second write there
  ASSERT_TRUE(wait_for_spare(made));
  for (int i = 2; i < 40; ++i) {
    const size_t used = internal::spare_stats().used;
    const size_t made_now = internal::spare_stats().made;
    const std::string body = "v" + std::to_string(i) + std::string(i * 100, 'x');
    ASSERT_TRUE(fs->write("f.txt", body, WriteMode::kOverwrite).ok());
    EXPECT_EQ(internal::spare_stats().used, used + 1) << "write " << i;
    EXPECT_EQ(weft::testing::read_file(file), body);
    EXPECT_EQ(stat_of(file).st_mode & 07777, 0640u);  // the replaced file's mode is kept
    EXPECT_EQ(stat_of(file).st_nlink, 1u);
    ASSERT_TRUE(wait_for_spare(made_now));
  }
  EXPECT_EQ(names_in(root.path()), std::vector<std::string>{"f.txt"});
  // A new file made from a spare gets what a created file gets.
  const size_t used = internal::spare_stats().used;
  ASSERT_TRUE(fs->write("new.txt", "n", WriteMode::kCreate).ok());
  EXPECT_EQ(internal::spare_stats().used, used + 1);
  const struct stat nst = stat_of(root.path() / "new.txt");
  EXPECT_EQ(nst.st_mode & 07777, 0666 & ~current_umask());
  EXPECT_EQ(nst.st_uid, ::geteuid());
  EXPECT_EQ(nst.st_gid, stat_of(file).st_gid);  // same rule as the created f.txt
  // kCreate still refuses an existing name.
  EXPECT_EQ(fs->write("new.txt", "again", WriteMode::kCreate).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(names_in(root.path()), (std::vector<std::string>{"f.txt", "new.txt"}));
}

TEST(SpareTmpfile, FsyncDurabilityUsesTheSpareToo) {
  weft::testing::TempDir root;
  weft::testing::TempDir state;
  auto fs = host_fs(root, state, WriteDurability::kFsync);
  ASSERT_TRUE(fs);
  ASSERT_TRUE(fs->write("d.txt", "a", WriteMode::kCreate).ok());
  const size_t made = internal::spare_stats().made;
  ASSERT_TRUE(fs->write("d.txt", "b", WriteMode::kOverwrite).ok());
  ASSERT_TRUE(wait_for_spare(made));
  const size_t used = internal::spare_stats().used;
  ASSERT_TRUE(fs->write("d.txt", "c", WriteMode::kAppend).ok());
  EXPECT_EQ(internal::spare_stats().used, used + 1);
  EXPECT_EQ(weft::testing::read_file(root.path() / "d.txt"), "bc");
  EXPECT_EQ(names_in(root.path()), std::vector<std::string>{"d.txt"});
}

TEST(SpareTmpfile, ASpareThatCannotBeLinkedFallsBackToACreatedTempFile) {
  weft::testing::TempDir root;
  weft::testing::TempDir state;
  auto fs = host_fs(root, state);
  ASSERT_TRUE(fs);
  ASSERT_TRUE(fs->write("g.txt", "0", WriteMode::kCreate).ok());
  const size_t made = internal::spare_stats().made;
  ASSERT_TRUE(fs->write("g.txt", "1", WriteMode::kOverwrite).ok());
  ASSERT_TRUE(wait_for_spare(made));
  const internal::SpareStats before = internal::spare_stats();
  internal::fail_tmpfile_links_for_testing(true);
  auto w = fs->write("g.txt", "2", WriteMode::kOverwrite);
  internal::fail_tmpfile_links_for_testing(false);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(internal::spare_stats().used, before.used + 1);
  EXPECT_EQ(internal::spare_stats().unlinked, before.unlinked + 1);
  EXPECT_EQ(weft::testing::read_file(root.path() / "g.txt"), "2");
  // Spares are off for this filesystem from then on; writes keep working.
  for (int i = 3; i < 10; ++i) {
    ASSERT_TRUE(fs->write("g.txt", std::to_string(i), WriteMode::kOverwrite).ok());
  }
  EXPECT_EQ(internal::spare_stats().used, before.used + 1);
  EXPECT_EQ(weft::testing::read_file(root.path() / "g.txt"), "9");
  EXPECT_EQ(names_in(root.path()), std::vector<std::string>{"g.txt"});
}

TEST(SpareTmpfile, ConcurrentWritersInOneDirectoryKeepTheirContent) {
  weft::testing::TempDir root;
  weft::testing::TempDir state;
  const size_t fds_before = open_fd_count();
  const size_t used_before = internal::spare_stats().used;
  {
    auto fs = host_fs(root, state);
    ASSERT_TRUE(fs);
    constexpr int kThreads = 4;
    constexpr int kWrites = 60;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::string name = "c" + std::to_string(t) + ".txt";
        for (int i = 0; i < kWrites; ++i) {
          std::string body(1000 + i, static_cast<char>('a' + t));
          auto w = fs->write(name, body, i == 0 ? WriteMode::kCreate : WriteMode::kOverwrite);
          EXPECT_TRUE(w.ok()) << w.status();
          if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(weft::testing::read_file(root.path() / ("c" + std::to_string(t) + ".txt")),
                std::string(1000 + kWrites - 1, static_cast<char>('a' + t)));
    }
    EXPECT_EQ(names_in(root.path()),
              (std::vector<std::string>{"c0.txt", "c1.txt", "c2.txt", "c3.txt"}));
  }
  EXPECT_GT(internal::spare_stats().used, used_before);  // 240 writes, pauses: some spares
  EXPECT_EQ(open_fd_count(), fds_before);
}

}  // namespace
}  // namespace weft::fs
