// Watcher::flush: everything queued is delivered before it returns, however
// long the quiet periods are.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "support/test_support.h"
#include "weft/source/watcher.h"

namespace weft::source {
namespace {

namespace stdfs = std::filesystem;

TEST(WatcherFlush, DeliversPendingChangesBeforeReturning) {
  weft::testing::TempDir dir;
  std::mutex mu;
  std::vector<FileChange> seen;
  WatcherOptions o;
  o.quiet = std::chrono::seconds(30);
  o.max_delay = std::chrono::seconds(60);
  o.max_open_delay = std::chrono::seconds(60);
  auto w = Watcher::start(dir.path().string(), o, [&](const std::vector<FileChange>& c) {
    std::lock_guard lock(mu);
    seen.insert(seen.end(), c.begin(), c.end());
  });
  ASSERT_TRUE(w.ok()) << w.status();
  stdfs::create_directories(dir.path() / "sub/deeper");
  { std::ofstream(dir.path() / "a.txt") << "a"; }
  { std::ofstream(dir.path() / "sub/deeper/b.txt") << "b"; }
  stdfs::rename(dir.path() / "a.txt", dir.path() / "c.txt");
  // A file still open for writing is delivered too.
  std::ofstream open_file(dir.path() / "open.txt");
  open_file << "x" << std::flush;
  ASSERT_TRUE((*w)->flush());
  std::vector<std::string> paths;
  {
    std::lock_guard lock(mu);
    for (const auto& c : seen) paths.push_back(c.path);
  }
  auto has = [&](const std::string& p) {
    return std::find(paths.begin(), paths.end(), p) != paths.end();
  };
  EXPECT_TRUE(has("c.txt"));
  EXPECT_TRUE(has("sub/deeper/b.txt"));
  EXPECT_TRUE(has("open.txt"));
  EXPECT_FALSE(has("a.txt"));  // created and renamed in one window: only c.txt
  // Nothing pending: a flush returns at once with nothing new.
  size_t before = paths.size();
  ASSERT_TRUE((*w)->flush());
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(seen.size(), before);
  }
  (*w)->stop();
  EXPECT_FALSE((*w)->flush(std::chrono::milliseconds(100)));
}

}  // namespace
}  // namespace weft::source
