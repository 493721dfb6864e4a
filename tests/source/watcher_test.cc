#include "weft/source/watcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "source/change_text.h"
#include "source/watcher_internal.h"
#include "support/test_support.h"

namespace weft::source {
namespace {

namespace fs = std::filesystem;
using Kind = FileChange::Kind;
using namespace std::chrono_literals;
using Changes = std::vector<FileChange>;

// Generous: the machine is small and shared.
constexpr auto kWait = 5s;
// How long "nothing more comes" is watched for.
constexpr auto kSettle = 200ms;

using weft::source::testing::show;

using weft::testing::write_file;

// "f12" (built so that GCC 12 sees no overlapping copy).
std::string numbered(const std::string& prefix, long i) {
  std::string out = prefix;
  out.append(std::to_string(i));
  return out;
}

bool has(const Changes& changes, Kind kind, const std::string& path) {
  return std::any_of(changes.begin(), changes.end(),
                     [&](const FileChange& c) { return c.kind == kind && c.path == path; });
}

// Any change that tells a receiver to (re)read `path`.
bool seen(const Changes& changes, const std::string& path) {
  return has(changes, Kind::kChanged, path) || has(changes, Kind::kCreated, path);
}

size_t count_path(const Changes& changes, const std::string& path) {
  return std::count_if(changes.begin(), changes.end(), [&](const FileChange& c) {
    return c.path == path || c.from == path;
  });
}

// Collects every batch the watcher delivers.
class Collector {
 public:
  Watcher::Callback callback() {
    return [this](const Changes& batch) {
      std::unique_lock<std::mutex> lock(mu_);
      if (hold_) {
        held_ = true;
        cv_.notify_all();
        cv_.wait(lock, [&] { return !hold_; });
      }
      changes_.insert(changes_.end(), batch.begin(), batch.end());
      batches_.push_back(batch);
      cv_.notify_all();
    };
  }
  // Waits (up to kWait) until `done` holds for everything collected.
  bool wait_for(const std::function<bool(const Changes&)>& done,
                std::chrono::milliseconds limit = std::chrono::duration_cast<std::chrono::milliseconds>(kWait)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return done(changes_); });
  }
  bool wait_seen(const std::string& path) {
    return wait_for([&](const Changes& c) { return seen(c, path); });
  }
  Changes changes() {
    std::lock_guard<std::mutex> lock(mu_);
    return changes_;
  }
  // Everything collected after waiting kSettle more.
  Changes settled() {
    std::this_thread::sleep_for(kSettle);
    return changes();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    changes_.clear();
    batches_.clear();
  }
  // The next batch blocks in the callback until release().
  void hold() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = true;
    held_ = false;
  }
  bool wait_held() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return held_; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  Changes changes_;
  std::vector<Changes> batches_;
  bool hold_ = false;
  bool held_ = false;
};

// Applies changes in order as a receiver would (reading the disk), to check
// that what it ends up knowing is what is on the disk.
class Receiver {
 public:
  Receiver(fs::path root, std::map<std::string, std::string> known)
      : root_(std::move(root)), known_(std::move(known)) {}
  void apply(const Changes& changes) {
    for (const auto& c : changes) {
      switch (c.kind) {
        case Kind::kCreated:
        case Kind::kChanged:
          if (c.is_dir) break;
          if (fs::is_regular_file(root_ / c.path)) {
            known_[c.path] = weft::testing::read_file(root_ / c.path);
          } else {
            known_.erase(c.path);
          }
          break;
        case Kind::kDeleted:
          known_.erase(c.path);
          erase_under(c.path);
          break;
        case Kind::kRenamed: {
          if (!c.is_dir) {
            auto it = known_.find(c.from);
            if (it != known_.end()) {
              known_[c.path] = it->second;
              known_.erase(c.from);
            }
            break;
          }
          erase_under(c.path);
          std::map<std::string, std::string> moved;
          for (auto it = known_.begin(); it != known_.end();) {
            if (it->first.rfind(c.from + "/", 0) == 0) {
              moved[c.path + it->first.substr(c.from.size())] = it->second;
              it = known_.erase(it);
            } else {
              ++it;
            }
          }
          known_.insert(moved.begin(), moved.end());
          break;
        }
        case Kind::kRescan:
          known_ = disk(root_);
          break;
      }
    }
  }
  const std::map<std::string, std::string>& known() const { return known_; }

