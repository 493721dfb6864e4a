// The kernel's blocks (blocks.h): conversation blocks and every operation,
// their error paths, append batching, undo units across agents, persistence
// across a reopen, file and memory blocks through the same operations, and
// properties of line edits and undo against simple models.
#include "weft/kernel/blocks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kernel/blocks_test_env.h"
#include "support/test_support.h"
#include "weft/doc/doc_errors.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace blocks_test_local {

using ::testing::HasSubstr;

source::Attribution agent(std::string name, std::string what = "block_edit") {
  return {"agent:" + name, std::move(what), std::nullopt};
}

using Env = blocks_test::Env;

std::string create(Blocks& b, std::string content, std::optional<std::string> parent = {},
                   std::string who = "claude") {
  CreateBlock r;
  r.content = std::move(content);
  r.parent_id = std::move(parent);
  r.role = BlockRole::kModel;
  auto w = b.create(agent(who, "block_create"), r);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? w->block_id : "";
}

std::string text_of(Blocks& b, const std::string& id) {
  auto c = b.read(id, ReadOptions{false, std::nullopt});
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? c->content : "";
}

// ---------------------------------------------------------------- names and ids

TEST(BlockNames, RoundTripAndErrors) {
  for (auto k : {BlockKind::kText, BlockKind::kThinking, BlockKind::kToolCall,
                 BlockKind::kToolResult, BlockKind::kFile, BlockKind::kMemory}) {
    EXPECT_EQ(*parse_block_kind(block_kind_name(k)), k);
  }
  EXPECT_EQ(*parse_block_role("model"), BlockRole::kModel);
  EXPECT_EQ(*parse_block_status("error"), BlockStatus::kError);
  auto bad = parse_block_status("streaming");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("pending, running, done, error"));
  EXPECT_EQ(agent_name_of("agent:claude"), "claude");
  EXPECT_EQ(agent_name_of("agent:Claude Code/2"), "Claude-Code-2");
  EXPECT_EQ(agent_name_of(""), "anonymous");
}

TEST(BlockNames, ParsesIds) {
  auto c = parse_block_id("main/claude/12");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->type, BlockId::Type::kConversation);
  EXPECT_EQ(c->seq, 12u);
  auto f = parse_block_id("file:src/a.cc");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->path, "src/a.cc");
  auto m = parse_block_id("memory:claude/notes/todo");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->label, "notes/todo");
  for (const char* bad : {"", "main/claude", "main/claude/0", "main/claude/x", "a/b/c/d",
                          "main/cl aude/1", "memory:claude", "file:"}) {
    EXPECT_FALSE(parse_block_id(bad).ok()) << bad;
  }
}

// ---------------------------------------------------------------- conversation blocks

TEST(Blocks, CreateReadAndIds) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string a = create(b, "hello\nworld\n");
  EXPECT_EQ(a, "main/claude/1");
  std::string c = create(b, "", a);
  EXPECT_EQ(c, "main/claude/2");
  CreateBlock other;
  other.cell = "side";
  other.kind = BlockKind::kToolCall;
  other.metadata = {{"tool_name", "grep"}};
  auto w = b.create(agent("gemini"), other);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->block_id, "side/gemini/1");
  EXPECT_EQ(w->status, BlockStatus::kPending);

  auto r = b.read(a);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "0\thello\n1\tworld\n");
  EXPECT_EQ(r->line_count, 2u);
  EXPECT_EQ(r->role, BlockRole::kModel);
  auto r2 = b.read(a, ReadOptions{false, LineRange{1, 9}});
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->content, "world\n");
  EXPECT_FALSE(b.read(a, ReadOptions{true, LineRange{3, 4}}).ok());
  auto meta = b.read("side/gemini/1");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->metadata["tool_name"], "grep");
  EXPECT_EQ(meta->kind, BlockKind::kToolCall);

  EXPECT_EQ(b.read("main/claude/99").status().code(), StatusCode::kNotFound);
  CreateBlock orphan;
  orphan.parent_id = "main/nobody/1";
  EXPECT_EQ(b.create(agent("claude"), orphan).status().code(), StatusCode::kNotFound);
  CreateBlock badcell;
  badcell.cell = "a/b";
  EXPECT_EQ(b.create(agent("claude"), badcell).status().code(), StatusCode::kInvalidArgument);
  CreateBlock badmeta;
  badmeta.metadata = nlohmann::json::array();
  EXPECT_FALSE(b.create(agent("claude"), badmeta).ok());
  CreateBlock badtext;
  badtext.content = std::string("a\0b", 3);
  EXPECT_FALSE(b.create(agent("claude"), badtext).ok());
  CreateBlock mem;
  mem.kind = BlockKind::kMemory;
  EXPECT_THAT(std::string(b.create(agent("claude"), mem).status().message()),
              HasSubstr("memory_create"));
}

