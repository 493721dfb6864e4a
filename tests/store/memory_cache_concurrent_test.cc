// MemoryCache under threads, and two caches (as two processes would) on one
// database writing the same block.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "store/durability_test_util.h"
#include "support/test_support.h"
#include "weft/store/memory_cache.h"

namespace weft::store {
namespace {

std::shared_ptr<BlockStore> open_store(const std::string& path) {
  auto s = BlockStore::open(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::shared_ptr<BlockStore>(std::move(*s));
}

TEST(MemoryCacheConcurrentTest, ThreadsEditPersistAndEvict) {
  weft::testing::TempDir dir;
  CacheOptions o;
  o.memory_budget_bytes = 16 * 1024;  // forces evictions while threads work
  o.compact_after_updates = 16;
  MemoryCache cache(open_store((dir.path() / "c.db").string()), o);
  CreateBlockRequest r;
  r.agent_id = "ada";
  r.label = "shared";
  ASSERT_TRUE(cache.create_block(r).ok());
  constexpr int kThreads = 4, kEach = 60;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      CreateBlockRequest own;
      own.agent_id = "ada";
      own.label = "own" + std::to_string(t);
      ASSERT_TRUE(cache.create_block(own).ok());
      for (int i = 0; i < kEach; ++i) {
        auto shared = cache.get("ada", "shared");
        ASSERT_TRUE(shared.ok()) << shared.status();
        ASSERT_TRUE((*shared)->append_text(testing::edit_text(t * 1000 + i)).ok());
        ASSERT_TRUE(cache.persist_block("ada", "shared").ok());
        auto mine = cache.get("ada", own.label);
        ASSERT_TRUE(mine.ok());
        ASSERT_TRUE((*mine)->append_text("x").ok());
        ASSERT_TRUE(cache.save_document(**mine).ok());
        if (i % 20 == 0) {
          CreateBlockRequest filler;
          filler.agent_id = "filler";
          filler.label = std::to_string(t) + "/" + std::to_string(i);
          filler.initial_text = std::string(2000, 'f');
          ASSERT_TRUE(cache.create_block(filler).ok());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(cache.stats().evictions, 0u);
  MemoryCache fresh(open_store((dir.path() / "c.db").string()));
  auto shared = fresh.get("ada", "shared");
  ASSERT_TRUE(shared.ok());
  std::string text = *(*shared)->text_content();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) {
      EXPECT_NE(text.find(testing::edit_text(t * 1000 + i)), std::string::npos);
    }
    EXPECT_EQ(*(*fresh.get("ada", "own" + std::to_string(t)))->text_content(),
              std::string(kEach, 'x'));
  }
}

TEST(MemoryCacheConcurrentTest, TwoCachesOnOneDatabaseMerge) {
  weft::testing::TempDir dir;
  std::string path = (dir.path() / "c.db").string();
  MemoryCache a(open_store(path));
  CreateBlockRequest r;
  r.agent_id = "ada";
  r.label = "shared";
  ASSERT_TRUE(a.create_block(r).ok());
  MemoryCache b(open_store(path));
  auto da = *a.get("ada", "shared");
  auto db = *b.get("ada", "shared");
  std::thread ta([&] {
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(da->append_text(testing::edit_text(i)).ok());
      ASSERT_TRUE(a.persist_block("ada", "shared").ok());
    }
  });
  std::thread tb([&] {
    for (int i = 100; i < 150; ++i) {
      ASSERT_TRUE(db->append_text(testing::edit_text(i)).ok());
      ASSERT_TRUE(b.persist_block("ada", "shared").ok());
    }
  });
  ta.join();
  tb.join();
  MemoryCache fresh(open_store(path));
  std::string text = *(*fresh.get("ada", "shared"))->text_content();
  for (int i : {0, 25, 49, 100, 125, 149}) {
    EXPECT_NE(text.find(testing::edit_text(i)), std::string::npos) << i;
  }
  auto present = testing::edits_present(text, 150);
  EXPECT_EQ(std::count(present.begin(), present.end(), true), 100);
}

}  // namespace
}  // namespace weft::store
