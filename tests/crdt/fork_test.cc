// fork() and fork_at() keep every op's author: a fork has the same history
// under the same peer ids, and only its own new edits carry its new peer id.
#include <gtest/gtest.h>

#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

// A doc whose history holds ops of peers 1 and 2 (imported, so the doc's own
// peer id 9 authored nothing).
Doc doc_with_two_authors() {
  Doc a(1), b(2), merged(9);
  EXPECT_TRUE(a.get_text("t").insert(0, "ab").ok());
  EXPECT_TRUE(a.commit().ok());
  EXPECT_TRUE(b.import(a.export_updates()).ok());
  EXPECT_TRUE(b.get_text("t").insert(2, "c").ok());
  EXPECT_TRUE(b.commit().ok());
  EXPECT_TRUE(merged.import(b.export_updates()).ok());
  return merged;
}

TEST(ForkTest, ForkKeepsAuthors) {
  Doc merged = doc_with_two_authors();
  Doc f = merged.fork();
  EXPECT_NE(f.peer_id(), merged.peer_id());
  EXPECT_EQ(f.oplog_version(), merged.oplog_version());
  EXPECT_EQ(f.oplog_version().get(1), 2);
  EXPECT_EQ(f.oplog_version().get(2), 1);
  EXPECT_EQ(f.oplog_version().get(f.peer_id()), 0);
  for (const ChangeMeta& ch : f.changes()) {
    EXPECT_TRUE(ch.id.peer == 1 || ch.id.peer == 2) << ch.id.peer;
  }
  EXPECT_EQ(f.to_json_string(), merged.to_json_string());
}

TEST(ForkTest, ForkAtKeepsAuthorsAndCutsHistory) {
  Doc merged = doc_with_two_authors();
  auto f = merged.fork_at(Frontiers{ID{1, 1}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->oplog_version().get(1), 2);
  EXPECT_EQ(f->oplog_version().get(2), 0);
  EXPECT_EQ(f->to_json_string(), "{\"t\":\"ab\"}");
}

TEST(ForkTest, ForkEditsMergeBackUnderTheForksPeer) {
  Doc merged = doc_with_two_authors();
  Doc f = merged.fork();
  ASSERT_TRUE(f.get_text("t").insert(0, "X").ok());
  ASSERT_TRUE(f.commit().ok());
  ASSERT_TRUE(merged.import(f.export_updates(merged.oplog_version())).ok());
  EXPECT_EQ(merged.to_json_string(), "{\"t\":\"Xabc\"}");
  EXPECT_EQ(merged.oplog_version().get(f.peer_id()), 1);
  EXPECT_EQ(merged.oplog_version().get(1), 2);
}

}  // namespace
}  // namespace weft::crdt
