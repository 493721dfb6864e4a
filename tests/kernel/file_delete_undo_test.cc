// Undoing the delete of a file block: the deleter's undo (Blocks::undo on
// file:PATH, Kernel::undo) writes the file back with its text and history,
// redo deletes it again, other authors' stacks are untouched, the step
// survives a restart, a file written again since is left alone, a directory
// delete is undone file by file, and an approved delete is its author's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kernel/blocks_test_env.h"
#include "support/test_support.h"
#include "weft/kernel/blocks.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace file_delete_undo_test_local {

using ::testing::HasSubstr;
namespace stdfs = std::filesystem;

source::Attribution agent(std::string name, std::string what = "block_delete") {
  return {"agent:" + name, std::move(what), std::nullopt};
}
source::Attribution person(std::string name) {
  return {"human:" + name, "weft block", std::nullopt};
}

using Env = blocks_test::Env;

class FileDeleteUndoTest : public ::testing::Test {
 protected:
  stdfs::path at(const std::string& rel) const { return stdfs::path(env_.root()) / rel; }
  std::string disk(const std::string& rel) const { return weft::testing::read_file(at(rel)); }
  // Claude replaces the first line of `rel`.
  static bool edit_first_line(Blocks& b, const std::string& rel, std::string line) {
    return b.edit(agent("claude", "block_edit"), "file:" + rel,
                  {LineEdit::replace(0, 1, std::move(line))})
        .ok();
  }

  Env env_;
};

TEST_F(FileDeleteUndoTest, TheDeletersUndoRestoresTheFileAndRedoDeletesItAgain) {
  // A file no tool touched yet: the delete gives it its block first.
  env_.write("notes.txt", "one\ntwo\n");
  auto k = env_.open();
  Blocks& b = k->blocks();
  auto removed = b.remove(agent("claude"), "file:notes.txt");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(removed->changed);
  ASSERT_FALSE(stdfs::exists(at("notes.txt")));

  // Someone else has nothing to undo on it.
  EXPECT_EQ(b.undo(agent("gemini"), "file:notes.txt").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(stdfs::exists(at("notes.txt")));

  auto undone = b.undo(agent("claude"), "file:notes.txt");
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_TRUE(undone->changed);
  EXPECT_EQ(disk("notes.txt"), "one\ntwo\n");
  auto read = b.read("file:notes.txt", ReadOptions{false, std::nullopt});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->content, "one\ntwo\n");
  auto status = k->status("notes.txt");
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->size(), 1u);
  EXPECT_FALSE((*status)[0].deleted);
  EXPECT_FALSE((*status)[0].dirty);

  auto redone = b.redo(agent("claude"), "file:notes.txt");
  ASSERT_TRUE(redone.ok()) << redone.status();
  EXPECT_TRUE(redone->changed);
  EXPECT_FALSE(stdfs::exists(at("notes.txt")));
  ASSERT_TRUE(b.undo(agent("claude"), "file:notes.txt").ok());
  EXPECT_EQ(disk("notes.txt"), "one\ntwo\n");
  EXPECT_EQ(b.undo(agent("claude"), "file:notes.txt").status().code(),
            StatusCode::kFailedPrecondition);  // nothing left
}

TEST_F(FileDeleteUndoTest, UndoRestoresTheLastTextThenEarlierChangesAndKeepsHistory) {
  env_.write("a.md", "first\n");
  auto k = env_.open();
  Blocks& b = k->blocks();
  ASSERT_TRUE(edit_first_line(b, "a.md", "second\n"));
  auto before = b.history("file:a.md");
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(b.remove(agent("claude"), "file:a.md").ok());
  ASSERT_TRUE(b.undo(agent("claude"), "file:a.md").ok());
  EXPECT_EQ(disk("a.md"), "second\n");
  auto after = b.history("file:a.md");
  ASSERT_TRUE(after.ok());
  ASSERT_GE(after->size(), before->size());
  EXPECT_EQ(after->back().version, before->back().version);  // the same history goes on
  ASSERT_TRUE(b.undo(agent("claude"), "file:a.md").ok());  // then the edit
  EXPECT_EQ(disk("a.md"), "first\n");
}