  static std::map<std::string, std::string> disk(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) {
        out[fs::relative(entry.path(), root).generic_string()] = weft::testing::read_file(entry.path());
      }
    }
    return out;
  }

 private:
  void erase_under(const std::string& dir) {
    std::erase_if(known_, [&](const auto& kv) { return kv.first.rfind(dir + "/", 0) == 0; });
  }
  fs::path root_;
  std::map<std::string, std::string> known_;
};

class WatcherTest : public ::testing::Test {
 protected:
  void start(WatcherOptions options = {}, internal::WatcherLimits limits = {}) {
    auto w = internal::start_watcher(root().string(), std::move(options), collector_.callback(),
                                     limits);
    ASSERT_TRUE(w.ok()) << w.status();
    watcher_ = std::move(*w);
  }
  void TearDown() override {
    collector_.release();  // a failed test may have left the callback blocked
    watcher_.reset();
  }
  const fs::path& root() const { return dir_.path(); }

  weft::testing::TempDir dir_;
  Collector collector_;
  std::unique_ptr<Watcher> watcher_;
};

// Long quiet periods where a test checks that changes are folded together:
// a writer thread preempted for a few ms must not split them.
WatcherOptions patient() {
  WatcherOptions options;
  options.quiet = 150ms;
  options.max_delay = 3000ms;
  return options;
}

TEST_F(WatcherTest, CreateModifyDelete) {
  start();
  write_file(root() / "a.txt", "one");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kCreated, "a.txt"); }))
      << show(collector_.changes());
  collector_.clear();
  write_file(root() / "a.txt", "two");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kChanged, "a.txt"); }))
      << show(collector_.changes());
  collector_.clear();
  fs::remove(root() / "a.txt");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kDeleted, "a.txt"); }))
      << show(collector_.changes());
  EXPECT_EQ(show(collector_.settled()), "deleted a.txt; ");
}

TEST_F(WatcherTest, EditorSaveIsOneChangeOfTheTarget) {
  write_file(root() / "x.txt", "old");
  start(patient());
  write_file(root() / "x.txt.tmp", "new");
  fs::rename(root() / "x.txt.tmp", root() / "x.txt");
  ASSERT_TRUE(collector_.wait_seen("x.txt")) << show(collector_.changes());
  EXPECT_EQ(show(collector_.settled()), "changed x.txt; ");
}

TEST_F(WatcherTest, EditorSaveWithDefaultTimingEndsRight) {
  // With the default 5 ms the save is normally one change; on a loaded
  // machine it may be split, but the receiver must still end up right.
  write_file(root() / "x.txt", "old");
  start();
  write_file(root() / "x.txt.tmp", "new");
  fs::rename(root() / "x.txt.tmp", root() / "x.txt");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) {
    return seen(c, "x.txt") || has(c, Kind::kRenamed, "x.txt");
  })) << show(collector_.changes());
  Receiver receiver(root(), {{"x.txt", "old"}});
  receiver.apply(collector_.settled());
  EXPECT_EQ(receiver.known(), Receiver::disk(root())) << show(collector_.changes());
}

TEST_F(WatcherTest, BurstOfWritesIsOneChange) {
  write_file(root() / "burst.txt", "");
  start(patient());
  for (int i = 0; i < 100; ++i) {
    std::ofstream out(root() / "burst.txt", std::ios::app);
    out << i << "\n";
  }
  ASSERT_TRUE(collector_.wait_seen("burst.txt"));
  EXPECT_EQ(show(collector_.settled()), "changed burst.txt; ");
}