TEST(Blocks, StatusLifecycle) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "");
  auto w = b.append(agent("claude"), id, "x\n");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->status, BlockStatus::kRunning);
  auto s = b.set_status(agent("claude"), id, BlockStatus::kDone);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(b.read(id)->status, BlockStatus::kDone);
  EXPECT_EQ(b.set_status(agent("claude"), "file:a.txt", BlockStatus::kDone).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(Blocks, AppendBatchingIsVisibleToReaders) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  // The background flusher calls the listener on its own thread.
  std::atomic<size_t> commits{0};
  k->set_change_listener(
      [&](const std::string&, const std::string&, const std::string&) { commits.fetch_add(1); });
  std::string id = create(b, "");
  commits.store(0);
  auto w = b.append(agent("claude"), id, "abc");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->buffered_bytes, 3u);
  EXPECT_EQ(commits.load(), 0u);
  // A reader commits the batch first.
  EXPECT_EQ(text_of(b, id), "abc");
  EXPECT_EQ(commits.load(), 1u);
  // A line break commits at once.
  w = b.append(agent("claude"), id, "d\n");
  EXPECT_EQ(w->buffered_bytes, 0u);
  EXPECT_EQ(commits.load(), 2u);
  // 50 bytes commit at once.
  for (int i = 0; i < 49; ++i) ASSERT_TRUE(b.append(agent("claude"), id, "z").ok());
  EXPECT_EQ(commits.load(), 2u);
  ASSERT_EQ(b.append(agent("claude"), id, "z")->buffered_bytes, 0u);
  EXPECT_EQ(commits.load(), 3u);
  // Silence commits in the background.
  ASSERT_TRUE(b.append(agent("claude"), id, "q").ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (commits.load() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(commits.load(), 4u);
  // Search, list and history also see a pending batch.
  ASSERT_TRUE(b.append(agent("claude"), id, "needle").ok());
  auto found = b.search(id, "needle");
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->matches.size(), 1u);
  EXPECT_EQ(found->matches[0].line, 1u);
  // Limits.
  EXPECT_EQ(b.append(agent("claude"), id, std::string(kMaxAppendBytes + 1, 'a')).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_FALSE(b.append(agent("claude"), id, "\xff").ok());
}

TEST(Blocks, EditSemanticsAndErrors) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "a\nb\nc\nd\n");
  auto w = b.edit(agent("claude"), id,
                  {LineEdit::insert(0, "top"), LineEdit::replace(1, 3, "B\nC\n", "b\nc\n"),
                   LineEdit::erase(3, 4), LineEdit::insert(4, "end\n")});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(text_of(b, id), "top\na\nB\nC\nend\n");
  std::string before = text_of(b, id);
  // CAS mismatch: nothing changes, the message shows the current lines.
  auto cas = b.edit(agent("claude"), id,
                    {LineEdit::insert(0, "x\n"), LineEdit::replace(2, 3, "Q\n", "nope\n")});
  ASSERT_FALSE(cas.ok());
  EXPECT_EQ(cas.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(cas.status().message()), HasSubstr("B\n"));
  EXPECT_EQ(text_of(b, id), before);
  // Out of range, overlaps, bad ranges.
  auto range = b.edit(agent("claude"), id, {LineEdit::erase(2, 9)});
  EXPECT_EQ(range.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(range.status().message()), HasSubstr("5 lines"));
  EXPECT_FALSE(b.edit(agent("claude"), id, {LineEdit::erase(1, 3), LineEdit::erase(2, 4)}).ok());
  EXPECT_FALSE(b.edit(agent("claude"), id, {LineEdit::erase(1, 3), LineEdit::insert(2, "x")}).ok());
  EXPECT_FALSE(b.edit(agent("claude"), id, {LineEdit::erase(3, 1)}).ok());
  EXPECT_FALSE(b.edit(agent("claude"), id, {}).ok());
  EXPECT_EQ(text_of(b, id), before);
  // No final line break: an insert at the end keeps the style.
  std::string nb = create(b, "x\ny");
  ASSERT_TRUE(b.edit(agent("claude"), nb, {LineEdit::insert(2, "z")}).ok());
  EXPECT_EQ(text_of(b, nb), "x\ny\nz");
}

