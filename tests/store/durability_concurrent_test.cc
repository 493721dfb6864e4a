// kill -9 durability: a child process appends small edits to one block and
// persists each (MemoryCache::persist_block), writing the edit's number to a
// pipe only after persist returns. The parent kills it with SIGKILL at random
// points (after a random ack, plus a random few microseconds so the kill
// lands inside SQLite's work too), 20 times, restarting it where it left off.
// After every kill: PRAGMA integrity_check is ok and every acknowledged edit
// is in the block.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>

#include "store/durability_test_util.h"
#include "support/test_support.h"
#include "weft/store/memory_cache.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define WEFT_SLOW_BUILD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define WEFT_SLOW_BUILD 1
#endif

namespace weft::store {
namespace {

#ifdef WEFT_SLOW_BUILD
constexpr int kTotalEdits = 2000;  // sanitizers are ~10x slower; same kill count
#else
constexpr int kTotalEdits = 10000;
#endif
constexpr int kKills = 20;

[[noreturn]] void child(const std::string& path, int start, int ack_fd) {
  auto store = BlockStore::open(path);
  if (!store.ok()) _exit(2);
  MemoryCache cache(std::shared_ptr<BlockStore>(std::move(*store)));
  auto doc = cache.get("ada", "journal");
  if (!doc.ok()) _exit(3);
  for (int i = start; i < kTotalEdits; ++i) {
    if (!(*doc)->append_text(testing::edit_text(i)).ok()) _exit(4);
    if (!cache.persist_block("ada", "journal").ok()) _exit(5);
    if (write(ack_fd, &i, sizeof i) != sizeof i) _exit(6);
  }
  _exit(0);
}

// Checks the database after a crash; returns the number of edits present.
void verify(const std::string& path, int last_ack) {
  auto store = BlockStore::open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->check_integrity().ok()) << (*store)->check_integrity();
  MemoryCache cache(std::shared_ptr<BlockStore>(std::move(*store)));
  auto doc = cache.get("ada", "journal");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_TRUE(cache.problems().empty());
  std::vector<bool> present = testing::edits_present(*(*doc)->text_content(), kTotalEdits);
  for (int i = 0; i <= last_ack; ++i) {
    ASSERT_TRUE(present[static_cast<size_t>(i)]) << "acknowledged edit " << i << " is missing";
  }
}

TEST(DurabilityTest, AcknowledgedEditsSurviveKill9) {
  weft::testing::TempDir dir;
  std::string path = (dir.path() / "durable.db").string();
  {
    auto store = BlockStore::open(path);
    ASSERT_TRUE(store.ok());
    MemoryCache cache(std::shared_ptr<BlockStore>(std::move(*store)));
    CreateBlockRequest r;
    r.agent_id = "ada";
    r.label = "journal";
    ASSERT_TRUE(cache.create_block(r).ok());
  }
  std::mt19937 rng(20261126);
  int last_ack = -1;
  for (int round = 0; round <= kKills; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child(path, last_ack + 1, fds[1]);
    }
    close(fds[1]);
    bool final_round = round == kKills;
    int remaining = kTotalEdits - (last_ack + 1);
    int target = last_ack + 1 +
                 static_cast<int>(rng() % std::max(1, 2 * remaining / (kKills + 1 - round + 1)));
    int ack = 0;
    bool killed = false;
    while (read(fds[0], &ack, sizeof ack) == sizeof ack) {
      last_ack = ack;
      if (!final_round && !killed && ack >= target) {
        usleep(rng() % 400);
        kill(pid, SIGKILL);
        killed = true;  // keep reading: acks already in the pipe count
      }
    }
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (final_round) {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed: " << status;
      EXPECT_EQ(last_ack, kTotalEdits - 1);
    } else if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0) << "child failed before the kill";
    }
    SCOPED_TRACE("after round " + std::to_string(round) + ", last ack " + std::to_string(last_ack));
    verify(path, last_ack);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace weft::store