TEST_F(WatcherTest, SlowRewriteIsOneChangeAfterTheClose) {
  // open(O_TRUNC), a pause, write, close (a busy writer): the empty file must
  // not be told, and a file being written must not hold back other paths.
  write_file(root() / "f.txt", "old content");
  start();
  int fd = ::open((root() / "f.txt").c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  write_file(root() / "other.txt", "x");
  ASSERT_TRUE(collector_.wait_seen("other.txt")) << show(collector_.changes());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(count_path(collector_.changes(), "f.txt"), 0u) << show(collector_.changes());
  collector_.clear();
  const std::string text = "new content";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(count_path(collector_.changes(), "f.txt"), 0u) << show(collector_.changes());
  ::close(fd);
  ASSERT_TRUE(collector_.wait_seen("f.txt")) << show(collector_.changes());
  EXPECT_EQ(show(collector_.settled()), "changed f.txt; ");
}

TEST_F(WatcherTest, FileKeptOpenIsStillReported) {
  // A writer that never closes (a log): told about now and then, at most
  // about once per max_open_delay, and once more when it closes.
  using Clock = std::chrono::steady_clock;
  write_file(root() / "log.txt", "");
  WatcherOptions options;
  options.max_open_delay = 500ms;
  start(options);
  int fd = ::open((root() / "log.txt").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const auto begin = Clock::now();
  for (int i = 0; Clock::now() - begin < 2s; ++i) {
    std::string line = numbered("line ", i) + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    std::this_thread::sleep_for(50ms);
  }
  const size_t while_open = count_path(collector_.changes(), "log.txt");
  EXPECT_GE(while_open, 2u) << show(collector_.changes());  // near 0.5, 1, 1.5 s
  EXPECT_LE(while_open, 5u) << show(collector_.changes());  // not once per write (40)
  ::close(fd);
  ASSERT_TRUE(collector_.wait_for([&](const Changes& c) {
    return count_path(c, "log.txt") > while_open;
  })) << show(collector_.changes());
  EXPECT_LE(count_path(collector_.settled(), "log.txt"), while_open + 2);
}

TEST_F(WatcherTest, NewDirectoriesAreWatchedAndScanned) {
  start();
  fs::create_directories(root() / "a/b/c");
  write_file(root() / "a/b/c/f", "x");  // likely before the watch on c exists
  ASSERT_TRUE(collector_.wait_seen("a/b/c/f")) << show(collector_.changes());
  Changes changes = collector_.changes();
  EXPECT_TRUE(has(changes, Kind::kCreated, "a")) << show(changes);
  EXPECT_TRUE(seen(changes, "a/b/c")) << show(changes);
  EXPECT_EQ(watcher_->watched_directories(), 4u);
  collector_.clear();
  write_file(root() / "a/b/c/g", "later");  // through c's own watch
  ASSERT_TRUE(collector_.wait_seen("a/b/c/g")) << show(collector_.changes());
}

TEST_F(WatcherTest, RenameFile) {
  write_file(root() / "old.txt", "x");
  start();
  fs::rename(root() / "old.txt", root() / "new.txt");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return !c.empty(); }));
  EXPECT_EQ(show(collector_.settled()), "renamed new.txt <- old.txt; ");
}

TEST_F(WatcherTest, RenamedDirectoryKeepsCorrectPathsBelowIt) {
  fs::create_directories(root() / "p/q/r");
  write_file(root() / "p/q/r/f.txt", "1");
  start();
  EXPECT_EQ(watcher_->watched_directories(), 4u);
  fs::rename(root() / "p", root() / "s");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return !c.empty(); }));
  write_file(root() / "s/q/r/f.txt", "2");  // event from r's watch: its path must be new
  ASSERT_TRUE(collector_.wait_seen("s/q/r/f.txt")) << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_EQ(show(changes), "renamed s <- p/; changed s/q/r/f.txt; ");
  // A second rename, deeper: the subtree follows again.
  collector_.clear();
  fs::rename(root() / "s/q", root() / "t");
  write_file(root() / "t/r/g.txt", "3");
  ASSERT_TRUE(collector_.wait_seen("t/r/g.txt")) << show(collector_.changes());
  EXPECT_TRUE(has(collector_.changes(), Kind::kRenamed, "t"));
  EXPECT_EQ(watcher_->watched_directories(), 4u);
}

