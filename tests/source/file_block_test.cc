// FileBlock: versions, changes, history, rollback, revert, apply, reconcile,
// load, and the figures of its hot paths.
#include "weft/source/file_block.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace weft::source {
namespace {

using Action = ReconcileResult::Action;
using doc::MemoryPermission;

Attribution who(std::string origin, std::string what, std::optional<int64_t> ts = 1700000000) {
  return Attribution{std::move(origin), std::move(what), ts};
}
const Attribution kDisk = who(std::string(kDiskOrigin), "initial content");

DiskState disk_of(std::string_view text, int64_t mtime = 1) {
  DiskState d;
  d.hash = content_hash(text);
  d.size = static_cast<int64_t>(text.size());
  d.mtime_ns = mtime;
  d.inode = 7;
  return d;
}

FileBlock make(std::string_view text) {
  auto b = FileBlock::create(text, disk_of(text), kDisk);
  EXPECT_TRUE(b.ok()) << b.status();
  return std::move(*b);
}

ChangeResult change(FileBlock& b, std::string_view text, std::string origin = "agent:a",
                    std::string what = "fs_edit") {
  auto r = b.change(text, who(std::move(origin), std::move(what)));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : ChangeResult{};
}

ReconcileResult reconcile(FileBlock& b, std::string_view disk_text, MemoryPermission level,
                          int64_t mtime = 2) {
  auto r = b.reconcile(disk_text, disk_of(disk_text, mtime), level,
                       who(std::string(kDiskOrigin), "file changed on disk"));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : ReconcileResult{};
}

// ---- versions

TEST(FileVersionTest, EncodesAndDecodes) {
  EXPECT_EQ(encode_version({}), "v0");
  auto empty = decode_version("v0");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  crdt::Frontiers one{crdt::ID{0xabc, 12}};
  EXPECT_EQ(encode_version(one), "v1-abc.12");
  crdt::Frontiers two{crdt::ID{0xfffffffffffffffe, 0}, crdt::ID{1, 2147483647}};
  std::string s = encode_version(two);
  EXPECT_EQ(s, "v1-1.2147483647_fffffffffffffffe.0");
  auto back = decode_version(s);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, two);
}

TEST(FileVersionTest, RejectsEveryOtherSpelling) {
  for (std::string_view bad : {"",
                               "v",
                               "v1",
                               "v1-",
                               "v2-1.1",
                               "V1-1.1",
                               "v1-1",
                               "v1-.1",
                               "v1-1.",
                               "v1-ABC.1",
                               "v1-0a.1",
                               "v1-1.01",
                               "v1-1.-1",
                               "v1-1.+1",
                               "v1-2.1_1.1",
                               "v1-1.1_1.1",
                               "v1-1.1_",
                               "v1-1.1__2.1",
                               "v1-ffffffffffffffff.1",
                               "v1-1.2147483648",
                               "v1-10000000000000000.1",
                               "v1-1.1 ",
                               " v1-1.1",
                               "v1-1.1\n",
                               "v0 ",
                               "v1-1.1/x"}) {
    auto r = decode_version(bad);
    ASSERT_FALSE(r.ok()) << "accepted \"" << bad << "\"";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("not a version of this file"), std::string_view::npos);
  }
  auto r = decode_version("v1-zz.1");
  EXPECT_NE(r.status().message().find("v1-zz.1"), std::string_view::npos);
  // A huge input is cut short in the message.
  EXPECT_LT(decode_version(std::string(100000, 'v')).status().message().size(), 400u);
}

TEST(FileVersionTest, VersionsAreUrlAndShellSafe) {
  FileBlock b = make("a\n");
  change(b, "b\n");
  for (const auto& e : b.history()) {
    for (char c : e.version) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')
          << e.version;
    }
  }
}

TEST(FileVersionTest, ContentHashIsSixteenHexDigits) {
  std::string h = content_hash("hello");
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h, content_hash("hello"));
  EXPECT_NE(h, content_hash("hello!"));
  EXPECT_EQ(content_hash("").size(), 16u);
}

