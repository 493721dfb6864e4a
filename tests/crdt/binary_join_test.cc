// Tests of the encoder's joining of changes and ops (binary_encode.cc): a
// history imported one keystroke at a time is written as the runs Loro's
// merge rule allows, and decodes to the same doc; changes the rule keeps
// apart stay apart.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

// Ops in a Loro JSON export: each op, and nothing else, has a "counter" key.
size_t count_ops(const Doc& doc) {
  const std::string json = doc.export_json_updates();
  size_t n = 0;
  for (size_t at = json.find("\"counter\":"); at != std::string::npos;
       at = json.find("\"counter\":", at + 1)) {
    ++n;
  }
  return n;
}

// Everything a reader of the decoded doc can see, against the original.
void expect_same_doc(const Doc& a, const Doc& b) {
  EXPECT_EQ(a.to_json_string(), b.to_json_string());
  EXPECT_EQ(a.oplog_version().to_json_string(), b.oplog_version().to_json_string());
  EXPECT_EQ(a.oplog_frontiers(), b.oplog_frontiers());
}

// Types `text` into `author` at the end of its text "t", one committed
// keystroke per character, each imported into `into` as its own update.
void type_into(Doc& author, Doc& into, const std::string& text, const CommitOptions& options = {}) {
  for (char ch : text) {
    const VersionVector before = author.oplog_version();
    TextRef t = author.get_text("t");
    ASSERT_TRUE(t.insert(t.len(), std::string(1, ch)).ok());
    ASSERT_TRUE(author.commit(options).ok());
    ASSERT_TRUE(into.import(author.export_updates(before)).ok());
  }
}

TEST(BinaryJoinTest, KeystrokesImportedOneByOneEncodeAsOneRun) {
  Doc author(1), log(2);
  type_into(author, log, "hello world, typed one key at a time");
  // Each import is its own change in the log (imports do not join)...
  ASSERT_EQ(log.changes().size(), 36u);
  ASSERT_EQ(count_ops(log), 36u);
  // ... and the encoder writes them as one change holding one op.
  Doc copy(3);
  ASSERT_TRUE(copy.import(log.export_updates()).ok());
  expect_same_doc(log, copy);
  const std::vector<ChangeMeta> changes = copy.changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, (ID{1, 0}));
  EXPECT_EQ(changes[0].len, 36);
  EXPECT_TRUE(changes[0].deps.empty());
  EXPECT_EQ(count_ops(copy), 1u);
  // The snapshot's history is joined the same way.
  Doc from_snapshot(4);
  ASSERT_TRUE(from_snapshot.import(log.export_snapshot()).ok());
  expect_same_doc(log, from_snapshot);
  EXPECT_EQ(from_snapshot.changes().size(), 1u);
  EXPECT_LT(log.export_updates().size(), 120u);
}

TEST(BinaryJoinTest, DeletesJoinAsRunsAndBackspaces) {
  Doc author(1), log(2);
  type_into(author, log, "abcdefghij");
  // Forward deletes at one position, then backspaces from the end.
  for (int k = 0; k < 3; ++k) {
    const VersionVector before = author.oplog_version();
    ASSERT_TRUE(author.get_text("t").erase(2, 1).ok());
    ASSERT_TRUE(author.commit().ok());
    ASSERT_TRUE(log.import(author.export_updates(before)).ok());
  }
  for (int k = 0; k < 3; ++k) {
    const VersionVector before = author.oplog_version();
    TextRef t = author.get_text("t");
    ASSERT_TRUE(t.erase(t.len() - 1, 1).ok());
    ASSERT_TRUE(author.commit().ok());
    ASSERT_TRUE(log.import(author.export_updates(before)).ok());
  }
  EXPECT_EQ(author.get_text("t").to_string(), "abfg");
  Doc copy(3);
  ASSERT_TRUE(copy.import(log.export_updates()).ok());
  expect_same_doc(log, copy);
  EXPECT_EQ(copy.changes().size(), 1u);
  EXPECT_EQ(count_ops(copy), 3u);  // the insert, the forward run, the backspace run
}