TEST(Blocks, SpliceAndPatch) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "héllo\n");
  auto inside = b.splice(agent("claude"), id, 2, 0, "x");
  ASSERT_FALSE(inside.ok());
  EXPECT_THAT(std::string(inside.status().message()), HasSubstr("use 1 or 3"));
  EXPECT_EQ(b.splice(agent("claude"), id, 99, 0, "x").status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(b.splice(agent("claude"), id, 0, 99, "").status().code(), StatusCode::kOutOfRange);
  ASSERT_TRUE(b.splice(agent("claude"), id, 1, 2, "e").ok());
  EXPECT_EQ(text_of(b, id), "hello\n");

  std::string p = create(b, "one\ntwo\nthree\n");
  std::string patch = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
  auto dry = b.apply_patch(agent("claude"), p, patch, true);
  ASSERT_TRUE(dry.ok());
  EXPECT_TRUE(dry->success);
  EXPECT_THAT(dry->diff, HasSubstr("+TWO"));
  EXPECT_EQ(text_of(b, p), "one\ntwo\nthree\n");
  auto done = b.apply_patch(agent("claude"), p, patch, false);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->success);
  EXPECT_EQ(text_of(b, p), "one\nTWO\nthree\n");
  auto fail = b.apply_patch(agent("claude"), p, patch, false);
  ASSERT_TRUE(fail.ok());
  EXPECT_FALSE(fail->success);
  EXPECT_FALSE(fail->errors.empty());
  EXPECT_FALSE(b.apply_patch(agent("claude"), p, "not a patch", false).ok());
}

TEST(Blocks, SearchRegexAndLiteral) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "alpha\nbeta (x\ngamma\ndelta\n");
  auto re = b.search(id, "^g.mma$", SearchOptions{1, 20});
  ASSERT_TRUE(re.ok());
  ASSERT_EQ(re->matches.size(), 1u);
  EXPECT_EQ(re->matches[0].line, 2u);
  EXPECT_EQ(re->matches[0].content, "beta (x\ngamma\ndelta\n");
  EXPECT_EQ(re->matches[0].match_end, 5u);
  EXPECT_FALSE(re->literal);
  auto lit = b.search(id, "(x");
  ASSERT_TRUE(lit.ok());
  EXPECT_TRUE(lit->literal);
  ASSERT_EQ(lit->matches.size(), 1u);
  EXPECT_EQ(lit->matches[0].match_start, 5u);
  auto many = b.search(id, "a", SearchOptions{0, 2});
  ASSERT_TRUE(many.ok());
  EXPECT_TRUE(many->truncated);
  EXPECT_FALSE(b.search(id, "").ok());
  EXPECT_FALSE(b.search(id, "a", SearchOptions{0, 0}).ok());
}

TEST(Blocks, ListByParentDepthAndFilters) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string root = create(b, "question\n");
  std::string c1 = create(b, "answer\n", root);
  std::string c2 = create(b, "more\n", root);
  std::string g = create(b, "deep\n", c1);
  ASSERT_TRUE(b.set_status(agent("claude"), c2, BlockStatus::kDone).ok());
  ListFilter f;
  f.parent_id = root;
  auto l = b.list(agent("claude"), f);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->blocks.size(), 2u);
  EXPECT_EQ(l->blocks[0].block_id, c1);
  EXPECT_EQ(l->blocks[1].block_id, c2);
  EXPECT_EQ(l->blocks[0].summary, "answer ⏎ ");
  f.depth = 2;
  EXPECT_EQ(b.list(agent("claude"), f)->blocks.size(), 3u);
  f.status = BlockStatus::kDone;
  EXPECT_EQ(b.list(agent("claude"), f)->blocks.size(), 1u);
  ListFilter roots;
  auto r = b.list(agent("claude"), roots);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->blocks.size(), 1u);
  EXPECT_EQ(r->blocks[0].block_id, root);
  ListFilter missing;
  missing.parent_id = "main/x/1";
  EXPECT_EQ(b.list(agent("claude"), missing).status().code(), StatusCode::kNotFound);
  ListFilter bad;
  bad.limit = 0;
  EXPECT_FALSE(b.list(agent("claude"), bad).ok());
  (void)g;
}

