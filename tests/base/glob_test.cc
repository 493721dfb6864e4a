#include "weft/base/glob.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace weft {
namespace {

bool m(std::string_view pattern, std::string_view path) {
  auto g = GlobPattern::compile(pattern);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() && g->matches(path);
}

TEST(GlobTest, StarAndQuestion) {
  EXPECT_TRUE(m("*.h", "a.h"));
  EXPECT_TRUE(m("*.h", ".h"));
  EXPECT_FALSE(m("*.h", "x/a.h"));
  EXPECT_TRUE(m("a?c", "abc"));
  EXPECT_TRUE(m("a?c",
                "a\xC3\xA9"
                "c"));  // ? is one code point
  EXPECT_FALSE(m("a?c", "a/c"));
  EXPECT_TRUE(m("*", ".hidden"));
  EXPECT_TRUE(m("a*b*c", "aXXbYYbc"));
  EXPECT_FALSE(m("a*b*c", "aXXbYYb"));
}

TEST(GlobTest, DoubleStar) {
  EXPECT_TRUE(m("**/*.h", "a.h"));
  EXPECT_TRUE(m("**/*.h", "x/y/a.h"));
  EXPECT_FALSE(m("**/*.h", "x/y/a.c"));
  EXPECT_TRUE(m("src/**/t.cc", "src/t.cc"));
  EXPECT_TRUE(m("src/**/t.cc", "src/a/b/t.cc"));
  EXPECT_FALSE(m("src/**/t.cc", "lib/a/t.cc"));
  EXPECT_TRUE(m("**", "a/b/c"));
  EXPECT_TRUE(m("a/**/**/b", "a/b"));
}

TEST(GlobTest, ClassesBracesEscapes) {
  EXPECT_TRUE(m("[abc].txt", "b.txt"));
  EXPECT_FALSE(m("[!abc].txt", "b.txt"));
  EXPECT_TRUE(m("[a-z]1", "q1"));
  EXPECT_TRUE(m("[]]", "]"));
  EXPECT_TRUE(m("*.{cc,h}", "x.cc"));
  EXPECT_TRUE(m("*.{cc,h}", "x.h"));
  EXPECT_FALSE(m("*.{cc,h}", "x.c"));
  EXPECT_TRUE(m("{src,lib/**}/*.py", "lib/a/b.py"));
  EXPECT_TRUE(m("\\*", "*"));
  EXPECT_FALSE(m("\\*", "a"));
}

TEST(GlobTest, BadPatterns) {
  EXPECT_EQ(GlobPattern::compile("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GlobPattern::compile("[abc").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GlobPattern::compile("{a,b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GlobPattern::compile("a\\").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GlobPattern::compile("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(GlobTest, Pruning) {
  auto g = GlobPattern::compile("src/*/x.h");
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->could_match_below(""));
  EXPECT_TRUE(g->could_match_below("src"));
  EXPECT_TRUE(g->could_match_below("src/a"));
  EXPECT_FALSE(g->could_match_below("lib"));
  EXPECT_FALSE(g->could_match_below("src/a/b"));
  EXPECT_TRUE(g->is_single_segment() == false);
  EXPECT_TRUE(GlobPattern::compile("*.h")->is_single_segment());
}

RC_GTEST_PROP(GlobProps, LiteralMatchesItself, (const std::string& raw)) {
  std::string name;
  for (char c : raw) {
    if (std::isalnum(static_cast<unsigned char>(c))) name.push_back(c);
  }
  RC_PRE(!name.empty());
  auto g = GlobPattern::compile(name);
  RC_ASSERT(g.ok());
  RC_ASSERT(g->matches(name));
  RC_ASSERT(GlobPattern::compile("**/" + name)->matches("a/b/" + name));
  RC_ASSERT(GlobPattern::compile("*")->matches(name));
}

}  // namespace
}  // namespace weft
