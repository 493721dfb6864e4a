// Tests of the joining of changes and ops under Loro's commit-merge rule:
// by the encoder (binary_encode.cc: neighbouring changes of the op log are
// written as one) and by import (DocCore::joins_last: an imported change
// continuing the log's last change becomes part of it). Either way the doc
// decodes the same, changes the rule keeps apart stay apart, and a failed
// import leaves the log exactly as it was.
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

// A log that keeps every imported change apart (a merge interval below 0
// joins nothing on import), so that the encoder's joining can be seen; the
// tests give it the default interval back before exporting.
Doc apart_log() {
  Doc log(2);
  log.set_change_merge_interval(-1);
  return log;
}
constexpr int64_t kDefaultInterval = 1000;

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
  Doc author(1), log = apart_log();
  type_into(author, log, "hello world, typed one key at a time");
  ASSERT_EQ(log.changes().size(), 36u);
  ASSERT_EQ(count_ops(log), 36u);
  // The encoder writes them as one change holding one op.
  log.set_change_merge_interval(kDefaultInterval);
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

TEST(BinaryJoinTest, KeystrokesImportedOneByOneJoinInTheLog) {
  Doc author(1), log(2);
  type_into(author, log, "typed on");
  EXPECT_EQ(log.changes().size(), 1u);
  EXPECT_EQ(count_ops(log), 1u);
  EXPECT_EQ(log.get_text("t").to_string(), "typed on");
  // The log's own edit after them starts a change of its own, and the next
  // keystroke from the author (now depending on it) another.
  ASSERT_TRUE(log.import(author.export_updates()).ok());  // known: nothing changes
  EXPECT_EQ(log.changes().size(), 1u);
  ASSERT_TRUE(log.get_text("t").insert(0, ">").ok());
  ASSERT_TRUE(log.commit().ok());
  ASSERT_TRUE(author.import(log.export_updates()).ok());
  type_into(author, log, "!");
  EXPECT_EQ(log.changes().size(), 3u);
  EXPECT_EQ(log.get_text("t").to_string(), ">typed on!");
  Doc copy(3);
  ASSERT_TRUE(copy.import(log.export_updates()).ok());
  expect_same_doc(log, copy);
}

TEST(BinaryJoinTest, AFailedImportLeavesAJoinedLogAsItWas) {
  Doc author(1), other(9), log(2);
  type_into(author, log, "ab");
  ASSERT_EQ(log.changes().size(), 1u);
  // One update holding the author's next keystroke (it joins the log's last
  // change) and then another peer's insert at a position past the end.
  ASSERT_TRUE(other.import(author.export_updates()).ok());
  const VersionVector before = log.oplog_version();
  TextRef t = author.get_text("t");
  ASSERT_TRUE(t.insert(2, "c").ok());
  ASSERT_TRUE(author.commit().ok());
  ASSERT_TRUE(other.import(author.export_updates()).ok());
  ASSERT_TRUE(other.get_text("t").insert(3, "Z").ok());
  ASSERT_TRUE(other.commit().ok());
  std::string json = other.export_json_updates(before);
  const size_t at = json.find("\"pos\":3");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 7, "\"pos\":9");
  const std::string updates_before = log.export_updates();
  const std::string json_before = log.export_json_updates();
  EXPECT_FALSE(log.import(json).ok());
  EXPECT_EQ(log.export_updates(), updates_before);
  EXPECT_EQ(log.export_json_updates(), json_before);
  EXPECT_EQ(log.get_text("t").to_string(), "ab");
  EXPECT_EQ(log.changes().size(), 1u);
  // The valid part still joins afterwards.
  ASSERT_TRUE(log.import(author.export_updates(before)).ok());
  type_into(author, log, "d");
  EXPECT_EQ(log.get_text("t").to_string(), "abcd");
  EXPECT_EQ(log.changes().size(), 1u);
  EXPECT_EQ(count_ops(log), 1u);
}

TEST(BinaryJoinTest, DeletesJoinAsRunsAndBackspaces) {
  Doc author(1), log = apart_log();
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
  log.set_change_merge_interval(kDefaultInterval);
  Doc copy(3);
  ASSERT_TRUE(copy.import(log.export_updates()).ok());
  expect_same_doc(log, copy);
  EXPECT_EQ(copy.changes().size(), 1u);
  EXPECT_EQ(count_ops(copy), 3u);  // the insert, the forward run, the backspace run
}

