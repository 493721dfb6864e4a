// Doc::check_invariants (DocCore::check): passes on docs in every mode the
// engine reaches, and names the invariant when one is broken by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "crdt/core_access.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

// A doc with a committed text, a list and a map, and an open transaction.
void fill(Doc& doc) {
  ASSERT_TRUE(doc.get_text("t").insert(0, "hello").ok());
  ASSERT_TRUE(doc.get_list("l").insert(0, Value(int64_t{1})).ok());
  ASSERT_TRUE(doc.commit().ok());
  ASSERT_TRUE(doc.get_map("m").set("k", Value("v")).ok());
}

TEST(DocCheck, HoldsThroughEditsImportsAndCheckouts) {
  Doc a(1), b(2);
  fill(a);
  EXPECT_TRUE(a.check_invariants().ok()) << a.check_invariants().message();
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  // Concurrent edits: the import goes through a partial tracker and folds back.
  ASSERT_TRUE(a.get_text("t").insert(5, " world").ok());
  ASSERT_TRUE(b.get_text("t").insert(0, ">> ").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.import(b.export_updates()).ok());
  EXPECT_TRUE(a.check_invariants().ok()) << a.check_invariants().message();
  // A mark keeps the whole tracker for good.
  ASSERT_TRUE(a.get_text("t").mark(0, 2, "bold", Value(true)).ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_TRUE(a.check_invariants().ok()) << a.check_invariants().message();
  const Frontiers f = b.frontiers();
  ASSERT_TRUE(a.checkout(f).ok());
  EXPECT_TRUE(a.check_invariants().ok()) << a.check_invariants().message();
  // Typed keys, buffered and through the lane.
  Doc c(3);
  for (char ch : std::string("typing")) {
    ASSERT_TRUE(c.get_text("t").insert(c.get_text("t").len(), std::string(1, ch)).ok());
    ASSERT_TRUE(c.commit().ok());
    EXPECT_TRUE(c.check_invariants(false).ok());
  }
  EXPECT_TRUE(c.check_invariants().ok()) << c.check_invariants().message();
}

TEST(DocCheck, NamesAStaleVersionTotal) {
  Doc doc(1);
  fill(doc);
  core_of(doc).live().vv_total += 1;
  const Status st = doc.check_invariants(false);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("total"), std::string::npos) << st.message();
}

TEST(DocCheck, NamesAStateAheadOfTheLog) {
  Doc doc(1);
  fill(doc);
  ASSERT_TRUE(doc.commit().ok());
  auto& core = core_of(doc);
  core.live().vv.set(core.self_index(), core.live().vv.get(core.self_index()) + 1);
  core.live().vv_total += 1;
  const Status st = doc.check_invariants(false);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("state version"), std::string::npos) << st.message();
}

// (A plain state beside a tracker cannot be built: SeqState holds one mode.)
TEST(DocCheck, NamesATemporaryTrackerLeftOver) {
  Doc doc(1);
  fill(doc);
  ASSERT_TRUE(doc.commit().ok());
  auto& core = core_of(doc);
  {
    // A tracker built inside a replay's scope, and the scope ended without
    // the fold.
    detail::DocCore::FoldScope scope(core);
    ASSERT_TRUE(core.materialize(core.live()).ok());
    EXPECT_TRUE(doc.check_invariants(true).ok());
  }
  const Status st = doc.check_invariants(false);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("temporary tracker outside"), std::string::npos) << st.message();
  ASSERT_TRUE(core.fold_trackers(core.live()).ok());
  EXPECT_TRUE(doc.check_invariants(true).ok());
}

TEST(DocCheck, DeepNamesABrokenDepsVersion) {
  Doc doc(1);
  fill(doc);
  ASSERT_TRUE(doc.commit().ok());
  ASSERT_TRUE(doc.get_text("t").insert(0, "x").ok());
  ASSERT_TRUE(doc.commit({.message = "apart"}).ok());
  auto& core = core_of(doc);
  ASSERT_GE(core.log().size(), 2u);
  detail::CoreAccess::log(core).back().lamport += 1;
  EXPECT_TRUE(doc.check_invariants(false).ok());
  const Status st = doc.check_invariants(true);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("lamport"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace weft::crdt
