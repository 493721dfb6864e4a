#include "source/watch_tree.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace weft::source::internal {
namespace {

TEST(WatchTreeTest, PathsFollowARenamedAncestor) {
  WatchTree t;
  t.reset(1);
  std::vector<int> displaced;
  ASSERT_TRUE(t.place(2, 1, "a", &displaced));
  ASSERT_TRUE(t.place(3, 2, "b", &displaced));
  ASSERT_TRUE(t.place(4, 3, "c", &displaced));
  EXPECT_EQ(t.path(1), "");
  EXPECT_EQ(t.path(4), "a/b/c");
  // "a/b" moves to "x/y" (under a new directory x).
  ASSERT_TRUE(t.place(5, 1, "x", &displaced));
  ASSERT_TRUE(t.place(3, 5, "y", &displaced));
  EXPECT_EQ(t.path(4), "x/y/c");
  EXPECT_EQ(t.child(2, "b"), WatchTree::kNone);
  EXPECT_EQ(t.child(5, "y"), 3);
  EXPECT_TRUE(displaced.empty());
}

TEST(WatchTreeTest, PlacingOverAnotherDirectoryDisplacesIt) {
  WatchTree t;
  t.reset(1);
  std::vector<int> displaced;
  t.place(2, 1, "a", &displaced);
  t.place(3, 2, "inner", &displaced);
  t.place(4, 1, "b", &displaced);
  ASSERT_TRUE(t.place(4, 1, "a", &displaced));
  std::sort(displaced.begin(), displaced.end());
  EXPECT_EQ(displaced, (std::vector<int>{2, 3}));
  EXPECT_EQ(t.path(4), "a");
  EXPECT_EQ(t.child(1, "b"), WatchTree::kNone);
  EXPECT_EQ(t.size(), 2u);
}

TEST(WatchTreeTest, RefusesCyclesAndUnknownParents) {
  WatchTree t;
  t.reset(1);
  std::vector<int> displaced;
  t.place(2, 1, "a", &displaced);
  t.place(3, 2, "b", &displaced);
  EXPECT_FALSE(t.place(2, 3, "loop", &displaced));
  EXPECT_FALSE(t.place(2, 2, "self", &displaced));
  EXPECT_FALSE(t.place(9, 42, "orphan", &displaced));
  EXPECT_EQ(t.path(3), "a/b");
}

TEST(WatchTreeTest, RemoveTakesTheSubtree) {
  WatchTree t;
  t.reset(1);
  std::vector<int> displaced, removed;
  t.place(2, 1, "a", &displaced);
  t.place(3, 2, "b", &displaced);
  t.place(4, 1, "c", &displaced);
  t.remove(2, &removed);
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<int>{2, 3}));
  EXPECT_FALSE(t.path(3).has_value());
  EXPECT_EQ(t.child(1, "a"), WatchTree::kNone);
  EXPECT_EQ(t.size(), 2u);
  t.remove(1, nullptr);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.path(4).has_value());
}

}  // namespace
}  // namespace weft::source::internal