TEST_F(WatcherTest, RemoveTree) {
  fs::create_directories(root() / "x/sub");
  for (int i = 0; i < 5; ++i) write_file(root() / "x" / numbered("f", i), "data");
  write_file(root() / "x/sub/g", "data");
  write_file(root() / "keep", "data");
  start();
  EXPECT_EQ(watcher_->watched_directories(), 3u);
  fs::remove_all(root() / "x");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kDeleted, "x"); }))
      << show(collector_.changes());
  Changes changes = collector_.settled();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(has(changes, Kind::kDeleted, numbered("x/f", i)));
  EXPECT_TRUE(has(changes, Kind::kDeleted, "x/sub/g"));
  EXPECT_EQ(count_path(changes, "keep"), 0u);
  EXPECT_EQ(watcher_->watched_directories(), 1u);
}

TEST_F(WatcherTest, ThousandFilesAllReported) {
  start();
  for (int i = 0; i < 1000; ++i) write_file(root() / numbered("f", i), std::to_string(i));
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) {
    std::set<std::string> paths;
    for (const auto& change : c) {
      if (change.kind == Kind::kCreated || change.kind == Kind::kChanged) paths.insert(change.path);
    }
    return paths.size() == 1000;
  })) << collector_.changes().size() << " changes";
  for (const auto& c : collector_.settled()) EXPECT_NE(c.kind, Kind::kRescan);
}

TEST_F(WatcherTest, MovesAcrossTheRootBoundary) {
  weft::testing::TempDir outside;
  write_file(root() / "leaving", "x");
  write_file(outside.path() / "arriving", "y");
  fs::create_directories(outside.path() / "dir_in/sub");
  write_file(outside.path() / "dir_in/sub/f", "z");
  fs::create_directories(root() / "dir_out");
  start();
  fs::rename(root() / "leaving", outside.path() / "leaving");
  fs::rename(outside.path() / "arriving", root() / "arriving");
  fs::rename(outside.path() / "dir_in", root() / "dir_in");
  fs::rename(root() / "dir_out", outside.path() / "dir_out");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) {
    return has(c, Kind::kDeleted, "leaving") && has(c, Kind::kCreated, "arriving") &&
           seen(c, "dir_in/sub/f") && has(c, Kind::kDeleted, "dir_out");
  })) << show(collector_.changes());
  EXPECT_EQ(watcher_->watched_directories(), 3u);  // root, dir_in, dir_in/sub
  // The directory that left is no longer watched.
  collector_.clear();
  write_file(outside.path() / "dir_out/ghost", "boo");
  write_file(root() / "dir_in/sub/f2", "z");
  ASSERT_TRUE(collector_.wait_seen("dir_in/sub/f2"));
  for (const auto& c : collector_.settled()) EXPECT_EQ(c.path.find("ghost"), std::string::npos);
}

TEST_F(WatcherTest, IgnoredDirectoriesAreNotWatched) {
  fs::create_directories(root() / ".git/objects");
  WatcherOptions options;
  options.ignored = [](const std::string& path, bool is_dir) {
    return (is_dir && path == ".git") || path.rfind(".git/", 0) == 0 ||
           path.ends_with(".swp");
  };
  start(options);
  EXPECT_EQ(watcher_->watched_directories(), 1u);
  write_file(root() / ".git/HEAD", "ref");
  write_file(root() / ".git/objects/ab", "obj");
  write_file(root() / "file.swp", "swap");
  fs::create_directories(root() / "src/.git");  // not ignored by this predicate below the root
  write_file(root() / "src/main.cc", "int main;");
  ASSERT_TRUE(collector_.wait_seen("src/main.cc"));
  for (const auto& c : collector_.settled()) {
    EXPECT_NE(c.path.rfind(".git", 0), 0u) << c.path;
    EXPECT_NE(c.path, "file.swp");
  }
}