TEST(BinaryJoinTest, TwoTypistsJoinOnlyBetweenTheirSyncs) {
  Doc a(1), b(2), log(3);
  type_into(a, log, "first ");
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  // Concurrent typing: b's run depends on a's, a's next run on its own.
  type_into(b, log, "second ");
  type_into(a, log, "third ");
  ASSERT_TRUE(a.import(b.export_updates()).ok());
  type_into(a, log, "fourth");  // depends on both: a new change
  ASSERT_EQ(log.changes().size(), 25u);
  Doc copy(4);
  ASSERT_TRUE(copy.import(log.export_updates()).ok());
  expect_same_doc(log, copy);
  // a's first run, b's run, a's third run (a change of b's lies between: only
  // neighbours in the log join), a's last run (it depends on b's too).
  EXPECT_EQ(copy.changes().size(), 4u);
  EXPECT_EQ(copy.get_text("t").to_string(), log.get_text("t").to_string());
}

TEST(BinaryJoinTest, MessagesTimestampsAndTheIntervalKeepChangesApart) {
  // Different messages: apart.
  {
    Doc author(1), log(2);
    type_into(author, log, "ab", CommitOptions{"one", 100, ""});
    type_into(author, log, "cd", CommitOptions{"two", 100, ""});
    Doc copy(3);
    ASSERT_TRUE(copy.import(log.export_updates()).ok());
    expect_same_doc(log, copy);
    const auto changes = copy.changes();
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].message, "one");
    EXPECT_EQ(changes[1].message, "two");
  }
  // Timestamps further apart than the merge interval: apart; within: joined,
  // keeping the first one's timestamp.
  {
    Doc author(1), log(2);
    type_into(author, log, "ab", CommitOptions{std::nullopt, 100, ""});
    type_into(author, log, "cd", CommitOptions{std::nullopt, 5000, ""});
    type_into(author, log, "ef", CommitOptions{std::nullopt, 5500, ""});
    Doc copy(3);
    ASSERT_TRUE(copy.import(log.export_updates()).ok());
    expect_same_doc(log, copy);
    const auto changes = copy.changes();
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].timestamp, 100);
    EXPECT_EQ(changes[1].timestamp, 5000);
    EXPECT_EQ(changes[1].len, 4);
  }
  // A doc that never merges commits writes every change apart.
  {
    Doc author(1), log(2);
    log.set_change_merge_interval(-1);
    type_into(author, log, "abcd");
    Doc copy(3);
    ASSERT_TRUE(copy.import(log.export_updates()).ok());
    expect_same_doc(log, copy);
    EXPECT_EQ(copy.changes().size(), 4u);
  }
}

TEST(BinaryJoinTest, UpdatesSinceAVersionJoinTheCutChange) {
  // The log holds one five-unit change (imported whole), then five
  // one-key changes continuing it.
  Doc author(1), log(2);
  ASSERT_TRUE(author.get_text("t").insert(0, "01234").ok());
  ASSERT_TRUE(author.commit().ok());
  ASSERT_TRUE(log.import(author.export_updates()).ok());
  type_into(author, log, "56789");
  ASSERT_EQ(log.changes().size(), 6u);
  // Since 3@1: the first change is cut (a copy, not the log's), and the
  // rest joins it.
  VersionVector since;
  since.set(1, 3);
  auto head = log.fork_at(Frontiers{ID{1, 2}});
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->get_text("t").to_string(), "012");
  ASSERT_TRUE(head->import(log.export_updates(since)).ok());
  expect_same_doc(log, *head);
  const auto changes = head->changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].id, (ID{1, 3}));
  EXPECT_EQ(changes[1].len, 7);
  EXPECT_EQ(count_ops(*head), 2u);
}

}  // namespace
}  // namespace weft::crdt