TEST(BinaryJoinTest, TwoTypistsJoinOnlyBetweenTheirSyncs) {
  Doc a(1), b(2), log = apart_log();
  type_into(a, log, "first ");
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  // Concurrent typing: b's run depends on a's, a's next run on its own.
  type_into(b, log, "second ");
  type_into(a, log, "third ");
  ASSERT_TRUE(a.import(b.export_updates()).ok());
  type_into(a, log, "fourth");  // depends on both: a new change
  ASSERT_EQ(log.changes().size(), 25u);
  log.set_change_merge_interval(kDefaultInterval);
  Doc copy(4);
  ASSERT_TRUE(copy.import(log.export_updates()).ok());
  expect_same_doc(log, copy);
  // a's first run, b's run, a's third run (a change of b's lies between: only
  // neighbours in the log join), a's last run (it depends on b's too).
  EXPECT_EQ(copy.changes().size(), 4u);
  EXPECT_EQ(copy.get_text("t").to_string(), log.get_text("t").to_string());
  // Imported one keystroke at a time with the default interval, a log holds
  // the same four changes.
  Doc a2(1), b2(2), joined(5);
  type_into(a2, joined, "first ");
  ASSERT_TRUE(b2.import(a2.export_updates()).ok());
  type_into(b2, joined, "second ");
  type_into(a2, joined, "third ");
  ASSERT_TRUE(a2.import(b2.export_updates()).ok());
  type_into(a2, joined, "fourth");
  EXPECT_EQ(joined.changes().size(), 4u);
  expect_same_doc(log, joined);
}

TEST(BinaryJoinTest, MessagesTimestampsAndTheIntervalKeepChangesApart) {
  // Different messages: apart, in the log and in the encoding.
  {
    Doc author(1), log(2);
    type_into(author, log, "ab", CommitOptions{"one", 100, ""});
    type_into(author, log, "cd", CommitOptions{"two", 100, ""});
    EXPECT_EQ(log.changes().size(), 2u);
    Doc copy(3);
    ASSERT_TRUE(copy.import(log.export_updates()).ok());
    expect_same_doc(log, copy);
    const auto changes = copy.changes();
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].message, "one");
    EXPECT_EQ(changes[1].message, "two");
  }
  // Timestamps further apart than the merge interval: apart; within: joined,
  // keeping the first one's timestamp. The same on import and in the encoding.
  for (const bool on_import : {true, false}) {
    Doc author(1), log = on_import ? Doc(2) : apart_log();
    type_into(author, log, "ab", CommitOptions{std::nullopt, 100, ""});
    type_into(author, log, "cd", CommitOptions{std::nullopt, 5000, ""});
    type_into(author, log, "ef", CommitOptions{std::nullopt, 5500, ""});
    EXPECT_EQ(log.changes().size(), on_import ? 2u : 6u);
    log.set_change_merge_interval(kDefaultInterval);
    Doc copy(3);
    ASSERT_TRUE(copy.import(log.export_updates()).ok());
    expect_same_doc(log, copy);
    const auto changes = copy.changes();
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].timestamp, 100);
    EXPECT_EQ(changes[1].timestamp, 5000);
    EXPECT_EQ(changes[1].len, 4);
  }
  // Docs that never merge commits keep every change apart.
  {
    Doc author(1), log = apart_log();
    type_into(author, log, "abcd");
    Doc copy = apart_log();
    ASSERT_TRUE(copy.import(log.export_updates()).ok());
    expect_same_doc(log, copy);
    EXPECT_EQ(copy.changes().size(), 4u);
  }
}

TEST(BinaryJoinTest, UpdatesSinceAVersionJoinTheCutChange) {
  // The log holds one five-unit change (imported whole), then five
  // one-key changes continuing it.
  Doc author(1), log = apart_log();
  ASSERT_TRUE(author.get_text("t").insert(0, "01234").ok());
  ASSERT_TRUE(author.commit().ok());
  ASSERT_TRUE(log.import(author.export_updates()).ok());
  type_into(author, log, "56789");
  ASSERT_EQ(log.changes().size(), 6u);
  log.set_change_merge_interval(kDefaultInterval);
  // Since 3@1: the first change is cut (a copy, not the log's), and the
  // rest joins it.
  VersionVector since;
  since.set(1, 3);
  auto head = log.fork_at(Frontiers{ID{1, 2}});
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->get_text("t").to_string(), "012");
  head->set_change_merge_interval(-1);  // shows the encoding's changes
  ASSERT_TRUE(head->import(log.export_updates(since)).ok());
  expect_same_doc(log, *head);
  const auto changes = head->changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].id, (ID{1, 3}));
  EXPECT_EQ(changes[1].len, 7);
  EXPECT_EQ(count_ops(*head), 2u);
  // With the default interval the import joins it to the fork's change.
  auto joined = log.fork_at(Frontiers{ID{1, 2}});
  ASSERT_TRUE(joined.ok());
  ASSERT_TRUE(joined->import(log.export_updates(since)).ok());
  expect_same_doc(log, *joined);
  ASSERT_EQ(joined->changes().size(), 1u);
  EXPECT_EQ(joined->changes()[0].len, 10);
  EXPECT_EQ(count_ops(*joined), 1u);
}

}  // namespace
}  // namespace weft::crdt