TEST_F(WatcherTest, SymlinksAreNotFollowed) {
  weft::testing::TempDir outside;
  fs::create_directory_symlink(outside.path(), root() / "link");
  start();
  EXPECT_EQ(watcher_->watched_directories(), 1u);
  fs::create_directory_symlink(outside.path(), root() / "link2");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kCreated, "link2"); }));
  write_file(outside.path() / "secret", "x");
  Changes changes = collector_.settled();
  EXPECT_EQ(show(changes), "created link2; ");
  EXPECT_EQ(watcher_->watched_directories(), 1u);
}

TEST_F(WatcherTest, SimulatedGitCheckout) {
  std::map<std::string, std::string> before;
  fs::create_directories(root() / "src/lib");
  for (int i = 0; i < 60; ++i) {
    std::string rel = numbered(i % 2 ? "src/f" : "src/lib/f", i) + ".cc";
    write_file(root() / rel, "v1 " + rel);
    before[rel] = "v1 " + rel;
  }
  start();
  // git writes each new blob to a lock/temp file and renames it over, deletes
  // files the other branch lacks and creates the ones it has.
  std::set<std::string> replaced, deleted, created;
  for (const auto& [rel, text] : before) {
    int n = std::stoi(rel.substr(rel.rfind('f') + 1));
    if (n < 30) {
      write_file(root() / (rel + ".lock"), "v2 " + rel);
      fs::rename(root() / (rel + ".lock"), root() / rel);
      replaced.insert(rel);
    } else if (n < 40) {
      fs::remove(root() / rel);
      deleted.insert(rel);
    }
  }
  fs::create_directories(root() / "src/new/deep");
  for (int i = 0; i < 10; ++i) {
    std::string rel = numbered("src/new/deep/n", i) + ".cc";
    write_file(root() / rel, "fresh");
    created.insert(rel);
  }
  ASSERT_TRUE(collector_.wait_for([&](const Changes& c) {
    for (const auto& p : replaced) {
      if (!seen(c, p) && !has(c, Kind::kRenamed, p)) return false;
    }
    for (const auto& p : deleted) {
      if (!has(c, Kind::kDeleted, p)) return false;
    }
    for (const auto& p : created) {
      if (!seen(c, p)) return false;
    }
    return true;
  })) << show(collector_.changes());
  Receiver receiver(root(), before);
  receiver.apply(collector_.settled());
  EXPECT_EQ(receiver.known(), Receiver::disk(root()));
}

// Moves into a directory made a moment before: its watch is not in place
// yet, so inotify gives the MOVED_FROM but never the MOVED_TO. The callback
// is held while the disk changes, so the watcher reads all of it at once,
// and its scan of the new directory is what finds the moved one.
class MissedMoveTest : public WatcherTest {
 protected:
  // old/a.txt, old/deep/b.txt and f.txt.
  void make_tree() {
    fs::create_directories(root() / "old/deep");
    write_file(root() / "old/a.txt", "a");
    write_file(root() / "old/deep/b.txt", "b");
    write_file(root() / "f.txt", "f");
  }
  // The tree, then the watcher, its thread held in the callback of a batch.
  void start_held() {
    make_tree();
    start();
    collector_.hold();
    write_file(root() / "trigger", "t");
    ASSERT_TRUE(collector_.wait_held());
  }
  // With the watcher held: "old" leaves the root for outside/t/inner, then
  // `meanwhile` runs, then outside/t comes back into the root as "t".
  void out_and_back_in(const std::function<void()>& meanwhile) {
    fs::create_directory(outside_.path() / "t");
    ASSERT_NO_FATAL_FAILURE(start_held());
    fs::rename(root() / "old", outside_.path() / "t/inner");
    meanwhile();
    fs::rename(outside_.path() / "t", root() / "t");
  }
  // Releases the watcher; true when `done` then holds.
  bool release_until(const std::function<bool(const Changes&)>& done) {
    collector_.release();
    return collector_.wait_for(done);
  }
  // A receiver that knew the tree from before the moves ends up with the disk.
  void expect_receiver_right(const Changes& changes) {
    Receiver receiver(root(), {{"old/a.txt", "a"}, {"old/deep/b.txt", "b"}, {"f.txt", "f"}});
    receiver.apply(changes);
    EXPECT_EQ(receiver.known(), Receiver::disk(root())) << show(changes);
  }
  // A write deep in the moved tree comes through its watch with the new path.
  void expect_watched_at(const std::string& dir) {
    collector_.clear();
    write_file(root() / dir / "deep/c.txt", "c");
    EXPECT_TRUE(collector_.wait_seen(dir + "/deep/c.txt")) << show(collector_.changes());
    for (const auto& c : collector_.settled())
      EXPECT_EQ(c.path.rfind("old/", 0), std::string::npos);
  }

