// Unit tests of the shared pieces: path normalisation (with RapidCheck
// properties), the grep prefilter and the InMemory tree's structural sharing.
#include "fs/common.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fs/in_memory_tree.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/path.h"

namespace weft::fs {
namespace {

TEST(NormalizePath, Basics) {
  FsLimits l;
  EXPECT_EQ(normalize_path("", "/r", l)->str(), ".");
  EXPECT_EQ(normalize_path("./a//b/./c/", "/r", l)->str(), "a/b/c");
  EXPECT_EQ(normalize_path("a/b/../c", "/r", l)->str(), "a/c");
  EXPECT_EQ(normalize_path("/r/a", "/r", l)->str(), "a");
  EXPECT_EQ(normalize_path("/r", "/r", l)->str(), ".");
  EXPECT_EQ(normalize_path("/x", "/", l)->str(), "x");
  EXPECT_EQ(normalize_path("/rx/a", "/r", l).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(normalize_path("/r/../a", "/r", l).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(normalize_path("..", "/r", l).status().code(), StatusCode::kPermissionDenied);
  auto nul = normalize_path(std::string("a\0b", 3), "/r", l);
  EXPECT_EQ(nul.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nul.status().message().find("\\0"), std::string::npos);  // shown, not cut
}

RC_GTEST_PROP(NormalizePathProps, ResultIsCanonicalAndIdempotent, (const std::vector<int>& picks)) {
  static const char* kParts[] = {"a", "b", "..", ".", "", "c.txt", "\xC3\xA9", " sp"};
  std::string path;
  for (int p : picks) {
    path += kParts[static_cast<unsigned>(p) % 8];
    path += '/';
  }
  FsLimits l;
  auto n = normalize_path(path, "/root", l);
  if (!n.ok()) {
    RC_ASSERT(n.status().code() == StatusCode::kPermissionDenied ||
              n.status().code() == StatusCode::kInvalidArgument);
    return;
  }
  for (const auto& s : n->segments) RC_ASSERT(s != ".." && s != "." && !s.empty());
  auto again = normalize_path(n->str(), "/root", l);
  RC_ASSERT(again.ok());
  RC_ASSERT(again->segments == n->segments);
  auto abs = normalize_path("/root/" + n->str(), "/root", l);
  RC_ASSERT(abs.ok());
  RC_ASSERT(abs->segments == n->segments);
}

TEST(GrepPrefilter, RequiredLiteral) {
  EXPECT_EQ(internal::required_literal("struct [a-z_]+_ops"), "struct ");
  EXPECT_EQ(internal::required_literal("foo|barbaz"), "");
  EXPECT_EQ(internal::required_literal("(?i)hello"), "");
  EXPECT_EQ(internal::required_literal("abcd?e"), "abc");
  EXPECT_EQ(internal::required_literal("x(abcdef)?y"), "");
  EXPECT_EQ(internal::required_literal("\\bword\\w+ing"), "word");
  EXPECT_EQ(internal::required_literal("ab{2}cdef"), "cdef");
  EXPECT_EQ(internal::required_literal("[abc]+xyz.*"), "xyz");
}

RC_GTEST_PROP(GrepPrefilterProps, FinderAgreesWithStdFind,
              (const std::string& hay_raw, const std::string& needle_raw)) {
  std::string hay, needle;
  for (char c : hay_raw) hay.push_back("abXY_ \n"[static_cast<unsigned char>(c) % 7]);
  for (char c : needle_raw.substr(0, 4)) {
    needle.push_back("abXY_ \n"[static_cast<unsigned char>(c) % 7]);
  }
  RC_PRE(!needle.empty());
  internal::LiteralFinder f(needle);
  for (size_t from = 0; from <= hay.size(); ++from) {
    RC_ASSERT(f.find(hay, from) == hay.find(needle, from));
  }
}

TEST(GrepPrefilter, RegexResultsMatchWithAndWithoutPrefilter) {
  auto fs = make_in_memory_filesystem();
  ASSERT_TRUE(
      fs->write("a.h", "struct foo_ops {\nstruct bar;\n  struct x_ops y;\nstruct _ops\n").ok());
  auto r = fs->grep("struct [a-z_]+_ops");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);  // "struct _ops" lacks the [a-z_]+ part
  EXPECT_EQ((*r)[1].line_number, 3);
  EXPECT_EQ((*r)[1].match_start, 2);
  auto anchored = fs->grep("^struct [a-z]+_ops");
  ASSERT_TRUE(anchored.ok());
  EXPECT_EQ(anchored->size(), 1u);
}

TEST(InMemoryTree, SnapshotsShareUnchangedNodes) {
  using internal::MemNode;
  auto now = Clock::now();
  internal::NodePtr root = MemNode::make_dir(now);
  NormalPath a{{"dir", "a.txt"}}, b{{"other", "b.txt"}};
  auto data = std::make_shared<const std::string>("payload");
  root = *internal::put(root, a, MemNode::make_file(data, now, now), true, now);
  root = *internal::put(root, b, MemNode::make_file(data, now, now), true, now);
  internal::NodePtr before = root;
  root = *internal::put(root, a, MemNode::make_file(data, now, now), true, now);
  // "other" was not on the changed path: both versions hold the same node.
  EXPECT_EQ(before->children.at("other").get(), root->children.at("other").get());
  EXPECT_NE(before->children.at("dir").get(), root->children.at("dir").get());
  EXPECT_EQ(internal::count_nodes(root), 5u);
}

}  // namespace
}  // namespace weft::fs