TEST(Blocks, UndoUnitsPerAgent) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "");
  // Streaming appends by one agent form one unit.
  for (char c : std::string("hello world\nsecond line\n")) {
    ASSERT_TRUE(b.append(agent("claude"), id, std::string(1, c)).ok());
  }
  ASSERT_TRUE(b.edit(agent("gemini"), id, {LineEdit::insert(0, "gem\n")}).ok());
  EXPECT_EQ(text_of(b, id), "gem\nhello world\nsecond line\n");
  ASSERT_TRUE(b.undo(agent("claude"), id).ok());
  EXPECT_EQ(text_of(b, id), "gem\n");
  ASSERT_TRUE(b.redo(agent("claude"), id).ok());
  EXPECT_EQ(text_of(b, id), "gem\nhello world\nsecond line\n");
  ASSERT_TRUE(b.undo(agent("gemini"), id).ok());
  EXPECT_EQ(text_of(b, id), "hello world\nsecond line\n");
  EXPECT_EQ(b.undo(agent("gemini"), id).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(b.redo(agent("nobody"), id).status().code(), StatusCode::kFailedPrecondition);
}

TEST(Blocks, HistoryDiffRollback) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "v1\n");
  std::string v1 = b.read(id)->version;
  ASSERT_TRUE(b.edit(agent("claude"), id, {LineEdit::replace(0, 1, "v2\n")}).ok());
  auto h = b.history(id);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].author, "agent:claude");
  auto d = b.diff(id, std::nullopt, std::nullopt);
  ASSERT_TRUE(d.ok());
  EXPECT_THAT(*d, HasSubstr("-v1"));
  EXPECT_THAT(*d, HasSubstr("+v2"));
  ASSERT_TRUE(b.rollback(agent("claude"), id, v1).ok());
  EXPECT_EQ(text_of(b, id), "v1\n");
  EXPECT_FALSE(b.rollback(agent("claude"), id, "nonsense").ok());
}

TEST(Blocks, PermissionsOfConversationBlocks) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  CreateBlock r;
  r.content = "fixed\n";
  r.permission = doc::MemoryPermission::kReadOnly;
  auto w = b.create(agent("claude"), r);
  ASSERT_TRUE(w.ok());
  auto denied = b.append(agent("claude"), w->block_id, "x\n");
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(denied.status().message()), HasSubstr(w->block_id));
  EXPECT_EQ(b.edit(agent("claude"), w->block_id, {LineEdit::erase(0, 1)}).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(b.read(w->block_id).ok());
  r.permission = doc::MemoryPermission::kAppend;
  auto ap = b.create(agent("claude"), r);
  ASSERT_TRUE(ap.ok());
  EXPECT_TRUE(b.append(agent("claude"), ap->block_id, "more\n").ok());
  EXPECT_FALSE(b.edit(agent("claude"), ap->block_id, {LineEdit::erase(0, 1)}).ok());
}

TEST(Blocks, PersistAcrossReopen) {
  Env env;
  std::string id, child;
  {
    auto k = env.open();
    Blocks& b = k->blocks();
    id = create(b, "first\n");
    child = create(b, "", id);
    ASSERT_TRUE(b.append(agent("claude"), child, "pending text").ok());  // committed at close
    ASSERT_TRUE(b.edit(agent("claude"), id, {LineEdit::insert(1, "second\n")}).ok());
    ASSERT_TRUE(b.set_status(agent("claude"), id, BlockStatus::kDone).ok());
  }
  auto k = env.open();
  Blocks& b = k->blocks();
  EXPECT_EQ(text_of(b, id), "first\nsecond\n");
  EXPECT_EQ(text_of(b, child), "pending text");
  EXPECT_EQ(b.read(id)->status, BlockStatus::kDone);
  ListFilter f;
  f.parent_id = id;
  ASSERT_EQ(b.list(agent("claude"), f)->blocks.size(), 1u);
  // The seq counter goes on; the undo log came back.
  EXPECT_EQ(create(b, ""), "main/claude/3");
  ASSERT_TRUE(b.undo(agent("claude"), id).ok());
  EXPECT_EQ(text_of(b, id), "first\n");
  ASSERT_TRUE(b.undo(agent("claude"), child).ok());
  EXPECT_EQ(text_of(b, child), "");
}

