// Doc::import with ImportOptions: a commit-message override, all-or-nothing
// refusal of changes that would wait for missing dependencies, and a check of
// inserted text, each leaving the doc untouched when it refuses.
#include <gtest/gtest.h>

#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

// A doc of peer 7 with two commits ("ab", then "c"); `first` gets the Loro
// updates of the first commit and `second` those of the second alone.
void two_commits(std::string& first, std::string& second) {
  Doc a(7);
  ASSERT_TRUE(a.get_text("content").insert(0, "ab").ok());
  CommitOptions c1;
  c1.message = "typed by the editor";
  ASSERT_TRUE(a.commit(c1).ok());
  first = a.export_loro_updates();
  const VersionVector after_first = a.oplog_version();
  ASSERT_TRUE(a.get_text("content").insert(2, "c").ok());
  ASSERT_TRUE(a.commit().ok());
  second = a.export_loro_updates(after_first);
}

TEST(ImportOptionsTest, MessageOverrideReplacesEveryImportedMessage) {
  std::string first, second;
  two_commits(first, second);
  Doc b(9);
  ImportOptions options;
  options.message = "human:ann\nlive sync";
  auto r = b.import(first, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(b.get_text("content").to_string(), "ab");
  auto changes = b.changes();
  ASSERT_EQ(changes.size(), 1u);
  ASSERT_TRUE(changes[0].message.has_value());
  EXPECT_EQ(*changes[0].message, "human:ann\nlive sync");
}

TEST(ImportOptionsTest, RequireCompleteRefusesWhatWouldWaitAndKeepsNothing) {
  std::string first, second;
  two_commits(first, second);
  Doc b(9);
  ImportOptions options;
  options.require_complete = true;
  auto r = b.import(second, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(b.oplog_version() == VersionVector{});
  // Nothing was parked either: the first commit alone brings "ab" only.
  ASSERT_TRUE(b.import(first).ok());
  EXPECT_EQ(b.get_text("content").to_string(), "ab");
  // Both in one import apply (the second depends on the first, in the data).
  Doc c(11);
  ASSERT_TRUE(c.import(first, options).ok());
  auto done = c.import(second, options);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->pending.empty());
  EXPECT_EQ(c.get_text("content").to_string(), "abc");
}

TEST(ImportOptionsTest, PlainImportStillParksWhatWaits) {
  std::string first, second;
  two_commits(first, second);
  Doc b(9);
  auto r = b.import(second);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->pending.empty());
  ASSERT_TRUE(b.import(first).ok());
  EXPECT_EQ(b.get_text("content").to_string(), "abc");
}

TEST(ImportOptionsTest, TextCheckRefusesTheWholeImport) {
  Doc a(7);
  ASSERT_TRUE(a.get_text("content").insert(0, "ok").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(a.get_text("content").insert(2, std::string("x\0y", 3)).ok());
  ASSERT_TRUE(a.commit().ok());
  const std::string updates = a.export_loro_updates();
  Doc b(9);
  std::vector<std::string> seen;
  ImportOptions options;
  options.check_text_insert = [&](std::string_view text) -> Status {
    seen.emplace_back(text);
    if (text.find('\0') != std::string_view::npos) return invalid_argument("a NUL");
    return Status();
  };
  auto r = b.import(updates, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a NUL");
  EXPECT_TRUE(b.oplog_version() == VersionVector{});
  EXPECT_EQ(b.get_text("content").to_string(), "");
  EXPECT_FALSE(seen.empty());
}

}  // namespace
}  // namespace weft::crdt
