// A partial tracker's placeholders on a long text: they stay one gap until
// an op reaches them, so the tracker holds elements only around the ops, and
// a merge through it gives the whole tracker's result.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/fugue_tracker.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

using detail::Elem;
using detail::kNone;
using detail::kPlaceholderPeer;
using detail::Seq;

TEST(PlaceholderGap, OnlyThePlaceholdersOpsReachGetElements) {
  const std::vector<uint64_t> peer_ids = {7};
  Seq seq(&peer_ids, /*is_text=*/true);
  constexpr size_t kN = 1'000'000;
  seq.fill_placeholders(kN);
  EXPECT_EQ(seq.arena_size(), 0u);
  const uint32_t x = 'x';
  ASSERT_TRUE(seq.insert(0, 0, 10, &x, 1, nullptr).ok());
  ASSERT_TRUE(seq.insert(0, 1, 600'000, &x, 1, nullptr).ok());
  ASSERT_TRUE(seq.insert(0, 2, kN + 2, &x, 1, nullptr).ok());  // at the end
  ASSERT_TRUE(seq.erase_forward(0, 3, 300'000, 500, nullptr).ok());
  EXPECT_EQ(seq.visible_entities(), kN + 3 - 500);
  EXPECT_LT(seq.arena_size(), 2'000u);
  EXPECT_TRUE(seq.check_prepare(nullptr).ok());

  // Document order: every placeholder once, in counter order; the new
  // elements where they went in; the deleted run where it was.
  size_t placeholders = 0, pos = 0, deleted = 0;
  std::vector<size_t> inserted_at;
  seq.for_each_chunk([&](std::span<const uint32_t> items, uint32_t visible) {
    if (items.empty()) {
      placeholders += visible;
      pos += visible;
      return;
    }
    for (const uint32_t i : items) {
      const Elem& e = seq.elem(i);
      if (e.peer == kPlaceholderPeer) {
        EXPECT_EQ(static_cast<size_t>(e.counter), placeholders);
        ++placeholders;
        if (e.del_peer != kNone) {
          EXPECT_EQ(pos, 300'000u);  // (a deleted one takes no position)
          ++deleted;
          continue;
        }
      } else {
        inserted_at.push_back(pos);
      }
      ++pos;
    }
  });
  EXPECT_EQ(placeholders, kN);
  EXPECT_EQ(deleted, 500u);
  EXPECT_EQ(pos, kN + 3 - 500);
  EXPECT_EQ(inserted_at, (std::vector<size_t>{10, 600'000 - 500, kN + 2 - 500}));
}

// A long text loaded from a snapshot, edited locally near its start and end,
// then merged with a fork's edits from before those: the partial tracker
// (self-checked on every op) gives the whole tracker's text.
TEST(PlaceholderGap, MergeFarApartMatchesTheWholeTracker) {
  std::string big;
  for (int i = 0; i < 20'000; ++i) big += "line " + std::to_string(i) + " of a long text\n";
  Doc origin(1);
  ASSERT_TRUE(origin.get_text("t").insert(0, big).ok());
  ASSERT_TRUE(origin.commit().ok());
  const std::string snapshot = origin.export_snapshot();

  Doc fork(3);
  ASSERT_TRUE(fork.import(origin.export_updates()).ok());
  TextRef ft = fork.get_text("t");
  ASSERT_TRUE(ft.insert(big.find("line 19990 "), "FORK END ").ok());  // (last first)
  ASSERT_TRUE(ft.erase(big.find("line 12000 "), 30).ok());
  ASSERT_TRUE(ft.insert(big.find("line 5000 "), "FORK ").ok());
  ASSERT_TRUE(fork.commit().ok());
  const std::string fork_updates = fork.export_updates();

  std::string texts[2];
  for (const bool partial : {true, false}) {
    Doc d(2);
    test_options(d).partial_enabled = partial;
    test_options(d).check_tracker = partial;
    ASSERT_TRUE(d.import(snapshot).ok());
    TextRef t = d.get_text("t");
    ASSERT_TRUE(t.insert(big.find("line 100 "), "LOCAL ").ok());
    ASSERT_TRUE(t.erase(big.find("line 18000 ") + 6, 40).ok());  // (+ "LOCAL ")
    ASSERT_TRUE(d.commit().ok());
    ASSERT_TRUE(d.import(fork_updates).ok());
    if (partial) {
      EXPECT_GT(d.core()->partial_stats().begun, 0u);
      EXPECT_EQ(d.core()->partial_stats().whole, 0u);
    }
    texts[partial ? 0 : 1] = t.to_string();
  }
  EXPECT_EQ(texts[0], texts[1]);
  for (const char* s : {"LOCAL line 100 ", "FORK line 5000 ", "FORK END line 19990 "})
    EXPECT_NE(texts[0].find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace weft::crdt
