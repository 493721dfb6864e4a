// Live sync of memory blocks (Kernel::sync_join / sync_apply routed to
// Blocks): a person's editor sees the memory doc but may not change it, since
// a memory block is structured (schema, read-only fields) and changes only
// through the memory tools. The join answers read with the rule; an update is
// refused with kPermissionDenied and leaves the block unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel/blocks_test_env.h"
#include "weft/crdt/doc.h"
#include "weft/kernel/blocks.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace memory_sync_test_local {

using ::testing::HasSubstr;

const source::Attribution kClaude{"agent:claude", "memory_create", std::nullopt};
const source::Attribution kAnn{"human:ann", "live sync", std::nullopt};

class MemorySyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    k_ = env_.open();
    ASSERT_NE(k_, nullptr);
    MemoryCreate m;
    m.label = "notes";
    m.initial_text = "remember the milk\n";
    ASSERT_TRUE(k_->blocks().memory_create(kClaude, m).ok());
  }
  std::string text() {
    auto c = k_->blocks().read(kId, ReadOptions{false, std::nullopt});
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->content : "";
  }

  static constexpr const char* kId = "memory:claude/notes";
  blocks_test::Env env_;
  std::unique_ptr<Kernel> k_;
};

TEST_F(MemorySyncTest, AJoinIsReadOnlyWithTheRuleAndTheDoc) {
  auto j = k_->sync_join(kId, "ann", "");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_FALSE(j->writable);
  EXPECT_THAT(j->rule, HasSubstr("read-only"));
  EXPECT_FALSE(j->updates.empty());
  EXPECT_FALSE(j->version.empty());
  crdt::Doc editor(7);
  ASSERT_TRUE(editor.import(j->updates).ok());
  EXPECT_EQ(editor.get_text("content").to_string(), "remember the milk\n");
}

TEST_F(MemorySyncTest, AnUpdateIsRefusedAndChangesNothing) {
  auto j = k_->sync_join(kId, "ann", "");
  ASSERT_TRUE(j.ok()) << j.status();
  crdt::Doc editor(7);
  ASSERT_TRUE(editor.import(j->updates).ok());
  const crdt::VersionVector before = editor.oplog_version();
  ASSERT_TRUE(editor.get_text("content").insert(0, "forget ", PosUnit::kBytes).ok());
  ASSERT_TRUE(editor.commit().ok());
  const std::string update = editor.export_loro_updates(before);

  auto version = k_->blocks().read(kId);
  ASSERT_TRUE(version.ok());
  auto history = k_->blocks().history(kId);
  ASSERT_TRUE(history.ok());

  auto applied = k_->sync_apply(kId, update, kAnn);
  EXPECT_EQ(applied.status().code(), StatusCode::kPermissionDenied) << applied.status();
  auto tracked = k_->sync_apply_tracked(kId, update, kAnn);
  EXPECT_EQ(tracked.status().code(), StatusCode::kPermissionDenied) << tracked.status();

  EXPECT_EQ(text(), "remember the milk\n");
  EXPECT_EQ(k_->blocks().read(kId)->version, version->version);
  EXPECT_EQ(k_->blocks().history(kId)->size(), history->size());
  auto memory = k_->blocks().memory_read(kClaude, "notes");
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_THAT(memory->rendered, HasSubstr("remember the milk"));
  EXPECT_THAT(memory->rendered, ::testing::Not(HasSubstr("forget")));
  // Nothing the relay could send either.
  auto delta = k_->sync_export_since(kId, j->version);
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_TRUE(delta->updates.empty());
}

TEST_F(MemorySyncTest, AnUnknownMemoryBlockIsNotFound) {
  EXPECT_EQ(k_->sync_join("memory:claude/nothing", "ann", "").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(k_->sync_apply("memory:claude/nothing", "x", kAnn).status().code(),
            StatusCode::kPermissionDenied);
}

}  // namespace memory_sync_test_local
}  // namespace weft::kernel