// ---------------------------------------------------------------- file blocks

TEST(Blocks, FileBlocksGoThroughTheKernel) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  CreateBlock r;
  r.kind = BlockKind::kFile;
  r.content = "line 1\nline 2\n";
  r.metadata = {{"path", "notes/a.txt"}};
  auto w = b.create(agent("claude"), r);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->block_id, "file:notes/a.txt");
  EXPECT_EQ(weft::testing::read_file(std::filesystem::path(env.root()) / "notes/a.txt"),
            "line 1\nline 2\n");
  EXPECT_EQ(b.create(agent("claude"), r).status().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(b.edit(agent("claude"), w->block_id, {LineEdit::replace(1, 2, "LINE 2\n")}).ok());
  ASSERT_TRUE(b.append(agent("claude"), w->block_id, "line 3\n").ok());
  EXPECT_EQ(weft::testing::read_file(std::filesystem::path(env.root()) / "notes/a.txt"),
            "line 1\nLINE 2\nline 3\n");
  auto c = b.read(w->block_id);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, BlockKind::kFile);
  EXPECT_EQ(c->line_count, 3u);
  EXPECT_FALSE(c->version.empty());
  ASSERT_TRUE(b.undo(agent("claude"), w->block_id).ok());
  EXPECT_EQ(text_of(b, w->block_id), "line 1\nLINE 2\n");
  auto h = b.history(w->block_id);
  ASSERT_TRUE(h.ok());
  EXPECT_GE(h->size(), 3u);
  ListFilter f;
  f.kind = BlockKind::kFile;
  auto l = b.list(agent("claude"), f);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->blocks.size(), 1u);
  EXPECT_EQ(l->blocks[0].path, "notes/a.txt");
  EXPECT_FALSE(b.splice(agent("claude"), w->block_id, 100, 0, "x").ok());
  EXPECT_EQ(text_of(b, w->block_id), "line 1\nLINE 2\n");
}

TEST(Blocks, FileRulesApply) {
  Env env;
  std::ofstream(std::filesystem::path(env.root()) / "weft.toml")
      << "[permissions]\nrules = [\n  { glob = \"locked/**\", level = \"read_only\" },\n"
         "  { glob = \"ask/**\", level = \"human\" },\n]\n";
  std::filesystem::create_directories(std::filesystem::path(env.root()) / "locked");
  std::filesystem::create_directories(std::filesystem::path(env.root()) / "ask");
  std::ofstream(std::filesystem::path(env.root()) / "locked/x.txt") << "x\n";
  std::ofstream(std::filesystem::path(env.root()) / "ask/y.txt") << "y\n";
  auto k = env.open();
  Blocks& b = k->blocks();
  EXPECT_EQ(b.append(agent("claude"), "file:locked/x.txt", "more\n").status().code(),
            StatusCode::kPermissionDenied);
  auto pending = b.append(agent("claude"), "file:ask/y.txt", "more\n");
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_FALSE(pending->pending_approval.empty());
  EXPECT_EQ(text_of(b, "file:ask/y.txt"), "y\n");
}

// ---------------------------------------------------------------- memory blocks