  weft::testing::TempDir outside_;
};

TEST_F(MissedMoveTest, DirectoryMovedIntoAFreshDirectoryIsARename) {
  ASSERT_NO_FATAL_FAILURE(start_held());
  fs::create_directory(root() / "new");
  fs::rename(root() / "old", root() / "new/inner");
  ASSERT_TRUE(release_until([](const Changes& c) { return has(c, Kind::kRenamed, "new/inner"); }))
      << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_EQ(show(changes), "created trigger; created new/; renamed new/inner <- old/; ");
  expect_receiver_right(changes);
  EXPECT_EQ(watcher_->watched_directories(), 4u);  // root, new, new/inner, new/inner/deep
  expect_watched_at("new/inner");
}

TEST_F(MissedMoveTest, DirectoryMovedDeepIntoFreshDirectoriesIsARename) {
  ASSERT_NO_FATAL_FAILURE(start_held());
  fs::create_directories(root() / "new/x/y");
  fs::rename(root() / "old", root() / "new/x/y/inner");
  ASSERT_TRUE(release_until([](const Changes& c) {
    return has(c, Kind::kRenamed, "new/x/y/inner");
  })) << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_FALSE(has(changes, Kind::kDeleted, "old")) << show(changes);
  EXPECT_EQ(count_path(changes, "new/x/y/inner/a.txt"), 0u) << show(changes);
  expect_receiver_right(changes);
  EXPECT_EQ(watcher_->watched_directories(), 6u);
  expect_watched_at("new/x/y/inner");
}

TEST_F(MissedMoveTest, DirectoryRenamedThenMovedIntoAFreshDirectory) {
  // The first rename is paired as usual; the second's MOVED_TO is missed.
  ASSERT_NO_FATAL_FAILURE(start_held());
  fs::create_directory(root() / "new");
  fs::rename(root() / "old", root() / "mid");
  fs::rename(root() / "mid", root() / "new/inner");
  ASSERT_TRUE(release_until([](const Changes& c) { return has(c, Kind::kRenamed, "new/inner"); }))
      << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_EQ(show(changes),
            "created trigger; created new/; renamed mid <- old/; renamed new/inner <- mid/; ");
  expect_receiver_right(changes);
  expect_watched_at("new/inner");
}

TEST_F(MissedMoveTest, DirectoryBackFromOutsideInAFreshDirectoryIsARename) {
  // Out of the root, then back inside a directory moved in: its MOVED_FROM
  // is still pending when the scan of the arriving directory finds it.
  ASSERT_NO_FATAL_FAILURE(out_and_back_in([] {}));
  ASSERT_TRUE(release_until([](const Changes& c) { return has(c, Kind::kRenamed, "t/inner"); }))
      << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_EQ(show(changes), "created trigger; created t/; renamed t/inner <- old/; ");
  expect_receiver_right(changes);
  EXPECT_EQ(watcher_->watched_directories(), 4u);
  expect_watched_at("t/inner");
}