TEST_F(FileDeleteUndoTest, ThroughTheKernelAndAcrossARestart) {
  env_.write("docs/plan.md", "plan\n");
  {
    auto k = env_.open();
    auto out = k->remove("docs/plan.md", agent("claude", "fs_delete"), false);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->applied);
    EXPECT_TRUE(out->removed);
    ASSERT_FALSE(stdfs::exists(at("docs/plan.md")));
  }
  {
    auto k = env_.open();
    auto undone = k->undo("docs/plan.md", agent("claude", "fs_undo"));
    ASSERT_TRUE(undone.ok()) << undone.status();
    EXPECT_TRUE(undone->created);
    EXPECT_EQ(disk("docs/plan.md"), "plan\n");
  }
  // The redo step was stored too.
  auto k = env_.open();
  ASSERT_TRUE(k->redo("docs/plan.md", agent("claude", "fs_redo")).ok());
  EXPECT_FALSE(stdfs::exists(at("docs/plan.md")));
}

TEST_F(FileDeleteUndoTest, APersonsDeleteIsTheirUndo) {
  env_.write("notes.txt", "n\n");
  auto k = env_.open();
  Blocks& b = k->blocks();
  ASSERT_TRUE(b.remove(person("amy"), "file:notes.txt").ok());
  EXPECT_EQ(b.undo(agent("claude"), "file:notes.txt").status().code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(b.undo(person("amy"), "file:notes.txt").ok());
  EXPECT_EQ(disk("notes.txt"), "n\n");
}

TEST_F(FileDeleteUndoTest, AFileWrittenAgainIsLeftAloneAndTheStepDropped) {
  env_.write("a.txt", "old\n");
  auto k = env_.open();
  Blocks& b = k->blocks();
  ASSERT_TRUE(edit_first_line(b, "a.txt", "mine\n"));
  ASSERT_TRUE(b.remove(agent("claude"), "file:a.txt").ok());
  env_.write("a.txt", "theirs\n");
  auto undone = b.undo(agent("claude"), "file:a.txt");
  ASSERT_EQ(undone.status().code(), StatusCode::kFailedPrecondition) << undone.status();
  EXPECT_THAT(std::string(undone.status().message()), HasSubstr("exists again"));
  EXPECT_EQ(disk("a.txt"), "theirs\n");
  // The next undo is the edit before the delete, on top of their text.
  EXPECT_EQ(b.redo(agent("claude"), "file:a.txt").status().code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(b.undo(agent("claude"), "file:a.txt").ok());
  EXPECT_TRUE(stdfs::exists(at("a.txt")));
}

TEST_F(FileDeleteUndoTest, ADirectoryDeleteIsUndoneFileByFile) {
  env_.write("d/x.txt", "x\n");
  env_.write("d/sub/y.txt", "y\n");
  auto k = env_.open();
  auto out = k->remove("d", agent("claude", "fs_delete"), true);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(stdfs::exists(at("d")));
  ASSERT_TRUE(k->blocks().undo(agent("claude"), "file:d/sub/y.txt").ok());
  EXPECT_EQ(disk("d/sub/y.txt"), "y\n");
  EXPECT_FALSE(stdfs::exists(at("d/x.txt")));
  ASSERT_TRUE(k->blocks().undo(agent("claude"), "file:d/x.txt").ok());
  EXPECT_EQ(disk("d/x.txt"), "x\n");
}

TEST_F(FileDeleteUndoTest, AnApprovedDeleteIsItsAuthorsUndo) {
  env_.write("weft.toml",
             "[permissions]\nrules = [\n"
             "  { glob = \"esc/**\", level = \"read_write\", escalate = [\"delete\"] },\n]\n");
  env_.write("esc/a.txt", "kept\n");
  auto k = env_.open();
  Blocks& b = k->blocks();
  auto asked = b.remove(agent("claude"), "file:esc/a.txt");
  ASSERT_TRUE(asked.ok()) << asked.status();
  ASSERT_FALSE(asked->pending_approval.empty());
  EXPECT_TRUE(stdfs::exists(at("esc/a.txt")));
  auto approved = k->approve(asked->pending_approval, "amy");
  ASSERT_TRUE(approved.ok()) << approved.status();
  EXPECT_TRUE(approved->removed);
  ASSERT_FALSE(stdfs::exists(at("esc/a.txt")));
  // Restoring is a create, which the rule allows; deleting again is not.
  ASSERT_TRUE(b.undo(agent("claude"), "file:esc/a.txt").ok());
  EXPECT_EQ(disk("esc/a.txt"), "kept\n");
  auto again = b.redo(agent("claude"), "file:esc/a.txt");
  EXPECT_EQ(again.status().code(), StatusCode::kPermissionDenied) << again.status();
  EXPECT_TRUE(stdfs::exists(at("esc/a.txt")));
}

}  // namespace file_delete_undo_test_local
}  // namespace weft::kernel