TEST(Blocks, MemoryBlocks) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  MemoryCreate text;
  text.label = "scratch";
  text.initial_text = "note one\n";
  auto t = b.memory_create(agent("claude"), text);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->block_id, "memory:claude/scratch");
  EXPECT_EQ(b.memory_create(agent("claude"), text).status().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(b.append(agent("claude"), t->block_id, "note two\n").ok());
  ASSERT_TRUE(b.edit(agent("claude"), t->block_id, {LineEdit::replace(0, 1, "NOTE ONE\n")}).ok());
  EXPECT_EQ(text_of(b, t->block_id), "NOTE ONE\nnote two\n");
  ASSERT_TRUE(b.memory_append(agent("claude"), "scratch", std::nullopt, "three\n").ok());
  EXPECT_EQ(b.memory_read(agent("claude"), "scratch")->rendered, "NOTE ONE\nnote two\nthree\n");
  auto h = b.history(t->block_id);
  ASSERT_TRUE(h.ok());
  ASSERT_GE(h->size(), 3u);
  ASSERT_TRUE(b.rollback(agent("claude"), t->block_id, (*h)[h->size() - 1].version).ok());
  EXPECT_EQ(text_of(b, t->block_id), "note one\n");

  MemoryCreate map;
  map.label = "profile";
  map.schema_json = R"({"type":"map","fields":[
      {"name":"name","field_type":"text"},
      {"name":"tags","field_type":"list"},
      {"name":"diag","field_type":"text","read_only":true}]})";
  auto m = b.memory_create(agent("claude"), map);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(b.memory_update(agent("claude"), "profile", "name", "Ada").ok());
  ASSERT_TRUE(b.memory_append(agent("claude"), "profile", "tags", "x").ok());
  auto ro = b.memory_update(agent("claude"), "profile", "diag", "nope");
  EXPECT_EQ(ro.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(doc::doc_error_kind(ro.status()), doc::DocErrorKind::kReadOnlyField);
  auto rendered = b.memory_read(agent("claude"), "profile");
  ASSERT_TRUE(rendered.ok());
  EXPECT_THAT(rendered->rendered, HasSubstr("[read-only]"));
  EXPECT_THAT(rendered->rendered, HasSubstr("Ada"));
  auto generic = b.append(agent("claude"), m->block_id, "x");
  EXPECT_THAT(std::string(generic.status().message()), HasSubstr("memory_update"));
  EXPECT_FALSE(b.memory_update(agent("claude"), "profile", std::nullopt, "x").ok());
  // Scoped per agent.
  EXPECT_EQ(b.memory_read(agent("gemini"), "profile").status().code(), StatusCode::kNotFound);
  ListFilter f;
  f.kind = BlockKind::kMemory;
  EXPECT_EQ(b.list(agent("claude"), f)->blocks.size(), 2u);
  EXPECT_EQ(b.list(agent("gemini"), f)->blocks.size(), 0u);
  // A read-only memory block.
  MemoryCreate fixed;
  fixed.label = "fixed";
  fixed.permission = doc::MemoryPermission::kReadOnly;
  ASSERT_TRUE(b.memory_create(agent("claude"), fixed).ok());
  EXPECT_EQ(b.append(agent("claude"), "memory:claude/fixed", "x").status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_FALSE(b.memory_create(agent("claude"), MemoryCreate{"bad label!"}).ok());
}

// ---------------------------------------------------------------- properties

// A model of line edits: the block's lines as an array.
RC_GTEST_PROP(BlocksProperties, EditBatchesMatchALineModel, ()) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  const int n = *rc::gen::inRange(0, 12);
  std::vector<std::string> lines;
  std::string text;
  for (int i = 0; i < n; ++i) {
    lines.push_back("l" + std::to_string(i) + "\n");
    text += lines.back();
  }
  std::string id = create(b, text);
  // Non-overlapping ops: walk the lines, choosing per gap and per range.
  std::vector<LineEdit> ops;
  std::vector<std::string> model;
  int line = 0;
  int tag = 0;
  while (line <= n) {
    if (*rc::gen::inRange(0, 3) == 0) {
      std::string c = "i" + std::to_string(tag++) + "\n";
      ops.push_back(LineEdit::insert(line, c));
      model.push_back(c);
    }
    if (line == n) break;
    int kind = *rc::gen::inRange(0, 3);
    int len = *rc::gen::inRange(1, std::min(3, n - line) + 1);
    if (kind == 0) {
      model.push_back(lines[line]);
      line += 1;
    } else if (kind == 1) {
      ops.push_back(LineEdit::erase(line, line + len));
      line += len;
    } else {
      std::string expected;
      for (int i = line; i < line + len; ++i) expected += lines[i];
      std::string c = "r" + std::to_string(tag++) + "\n";
      ops.push_back(LineEdit::replace(line, line + len, c, expected));
      model.push_back(c);
      line += len;
    }
  }
  RC_PRE(!ops.empty());
  // Batch order does not matter for non-overlapping ops (inserts keep theirs).
  auto w = b.edit(agent("claude"), id, ops);
  RC_ASSERT(w.ok());
  std::string want;
  for (const auto& l : model) want += l;
  RC_ASSERT(text_of(b, id) == want);
}

