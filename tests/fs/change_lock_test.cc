// ChangeLock and the state directory: the lock excludes other processes and
// other threads, per path and for the whole tree; nested requests; fallbacks.
#include "weft/fs/change_lock.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "support/test_support.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/state_dir.h"

namespace weft::fs {
namespace {

using namespace std::chrono_literals;

int read_counter(const std::string& file) {
  std::ifstream in(file);
  int n = 0;
  in >> n;
  return n;
}

// A deliberately racy increment: read, pause, write.
void increment(const std::string& file) {
  int n = read_counter(file);
  std::this_thread::sleep_for(50us);
  std::ofstream(file, std::ios::trunc) << n + 1;
}

// Runs `body` in a forked child; returns its exit code (-1 when it did not exit).
template <typename F>
pid_t fork_child(F body) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class ChangeLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lock = ChangeLock::open(dir_.path().string());
    ASSERT_TRUE(lock.ok()) << lock.status().message();
    lock_ = *lock;
    counter_ = (dir_.path() / "counter").string();
    std::ofstream(counter_) << 0;
  }

  weft::testing::TempDir dir_;
  std::shared_ptr<ChangeLock> lock_;
  std::string counter_;
};

TEST_F(ChangeLockTest, ProcessesExcludeEachOtherOnOnePath) {
  constexpr int kRounds = 200;
  auto work = [&] {
    for (int i = 0; i < kRounds; ++i) {
      auto held = lock_->lock_paths({"a.txt"});
      if (!held.ok()) return 1;
      increment(counter_);
    }
    return 0;
  };
  pid_t child = fork_child(work);
  ASSERT_GT(child, 0);
  EXPECT_EQ(work(), 0);
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_EQ(read_counter(counter_), 2 * kRounds);
}

