// DeferredCloser (closes replaced write targets off the write path) and the
// host write path that uses it: every fd handed over is closed exactly once,
// drain() waits for them, a full queue closes inline, and concurrent writers
// leak no fds. Run under TSan too (scripts/build.sh tsan weft_fs_tests).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
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

// A pipe whose write end is handed to the closer; the read end sees EOF once
// the write end is closed.
struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
  }
  // True when every write end is closed (read returns 0, not EAGAIN).
  bool writer_closed() const {
    char c;
    return ::read(read_end.get(), &c, 1) == 0;
  }
};

// Waits up to 5 s for child `pid`; fails the test when it hangs (then kills
// it) or exits with a status other than 0.
void expect_child_exits_cleanly(pid_t pid) {
  int status = -1;
  for (int i = 0; i < 500 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!WIFEXITED(status)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ADD_FAILURE() << "the forked child hung";
    return;
  }
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(DeferredCloser, ClosesOnItsThreadAndDrainWaits) {
  DeferredCloser closer;
  Pipe p;
  closer.close_later(std::move(p.write_end));
  EXPECT_FALSE(p.write_end.valid());
  closer.drain();
  EXPECT_TRUE(p.writer_closed());
  EXPECT_EQ(closer.closed_in_background(), 1u);
}

TEST(DeferredCloser, FullQueueClosesInline) {
  DeferredCloser closer(/*max_pending=*/0);
  Pipe p;
  closer.close_later(std::move(p.write_end));
  EXPECT_TRUE(p.writer_closed());  // no drain needed: closed before close_later returned
  EXPECT_EQ(closer.closed_in_background(), 0u);
}

TEST(DeferredCloser, InvalidFdIsIgnoredAndDrainWithoutThreadReturns) {
  DeferredCloser closer;
  closer.close_later(UniqueFd());
  closer.drain();
  EXPECT_EQ(closer.closed_in_background(), 0u);
}

TEST(DeferredCloser, DestructorClosesEverythingFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100;
  std::vector<Pipe> pipes(kThreads * kPerThread);
  {
    DeferredCloser closer(/*max_pending=*/8);  // small: some closes go inline
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          closer.close_later(std::move(pipes[t * kPerThread + i].write_end));
          if (i % 25 == 0) closer.drain();
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_LE(closer.closed_in_background(), pipes.size());
  }
  for (const Pipe& p : pipes) EXPECT_TRUE(p.writer_closed());
}

// A child forked after the thread started (Python multiprocessing does this)
// closes inline and exits without hanging on the parent's thread.
TEST(DeferredCloser, ForkedChildClosesInlineAndDoesNotHang) {
  auto closer = std::make_unique<DeferredCloser>();
  Pipe started;
  closer->close_later(std::move(started.write_end));  // starts the thread
  closer->drain();
  Pipe in_child;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = in_child.write_end.get();
    closer->close_later(std::move(in_child.write_end));
    // Closed inline (no thread in this process; nothing else opens fds here).
    bool closed = ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
    closer->drain();
    closer.reset();  // must not join the parent's thread
    ::_exit(closed ? 0 : 1);
  }
  expect_child_exits_cleanly(pid);
  // The parent's closer still works.
  Pipe after;
  closer->close_later(std::move(after.write_end));
  closer->drain();
  EXPECT_TRUE(after.writer_closed());
}

// A child forked after the spare thread started gets no spare (the parent's
// thread makes them) and exits without joining the parent's threads.
TEST(DeferredCloser, ForkedChildGetsNoSpareAndDoesNotHang) {
  weft::testing::TempDir dir;
  UniqueFd dfd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat dst {};
  ASSERT_EQ(::fstat(dfd.get(), &dst), 0);
  auto closer = std::make_unique<DeferredCloser>();
  closer->want_spare(dfd.get(), dst);
  closer->want_spare(dfd.get(), dst);
  closer->drain();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    bool ok = !closer->take_spare(dst).valid();
    closer->want_spare(dfd.get(), dst);
    closer->drain();
    closer.reset();  // must not join the parent's threads
    ::_exit(ok ? 0 : 1);
  }
  expect_child_exits_cleanly(pid);
  EXPECT_TRUE(closer->take_spare(dst).valid());  // the parent's spare is still there
}

TEST(HostWriteDeferredClose, ConcurrentOverwritesKeepContentAndLeakNoFds) {
  weft::testing::TempDir root;
  weft::testing::TempDir state;
  const size_t fds_before = open_fd_count();
  {
    HostOptions o;
    o.durability = WriteDurability::kAtomicRename;
    o.git_dir = (state.path() / "snapshots.git").string();
    auto fs = make_host_filesystem(root.path().string(), o);
    ASSERT_TRUE(fs.ok()) << fs.status();
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, t] {
        const std::string name = "f" + std::to_string(t) + ".txt";
        for (int i = 0; i < 50; ++i) {
          std::string body(4096 + i, static_cast<char>('a' + t));
          auto w = (*fs)->write(name, body, i == 0 ? WriteMode::kCreate : WriteMode::kOverwrite);
          EXPECT_TRUE(w.ok()) << w.status();
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 3; ++t) {
      const std::string name = "f" + std::to_string(t) + ".txt";
      EXPECT_EQ(weft::testing::read_file(root.path() / name),
                std::string(4096 + 49, static_cast<char>('a' + t)));
    }
    // The replaced inodes are unlinked: only the three current files are visible.
    size_t visible = 0;
    for ([[maybe_unused]] const auto& e : stdfs::directory_iterator(root.path())) ++visible;
    EXPECT_EQ(visible, 3u);
  }
  EXPECT_EQ(open_fd_count(), fds_before);  // every held old target was closed
}

}  // namespace
}  // namespace weft::fs