TEST_F(MissedMoveTest, DirectoryBackAfterItsOldPathWasToldDeletedIsCreated) {
  // A new file "old" ends the pending MOVED_FROM as a deletion before the
  // moved directory is found again (its watches still in the tree): it is
  // then new, reported whole.
  ASSERT_NO_FATAL_FAILURE(out_and_back_in([&] { write_file(root() / "old", "a file now"); }));
  ASSERT_TRUE(release_until([](const Changes& c) { return seen(c, "t/inner/deep/b.txt"); }))
      << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_TRUE(has(changes, Kind::kDeleted, "old")) << show(changes);
  EXPECT_TRUE(seen(changes, "t/inner/a.txt")) << show(changes);
  EXPECT_FALSE(has(changes, Kind::kRenamed, "t/inner")) << show(changes);
  expect_receiver_right(changes);
  EXPECT_EQ(watcher_->watched_directories(), 4u);  // root, t, t/inner, t/inner/deep
  expect_watched_at("t/inner");
}

TEST_F(MissedMoveTest, DirectoryToldDeletedThenMovedBackIsCreated) {
  fs::create_directory(outside_.path() / "t");
  make_tree();
  start();
  fs::rename(root() / "old", outside_.path() / "t/inner");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kDeleted, "old"); }))
      << show(collector_.changes());
  fs::rename(outside_.path() / "t", root() / "t");
  ASSERT_TRUE(collector_.wait_seen("t/inner/deep/b.txt")) << show(collector_.changes());
  expect_receiver_right(collector_.settled());
  EXPECT_EQ(watcher_->watched_directories(), 4u);
  expect_watched_at("t/inner");
}

TEST_F(MissedMoveTest, FileMovedIntoAFreshDirectoryIsDeletedAndCreated) {
  // inotify names no file by inode: a file's missed MOVED_TO cannot be
  // matched, so the scan reports it as created and its old path as deleted.
  ASSERT_NO_FATAL_FAILURE(start_held());
  fs::create_directory(root() / "new");
  fs::rename(root() / "f.txt", root() / "new/f.txt");
  ASSERT_TRUE(release_until([](const Changes& c) {
    return seen(c, "new/f.txt") && has(c, Kind::kDeleted, "f.txt");
  })) << show(collector_.changes());
  Changes changes = collector_.settled();
  EXPECT_FALSE(has(changes, Kind::kRenamed, "new/f.txt")) << show(changes);
  expect_receiver_right(changes);
}

TEST_F(WatcherTest, QueueOverflowGivesOneRescanAndWatchesAgain) {
  long max_queued = 0;
  if (FILE* f = std::fopen("/proc/sys/fs/inotify/max_queued_events", "r")) {
    if (std::fscanf(f, "%ld", &max_queued) != 1) max_queued = 0;
    std::fclose(f);
  }
  if (max_queued <= 0 || max_queued > 100000) {
    GTEST_SKIP() << "max_queued_events is " << max_queued << ": too large to overflow quickly";
  }
  start();
  // Block the watcher thread in the callback, so the kernel queue fills up.
  collector_.hold();
  write_file(root() / "trigger", "x");
  ASSERT_TRUE(collector_.wait_held());
  const long files = max_queued / 2 + 2000;  // >= 2 events each (create, close)
  for (long i = 0; i < files; ++i) {
    int fd = ::open((root() / numbered("flood", i)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  fs::create_directories(root() / "late/inner");  // its events are lost: the rescan re-watches it
  collector_.release();
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kRescan, ""); }))
      << collector_.changes().size() << " changes";
  Changes changes = collector_.settled();
  EXPECT_EQ(std::count_if(changes.begin(), changes.end(),
                          [](const FileChange& c) { return c.kind == Kind::kRescan; }),
            1);
  EXPECT_EQ(watcher_->watched_directories(), 3u);  // root, late, late/inner
  collector_.clear();
  write_file(root() / "late/inner/f", "x");
  ASSERT_TRUE(collector_.wait_seen("late/inner/f")) << show(collector_.changes());
}