TEST_F(ChangeLockTest, ThreadsOfOneProcessExcludeEachOtherLikeProcesses) {
  constexpr int kRounds = 200;
  std::atomic<int> errors{0};
  auto work = [&] {
    for (int i = 0; i < kRounds; ++i) {
      auto held = lock_->lock_paths({"dir/b.txt", "a.txt"});
      if (!held.ok()) ++errors;
      increment(counter_);
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(read_counter(counter_), 2 * kRounds);
}

// The child reports (exit 0) whether it got `paths` (or the tree) while the parent held its
// lock for 300 ms: 0 = waited for the parent, 1 = got it at once. It tells the parent through
// `ready` just before it asks, so the parent's 300 ms start only once the child runs (a loaded
// machine may start a child late).
int probe(ChangeLock& lock, std::optional<std::vector<std::string>> paths, int ready) {
  auto start = std::chrono::steady_clock::now();
  if (::write(ready, "r", 1) != 1) return 3;
  auto held = paths ? lock.lock_paths(*paths) : lock.lock_tree();
  if (!held.ok()) return 2;
  return std::chrono::steady_clock::now() - start >= 200ms ? 0 : 1;
}

// Forks a probe() and returns once it is about to ask for the lock.
pid_t start_probe(ChangeLock& lock, std::optional<std::vector<std::string>> paths) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t child = fork_child([&] { return probe(lock, paths, fds[1]); });
  ::close(fds[1]);
  char c;
  if (child > 0 && ::read(fds[0], &c, 1) != 1) child = -1;
  ::close(fds[0]);
  return child;
}

TEST_F(ChangeLockTest, DifferentPathsDoNotWaitButTheTreeDoes) {
  struct Case {
    std::vector<std::string> parent;  // empty: the parent holds the tree
    std::optional<std::vector<std::string>> child;
    int expected;  // probe()'s answer
  };
  const Case cases[] = {
      {{"a.txt"}, std::vector<std::string>{"b.txt"}, 1},
      {{"a.txt"}, std::vector<std::string>{"a.txt"}, 0},
      {{"a.txt"}, std::nullopt, 0},                    // the tree waits for a path
      {{}, std::vector<std::string>{"b.txt"}, 0},      // a path waits for the tree
      {{"x", "a.txt"}, std::vector<std::string>{"a.txt", "c"}, 0},
  };
  for (const Case& c : cases) {
    auto held = c.parent.empty() ? lock_->lock_tree() : lock_->lock_paths(c.parent);
    ASSERT_TRUE(held.ok());
    pid_t child = start_probe(*lock_, c.child);
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(300ms);
    held->release();
    EXPECT_EQ(wait_child(child), c.expected)
        << (c.parent.empty() ? "tree" : c.parent[0]) << " vs "
        << (c.child ? (*c.child)[0] : "tree");
  }
}

TEST_F(ChangeLockTest, NestedRequestsSucceedWhenCoveredAndAreRefusedOtherwise) {
  {
    auto outer = lock_->lock_paths({"a", "b"});
    ASSERT_TRUE(outer.ok());
    auto inner = lock_->lock_paths({"b"});
    EXPECT_TRUE(inner.ok());
    auto wider = lock_->lock_paths({"c"});
    ASSERT_FALSE(wider.ok());
    EXPECT_EQ(wider.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_FALSE(lock_->lock_tree().ok());
  }
  {
    auto tree = lock_->lock_tree();
    ASSERT_TRUE(tree.ok());
    EXPECT_TRUE(lock_->lock_paths({"anything"}).ok());
    EXPECT_TRUE(lock_->lock_tree().ok());
  }
  // Released: another process gets the tree at once.
  pid_t child = start_probe(*lock_, std::nullopt);
  EXPECT_EQ(wait_child(child), 1);
}

TEST_F(ChangeLockTest, HostAppendsFromTwoProcessesAreAllKept) {
  constexpr int kRounds = 150;
  std::string root = (dir_.path() / "ws").string();
  std::filesystem::create_directories(root);
  auto append = [&](const char* tag) {
    HostOptions options;
    options.durability = WriteDurability::kAtomicRename;
    options.change_lock = lock_;
    auto fs = make_host_filesystem(root, options);
    if (!fs.ok()) return 1;
    for (int i = 0; i < kRounds; ++i) {
      std::string line = std::string(tag) + std::to_string(i) + "\n";
      if (!(*fs)->write("log.txt", line, WriteMode::kAppend).ok()) return 1;
    }
    return 0;
  };
  pid_t child = fork_child([&] { return append("c"); });
  EXPECT_EQ(append("p"), 0);
  EXPECT_EQ(wait_child(child), 0);
  std::string log = weft::testing::read_file(root + "/log.txt");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 2 * kRounds);
}

TEST(StateDirTest, PrivateDirectoryIsCreatedAndSymlinksRefused) {
  weft::testing::TempDir dir;
  std::string made = (dir.path() / "a/b/c").string();
  ASSERT_TRUE(ensure_private_dir(made).ok());
  struct stat st;
  ASSERT_EQ(::stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  std::filesystem::create_directory_symlink(made, dir.path() / "link");
  Status s = ensure_private_dir((dir.path() / "link").string());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("not a directory"), std::string::npos) << s.message();
  EXPECT_FALSE(ensure_private_dir("relative/dir").ok());
}

TEST(StateDirTest, DefaultIsUnderXdgStateHomeNamedByTheRootsRealPath) {
  weft::testing::TempDir dir;
  std::string root = (dir.path() / "ws").string();
  std::filesystem::create_directories(root);
  std::filesystem::create_directory_symlink(root, dir.path() / "alias");
  ScopedEnv state("XDG_STATE_HOME", (dir.path() / "state").string());
  auto direct = open_root_change_lock(root, std::nullopt);
  auto aliased = open_root_change_lock((dir.path() / "alias").string(), std::nullopt);
  ASSERT_TRUE(direct.ok() && aliased.ok());
  ASSERT_TRUE(direct->lock);
  EXPECT_EQ(direct->warning, "");
  std::string real = std::filesystem::canonical(root).string();
  EXPECT_EQ(direct->dir, (dir.path() / "state").string() + "/weft/" + root_key(real));
  EXPECT_EQ(aliased->dir, direct->dir);
  EXPECT_TRUE(std::filesystem::exists(direct->dir + "/change.lock"));
}

TEST(StateDirTest, UnusableStateHomeFallsBackToTheRuntimeDirThenToNoLock) {
  weft::testing::TempDir dir;
  std::string root = dir.path().string();
  std::ofstream(dir.path() / "file") << "x";
  // A state home under a regular file cannot be created.
  ScopedEnv state("XDG_STATE_HOME", (dir.path() / "file").string());
  {
    ScopedEnv runtime("XDG_RUNTIME_DIR", (dir.path() / "run").string());
    auto got = open_root_change_lock(root, std::nullopt);
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->lock);
    EXPECT_EQ(got->dir.rfind((dir.path() / "run/weft/").string(), 0), 0u) << got->dir;
    EXPECT_NE(got->warning.find("using"), std::string::npos) << got->warning;
  }
  {
    ScopedEnv runtime("XDG_RUNTIME_DIR", std::nullopt);
    auto got = open_root_change_lock(root, std::nullopt);
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(got->lock);
    EXPECT_NE(got->warning.find("only within this process"), std::string::npos) << got->warning;
  }
  // A relative state directory is taken from the current directory.
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto relative = open_root_change_lock(root, std::string("rel-state"));
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(relative.ok()) << relative.status();
  EXPECT_EQ(relative->dir, (dir.path() / "rel-state").string());
  // An explicit state directory that cannot be made is an error, not a fallback.
  auto explicit_dir = open_root_change_lock(root, (dir.path() / "file/state").string());
  ASSERT_FALSE(explicit_dir.ok());
  EXPECT_EQ(explicit_dir.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace weft::fs
