// A plain state replayed from the history without element ids (an import
// into an empty doc, a checkout): edits that need no ids go on, and the first
// local delete rebuilds them (DocCore::recover_ids) with the same ops, start
// ids included, as a doc that kept the Fugue tracker writes.
#include <gtest/gtest.h>

#include <string>

#include "crdt/core_access.h"
#include "crdt/plain_support.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

using testing::is_plain;
using testing::plain_with_ids;
using testing::tracker_doc;

// A history of two authors whose text and list ids come in many runs.
std::string two_author_history() {
  Doc a(1), b(2);
  for (int i = 0; i < 40; ++i) {
    Doc& d = i % 3 == 0 ? b : a;
    TextRef t = d.get_text("t");
    EXPECT_TRUE(t.insert(t.len() * (i % 5) / 5, "w" + std::to_string(i) + "\u00e9 ").ok());
    if (i % 4 == 3) {
      EXPECT_TRUE(t.erase(t.len() / 3, 2).ok());
    }
    ListRef l = d.get_list("l");
    EXPECT_TRUE(l.insert(l.len() / 2, Value(int64_t{i})).ok());
    EXPECT_TRUE(d.commit().ok());
    Doc& other = &d == &a ? b : a;
    EXPECT_TRUE(other.import(d.export_updates(other.oplog_version())).ok());
  }
  return a.export_updates();
}

// The same local edits on a doc that imported `history` into an empty state
// (ids deferred) and on one that keeps a tracker: the same ops, start ids
// included, in the Loro JSON export.
TEST(DeferredIdsTest, ImportIntoAnEmptyDocDefersIdsUntilADelete) {
  const std::string history = two_author_history();
  Doc deferred(9);
  Doc tracker = tracker_doc(9);
  for (Doc* d : {&deferred, &tracker}) ASSERT_TRUE(d->import(history).ok());
  const ContainerId t = deferred.get_text("t").id(), l = deferred.get_list("l").id();
  EXPECT_TRUE(deferred.core()->history_is_linear());  // (the authors synced after each commit)
  EXPECT_FALSE(plain_with_ids(deferred, t));
  EXPECT_FALSE(plain_with_ids(deferred, l));
  for (Doc* d : {&deferred, &tracker}) {
    TextRef text = d->get_text("t");
    ASSERT_TRUE(text.insert(3, "ins").ok());  // an insert needs no ids
    ASSERT_TRUE(d->commit().ok());
  }
  EXPECT_FALSE(plain_with_ids(deferred, t));
  for (Doc* d : {&deferred, &tracker}) {
    TextRef text = d->get_text("t");
    ASSERT_TRUE(text.erase(1, text.len() / 2).ok());  // across many id runs
    ASSERT_TRUE(text.erase(0, 1).ok());
    ListRef list = d->get_list("l");
    ASSERT_TRUE(list.erase(2, 5).ok());
    ASSERT_TRUE(d->commit().ok());
  }
  EXPECT_TRUE(plain_with_ids(deferred, t));
  EXPECT_TRUE(plain_with_ids(deferred, l));
  EXPECT_EQ(deferred.to_json_string(), tracker.to_json_string());
  EXPECT_EQ(deferred.export_json_updates(), tracker.export_json_updates());
  // Later imports into the doc keep its ids.
  Doc more(4);
  ASSERT_TRUE(more.import(deferred.export_updates()).ok());
  ASSERT_TRUE(more.get_text("t").insert(0, ">").ok());
  ASSERT_TRUE(more.commit().ok());
  ASSERT_TRUE(deferred.import(more.export_updates(deferred.oplog_version())).ok());
  EXPECT_TRUE(plain_with_ids(deferred, t));
  EXPECT_EQ(deferred.get_text("t").to_string(), more.get_text("t").to_string());
}

// A checkout replays without ids; editing after it (at the latest version,
// or back there with checkout_to_latest) rebuilds them, with the open
// transaction's ops.
TEST(DeferredIdsTest, CheckoutDefersIdsAndEditsRebuildThem) {
  Doc a(1);
  ASSERT_TRUE(a.import(two_author_history()).ok());
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "abc").ok());
  ASSERT_TRUE(a.commit().ok());
  const Frontiers old = a.oplog_frontiers();
  ASSERT_TRUE(t.insert(0, "later ").ok());
  ASSERT_TRUE(a.commit().ok());
  Doc tracker = tracker_doc(1);
  ASSERT_TRUE(tracker.import(a.export_updates()).ok());

  ASSERT_TRUE(a.checkout(old).ok());
  EXPECT_FALSE(plain_with_ids(a, t.id()));
  EXPECT_EQ(t.to_string().substr(0, 3), "abc");
  ASSERT_TRUE(a.checkout_to_latest().ok());
  EXPECT_FALSE(plain_with_ids(a, t.id()));
  for (Doc* d : {&a, &tracker}) {
    TextRef text = d->get_text("t");
    ASSERT_TRUE(text.insert(2, "XY").ok());  // open transaction, then a delete
    ASSERT_TRUE(text.erase(1, 9).ok());
    ASSERT_TRUE(d->commit().ok());
  }
  EXPECT_TRUE(plain_with_ids(a, t.id()));
  EXPECT_EQ(a.to_json_string(), tracker.to_json_string());
  EXPECT_EQ(a.export_json_updates(), tracker.export_json_updates());
  // checkout() to the latest version stays attached: edits go on at once.
  ASSERT_TRUE(a.checkout(a.oplog_frontiers()).ok());
  EXPECT_FALSE(a.is_detached());
  ASSERT_TRUE(t.erase(0, 2).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(tracker.get_text("t").erase(0, 2).ok());
  ASSERT_TRUE(tracker.commit().ok());
  EXPECT_EQ(a.export_json_updates(), tracker.export_json_updates());
}

// A history with concurrent edits: the ids come from the whole tracker
// (which a plain replay would have to build at the first concurrent change
// anyway), folded back into a plain state with ids.
TEST(DeferredIdsTest, DeferredIdsOfAConcurrentHistoryComeFromTheTracker) {
  Doc a(1), b(2);
  ASSERT_TRUE(a.get_text("t").insert(0, "hello world").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  ASSERT_TRUE(a.get_text("t").insert(5, " there").ok());
  ASSERT_TRUE(b.get_text("t").insert(11, "!").ok());
  for (Doc* d : {&a, &b}) ASSERT_TRUE(d->commit().ok());
  ASSERT_TRUE(a.import(b.export_updates()).ok());
  Doc c(3);
  Doc tracker = tracker_doc(3);
  for (Doc* d : {&c, &tracker}) {
    ASSERT_TRUE(d->import(a.export_updates()).ok());
    ASSERT_TRUE(d->get_text("t").erase(3, 6).ok());
    ASSERT_TRUE(d->commit().ok());
  }
  EXPECT_FALSE(c.core()->history_is_linear());
  EXPECT_TRUE(plain_with_ids(c, c.get_text("t").id()));
  EXPECT_EQ(c.get_text("t").to_string(), "helre world!");  // "hello there world!"
  EXPECT_EQ(c.export_json_updates(), tracker.export_json_updates());
}

}  // namespace
}  // namespace weft::crdt
