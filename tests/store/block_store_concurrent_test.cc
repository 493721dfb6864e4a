// BlockStore under threads (one store shared) and under processes (one
// database file, several connections that must wait for the lock, not fail).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>

#include "support/test_support.h"
#include "weft/store/block_store.h"

namespace weft::store {
namespace {

TEST(BlockStoreConcurrentTest, ThreadsShareOneStore) {
  weft::testing::TempDir dir;
  auto store = std::move(*BlockStore::open((dir.path() / "b.db").string()));
  NewBlock nb;
  nb.agent_id = "ada";
  nb.label = "shared";
  BlockInfo shared = *store->create_block(nb);
  constexpr int kThreads = 4;
  constexpr int kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      NewBlock own;
      own.agent_id = "agent" + std::to_string(t);
      own.label = "own";
      auto mine = store->create_block(own);
      ASSERT_TRUE(mine.ok()) << mine.status();
      for (int i = 0; i < kEach; ++i) {
        std::string payload = std::to_string(t) + ":" + std::to_string(i);
        ASSERT_TRUE(store->append_update(shared.id, payload, "v").ok());
        ASSERT_TRUE(store->append_update(mine->id, payload, "v").ok());
        if (i % 25 == 0) {
          ASSERT_TRUE(store->list_blocks().ok());
          ASSERT_TRUE(store->load(shared.id).ok());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  auto loaded = store->load(shared.id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->updates.size(), size_t{kThreads * kEach});
  std::set<std::string> seen;
  for (size_t i = 0; i < loaded->updates.size(); ++i) {
    EXPECT_EQ(loaded->updates[i].seq, i + 1);  // dense, no duplicates
    seen.insert(loaded->updates[i].data);
  }
  EXPECT_EQ(seen.size(), size_t{kThreads * kEach});
  EXPECT_EQ(store->list_blocks()->blocks.size(), size_t{kThreads + 1});
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(BlockStoreConcurrentTest, ProcessesWaitForTheLockInsteadOfFailing) {
  weft::testing::TempDir dir;
  std::string path = (dir.path() / "b.db").string();
  std::string id;
  {
    auto store = std::move(*BlockStore::open(path));
    NewBlock nb;
    nb.agent_id = "ada";
    nb.label = "shared";
    id = store->create_block(nb)->id;
  }
  constexpr int kProcs = 3;
  constexpr int kEach = 150;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child opens its own connection (never share one across fork).
      auto store = BlockStore::open(path);
      if (!store.ok()) _exit(2);
      for (int i = 0; i < kEach; ++i) {
        auto seq = (*store)->append_update(id, std::to_string(p) + ":" + std::to_string(i), "v");
        if (!seq.ok()) _exit(3);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a writer failed instead of waiting for the lock";
  }
  auto store = std::move(*BlockStore::open(path));
  auto loaded = store->load(id);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->updates.size(), size_t{kProcs * kEach});
  EXPECT_EQ(loaded->info.last_seq, uint64_t{kProcs * kEach});
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(BlockStoreConcurrentTest, BusyTimeoutExpiresAsUnavailable) {
  weft::testing::TempDir dir;
  std::string path = (dir.path() / "b.db").string();
  StoreOptions quick;
  quick.busy_timeout_ms = 50;
  auto a = std::move(*BlockStore::open(path, quick));
  NewBlock nb;
  nb.agent_id = "ada";
  nb.label = "x";
  std::string id = a->create_block(nb)->id;
  // Hold the write lock from a raw connection.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto r = a->append_update(id, "u", "v");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  EXPECT_NE(r.status().message().find("busy"), std::string_view::npos);
  sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  EXPECT_TRUE(a->append_update(id, "u", "v").ok());
}

}  // namespace
}  // namespace weft::store
