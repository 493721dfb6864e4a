// Power-cut durability: the fault VFS kills the "device" at a random write,
// then drops every write that was not synced (or a random subset: a torn
// write). After that the database must pass integrity_check, and:
//   Durability::kFull   — every edit whose persist_block returned OK is there;
//   Durability::kNormal — the edits present are a prefix of the acknowledged
//                          ones, at least up to the last checkpoint (commits
//                          after it may roll back; nothing tears).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "store/durability_test_util.h"
#include "store/fault_vfs_util.h"
#include "support/test_support.h"
#include "weft/store/memory_cache.h"

namespace weft::store {
namespace {

struct Outcome {
  int acked = 0;   // edits whose persist returned OK
  int synced = 0;  // edits acknowledged before the last successful checkpoint
  std::vector<bool> present;
};

Outcome run_until_power_cut(const std::string& path, Durability mode, int64_t fail_after, bool torn,
                            uint64_t seed) {
  Outcome out;
  testing::register_fault_vfs();
  {
    StoreOptions o;
    o.durability = mode;
    o.vfs = testing::kFaultVfsName;
    auto store = BlockStore::open(path, o);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return out;
    MemoryCache cache(std::shared_ptr<BlockStore>(std::move(*store)));
    CreateBlockRequest r;
    r.agent_id = "ada";
    r.label = "journal";
    auto doc = cache.create_block(r);
    EXPECT_TRUE(doc.ok()) << doc.status();
    if (!doc.ok()) return out;
    testing::fault_vfs_fail_after(fail_after);
    for (int i = 0; i < 400; ++i) {
      if (!(*doc)->append_text(testing::edit_text(i)).ok()) break;
      if (!cache.persist_block("ada", "journal").ok()) break;
      out.acked = i + 1;
      // Now and then a checkpoint, after which NORMAL mode must keep them too.
      if (i % 25 == 24 && cache.store().checkpoint().ok()) out.synced = out.acked;
    }
  }  // closes the database while the device is dead
  testing::fault_vfs_power_cut(torn, seed);
  std::filesystem::remove(path + "-shm");  // shared memory does not survive a power cut
  auto store = BlockStore::open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return out;
  EXPECT_TRUE((*store)->check_integrity().ok()) << (*store)->check_integrity();
  MemoryCache cache(std::shared_ptr<BlockStore>(std::move(*store)));
  auto doc = cache.get("ada", "journal");
  if (!doc.ok()) {
    // The create itself may have been lost (power cut before it synced).
    EXPECT_EQ(doc.status().code(), StatusCode::kNotFound) << doc.status();
    EXPECT_TRUE((mode == Durability::kNormal && out.synced == 0) || out.acked == 0);
    out.present.assign(400, false);
    return out;
  }
  out.present = testing::edits_present(*(*doc)->text_content(), 400);
  EXPECT_TRUE(cache.problems().empty());
  return out;
}

class PowerCutTest : public ::testing::TestWithParam<std::tuple<Durability, bool>> {};

TEST_P(PowerCutTest, AcknowledgedEditsSurvive) {
  auto [mode, torn] = GetParam();
  std::mt19937_64 rng(torn ? 7 : 11);
  for (int round = 0; round < 10; ++round) {
    weft::testing::TempDir dir;
    std::string path = (dir.path() / "p.db").string();
    int64_t fail_after = 5 + static_cast<int64_t>(rng() % 600);
    Outcome o = run_until_power_cut(path, mode, fail_after, torn, rng());
    SCOPED_TRACE("round " + std::to_string(round) + " fail_after " + std::to_string(fail_after) +
                 " acked " + std::to_string(o.acked));
    ASSERT_EQ(o.present.size(), 400u);
    int present = 0;
    while (present < 400 && o.present[static_cast<size_t>(present)]) ++present;
    for (int i = present; i < 400; ++i) {
      EXPECT_FALSE(o.present[static_cast<size_t>(i)]) << "edit " << i << " after a hole";
    }
    if (mode == Durability::kFull) {
      EXPECT_GE(present, o.acked) << "an acknowledged edit was lost in FULL mode";
    }
    EXPECT_GE(present, o.synced) << "an edit from before a checkpoint was lost";
    EXPECT_LE(present, o.acked + 1);  // at most the edit in flight
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, PowerCutTest,
    ::testing::Combine(::testing::Values(Durability::kFull, Durability::kNormal),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == Durability::kFull ? "Full" : "Normal") +
             (std::get<1>(info.param) ? "Torn" : "Clean");
    });

}  // namespace
}  // namespace weft::store
