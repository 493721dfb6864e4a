// Deleting blocks (Blocks::remove) and the permission a conversation block is
// created with: tombstones that reads report and list leaves out, children
// refused without recursive, who may delete, undo and redo of a delete, the
// tombstone across a reopen, memory and file blocks, and later writes by
// other agents under each permission.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kernel/blocks_test_env.h"
#include "support/test_support.h"
#include "weft/kernel/blocks.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace blocks_delete_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

source::Attribution agent(std::string name, std::string what = "block_delete") {
  return {"agent:" + name, std::move(what), std::nullopt};
}
source::Attribution person(std::string name) {
  return {"human:" + name, "weft block", std::nullopt};
}

using Env = blocks_test::Env;

std::string create(Blocks& b, std::string content, std::optional<std::string> parent = {},
                   std::string who = "claude",
                   doc::MemoryPermission permission = doc::MemoryPermission::kReadWrite) {
  CreateBlock r;
  r.content = std::move(content);
  r.parent_id = std::move(parent);
  r.role = BlockRole::kModel;
  r.permission = permission;
  auto w = b.create(agent(who, "block_create"), r);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? w->block_id : "";
}

std::vector<std::string> ids(const BlockListing& listing) {
  std::vector<std::string> out;
  for (const auto& s : listing.blocks) out.push_back(s.block_id);
  return out;
}

std::vector<std::string> roots(Blocks& b, bool include_deleted = false) {
  ListFilter f;
  f.kind = BlockKind::kText;
  f.include_deleted = include_deleted;
  auto l = b.list(agent("claude"), f);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? ids(*l) : std::vector<std::string>{};
}

TEST(BlockDelete, TombstoneIsReadableHiddenFromListAndRefusesWrites) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string keep = create(b, "kept\n");
  std::string gone = create(b, "secret plan\n");
  ASSERT_TRUE(b.append(agent("claude"), gone, "pending").ok());  // committed by the delete
  auto r = b.remove(agent("claude"), gone);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->changed);
  EXPECT_THAT(r->removed, ElementsAre(gone));

  auto c = b.read(gone, ReadOptions{false, std::nullopt});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->deleted);
  EXPECT_EQ(c->deleted_by, "agent:claude");
  EXPECT_GT(c->deleted_at, 0);
  EXPECT_EQ(c->content, "secret plan\npending");
  EXPECT_TRUE(b.history(gone).ok());
  EXPECT_FALSE(b.read(keep)->deleted);

  EXPECT_THAT(roots(b), ElementsAre(keep));
  EXPECT_THAT(roots(b, true), ElementsAre(keep, gone));
  ListFilter all;
  all.include_deleted = true;
  all.kind = BlockKind::kText;
  auto listed = b.list(agent("claude"), all);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->blocks[1].deleted);
  EXPECT_FALSE(listed->blocks[0].deleted);

  KernelSearchRequest q;
  q.query = "secret|kept";
  auto found = b.search_all(agent("claude"), q);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].block_id, keep);

  for (auto status : {b.append(agent("claude"), gone, "x\n").status(),
                      b.edit(agent("claude"), gone, {LineEdit::erase(0, 1)}).status(),
                      b.splice(agent("claude"), gone, 0, 1, "").status(),
                      b.set_status(agent("claude"), gone, BlockStatus::kDone).status(),
                      b.rollback(agent("claude"), gone, "v0").status()}) {
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("deleted by agent:claude"));
  }
  CreateBlock child;
  child.parent_id = gone;
  EXPECT_EQ(b.create(agent("claude"), child).status().code(), StatusCode::kFailedPrecondition);
  // Deleting it again changes nothing.
  auto again = b.remove(agent("claude"), gone);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_TRUE(again->removed.empty());
  EXPECT_EQ(b.remove(agent("claude"), "main/claude/99").status().code(), StatusCode::kNotFound);
}

