// Blocks::search_all (kernel_search): conversation, memory and file blocks
// and untracked files in one result, the kinds and path filters, a dirty
// file block searched in its block text, literal fallback, the limits, and
// agreement with a per-text model on random contents.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>

#include "kernel/blocks_test_env.h"
#include "support/test_support.h"
#include "weft/kernel/blocks.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace blocks_search_test_local {

source::Attribution agent(std::string name) {
  return {"agent:" + name, "kernel_search", std::nullopt};
}

using Env = blocks_test::Env;

std::string create(Blocks& b, BlockKind kind, std::string content) {
  CreateBlock r;
  r.kind = kind;
  r.role = BlockRole::kModel;
  r.content = std::move(content);
  auto w = b.create(agent("claude"), r);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? w->block_id : "";
}

std::vector<std::string> ids_of(const KernelSearchResult& r) {
  std::vector<std::string> out;
  for (const auto& h : r.hits) out.push_back(h.block_id);
  return out;
}

TEST(KernelSearch, FindsEveryKindInOrder) {
  Env env;
  env.write("src/a.txt", "one\nthe needle\n");
  env.write("src/deep/b.txt", "needle first\n");
  env.write("other.txt", "no match\n");
  auto k = env.open();
  ASSERT_NE(k, nullptr);
  Blocks& b = k->blocks();
  std::string think = create(b, BlockKind::kThinking, "thinking of a needle\n");
  std::string call = create(b, BlockKind::kToolCall, "needle(1)\n");
  create(b, BlockKind::kText, "nothing here\n");
  MemoryCreate m;
  m.label = "notes";
  m.initial_text = "a needle in memory\n";
  ASSERT_TRUE(b.memory_create(agent("claude"), m).ok());
  KernelSearchRequest r;
  r.query = "needle";
  auto found = b.search_all(agent("claude"), r);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(ids_of(*found), (std::vector<std::string>{"memory:claude/notes", think, call,
                                                       "file:src/a.txt", "file:src/deep/b.txt"}));
  EXPECT_FALSE(found->literal);
  EXPECT_FALSE(found->truncated);
  const KernelSearchHit& a = found->hits[3];
  EXPECT_EQ(a.kind, BlockKind::kFile);
  EXPECT_EQ(a.path, "src/a.txt");
  ASSERT_EQ(a.matches.size(), 1u);
  EXPECT_EQ(a.matches[0].line, 1u);
  EXPECT_EQ(a.matches[0].match_start, 4u);
  EXPECT_EQ(a.matches[0].match_end, 10u);
  // Another agent does not see claude's memory.
  auto other = b.search_all(agent("amy"), r);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->hits.size(), 4u);
  // Kinds and path_prefix.
  r.kinds = {BlockKind::kToolCall};
  EXPECT_EQ(ids_of(*b.search_all(agent("claude"), r)), std::vector<std::string>{call});
  r.kinds.clear();
  r.path_prefix = "src/deep";
  EXPECT_EQ(ids_of(*b.search_all(agent("claude"), r)),
            std::vector<std::string>{"file:src/deep/b.txt"});
}

TEST(KernelSearch, ContextLimitsAndLiteral) {
  Env env;
  env.write("f.txt", "a\nb\nx(1\nc\nd\nx(2\n");
  auto k = env.open();
  ASSERT_NE(k, nullptr);
  Blocks& b = k->blocks();
  KernelSearchRequest r;
  r.query = "x(";
  r.context_lines = 1;
  r.max_matches_per_block = 1;
  auto found = b.search_all(agent("claude"), r);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(found->literal);
  EXPECT_FALSE(found->note.empty());
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_TRUE(found->hits[0].truncated);
  ASSERT_EQ(found->hits[0].matches.size(), 1u);
  EXPECT_EQ(found->hits[0].matches[0].content, "b\nx(1\nc\n");
  EXPECT_EQ(found->hits[0].matches[0].first_line, 1u);
  r.max_blocks = 0;
  EXPECT_EQ(b.search_all(agent("claude"), r).status().code(), StatusCode::kInvalidArgument);
  r.max_blocks = 1;
  r.query = "";
  EXPECT_EQ(b.search_all(agent("claude"), r).status().code(), StatusCode::kInvalidArgument);
  r.query = "x";
  r.max_matches_per_block = kMaxSearchMatches + 1;
  EXPECT_EQ(b.search_all(agent("claude"), r).status().code(), StatusCode::kInvalidArgument);
}

TEST(KernelSearch, MaxBlocksTruncates) {
  Env env;
  auto k = env.open();
  ASSERT_NE(k, nullptr);
  Blocks& b = k->blocks();
  for (int i = 0; i < 5; ++i) create(b, BlockKind::kText, "hit " + std::to_string(i) + "\n");
  KernelSearchRequest r;
  r.query = "hit";
  r.max_blocks = 3;
  auto found = b.search_all(agent("claude"), r);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->hits.size(), 3u);
  EXPECT_TRUE(found->truncated);
  r.max_blocks = 5;
  found = b.search_all(agent("claude"), r);
  EXPECT_EQ(found->hits.size(), 5u);
  EXPECT_FALSE(found->truncated);
}

TEST(KernelSearch, PendingAppendsAreSearched) {
  Env env;
  auto k = env.open();
  ASSERT_NE(k, nullptr);
  Blocks& b = k->blocks();
  std::string id = create(b, BlockKind::kText, "");
  ASSERT_TRUE(b.append(agent("claude"), id, "stream").ok());  // buffered
  KernelSearchRequest r;
  r.query = "stream";
  auto found = b.search_all(agent("claude"), r);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(ids_of(*found), std::vector<std::string>{id});
}

// Every conversation block matches the search exactly when a plain substring
// scan of its text says so, with the same first line.
RC_GTEST_PROP(KernelSearchProperty, AgreesWithASubstringScan, ()) {
  Env env;
  auto k = env.open();
  RC_ASSERT(k != nullptr);
  Blocks& b = k->blocks();
  auto texts = *rc::gen::container<std::vector<std::string>>(
      *rc::gen::inRange<size_t>(1, 8),
      rc::gen::container<std::string>(rc::gen::element('a', 'b', '\n', 'c')));
  std::vector<std::string> ids;
  for (const auto& t : texts) ids.push_back(create(b, BlockKind::kText, t));
  KernelSearchRequest r;
  r.query = "ab";
  r.kinds = {BlockKind::kText};
  r.max_blocks = kMaxKernelSearchBlocks;
  auto found = b.search_all(agent("claude"), r);
  RC_ASSERT(found.ok());
  std::vector<std::string> want;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].find("ab") != std::string::npos) want.push_back(ids[i]);
  }
  RC_ASSERT(ids_of(*found) == want);
  for (const auto& h : found->hits) {
    size_t i = static_cast<size_t>(std::find(ids.begin(), ids.end(), h.block_id) - ids.begin());
    size_t at = texts[i].find("ab");
    size_t line = static_cast<size_t>(std::count(texts[i].begin(), texts[i].begin() + at, '\n'));
    RC_ASSERT(h.matches.front().line == line);
  }
}

}  // namespace blocks_search_test_local
}  // namespace weft::kernel
