// Live sync on file blocks (Kernel::sync_join / sync_apply_tracked): an
// editor's Loro update becomes a change by human:<name> in history and in the
// file; updates that would break the file's rules change nothing; an update
// that depends on changes the block lacks is reported as waiting; and the
// versions around an import let a relay skip what it already sent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "weft/crdt/doc.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace block_sync_test_local {

const source::Attribution kAnn{"human:ann", "live sync", std::nullopt};

class BlockSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root());
    std::ofstream(std::filesystem::path(root()) / "a.md", std::ios::binary) << "hello\n";
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    auto filesystem = fs::make_host_filesystem(root(), host);
    ASSERT_TRUE(filesystem.ok()) << filesystem.status();
    KernelOptions options;
    options.state_dir = (dir_.path() / "state").string();
    options.watch = false;
    options.max_block_bytes = 64;
    auto k = Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(*filesystem)), options);
    ASSERT_TRUE(k.ok()) << k.status();
    kernel_ = std::move(*k);
  }
  std::string root() const { return (dir_.path() / "root").string(); }
  std::string file() const { return weft::testing::read_file(std::filesystem::path(root()) / "a.md"); }

  // An editor's doc holding what the join sent.
  crdt::Doc joined_editor(uint64_t peer) {
    crdt::Doc doc(peer);
    auto j = kernel_->sync_join("file:a.md", "ann", "");
    EXPECT_TRUE(j.ok()) << j.status();
    if (j.ok()) {
      EXPECT_TRUE(j->writable);
      EXPECT_TRUE(doc.import(j->updates).ok());
    }
    return doc;
  }
  // Inserts `text` at `pos` in the editor's doc; returns that change's update.
  static std::string type(crdt::Doc& doc, size_t pos, std::string_view text) {
    const crdt::VersionVector before = doc.oplog_version();
    EXPECT_TRUE(doc.get_text("content").insert(pos, text, PosUnit::kBytes).ok());
    EXPECT_TRUE(doc.commit().ok());
    return doc.export_loro_updates(before);
  }

  weft::testing::TempDir dir_;
  std::unique_ptr<Kernel> kernel_;
};

TEST_F(BlockSyncTest, AnUpdateIsAChangeByThePersonInHistoryAndFile) {
  crdt::Doc editor = joined_editor(101);
  const std::string update = type(editor, 0, "> ");
  auto applied = kernel_->sync_apply_tracked("file:a.md", update, kAnn);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_TRUE(applied->changed);
  EXPECT_FALSE(applied->waiting);
  EXPECT_FALSE(applied->version_before.empty());
  EXPECT_NE(applied->version_before, applied->version_after);
  EXPECT_EQ(file(), "> hello\n");
  auto history = kernel_->history("a.md", 1);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].author, "human:ann");
  EXPECT_EQ((*history)[0].message, "live sync");
  // The same bytes again: nothing new, and the versions say so.
  auto again = kernel_->sync_apply_tracked("file:a.md", update, kAnn);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(file(), "> hello\n");
  // The version after is what the block reports to the next joiner.
  auto j = kernel_->sync_join("file:a.md", "bob", "");
  ASSERT_TRUE(j.ok()) << j.status();
  auto a = crdt::decode_loro_version_vector(applied->version_after);
  auto b = crdt::decode_loro_version_vector(j->version);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b);
}

TEST_F(BlockSyncTest, AnUpdateThatDependsOnMissingChangesWaitsAndChangesNothing) {
  crdt::Doc editor = joined_editor(101);
  const std::string first = type(editor, 0, "1");
  const std::string second = type(editor, 1, "2");
  auto waiting = kernel_->sync_apply_tracked("file:a.md", second, kAnn);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_TRUE(waiting->waiting);
  EXPECT_FALSE(waiting->changed);
  EXPECT_EQ(file(), "hello\n");
  // sync_apply reports it as the documented error.
  auto refused = kernel_->sync_apply("file:a.md", second, kAnn);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  // Once its dependency arrives it applies.
  ASSERT_TRUE(kernel_->sync_apply("file:a.md", first, kAnn).ok());
  auto now = kernel_->sync_apply_tracked("file:a.md", second, kAnn);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_TRUE(now->changed);
  EXPECT_EQ(file(), "12hello\n");
}

TEST_F(BlockSyncTest, ANulCharacterIsRefusedAndChangesNothing) {
  crdt::Doc editor = joined_editor(101);
  auto r = kernel_->sync_apply_tracked("file:a.md", type(editor, 0, std::string("a\0b", 3)), kAnn);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(file(), "hello\n");
  // The block took nothing: a later update from a fresh editor applies.
  crdt::Doc other = joined_editor(202);
  ASSERT_TRUE(kernel_->sync_apply("file:a.md", type(other, 0, "ok "), kAnn).ok());
  EXPECT_EQ(file(), "ok hello\n");
}

TEST_F(BlockSyncTest, TheSizeLimitIsExactAndChangesNothingWhenCrossed) {
  crdt::Doc editor = joined_editor(101);
  // 6 bytes now, limit 64: 58 more fit, 59 do not.
  auto over = kernel_->sync_apply_tracked("file:a.md", type(editor, 0, std::string(59, 'x')), kAnn);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(file(), "hello\n");
  crdt::Doc fits = joined_editor(202);
  auto ok = kernel_->sync_apply_tracked("file:a.md", type(fits, 0, std::string(58, 'y')), kAnn);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(file().size(), 64u);
  // A delete and an insert in one update: the exact size decides (64 -> 64).
  const crdt::VersionVector before = fits.oplog_version();
  ASSERT_TRUE(fits.get_text("content").erase(0, 10).ok());
  ASSERT_TRUE(fits.get_text("content").insert(0, std::string(10, 'z')).ok());
  ASSERT_TRUE(fits.commit().ok());
  auto swap = kernel_->sync_apply_tracked("file:a.md", fits.export_loro_updates(before), kAnn);
  ASSERT_TRUE(swap.ok()) << swap.status();
  EXPECT_TRUE(swap->changed);
  EXPECT_EQ(file().substr(0, 10), std::string(10, 'z'));
}

TEST_F(BlockSyncTest, AReadOnlyPathRefusesUpdates) {
  crdt::Doc editor = joined_editor(101);
  auto r = kernel_->sync_apply_tracked("file:weft.toml", type(editor, 0, "x"), kAnn);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
}

}  // namespace block_sync_test_local
}  // namespace weft::kernel