TEST(FileVersionTest, ActionNames) {
  EXPECT_EQ(reconcile_action_name(Action::kNone), "none");
  EXPECT_EQ(reconcile_action_name(Action::kTookDisk), "took_disk");
  EXPECT_EQ(reconcile_action_name(Action::kTookMemory), "took_memory");
  EXPECT_EQ(reconcile_action_name(Action::kMerged), "merged");
  EXPECT_EQ(reconcile_action_name(Action::kConflict), "conflict");
}

// ---- create, change, history

TEST(FileBlockTest, CreateHoldsTheTextInOneChange) {
  FileBlock b = make("line 1\nline 2\n");
  EXPECT_EQ(b.text(), "line 1\nline 2\n");
  EXPECT_EQ(b.text_bytes(), 14u);
  EXPECT_FALSE(b.ahead_of_disk());
  EXPECT_EQ(b.synced_version(), b.version());
  EXPECT_EQ(b.disk().hash, content_hash("line 1\nline 2\n"));
  auto h = b.history();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].author, "source:disk");
  EXPECT_EQ(h[0].message, "initial content");
  EXPECT_EQ(h[0].timestamp, 1700000000);
  EXPECT_EQ(h[0].version, b.version());
}

TEST(FileBlockTest, EmptyCreateIsVersionZero) {
  FileBlock b = make("");
  EXPECT_EQ(b.version(), "v0");
  EXPECT_TRUE(b.history().empty());
  EXPECT_EQ(*b.text_at("v0"), "");
  ChangeResult r = change(b, "x\n");
  EXPECT_EQ(r.before, "v0");
  EXPECT_EQ(b.history().size(), 1u);
  EXPECT_EQ(*b.previous_version(r.after), "v0");
}

