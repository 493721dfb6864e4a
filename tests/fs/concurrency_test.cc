// Concurrent use of one Filesystem instance from several threads (the MCP
// server's pattern); run under ThreadSanitizer via the `concurrent` label.
#include <atomic>
#include <thread>

#include "backends.h"

namespace weft::fs::testing {
namespace {

template <typename B>
using Concurrent = FsTest<B>;
TYPED_TEST_SUITE(Concurrent, AllBackends, BackendNames);

TYPED_TEST(Concurrent, ManyThreadsReadWriteSnapshot) {
  auto& fs = this->fs();
  constexpr int kThreads = 4;
  constexpr int kOps = 40;
  this->put("shared.txt", "v0");
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        std::string own = "t" + std::to_string(t) + "/f" + std::to_string(i % 5) + ".txt";
        if (!fs.write(own, "thread " + std::to_string(t) + " op " + std::to_string(i)).ok()) {
          ++errors;
        }
        if (!fs.write("log.txt", "t" + std::to_string(t) + "\n", WriteMode::kAppend).ok()) ++errors;
        // Readers see the old or the new content, never a mix.
        if (!fs.write("shared.txt", i % 2 ? "AAAAAAAA" : "BBBBBBBB").ok()) ++errors;
        auto r = fs.read("shared.txt");
        if (!r.ok() ||
            (r->content != "v0" && r->content != "AAAAAAAA" && r->content != "BBBBBBBB")) {
          ++errors;
        }
        if (!fs.glob("**/*.txt").ok() || !fs.grep("thread").ok() || !fs.list().ok()) ++errors;
        if (t == 0 && i % 10 == 0 && !fs.snapshot().ok()) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    auto l = fs.list("t" + std::to_string(t));
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->size(), 5u);
  }
  auto snaps = fs.snapshots();
  ASSERT_TRUE(snaps.ok());
  EXPECT_EQ(snaps->size(), 4u);
  // Temporary files of the atomic writes never show.
  auto all = fs.glob("**");
  ASSERT_TRUE(all.ok());
  for (auto& m : *all) EXPECT_EQ(m.path.find(".weft-tmp"), std::string::npos);
}

TEST(InMemoryConcurrency, AppendsAreAtomic) {
  auto fs = make_in_memory_filesystem();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) ASSERT_TRUE(fs->write("a", "x", WriteMode::kAppend).ok());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(fs->read_bytes("a")->size_bytes, 800);
}

}  // namespace
}  // namespace weft::fs::testing