TEST(BlockDelete, ChildrenNeedRecursiveAndUndoRestoresTheSubtree) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string root = create(b, "question\n");
  std::string call = create(b, "grep\n", root);
  std::string result = create(b, "found\n", call);
  std::string other = create(b, "other\n", root);

  auto refused = b.remove(agent("claude"), root);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr(call));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("recursive"));
  EXPECT_FALSE(b.read(root)->deleted);

  // A leaf alone, then its parent without recursive once it has no live child.
  ASSERT_TRUE(b.remove(agent("claude"), result).ok());
  EXPECT_EQ(b.remove(agent("claude"), root).status().code(), StatusCode::kFailedPrecondition);

  auto r = b.remove(agent("claude"), root, /*recursive=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->removed, ElementsAre(root, call, other));  // `result` was deleted already
  EXPECT_TRUE(roots(b).empty());
  ListFilter children;
  children.parent_id = root;
  EXPECT_TRUE(b.list(agent("claude"), children)->blocks.empty());
  children.include_deleted = true;
  EXPECT_THAT(ids(*b.list(agent("claude"), children)), ElementsAre(call, other));

  // Undo restores what that delete took, not the leaf deleted before it.
  auto u = b.undo(agent("claude"), root);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_FALSE(b.read(root)->deleted);
  EXPECT_FALSE(b.read(call)->deleted);
  EXPECT_FALSE(b.read(other)->deleted);
  EXPECT_TRUE(b.read(result)->deleted);
  EXPECT_TRUE(b.append(agent("claude"), other, "more\n").ok());
  // The leaf's own undo brings it back under its restored parent.
  ASSERT_TRUE(b.undo(agent("claude"), result).ok());
  EXPECT_FALSE(b.read(result)->deleted);

  // Redo deletes the subtree again; undo once more restores it.
  ASSERT_TRUE(b.remove(agent("claude"), root, true).ok());
  ASSERT_TRUE(b.undo(agent("claude"), root).ok());
  auto again = b.redo(agent("claude"), root);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(b.read(root)->deleted);
  EXPECT_TRUE(b.read(result)->deleted);
  // Nobody else's undo applies to a deleted block.
  EXPECT_EQ(b.undo(agent("gemini"), root).status().code(), StatusCode::kFailedPrecondition);
}

TEST(BlockDelete, AChildIsRestoredOnlyUnderALiveParent) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string parent = create(b, "p\n");
  std::string child = create(b, "c\n", parent);
  ASSERT_TRUE(b.remove(agent("claude"), child).ok());
  ASSERT_TRUE(b.remove(agent("claude"), parent).ok());
  auto refused = b.undo(agent("claude"), child);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr(parent));
  EXPECT_TRUE(b.read(child)->deleted);
  ASSERT_TRUE(b.undo(agent("claude"), parent).ok());
  EXPECT_TRUE(b.read(child)->deleted);  // deleted on its own: its own undo restores it
  ASSERT_TRUE(b.undo(agent("claude"), child).ok());
  EXPECT_FALSE(b.read(child)->deleted);
}

TEST(BlockDelete, WhoMayDelete) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string mine = create(b, "a\n", {}, "claude");
  // Another agent may not delete a read_write block; its creator and a person may.
  auto other = b.remove(agent("gemini"), mine);
  ASSERT_EQ(other.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(other.status().message()), HasSubstr(mine));
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("read_write"));
  EXPECT_TRUE(b.remove(person("amy"), mine).ok());
  ASSERT_TRUE(b.undo(person("amy"), mine).ok());
  EXPECT_TRUE(b.remove(agent("claude"), mine).ok());

  std::string admin = create(b, "a\n", {}, "claude", doc::MemoryPermission::kAdmin);
  EXPECT_TRUE(b.remove(agent("gemini"), admin).ok());

  std::string fixed = create(b, "a\n", {}, "claude", doc::MemoryPermission::kReadOnly);
  EXPECT_EQ(b.remove(agent("claude"), fixed).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(b.remove(person("amy"), fixed).status().code(), StatusCode::kPermissionDenied);
  std::string log = create(b, "a\n", {}, "claude", doc::MemoryPermission::kAppend);
  EXPECT_EQ(b.remove(agent("claude"), log).status().code(), StatusCode::kPermissionDenied);
  std::string asked = create(b, "a\n", {}, "claude", doc::MemoryPermission::kHuman);
  auto needs = b.remove(agent("claude"), asked);
  EXPECT_TRUE(doc::is_needs_approval(needs.status())) << needs.status();

  // Recursive is all or nothing: a child another agent may not delete stops it.
  std::string parent = create(b, "p\n", {}, "claude", doc::MemoryPermission::kAdmin);
  std::string theirs = create(b, "c\n", parent, "gemini");
  auto partial = b.remove(agent("claude"), parent, true);
  ASSERT_EQ(partial.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(partial.status().message()), HasSubstr(theirs));
  EXPECT_FALSE(b.read(parent)->deleted);
  EXPECT_FALSE(b.read(theirs)->deleted);
}

TEST(BlockDelete, TombstoneAndUndoSurviveAReopen) {
  Env env;
  std::string root, child;
  {
    auto k = env.open();
    Blocks& b = k->blocks();
    root = create(b, "r\n");
    child = create(b, "c\n", root);
    ASSERT_TRUE(b.remove(agent("claude"), root, true).ok());
  }
  {
    auto k = env.open();
    Blocks& b = k->blocks();
    EXPECT_TRUE(b.read(root)->deleted);
    EXPECT_TRUE(b.read(child)->deleted);
    EXPECT_EQ(b.read(child)->deleted_by, "agent:claude");
    EXPECT_TRUE(roots(b).empty());
    ASSERT_TRUE(b.undo(agent("claude"), root).ok());
  }
  auto k = env.open();
  Blocks& b = k->blocks();
  EXPECT_FALSE(b.read(root)->deleted);
  EXPECT_FALSE(b.read(child)->deleted);
  EXPECT_THAT(roots(b), ElementsAre(root));
  ASSERT_TRUE(b.redo(agent("claude"), root).ok());  // the redo stack was stored too
  EXPECT_TRUE(b.read(child)->deleted);
}

TEST(BlockDelete, MemoryAndFileBlocks) {
  Env env;
  env.write("notes.txt", "n\n");
  auto k = env.open();
  Blocks& b = k->blocks();
  MemoryCreate m;
  m.label = "scratch";
  ASSERT_TRUE(b.memory_create(agent("claude"), m).ok());
  // read_write memory takes admin (or a person) to delete.
  EXPECT_EQ(b.remove(agent("claude"), "memory:claude/scratch").status().code(),
            StatusCode::kPermissionDenied);
  auto r = b.remove(person("amy"), "memory:claude/scratch");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->removed, ElementsAre("memory:claude/scratch"));
  EXPECT_EQ(b.memory_read(agent("claude"), "scratch").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(b.remove(person("amy"), "memory:claude/scratch").status().code(),
            StatusCode::kNotFound);
  m.label = "free";
  m.permission = doc::MemoryPermission::kAdmin;
  ASSERT_TRUE(b.memory_create(agent("claude"), m).ok());
  EXPECT_TRUE(b.remove(agent("claude"), "memory:claude/free").ok());

  auto before = b.read("file:notes.txt");
  ASSERT_TRUE(before.ok()) << before.status();
  auto f = b.remove(agent("claude"), "file:notes.txt");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->changed);
  EXPECT_THAT(f->removed, ElementsAre("file:notes.txt"));
  const auto notes = std::filesystem::path(env.root()) / "notes.txt";
  EXPECT_FALSE(std::filesystem::exists(notes));
  // The block keeps the history: a rollback writes the file back.
  auto back = b.rollback(agent("claude"), "file:notes.txt", before->version);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(weft::testing::read_file(notes), "n\n");
}

TEST(BlockPermission, LaterWritesByOthersFollowIt) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  EXPECT_EQ(*parse_block_permission("append_only"), doc::MemoryPermission::kAppend);
  EXPECT_EQ(*parse_block_permission("read-only"), doc::MemoryPermission::kReadOnly);
  EXPECT_FALSE(parse_block_permission("writable").ok());

  std::string ro = create(b, "system prompt\n", {}, "amy", doc::MemoryPermission::kReadOnly);
  EXPECT_EQ(b.read(ro)->permission, doc::MemoryPermission::kReadOnly);
  EXPECT_EQ(b.append(agent("claude"), ro, "x\n").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(b.edit(agent("claude"), ro, {LineEdit::erase(0, 1)}).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(b.read(ro)->content, "0\tsystem prompt\n");

  std::string ap = create(b, "log\n", {}, "amy", doc::MemoryPermission::kAppend);
  EXPECT_TRUE(b.append(agent("claude"), ap, "entry\n").ok());
  EXPECT_EQ(b.splice(agent("claude"), ap, 0, 1, "").status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(b.read(ap, ReadOptions{false, std::nullopt})->content, "log\nentry\n");

  std::string hu = create(b, "reviewed\n", {}, "amy", doc::MemoryPermission::kHuman);
  EXPECT_TRUE(doc::is_needs_approval(b.append(agent("claude"), hu, "x\n").status()));

  std::string rw = create(b, "free\n", {}, "amy");
  EXPECT_TRUE(b.edit(agent("claude"), rw, {LineEdit::replace(0, 1, "changed\n")}).ok());

  // The permission survives a reopen.
  k.reset();
  k = env.open();
  EXPECT_EQ(k->blocks().append(agent("claude"), ro, "x\n").status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(k->blocks().append(agent("claude"), ap, "more\n").ok());
}

}  // namespace blocks_delete_test_local
}  // namespace weft::kernel