TEST(FileBlockTest, RejectsInvalidUtf8) {
  std::string bad = "ok\xff\n";
  auto c = FileBlock::create(bad, disk_of(bad), kDisk);
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  FileBlock b = make("a\n");
  EXPECT_EQ(b.change(bad, who("agent:a", "fs_edit")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.reconcile(bad, disk_of(bad), MemoryPermission::kReadWrite, kDisk).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(b.apply_on_base(b.version(), bad, who("agent:a", "x")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(b.text(), "a\n");
  EXPECT_EQ(b.history().size(), 1u);
  // An origin must parse back out of the commit message.
  EXPECT_EQ(b.change("b\n", who("agent:a\nforged", "x")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(b.change("b\n", who("agent:a", "bad \xff")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(b.text(), "a\n");
}

TEST(FileBlockTest, EveryChangeIsItsOwnHistoryEntry) {
  FileBlock b = make("a\n");
  // Same author, same message, same second: still three entries.
  ChangeResult r1 = change(b, "a\nb\n");
  ChangeResult r2 = change(b, "a\nb\nc\n");
  ChangeResult r3 = change(b, "a\nb\nc\nd\n", "human:ann", "save");
  EXPECT_TRUE(r1.changed && r2.changed && r3.changed);
  EXPECT_EQ(r1.after, r2.before);
  EXPECT_EQ(r2.after, r3.before);
  EXPECT_EQ(r3.after, b.version());
  auto h = b.history();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].version, r3.after);
  EXPECT_EQ(h[0].author, "human:ann");
  EXPECT_EQ(h[0].message, "save");
  EXPECT_EQ(h[1].version, r2.after);
  EXPECT_EQ(h[1].author, "agent:a");
  EXPECT_EQ(h[1].message, "fs_edit");
  EXPECT_EQ(h[2].version, r1.after);
  EXPECT_EQ(h[3].message, "initial content");
  EXPECT_EQ(*b.text_at(h[2].version), "a\nb\n");
  EXPECT_EQ(*b.text_at(h[3].version), "a\n");
  EXPECT_EQ(b.history(2).size(), 2u);
  EXPECT_EQ(b.history(2)[1].version, r2.after);
  EXPECT_TRUE(b.ahead_of_disk());
}

TEST(FileBlockTest, SameTextCommitsNothing) {
  FileBlock b = make("a\n");
  std::string v = b.version();
  ChangeResult r = change(b, "a\n");
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.before, v);
  EXPECT_EQ(r.after, v);
  EXPECT_EQ(b.history().size(), 1u);
}

TEST(FileBlockTest, DefaultTimestampIsNow) {
  FileBlock b = make("a\n");
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  ASSERT_TRUE(b.change("b\n", who("agent:a", "fs_write", std::nullopt)).ok());
  int64_t ts = b.history()[0].timestamp;
  EXPECT_GE(ts, now);
  EXPECT_LE(ts, now + 5);
}

TEST(FileBlockTest, MessageWithoutNewlineIsAllAuthor) {
  FileBlock b = make("a\n");
  ASSERT_TRUE(b.doc().get_text(kContentContainer).insert(0, "x").ok());
  crdt::CommitOptions o;
  o.message = "plain";
  o.timestamp = 1800000000;
  ASSERT_TRUE(b.doc().commit(o).ok());
  auto h = b.history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].author, "plain");
  EXPECT_EQ(h[0].message, "");
  EXPECT_EQ(h[0].timestamp, 1800000000);
}

TEST(FileBlockTest, TextAtErrors) {
  FileBlock b = make("a\n");
  FileBlock other = make("b\n");
  auto nf = b.text_at(other.version());
  ASSERT_EQ(nf.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(nf.status().message(),
            "version " + other.version() + " is not in the history of this file");
  EXPECT_EQ(b.text_at("HEAD").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.diff("v0", other.version(), "f").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(b.rollback("nope", who("agent:a", "x")).status().code(), StatusCode::kInvalidArgument);
}

TEST(FileBlockTest, PreviousVersionWalksTheHistory) {
  FileBlock b = make("a\n");
  ChangeResult r1 = change(b, "a\nb\n");
  ChangeResult r2 = change(b, "b\n");
  auto h = b.history();
  EXPECT_EQ(*b.previous_version(r2.after), r1.after);
  EXPECT_EQ(*b.previous_version(r1.after), h[2].version);
  EXPECT_EQ(*b.previous_version(h[2].version), "v0");
  EXPECT_EQ(b.previous_version("v0").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(b.previous_version("bad").status().code(), StatusCode::kInvalidArgument);
}

TEST(FileBlockTest, DiffBetweenVersions) {
  FileBlock b = make("a\nb\n");
  ChangeResult r = change(b, "a\nc\n");
  auto d = b.diff(r.before, r.after, "src/x.txt");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, "--- a/src/x.txt\n+++ b/src/x.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
  EXPECT_EQ(*b.diff(r.after, r.after, "x"), "");
}

TEST(FileBlockTest, RollbackIsANewChange) {
  FileBlock b = make("one\n");
  ChangeResult r1 = change(b, "two\n");
  change(b, "three\n");
  auto rb = b.rollback(r1.before, who("agent:a", "rollback"));
  ASSERT_TRUE(rb.ok());
  EXPECT_TRUE(rb->changed);
  EXPECT_EQ(b.text(), "one\n");
  auto h = b.history();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].message, "rollback");
  EXPECT_EQ(*b.text_at(h[1].version), "three\n");
  auto again = b.rollback(r1.before, who("agent:a", "rollback"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(b.history().size(), 4u);
}

TEST(FileBlockTest, RevertChangeKeepsLaterChangesOfOthers) {
  FileBlock b = make("alpha\nbeta\ngamma\n");
  ChangeResult a = change(b, "alpha\nX\nbeta\ngamma\n", "agent:a");
  change(b, "alpha\nX\nbeta\nGAMMA!\n", "agent:b");
  auto rev = b.revert_change(a.before, a.after, who("agent:a", "revert"));
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_TRUE(rev->changed);
  EXPECT_EQ(b.text(), "alpha\nbeta\nGAMMA!\n");
  EXPECT_EQ(b.history()[0].author, "agent:a");
  EXPECT_EQ(b.history()[0].message, "revert");
  // Redo: revert the revert.
  auto redo = b.revert_change(rev->before, rev->after, who("agent:a", "redo"));
  ASSERT_TRUE(redo.ok()) << redo.status();
  EXPECT_EQ(b.text(), "alpha\nX\nbeta\nGAMMA!\n");
  // With history entries: previous_version gives the change's base.
  auto h = b.history();
  auto prev = b.previous_version(h[0].version);
  ASSERT_TRUE(prev.ok());
  ASSERT_TRUE(b.revert_change(*prev, h[0].version, who("agent:a", "undo redo")).ok());
  EXPECT_EQ(b.text(), "alpha\nbeta\nGAMMA!\n");
}

TEST(FileBlockTest, RevertOfADeletionBringsTheTextBack) {
  FileBlock b = make("keep 1\ndrop me\nkeep 2\n");
  ChangeResult del = change(b, "keep 1\nkeep 2\n", "agent:a");
  change(b, "keep 1 edited\nkeep 2\n", "agent:b");
  ASSERT_TRUE(b.revert_change(del.before, del.after, who("agent:a", "revert")).ok());
  EXPECT_EQ(b.text(), "keep 1 edited\ndrop me\nkeep 2\n");
}

TEST(FileBlockTest, RevertChecksItsVersions) {
  FileBlock b = make("a\n");
  ChangeResult r = change(b, "b\n");
  EXPECT_EQ(b.revert_change(r.after, r.before, who("agent:a", "x")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(b.revert_change("v0", make("z\n").version(), who("agent:a", "x")).status().code(),
            StatusCode::kNotFound);
  auto same = b.revert_change(r.after, r.after, who("agent:a", "x"));
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->changed);
}

TEST(FileBlockTest, ApplyOnBaseMergesWithLaterChanges) {
  FileBlock b = make("1\n2\n3\n4\n5\n");
  std::string base = b.version();
  change(b, "1 agent\n2\n3\n4\n5\n");
  auto r = b.apply_on_base(base, "1\n2\n3\n4\n5 approved\n", who("human:ann", "approve"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(b.text(), "1 agent\n2\n3\n4\n5 approved\n");
  EXPECT_EQ(b.history()[0].author, "human:ann");
  // On the current version it is a plain change.
  auto plain = b.apply_on_base(b.version(), "x\n", who("human:ann", "approve"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(b.text(), "x\n");
  EXPECT_EQ(b.apply_on_base("v1-1.99", "y", who("a", "b")).status().code(), StatusCode::kNotFound);
}

// ---- reconcile

TEST(ReconcileTest, SameTextJustSyncs) {
  FileBlock b = make("a\n");
  change(b, "b\n");
  ASSERT_TRUE(b.ahead_of_disk());
  // The file got the block's text by another way (the kernel wrote it).
  ReconcileResult r = reconcile(b, "b\n", MemoryPermission::kReadWrite, 9);
  EXPECT_EQ(r.action, Action::kNone);
  EXPECT_FALSE(r.write_file);
  EXPECT_FALSE(b.ahead_of_disk());
  EXPECT_EQ(b.disk().mtime_ns, 9);
}

TEST(ReconcileTest, OnlyDiskChanged) {
  FileBlock b = make("a\nb\n");
  for (MemoryPermission level :
       {MemoryPermission::kReadOnly, MemoryPermission::kHuman, MemoryPermission::kReadWrite}) {
    std::string t = b.text() + "more\n";
    ReconcileResult r = reconcile(b, t, level);
    EXPECT_EQ(r.action, Action::kTookDisk);
    EXPECT_FALSE(r.write_file);
    EXPECT_EQ(b.text(), t);
    EXPECT_FALSE(b.ahead_of_disk());
    EXPECT_EQ(b.disk().hash, content_hash(t));
    EXPECT_EQ(b.history()[0].author, "source:disk");
    EXPECT_EQ(b.history()[0].message, "file changed on disk");
  }
}

TEST(ReconcileTest, OnlyMemoryChanged) {
  FileBlock b = make("a\nb\n");
  change(b, "a\nb\nc\n");
  ReconcileResult r = reconcile(b, "a\nb\n", MemoryPermission::kReadWrite);
  EXPECT_EQ(r.action, Action::kTookMemory);
  EXPECT_TRUE(r.write_file);
  EXPECT_TRUE(b.ahead_of_disk());
  b.mark_synced(disk_of(b.text()));
  EXPECT_FALSE(b.ahead_of_disk());

  // Without a stored hash the synced text is compared.
  auto nohash = FileBlock::create("a\n", DiskState{}, kDisk);
  ASSERT_TRUE(nohash.ok());
  change(*nohash, "a\nz\n");
  EXPECT_EQ(reconcile(*nohash, "a\n", MemoryPermission::kHuman).action, Action::kTookMemory);
}

TEST(ReconcileTest, ReadOnlyDiskWinsAndHistoryStays) {
  FileBlock b = make("a\nb\n");
  change(b, "a\nagent\nb\n");
  ReconcileResult r = reconcile(b, "a\nb\ndisk\n", MemoryPermission::kReadOnly);
  EXPECT_EQ(r.action, Action::kTookDisk);
  EXPECT_FALSE(r.write_file);
  EXPECT_EQ(b.text(), "a\nb\ndisk\n");
  EXPECT_FALSE(b.ahead_of_disk());
  auto h = b.history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(*b.text_at(h[1].version), "a\nagent\nb\n");
  // Even an unchanged file wins over the block under read_only.
  change(b, "x\n");
  EXPECT_EQ(reconcile(b, "a\nb\ndisk\n", MemoryPermission::kReadOnly).action, Action::kTookDisk);
  EXPECT_EQ(b.text(), "a\nb\ndisk\n");
}

TEST(ReconcileTest, HumanConflictSetsTheBlockChangeAside) {
  FileBlock b = make("a\nb\nc\n");
  std::string synced = b.synced_version();
  change(b, "a\nagent\nb\nc\n");
  ReconcileResult r = reconcile(b, "a\nb\nc\ndisk\n", MemoryPermission::kHuman);
  EXPECT_EQ(r.action, Action::kConflict);
  EXPECT_FALSE(r.write_file);
  EXPECT_EQ(b.text(), "a\nb\nc\ndisk\n");
  EXPECT_FALSE(b.ahead_of_disk());
  EXPECT_EQ(r.base_version, synced);
  EXPECT_EQ(r.proposed_text, "a\nagent\nb\nc\n");
  EXPECT_EQ(r.block_diff, "--- base\n+++ block\n@@ -1,3 +1,4 @@\n a\n+agent\n b\n c\n");
  EXPECT_EQ(r.disk_diff, "--- base\n+++ disk\n@@ -1,3 +1,4 @@\n a\n b\n c\n+disk\n");
  // Approved: the proposal merges with the disk's change.
  ASSERT_TRUE(b.apply_on_base(r.base_version, r.proposed_text, who("human:ann", "approve")).ok());
  EXPECT_EQ(b.text(), "a\nagent\nb\nc\ndisk\n");
}

TEST(ReconcileTest, MergePutsTheBlockInsertionFirst) {
  for (MemoryPermission level : {MemoryPermission::kPartner, MemoryPermission::kAppend,
                                 MemoryPermission::kReadWrite, MemoryPermission::kAdmin}) {
    // Many blocks, so the random peer ids take many relative orders.
    for (int i = 0; i < 20; ++i) {
      FileBlock b = make("head\ntail\n");
      change(b, "head\nagent line\ntail\n");
      ReconcileResult r = reconcile(b, "head\ndisk line\ntail\n", level);
      EXPECT_EQ(r.action, Action::kMerged);
      EXPECT_TRUE(r.write_file);
      ASSERT_EQ(b.text(), "head\nagent line\ndisk line\ntail\n");
      EXPECT_TRUE(b.ahead_of_disk());
      EXPECT_EQ(b.history()[0].author, "source:disk");
    }
  }
}

TEST(ReconcileTest, MergeKeepsBothSidesChanges) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "line " + std::to_string(i) + "\n";
  FileBlock b = make(text);
  std::string mem = text, disk = text;
  mem.replace(mem.find("line 3\n"), 7, "line 3 by agent\n");
  disk.replace(disk.find("line 40\n"), 8, "");
  disk += "appended on disk\n";
  change(b, mem);
  ReconcileResult r = reconcile(b, disk, MemoryPermission::kReadWrite);
  EXPECT_EQ(r.action, Action::kMerged);
  std::string want = mem;
  want.replace(want.find("line 40\n"), 8, "");
  want += "appended on disk\n";
  EXPECT_EQ(b.text(), want);
  // The caller writes the file and records it.
  b.mark_synced(disk_of(b.text(), 3));
  EXPECT_EQ(reconcile(b, want, MemoryPermission::kReadWrite, 3).action, Action::kNone);
}

TEST(ReconcileTest, MergeThatEndsAtTheDiskTextNeedsNoWrite) {
  FileBlock b = make("a\n");
  change(b, "a\nb\n");
  // The disk made the same change and one more.
  ReconcileResult r = reconcile(b, "a\nb\n", MemoryPermission::kReadWrite);
  EXPECT_EQ(r.action, Action::kNone);
  change(b, "a\nb\nc\n");
  r = reconcile(b, "a\nb\nc\n", MemoryPermission::kReadWrite);
  EXPECT_EQ(r.action, Action::kNone);
  change(b, "a\nb\nc\nd\n");
  r = reconcile(b, "", MemoryPermission::kReadWrite);
  // The disk emptied the file while the block appended: the block's new line stays.
  EXPECT_EQ(r.action, Action::kMerged);
  EXPECT_EQ(b.text(), "d\n");
}

TEST(ReconcileTest, ChangedLinesMergeWhole) {
  // One side deletes a line the other changed: the changed line stays whole
  // (a character merge would leave "D" joined to the next line).
  FileBlock b = make("L0\nL1\n");
  change(b, "L1\n");
  reconcile(b, "D0\nL1\n", MemoryPermission::kReadWrite);
  EXPECT_EQ(b.text(), "D0\nL1\n");
  // Both change one line: both versions stay, the block's first.
  FileBlock c = make("f(a, b)\nend\n");
  change(c, "f(A, b)\nend\n");
  reconcile(c, "f(a, B)\nend\n", MemoryPermission::kReadWrite);
  EXPECT_EQ(c.text(), "f(A, b)\nf(a, B)\nend\n");
}

TEST(FileBlockTest, ALongLineIsEditedByCharacter) {
  std::string line(20000, 'x');
  FileBlock b = make(line + "\n");
  std::string edited = line;
  edited[10000] = 'y';
  change(b, edited + "\n");
  auto changes = b.doc().changes();
  EXPECT_LT(changes.back().len, 10);
  // Short lines are replaced whole.
  FileBlock s = make("short line\n");
  change(s, "short lime\n");
  EXPECT_EQ(s.doc().changes().back().len, 22);
}

TEST(FileBlockTest, HistoryOfAnImportedRunOfCommits) {
  FileBlock b = make("a\n");
  // A sync client whose doc joins its commits into one change.
  crdt::Doc client = b.doc().fork();
  crdt::CommitOptions o;
  o.message = "agent:client\nedit";
  o.timestamp = 1700000100;
  ASSERT_TRUE(client.get_text(kContentContainer).insert(2, "b\n").ok());
  ASSERT_TRUE(client.commit(o).ok());
  ASSERT_TRUE(client.get_text(kContentContainer).insert(4, "c\n").ok());
  ASSERT_TRUE(client.commit(o).ok());
  ASSERT_TRUE(b.doc().import(client.export_updates(b.doc().oplog_version())).ok());
  auto h = b.history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].author, "agent:client");
  EXPECT_EQ(h[0].version, b.version());
  EXPECT_EQ(*b.text_at(h[0].version), "a\nb\nc\n");
  EXPECT_EQ(*b.previous_version(h[0].version), h[1].version);
}

TEST(ReconcileTest, RevertTheDiskSideOfAMerge) {
  FileBlock b = make("1\n2\n3\n");
  std::string synced = b.synced_version();
  change(b, "1 agent\n2\n3\n");
  reconcile(b, "1\n2\n3 disk\n", MemoryPermission::kReadWrite);
  ASSERT_EQ(b.text(), "1 agent\n2\n3 disk\n");
  auto h = b.history();
  ASSERT_EQ(h[0].author, "source:disk");
  // The disk's change was made on the synced version, not on the agent's.
  EXPECT_EQ(*b.previous_version(h[0].version), synced);
  EXPECT_EQ(*b.text_at(h[0].version), "1\n2\n3 disk\n");
  ASSERT_TRUE(b.revert_change(synced, h[0].version, who("agent:a", "revert")).ok());
  EXPECT_EQ(b.text(), "1 agent\n2\n3\n");
}

// ---- load

TEST(FileBlockLoadTest, RoundTripsSnapshotAndUpdates) {
  FileBlock b = make("a\n");
  std::string first = b.export_updates();
  crdt::VersionVector stored = b.doc().oplog_version();
  change(b, "a\nb\n");
  std::string second = b.export_updates(stored);
  b.mark_synced(disk_of(b.text(), 4));
  change(b, "a\nb\nc\n");  // not on disk yet
  std::string third =
      b.export_updates(b.doc().frontiers_to_vv(*decode_version(b.synced_version())).value());

  auto l = FileBlock::load({first, second, third}, b.synced_version(), b.disk());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->text(), "a\nb\nc\n");
  EXPECT_EQ(l->version(), b.version());
  EXPECT_TRUE(l->ahead_of_disk());
  EXPECT_EQ(l->disk().mtime_ns, 4);
  EXPECT_EQ(l->history().size(), 3u);
  // The loaded block keeps every change apart too.
  change(*l, "a\nb\nc\nd\n");
  change(*l, "a\nb\nc\nd\ne\n");
  EXPECT_EQ(l->history().size(), 5u);

  auto s = FileBlock::load({b.export_snapshot()}, b.synced_version(), b.disk());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->text(), b.text());
  EXPECT_EQ(s->history().size(), 3u);
  // Its writes do not collide with the original's.
  EXPECT_NE(s->doc().peer_id(), b.doc().peer_id());
}

TEST(FileBlockLoadTest, CorruptInputIsDataLoss) {
  FileBlock b = make("some text\nmore text\n");
  change(b, "some text\nchanged\n");
  std::string snap = b.export_snapshot();
  std::string upd = b.export_updates();
  std::string v = b.synced_version();

  EXPECT_EQ(FileBlock::load({"garbage"}, v, b.disk()).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(FileBlock::load({snap}, "not a version", b.disk()).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(FileBlock::load({snap}, make("x").version(), b.disk()).status().code(),
            StatusCode::kDataLoss);
  // Only the second change, without the first it builds on.
  crdt::VersionVector after_first = b.doc().frontiers_to_vv(*decode_version(v)).value();
  EXPECT_EQ(FileBlock::load({b.export_updates(after_first)}, "v0", b.disk()).status().code(),
            StatusCode::kDataLoss);
  // A doc whose "content" is not a text.
  crdt::Doc other;
  ASSERT_TRUE(other.get_map("content").set("k", crdt::Value(int64_t{1})).ok());
  ASSERT_TRUE(other.commit().ok());
  EXPECT_EQ(FileBlock::load({other.export_updates()}, "v0", b.disk()).status().code(),
            StatusCode::kDataLoss);

  // Every truncation and many byte flips: an error or a block, never a crash.
  for (const std::string& blob : {snap, upd}) {
    for (size_t n = 0; n < blob.size(); n += 1 + blob.size() / 300) {
      auto r = FileBlock::load({std::string_view(blob).substr(0, n)}, "v0", b.disk());
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
      }
    }
    for (size_t i = 0; i < blob.size(); i += 1 + blob.size() / 300) {
      std::string flipped = blob;
      flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
      auto r = FileBlock::load({flipped}, "v0", b.disk());
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
      }
    }
  }
}

// ---- figures (printed, with loose bounds only)

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string lines(int n, int width) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    std::string l = "line " + std::to_string(i) + " ";
    l.resize(static_cast<size_t>(width - 1), 'x');
    out += l + "\n";
  }
  return out;
}

TEST(FileBlockFigures, HotPaths) {
  // 1 MB, 20,000 lines.
  std::string big = lines(20000, 52);
  auto t0 = std::chrono::steady_clock::now();
  auto created = FileBlock::create(big, disk_of(big), kDisk);
  double create_ms = ms_since(t0);
  ASSERT_TRUE(created.ok());
  FileBlock b = std::move(*created);

  std::string mem = big, disk = big;
  mem.replace(mem.find("line 100 "), 9, "line 100 AGENT ");
  mem.replace(mem.find("line 9000 "), 10, "line 9000 AGENT ");
  disk.replace(disk.find("line 5000 "), 10, "line 5000 DISK ");
  disk.replace(disk.find("line 19000 "), 11, "line 19000 DISK ");
  change(b, mem);
  t0 = std::chrono::steady_clock::now();
  ReconcileResult r = reconcile(b, disk, MemoryPermission::kReadWrite);
  double reconcile_ms = ms_since(t0);
  ASSERT_EQ(r.action, Action::kMerged);
  for (const char* s : {"line 100 AGENT", "line 9000 AGENT", "line 5000 DISK", "line 19000 DISK"}) {
    EXPECT_NE(b.text().find(s), std::string::npos) << s;
  }

  // Only the disk changed (the watcher's common case).
  b.mark_synced(disk_of(b.text()));
  std::string disk2 = b.text();
  disk2.replace(disk2.find("line 7000 "), 10, "line 7000 DISK ");
  t0 = std::chrono::steady_clock::now();
  r = reconcile(b, disk2, MemoryPermission::kReadWrite);
  double took_disk_ms = ms_since(t0);
  ASSERT_EQ(r.action, Action::kTookDisk);

  // fs_edit's path: one line of a 100 KB file.
  std::string small = lines(2000, 52);
  FileBlock s = make(small);
  const int kEdits = 200;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kEdits; ++i) {
    std::string next = small;
    size_t at = next.find("line " + std::to_string(i * 7) + " ");
    next.insert(at + 5, "e" + std::to_string(i));
    auto c = s.change(next, who("agent:a", "fs_edit"));
    ASSERT_TRUE(c.ok() && c->changed);
    small = std::move(next);
  }
  double change_ms = ms_since(t0) / kEdits;

  // history() on 1,000 changes.
  FileBlock h = make("start\n");
  std::string t = "start\n";
  for (int i = 0; i < 1000; ++i) {
    t += "l" + std::to_string(i) + "\n";
    ASSERT_TRUE(h.change(t, who("agent:a", "fs_edit")).ok());
  }
  t0 = std::chrono::steady_clock::now();
  auto entries = h.history();
  double history_ms = ms_since(t0);
  ASSERT_EQ(entries.size(), 1001u);

  std::printf(
      "[figures] create 1 MB: %.2f ms; reconcile 1 MB both changed: %.2f ms; "
      "reconcile 1 MB disk only: %.2f ms; change 1 line of 100 KB: %.3f ms; "
      "history of 1,000 changes: %.2f ms\n",
      create_ms, reconcile_ms, took_disk_ms, change_ms, history_ms);
  // Loose bounds (a loaded, shared machine): orders of magnitude, not targets.
  EXPECT_LT(reconcile_ms, 10000);
  EXPECT_LT(change_ms, 200);
}

}  // namespace
}  // namespace weft::source