RC_GTEST_PROP(BlocksProperties, CasFailureLeavesTheBlockIdentical, ()) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  const int n = *rc::gen::inRange(1, 10);
  std::string text;
  for (int i = 0; i < n; ++i) text += "line " + std::to_string(i) + "\n";
  std::string id = create(b, text);
  int s = *rc::gen::inRange(0, n);
  std::vector<LineEdit> ops;
  if (s > 0) ops.push_back(LineEdit::replace(0, s, "changed\n"));
  ops.push_back(LineEdit::replace(s, s + 1, "x\n", "not the text\n"));
  if (s + 1 < n) ops.push_back(LineEdit::erase(s + 1, n));
  std::string version = b.read(id)->version;
  RC_ASSERT(!b.edit(agent("claude"), id, ops).ok());
  RC_ASSERT(text_of(b, id) == text);
  RC_ASSERT(b.read(id)->version == version);
}

// Undo/redo by several agents who each append whole lines of their own: undo
// removes the undoing agent's newest line, redo brings it back.
RC_GTEST_PROP(BlocksProperties, UndoRedoMatchesAModel, ()) {
  Env env;
  auto k = env.open();
  Blocks& b = k->blocks();
  std::string id = create(b, "");
  std::vector<std::string> names = {"a", "b", "c"};
  std::vector<std::pair<std::string, std::string>> model;  // (author, line)
  std::map<std::string, std::vector<std::pair<size_t, std::string>>> redo;
  int tag = 0;
  const int steps = *rc::gen::inRange(1, 25);
  for (int i = 0; i < steps; ++i) {
    std::string who = names[*rc::gen::inRange(0, 3)];
    int action = *rc::gen::inRange(0, 3);
    if (action == 0) {
      std::string line = who + std::to_string(tag++) + "\n";
      RC_ASSERT(b.edit(agent(who), id, {LineEdit::insert(model.size(), line)}).ok());
      model.push_back({who, line});
      redo[who].clear();
    } else if (action == 1) {
      auto it = std::find_if(model.rbegin(), model.rend(),
                             [&](const auto& m) { return m.first == who; });
      auto r = b.undo(agent(who), id);
      if (it == model.rend()) {
        RC_ASSERT((!r.ok() || !r->changed));
        continue;
      }
      RC_ASSERT(r.ok());
      size_t at = static_cast<size_t>(std::distance(it, model.rend()) - 1);
      redo[who].push_back({at, it->second});
      model.erase(model.begin() + static_cast<long>(at));
    } else {
      auto r = b.redo(agent(who), id);
      if (redo[who].empty()) {
        RC_ASSERT(!r.ok());
        continue;
      }
      RC_ASSERT(r.ok());
      auto [at, line] = redo[who].back();
      redo[who].pop_back();
      model.insert(model.begin() + static_cast<long>(std::min(at, model.size())), {who, line});
    }
    std::string want;
    for (const auto& m : model) want += m.second;
    std::string got = text_of(b, id);
    // Lines come back where the CRDT puts them: compare as multisets per
    // author order.
    std::vector<std::string> got_lines, want_lines;
    for (size_t p = 0, q; p < got.size(); p = q + 1) {
      q = got.find('\n', p);
      got_lines.push_back(got.substr(p, q - p + 1));
    }
    for (const auto& m : model) want_lines.push_back(m.second);
    std::sort(got_lines.begin(), got_lines.end());
    std::sort(want_lines.begin(), want_lines.end());
    RC_ASSERT(got_lines == want_lines);
  }
}

// ---------------------------------------------------------------- scale

TEST(BlocksScale, ListOfChildrenAmongManyBlocksIsFast) {
  Env env;
  const int total = testing::kSanitizerBuild ? 5000 : 100000;
  std::string parent;
  {
    auto k = env.open();
    Blocks& b = k->blocks();
    parent = create(b, "root\n");
    for (int i = 0; i < total; ++i) {
      CreateBlock r;
      r.content = "m" + std::to_string(i);
      r.parent_id = i % 1000 == 0 ? std::optional<std::string>(parent) : std::nullopt;
      ASSERT_TRUE(b.create(agent("bulk"), r).ok());
    }
  }
  auto open_start = std::chrono::steady_clock::now();
  auto k = env.open();
  double open_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             open_start)
                       .count();
  ListFilter f;
  f.parent_id = parent;
  auto start = std::chrono::steady_clock::now();
  auto l = k->blocks().list(agent("claude"), f);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->blocks.size(), static_cast<size_t>(total / 1000));
  if (!testing::kSanitizerBuild) {
    EXPECT_LT(ms, 5.0);
    std::cout << "list{parent} among " << total << " blocks: " << ms << " ms; open " << open_ms
              << " ms\n";
  }
}

}  // namespace blocks_test_local
}  // namespace weft::kernel
