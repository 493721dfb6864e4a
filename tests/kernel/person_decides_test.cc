// A person's own action is the decision that `human` and `partner` levels,
// escalate rules and a block's Human or Partner permission wait for: a
// change by origin human:<name> (the CLI, the web page) goes through where an
// agent's would be queued for approval. Denials (read_only) still bind
// persons, and agents still get the approval request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kernel/blocks_test_env.h"
#include "support/test_support.h"
#include "weft/crdt/doc.h"
#include "weft/kernel/blocks.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace person_decides_test_local {

namespace stdfs = std::filesystem;

source::Attribution agent(std::string name) { return {"agent:" + name, "tool", std::nullopt}; }
source::Attribution person(std::string name) {
  return {"human:" + name, "weft block", std::nullopt};
}

using Env = blocks_test::Env;

TextTransform replace_with(std::string text) {
  return [text](const std::optional<std::string>&) -> Result<std::string> { return text; };
}

class PersonDecidesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.write("weft.toml",
               "[permissions]\nrules = [\n"
               "  { glob = \"ask/**\", level = \"human\" },\n"
               "  { glob = \"pair/**\", level = \"partner\" },\n"
               "  { glob = \"esc/**\", level = \"read_write\", escalate = [\"overwrite\", "
               "\"delete\", \"move\"] },\n"
               "  { glob = \"ro/**\", level = \"read_only\" },\n]\n");
    for (const char* dir : {"ask", "pair", "esc", "ro"}) {
      env_.write(std::string(dir) + "/a.txt", "a\n");
      env_.write(std::string(dir) + "/b.txt", "b\n");
    }
    k_ = env_.open();
    ASSERT_NE(k_, nullptr);
  }
  stdfs::path at(const std::string& rel) const { return stdfs::path(env_.root()) / rel; }
  std::string disk(const std::string& rel) const { return weft::testing::read_file(at(rel)); }
  Blocks& b() { return k_->blocks(); }
  // A conversation block claude creates with `content` and `permission`.
  std::string created(doc::MemoryPermission permission, const std::string& content) {
    CreateBlock r;
    r.content = content;
    r.permission = permission;
    auto w = b().create(agent("claude"), r);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? w->block_id : "";
  }

  Env env_;
  std::unique_ptr<Kernel> k_;
};