TEST_F(WatcherTest, WatchLimitGivesOneRescanAndADiagnostic) {
  fs::create_directories(root() / "a");
  std::mutex mu;
  std::vector<std::string> messages;
  WatcherOptions options;
  options.diagnostic = [&](const std::string& m) {
    std::lock_guard<std::mutex> lock(mu);
    messages.push_back(m);
  };
  internal::WatcherLimits limits;
  limits.max_watches = 2;  // root and "a"
  start(options, limits);
  fs::create_directories(root() / "b");
  fs::create_directories(root() / "c");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kRescan, ""); }));
  write_file(root() / "a/still", "x");  // the watcher keeps going
  ASSERT_TRUE(collector_.wait_seen("a/still"));
  Changes changes = collector_.settled();
  EXPECT_EQ(std::count_if(changes.begin(), changes.end(),
                          [](const FileChange& c) { return c.kind == Kind::kRescan; }),
            1)
      << show(changes);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("/proc/sys/fs/inotify/max_user_watches"), std::string::npos)
      << messages[0];
  EXPECT_NE(messages[0].find("'b'"), std::string::npos) << messages[0];
}

TEST_F(WatcherTest, PendingBoundGivesRescan) {
  internal::WatcherLimits limits;
  limits.max_pending = 50;
  start(patient(), limits);
  for (int i = 0; i < 200; ++i) write_file(root() / numbered("f", i), "x");
  ASSERT_TRUE(collector_.wait_for([](const Changes& c) { return has(c, Kind::kRescan, ""); }));
  Receiver receiver(root(), {});
  receiver.apply(collector_.settled());
  EXPECT_EQ(receiver.known(), Receiver::disk(root()));
}

TEST_F(WatcherTest, StartErrors) {
  auto callback = [](const Changes&) {};
  auto missing = Watcher::start((root() / "nope").string(), {}, callback);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  write_file(root() / "file", "x");
  auto file = Watcher::start((root() / "file").string(), {}, callback);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotADirectory);
  auto no_callback = Watcher::start(root().string(), {}, nullptr);
  EXPECT_EQ(no_callback.status().code(), StatusCode::kInvalidArgument);
  auto empty = Watcher::start("", {}, callback);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  WatcherOptions negative;
  negative.max_open_delay = -1ms;
  auto bad_delay = Watcher::start(root().string(), negative, callback);
  EXPECT_EQ(bad_delay.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(WatcherTest, StopJoinsAndNoCallbackAfterIt) {
  std::atomic<bool> stopped{false};
  std::atomic<int> late{0};
  auto w = Watcher::start(root().string(), {}, [&](const Changes&) {
    if (stopped) ++late;
  });
  ASSERT_TRUE(w.ok()) << w.status();
  write_file(root() / "a", "x");
  (*w)->stop();
  stopped = true;
  (*w)->stop();  // twice is fine
  write_file(root() / "b", "x");
  std::this_thread::sleep_for(kSettle);
  EXPECT_EQ(late.load(), 0);
  w->reset();  // the destructor after stop()
}

// Not a pass/fail test: prints the delay from close() of a write to the
// callback with the default options.
TEST_F(WatcherTest, LatencyFromCloseToCallback) {
  using Clock = std::chrono::steady_clock;
  std::mutex mu;
  std::condition_variable cv;
  Clock::time_point seen_at;
  int seen_count = 0;
  auto w = Watcher::start(root().string(), {}, [&](const Changes& changes) {
    auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& c : changes) {
      if (c.path == "lat.txt") {
        seen_at = now;
        ++seen_count;
      }
    }
    cv.notify_all();
  });
  ASSERT_TRUE(w.ok()) << w.status();
  write_file(root() / "lat.txt", "start");
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return seen_count >= 1; }));
  }
  std::this_thread::sleep_for(20ms);
  std::vector<double> ms;
  for (int i = 0; i < 200; ++i) {
    int before;
    {
      std::lock_guard<std::mutex> lock(mu);
      before = seen_count;
    }
    int fd = ::open((root() / "lat.txt").c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string text = numbered("write ", i);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
    auto closed = Clock::now();
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return seen_count > before; }));
    ms.push_back(std::chrono::duration<double, std::milli>(seen_at - closed).count());
    lock.unlock();
    std::this_thread::sleep_for(12ms);  // past the quiet period: one write per change
  }
  std::sort(ms.begin(), ms.end());
  std::printf("watcher latency close()->callback over %zu writes: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              ms.size(), ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back());
}

}  // namespace
}  // namespace weft::source