TEST_F(PersonDecidesTest, APersonDeletesAFileBlockAnAgentAsks) {
  for (const char* dir : {"ask", "pair", "esc"}) {
    const std::string a = std::string(dir) + "/a.txt", bfile = std::string(dir) + "/b.txt";
    auto mine = b().remove(person("amy"), "file:" + a);
    ASSERT_TRUE(mine.ok()) << mine.status();
    EXPECT_TRUE(mine->pending_approval.empty()) << dir;
    EXPECT_TRUE(mine->changed) << dir;
    EXPECT_FALSE(stdfs::exists(at(a))) << dir;

    auto asked = b().remove(agent("claude"), "file:" + bfile);
    ASSERT_TRUE(asked.ok()) << asked.status();
    EXPECT_FALSE(asked->pending_approval.empty()) << dir;
    EXPECT_TRUE(stdfs::exists(at(bfile))) << dir;
  }
  EXPECT_EQ(k_->approvals().size(), 3u);  // the agent's three, none of the person's
  EXPECT_EQ(b().remove(person("amy"), "file:ro/a.txt").status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(stdfs::exists(at("ro/a.txt")));
}

TEST_F(PersonDecidesTest, APersonsEditsGoThroughAnAgentsWait) {
  for (const char* dir : {"ask", "pair", "esc"}) {
    const std::string id = "file:" + std::string(dir) + "/a.txt";
    auto edited = b().edit(person("amy"), id, {LineEdit::replace(0, 1, "A\n")});
    ASSERT_TRUE(edited.ok()) << edited.status();
    EXPECT_TRUE(edited->pending_approval.empty()) << dir;
    auto appended = b().append(person("amy"), id, "more\n");
    ASSERT_TRUE(appended.ok()) << appended.status();
    EXPECT_TRUE(appended->pending_approval.empty()) << dir;
    auto spliced = b().splice(person("amy"), id, 0, 1, "Z");
    ASSERT_TRUE(spliced.ok()) << spliced.status();
    EXPECT_EQ(disk(std::string(dir) + "/a.txt"), "Z\nmore\n") << dir;
    // Their undo is theirs to take too.
    ASSERT_TRUE(b().undo(person("amy"), id).ok()) << dir;
    EXPECT_EQ(disk(std::string(dir) + "/a.txt"), "A\nmore\n") << dir;

    auto asked = b().edit(agent("claude"), id, {LineEdit::replace(0, 1, "agent\n")});
    ASSERT_TRUE(asked.ok()) << asked.status();
    EXPECT_FALSE(asked->pending_approval.empty()) << dir;
    EXPECT_EQ(disk(std::string(dir) + "/a.txt"), "A\nmore\n") << dir;
  }
  EXPECT_EQ(k_->approvals().size(), 3u);
  EXPECT_EQ(b().append(person("amy"), "file:ro/a.txt", "x\n").status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(disk("ro/a.txt"), "a\n");
}

TEST_F(PersonDecidesTest, APersonsRollbackCreateMoveAndCopyGoThrough) {
  auto v0 = b().read("file:ask/a.txt");
  ASSERT_TRUE(v0.ok()) << v0.status();
  ASSERT_TRUE(k_->change_text("ask/a.txt", person("amy"), source::FileOp::kOverwrite,
                              replace_with("new\n"))
                  .ok());
  auto back = k_->rollback("ask/a.txt", v0->version, person("amy"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->applied);
  EXPECT_EQ(disk("ask/a.txt"), "a\n");

  CreateBlock create;
  create.kind = BlockKind::kFile;
  create.metadata = {{"path", "ask/new.txt"}};
  create.content = "hello\n";
  auto created = b().create(person("amy"), create);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(created->pending_approval.empty());
  EXPECT_EQ(disk("ask/new.txt"), "hello\n");

  auto moved = k_->move("esc/a.txt", "esc/c.txt", person("amy"), false);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_TRUE(moved->applied);
  EXPECT_EQ(disk("esc/c.txt"), "a\n");
  auto copied = k_->copy("ask/b.txt", "ask/d.txt", person("amy"), false);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_TRUE(copied->applied);
  EXPECT_EQ(disk("ask/d.txt"), "b\n");

  auto asked = k_->move("esc/b.txt", "esc/e.txt", agent("claude"), false);
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_FALSE(asked->pending_approval.empty());
  EXPECT_TRUE(stdfs::exists(at("esc/b.txt")));
  EXPECT_EQ(k_->approvals().size(), 1u);
}

TEST_F(PersonDecidesTest, ConversationBlocksOfHumanOrPartnerPermission) {
  for (auto permission : {doc::MemoryPermission::kHuman, doc::MemoryPermission::kPartner}) {
    const std::string id = created(permission, "reviewed\n");
    ASSERT_FALSE(id.empty());
    EXPECT_TRUE(doc::is_needs_approval(b().append(agent("claude"), id, "x\n").status()));
    EXPECT_TRUE(doc::is_needs_approval(b().remove(agent("claude"), id).status()));

    ASSERT_TRUE(b().append(person("amy"), id, "noted\n").ok());
    ASSERT_TRUE(b().edit(person("amy"), id, {LineEdit::replace(0, 1, "REVIEWED\n")}).ok());
    ASSERT_TRUE(b().set_status(person("amy"), id, BlockStatus::kDone).ok());
    EXPECT_EQ(b().read(id, ReadOptions{false, std::nullopt})->content, "REVIEWED\nnoted\n");
    auto removed = b().remove(person("amy"), id);
    ASSERT_TRUE(removed.ok()) << removed.status();
    EXPECT_TRUE(removed->changed);
    EXPECT_TRUE(b().read(id)->deleted);
    ASSERT_TRUE(b().undo(person("amy"), id).ok());
    EXPECT_FALSE(b().read(id)->deleted);
  }
  const std::string ro = created(doc::MemoryPermission::kReadOnly, "fixed\n");
  ASSERT_FALSE(ro.empty());
  EXPECT_EQ(b().append(person("amy"), ro, "x\n").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(b().remove(person("amy"), ro).status().code(), StatusCode::kPermissionDenied);
}

// Live sync is a person's editor: a Human or Partner conversation block is
// theirs to change there too, a read_only one is not.
TEST_F(PersonDecidesTest, ConversationBlocksOverLiveSync) {
  const auto edit_as_amy = [&](const std::string& id) -> Result<bool> {
    auto joined = k_->sync_join(id, "amy", "");
    if (!joined.ok()) return joined.status();
    crdt::Doc editor(11);
    if (Status s = editor.import(joined->updates).status(); !s.ok()) return s;
    const crdt::VersionVector before = editor.oplog_version();
    if (Status s = editor.get_text("content").insert(0, "amy: ", PosUnit::kBytes); !s.ok()) return s;
    if (Status s = editor.commit(); !s.ok()) return s;
    return k_->sync_apply(id, editor.export_loro_updates(before), person("amy"));
  };
  for (auto permission : {doc::MemoryPermission::kHuman, doc::MemoryPermission::kPartner}) {
    const std::string id = created(permission, "reviewed\n");
    ASSERT_FALSE(id.empty());
    auto joined = k_->sync_join(id, "amy", "");
    ASSERT_TRUE(joined.ok()) << joined.status();
    EXPECT_TRUE(joined->writable) << joined->rule;
    auto applied = edit_as_amy(id);
    ASSERT_TRUE(applied.ok()) << applied.status();
    EXPECT_TRUE(*applied);
    EXPECT_EQ(b().read(id, ReadOptions{false, std::nullopt})->content, "amy: reviewed\n");
  }
  const std::string ro = created(doc::MemoryPermission::kReadOnly, "fixed\n");
  ASSERT_FALSE(ro.empty());
  auto joined = k_->sync_join(ro, "amy", "");
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_FALSE(joined->writable);
  EXPECT_FALSE(joined->rule.empty());
  EXPECT_EQ(edit_as_amy(ro).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(b().read(ro, ReadOptions{false, std::nullopt})->content, "fixed\n");
}

TEST_F(PersonDecidesTest, TextMemoryBlocksOfHumanPermission) {
  MemoryCreate m;
  m.label = "reviewed";
  m.initial_text = "one\n";
  m.permission = doc::MemoryPermission::kHuman;
  ASSERT_TRUE(b().memory_create(agent("claude"), m).ok());
  const std::string id = "memory:claude/reviewed";
  EXPECT_TRUE(doc::is_needs_approval(b().append(agent("claude"), id, "agent\n").status()));
  ASSERT_TRUE(b().append(person("amy"), id, "two\n").ok());
  ASSERT_TRUE(b().edit(person("amy"), id, {LineEdit::replace(0, 1, "ONE\n")}).ok());
  EXPECT_EQ(b().read(id, ReadOptions{false, std::nullopt})->content, "ONE\ntwo\n");

  m.label = "fixed";
  m.permission = doc::MemoryPermission::kReadOnly;
  ASSERT_TRUE(b().memory_create(agent("claude"), m).ok());
  EXPECT_EQ(b().append(person("amy"), "memory:claude/fixed", "x\n").status().code(),
            StatusCode::kPermissionDenied);
}

}  // namespace person_decides_test_local
}  // namespace weft::kernel
