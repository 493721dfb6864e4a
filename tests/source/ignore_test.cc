#include "weft/source/ignore.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace weft::source {
namespace {

using weft::testing::write_file;

IgnoreRules ignore_rules_of(std::string_view text) {
  IgnoreRules rules;
  rules.add(text, ".gitignore");
  EXPECT_TRUE(rules.problems().empty()) << rules.problems()[0];
  return rules;
}

bool file_ignored(const IgnoreRules& rules, std::string_view path) {
  return rules.ignored(path, false);
}
bool dir_ignored(const IgnoreRules& rules, std::string_view path) {
  return rules.ignored(path, true);
}

TEST(IgnoreRulesTest, GitDirectoryAlwaysIgnored) {
  IgnoreRules rules;
  EXPECT_TRUE(dir_ignored(rules, ".git"));
  EXPECT_TRUE(file_ignored(rules, ".git/config"));
  EXPECT_TRUE(file_ignored(rules, ".git/objects/ab/cdef"));
  EXPECT_FALSE(file_ignored(rules, ".gitignore"));
  EXPECT_FALSE(file_ignored(rules, ".github/workflows/ci.yml"));
  EXPECT_FALSE(file_ignored(rules, "sub/.git"));  // only the root's
  EXPECT_FALSE(file_ignored(rules, "a/b.txt"));
  EXPECT_FALSE(dir_ignored(ignore_rules_of("*\n"), "."));  // the root itself never is
  // Negation cannot bring .git back.
  IgnoreRules with = ignore_rules_of("!.git\n!.git/config\n");
  EXPECT_TRUE(file_ignored(with, ".git/config"));
}

TEST(IgnoreRulesTest, NameWithoutSlashMatchesAtAnyDepth) {
  IgnoreRules rules = ignore_rules_of("node_modules\n*.o\n.DS_Store\n");
  EXPECT_TRUE(dir_ignored(rules, "node_modules"));
  EXPECT_TRUE(file_ignored(rules, "node_modules/x/index.js"));
  EXPECT_TRUE(file_ignored(rules, "web/node_modules/x/index.js"));
  EXPECT_TRUE(file_ignored(rules, "a.o"));
  EXPECT_TRUE(file_ignored(rules, "src/deep/b.o"));
  EXPECT_FALSE(file_ignored(rules, "src/b.oo"));
  EXPECT_FALSE(file_ignored(rules, "src/o"));
  EXPECT_TRUE(file_ignored(rules, "x/.DS_Store"));
  EXPECT_FALSE(file_ignored(rules, "x/my.DS_Store.txt"));
  EXPECT_FALSE(file_ignored(rules, "node_modules_x/a"));
}

TEST(IgnoreRulesTest, LeadingOrMiddleSlashAnchors) {
  IgnoreRules rules = ignore_rules_of("/build\ndoc/frotz\n/*.log\n");
  EXPECT_TRUE(dir_ignored(rules, "build"));
  EXPECT_TRUE(file_ignored(rules, "build/out/a.bin"));
  EXPECT_FALSE(file_ignored(rules, "src/build/a.bin"));
  EXPECT_TRUE(dir_ignored(rules, "doc/frotz"));
  EXPECT_TRUE(file_ignored(rules, "doc/frotz/x"));
  EXPECT_FALSE(dir_ignored(rules, "a/doc/frotz"));
  EXPECT_TRUE(file_ignored(rules, "x.log"));
  EXPECT_FALSE(file_ignored(rules, "logs/x.log"));
}

TEST(IgnoreRulesTest, TrailingSlashMatchesDirectoriesOnly) {
  IgnoreRules rules = ignore_rules_of("out/\nfrotz/\n/top/\n");
  EXPECT_TRUE(dir_ignored(rules, "out"));
  EXPECT_FALSE(file_ignored(rules, "out"));  // a file named out
  EXPECT_TRUE(file_ignored(rules, "out/a.txt"));
  EXPECT_TRUE(file_ignored(rules, "pkg/out/a.txt"));
  EXPECT_TRUE(dir_ignored(rules, "a/frotz"));
  EXPECT_FALSE(file_ignored(rules, "a/frotz"));
  EXPECT_TRUE(file_ignored(rules, "top/x"));
  EXPECT_FALSE(file_ignored(rules, "top"));
  EXPECT_FALSE(file_ignored(rules, "a/top/x"));
}

TEST(IgnoreRulesTest, DoubleStar) {
  IgnoreRules rules = ignore_rules_of("**/foo\n**/gen/\nabc/**\na/**/b\n");
  EXPECT_TRUE(file_ignored(rules, "foo"));
  EXPECT_TRUE(file_ignored(rules, "x/y/foo"));
  EXPECT_TRUE(file_ignored(rules, "x/gen/file"));
  EXPECT_FALSE(file_ignored(rules, "x/gen"));
  // "abc/**" matches everything inside abc, not abc itself.
  EXPECT_FALSE(dir_ignored(rules, "abc"));
  EXPECT_TRUE(file_ignored(rules, "abc/x"));
  EXPECT_TRUE(file_ignored(rules, "abc/x/y/z"));
  EXPECT_FALSE(file_ignored(rules, "z/abc/x"));
  EXPECT_TRUE(file_ignored(rules, "a/b"));
  EXPECT_TRUE(file_ignored(rules, "a/x/b"));
  EXPECT_TRUE(file_ignored(rules, "a/x/y/b"));
  EXPECT_FALSE(file_ignored(rules, "a/x/y/c"));
  EXPECT_FALSE(file_ignored(rules, "q/a/x/b"));
}

TEST(IgnoreRulesTest, DoubleStarCanBeReopened) {
  // With "abc/**" abc itself stays, so a file in it can be re-included.
  IgnoreRules rules = ignore_rules_of("abc/**\n!abc/keep.txt\n");
  EXPECT_FALSE(file_ignored(rules, "abc/keep.txt"));
  EXPECT_TRUE(file_ignored(rules, "abc/other.txt"));
}

TEST(IgnoreRulesTest, WildcardsAndClasses) {
  IgnoreRules rules = ignore_rules_of("tmp?\n*.py[co]\n[!a]x.txt\ncache-*-dir\nlib/*.a\n");
  EXPECT_TRUE(file_ignored(rules, "tmp1"));
  EXPECT_FALSE(file_ignored(rules, "tmp12"));
  EXPECT_TRUE(file_ignored(rules, "pkg/m.pyc"));
  EXPECT_TRUE(file_ignored(rules, "m.pyo"));
  EXPECT_FALSE(file_ignored(rules, "m.py"));
  EXPECT_TRUE(file_ignored(rules, "bx.txt"));
  EXPECT_FALSE(file_ignored(rules, "ax.txt"));
  EXPECT_TRUE(dir_ignored(rules, "x/cache-12-dir"));
  EXPECT_TRUE(file_ignored(rules, "lib/x.a"));
  EXPECT_FALSE(file_ignored(rules, "lib/sub/x.a"));  // '*' never crosses '/'
}

TEST(IgnoreRulesTest, NegationLastMatchWins) {
  IgnoreRules rules = ignore_rules_of("*.log\n!important.log\n");
  EXPECT_TRUE(file_ignored(rules, "a.log"));
  EXPECT_FALSE(file_ignored(rules, "important.log"));
  EXPECT_FALSE(file_ignored(rules, "x/important.log"));
  IgnoreRules reversed = ignore_rules_of("!important.log\n*.log\n");
  EXPECT_TRUE(file_ignored(reversed, "important.log"));
  // The name index and the scanned patterns interleave by order.
  IgnoreRules mixed = ignore_rules_of("keep.txt\n!*.txt\nkeep.txt\n");
  EXPECT_TRUE(file_ignored(mixed, "keep.txt"));
  IgnoreRules mixed2 = ignore_rules_of("*.txt\n!keep.txt\n");
  EXPECT_FALSE(file_ignored(mixed2, "keep.txt"));
  EXPECT_TRUE(file_ignored(mixed2, "other.txt"));
}

TEST(IgnoreRulesTest, NoReincludeUnderExcludedDirectory) {
  IgnoreRules rules = ignore_rules_of("logs/\n!logs/keep.txt\n!keep.txt\n");
  EXPECT_TRUE(file_ignored(rules, "logs/keep.txt"));
  EXPECT_TRUE(file_ignored(rules, "logs/a/keep.txt"));
  // The git idiom: exclude a directory's contents, then re-include one.
  IgnoreRules idiom = ignore_rules_of("/*\n!/foo\n/foo/*\n!/foo/bar\n");
  EXPECT_TRUE(file_ignored(idiom, "top.txt"));
  EXPECT_FALSE(dir_ignored(idiom, "foo"));
  EXPECT_TRUE(file_ignored(idiom, "foo/other"));
  EXPECT_FALSE(dir_ignored(idiom, "foo/bar"));
  EXPECT_FALSE(file_ignored(idiom, "foo/bar/deep.txt"));
}

TEST(IgnoreRulesTest, NestedDirectories) {
  IgnoreRules rules = ignore_rules_of("build/\n!src/build/\n");
  EXPECT_TRUE(file_ignored(rules, "build/a/b/c.o"));
  EXPECT_TRUE(file_ignored(rules, "lib/build/c.o"));
  EXPECT_FALSE(file_ignored(rules, "src/build/c.o"));
  EXPECT_TRUE(file_ignored(rules, "src/x/build/c.o"));
}

TEST(IgnoreRulesTest, CommentsBlankLinesAndEscapes) {
  IgnoreRules rules = ignore_rules_of(
      "# a comment\n"
      "\n"
      "   \n"
      "\\#hash\n"
      "\\!bang\n"
      "literal\\*star\n"
      " lead\n");
  EXPECT_TRUE(file_ignored(rules, "#hash"));
  EXPECT_FALSE(file_ignored(rules, "# a comment"));
  EXPECT_TRUE(file_ignored(rules, "!bang"));
  EXPECT_FALSE(file_ignored(rules, "bang"));
  EXPECT_TRUE(file_ignored(rules, "literal*star"));
  EXPECT_FALSE(file_ignored(rules, "literalXstar"));
  EXPECT_TRUE(file_ignored(rules, " lead"));  // leading spaces count
  EXPECT_FALSE(file_ignored(rules, "lead"));
}

TEST(IgnoreRulesTest, TrailingSpaces) {
  IgnoreRules rules = ignore_rules_of("trim   \nkeep\\ \nboth\\  \n");
  EXPECT_TRUE(file_ignored(rules, "trim"));
  EXPECT_FALSE(file_ignored(rules, "trim "));
  EXPECT_TRUE(file_ignored(rules, "keep "));
  EXPECT_FALSE(file_ignored(rules, "keep"));
  EXPECT_TRUE(file_ignored(rules, "both "));
  EXPECT_FALSE(file_ignored(rules, "both  "));
}

TEST(IgnoreRulesTest, CrlfLineEndingsAndBom) {
  IgnoreRules rules = ignore_rules_of("\xEF\xBB\xBF*.tmp\r\nout/\r\n!keep.tmp\r\n# c\r\n");
  EXPECT_TRUE(file_ignored(rules, "a.tmp"));
  EXPECT_TRUE(file_ignored(rules, "out/x"));
  EXPECT_FALSE(file_ignored(rules, "keep.tmp"));
  EXPECT_FALSE(file_ignored(rules, "a.tmp\r"));
}

TEST(IgnoreRulesTest, LaterFilesWin) {
  IgnoreRules rules;
  rules.add("*.md\n", ".gitignore");
  rules.add("!README.md\n", ".weftignore");
  EXPECT_TRUE(file_ignored(rules, "x.md"));
  EXPECT_FALSE(file_ignored(rules, "README.md"));
}

TEST(IgnoreRulesTest, BadLinesAreSkippedAndDescribed) {
  IgnoreRules rules;
  rules.add("ok\n[abc\n/\n!\ntrailing\\\n*.x\n", ".weftignore");
  ASSERT_EQ(rules.problems().size(), 4u);
  EXPECT_EQ(rules.problems()[0], ".weftignore:2: pattern \"[abc\" has an unclosed '['; skipped");
  EXPECT_EQ(rules.problems()[1], ".weftignore:3: pattern \"/\" names no path; skipped");
  EXPECT_EQ(rules.problems()[2], ".weftignore:4: pattern \"!\" names no path; skipped");
  EXPECT_EQ(rules.problems()[3].rfind(".weftignore:5: pattern \"trailing\\\" ends with", 0), 0u)
      << rules.problems()[3];
  EXPECT_TRUE(file_ignored(rules, "ok"));
  EXPECT_TRUE(file_ignored(rules, "a.x"));
  EXPECT_FALSE(file_ignored(rules, "[abc"));
}

TEST(IgnoreRulesTest, ProblemsAreBounded) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "[x\n";
  IgnoreRules rules;
  rules.add(text, ".gitignore");
  EXPECT_LE(rules.problems().size(), 101u);
  EXPECT_NE(rules.problems().back().find("more bad patterns"), std::string::npos);
}

TEST(IgnoreRulesTest, ManyDoubleStarsStayFast) {
  IgnoreRules rules = ignore_rules_of("a/**/**/b/**/c/**/d/**/e/**/f/**/g\n");
  std::string path = "a";
  for (int i = 0; i < 200; ++i) path += "/x";
  path += "/b/c/d/e/f/g";
  EXPECT_TRUE(file_ignored(rules, path));
  EXPECT_FALSE(file_ignored(rules, path + "h"));
}

// "d/" ignores exactly the paths with a directory named d on the way.
RC_GTEST_PROP(IgnoreRulesProperty, DirectoryPatternCoversEverythingBelow, ()) {
  IgnoreRules rules;
  rules.add("d/\n!x\n", ".gitignore");
  auto segments = *rc::gen::nonEmpty(rc::gen::container<std::vector<std::string>>(
      rc::gen::element<std::string>("a", "d", "x", "dd")));
  bool is_dir = *rc::gen::arbitrary<bool>();
  std::string path;
  bool expected = false;
  for (size_t i = 0; i < segments.size(); ++i) {
    path += (i == 0 ? "" : "/") + segments[i];
    bool last = i + 1 == segments.size();
    if (segments[i] == "d" && (!last || is_dir)) expected = true;
  }
  RC_ASSERT(rules.ignored(path, is_dir) == expected);
}

TEST(IgnoreRulesLoadTest, ReadsGitignoreThenWeftignore) {
  weft::testing::TempDir dir;
  IgnoreRules none = IgnoreRules::load(dir.path().string());
  EXPECT_TRUE(none.problems().empty());
  EXPECT_FALSE(file_ignored(none, "a.md"));
  EXPECT_TRUE(file_ignored(none, ".git/HEAD"));

  write_file(dir.path() / ".gitignore", "*.md\nbuild/\n");
  write_file(dir.path() / ".weftignore", "!README.md\n");
  IgnoreRules both = IgnoreRules::load(dir.path().string());
  EXPECT_TRUE(both.problems().empty());
  EXPECT_TRUE(file_ignored(both, "a.md"));
  EXPECT_FALSE(file_ignored(both, "README.md"));
  EXPECT_TRUE(file_ignored(both, "build/x"));
}

TEST(IgnoreRulesLoadTest, ProblemsNameTheFile) {
  weft::testing::TempDir dir;
  write_file(dir.path() / ".weftignore", "good\n[bad\n");
  IgnoreRules rules = IgnoreRules::load(dir.path().string());
  ASSERT_EQ(rules.problems().size(), 1u);
  EXPECT_EQ(rules.problems()[0].rfind(".weftignore:2: ", 0), 0u) << rules.problems()[0];
  EXPECT_TRUE(file_ignored(rules, "good"));
}

TEST(IgnoreRulesLoadTest, NotARegularFileIsNoted) {
  weft::testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / ".gitignore");
  write_file(dir.path() / ".weftignore", "secret\n");
  IgnoreRules rules = IgnoreRules::load(dir.path().string());
  ASSERT_EQ(rules.problems().size(), 1u);
  EXPECT_EQ(rules.problems()[0].rfind(".gitignore: not read", 0), 0u) << rules.problems()[0];
  EXPECT_TRUE(file_ignored(rules, "secret"));  // the other file still counts
}

TEST(IgnoreRulesLoadTest, UnreadableFilesAreNoted) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  weft::testing::TempDir dir;
  write_file(dir.path() / ".weftignore", "secret\n");
  ::chmod((dir.path() / ".weftignore").c_str(), 0);
  IgnoreRules unreadable = IgnoreRules::load(dir.path().string());
  ASSERT_EQ(unreadable.problems().size(), 1u);
  EXPECT_EQ(unreadable.problems()[0].rfind(".weftignore: not read", 0), 0u)
      << unreadable.problems()[0];
  EXPECT_FALSE(file_ignored(unreadable, "secret"));
}

// Not a pass/fail figure: prints the cost of ignored() with a typical
// ~50-pattern .gitignore over a 20,000-path workspace.
TEST(IgnoreRulesTest, TimingOfATypicalGitignore) {
  const std::string gitignore =
      "# build output\n/build/\n/dist/\nout/\n*.o\n*.obj\n*.a\n*.so\n*.dylib\n*.dll\n*.exe\n"
      "*.pyc\n__pycache__/\n*.egg-info/\n.venv/\nvenv/\nnode_modules/\n.npm/\n*.log\n"
      "npm-debug.log*\n.DS_Store\nThumbs.db\n*.swp\n*~\n.idea/\n.vscode/\n*.iml\ncoverage/\n"
      ".nyc_output/\n*.tmp\n*.bak\n/tmp/\n.cache/\n.pytest_cache/\n.mypy_cache/\n*.class\n"
      "target/\n*.jar\n!gradle-wrapper.jar\n.gradle/\n/docs/_site/\n/docs/.jekyll-cache/\n"
      "**/generated/**\nsrc/**/*.gen.cc\n*.pb.cc\n*.pb.h\n.env\n.env.*\n!.env.example\n"
      "*.sqlite\n";
  IgnoreRules rules = ignore_rules_of(gitignore);
  std::vector<std::string> paths;
  const char* dirs[] = {"src/core", "src/net/http", "include/weft/base", "docs/guide",
                        "tests/unit/a", "tools", "web/app/components", "lib"};
  const char* exts[] = {".cc", ".h", ".md", ".txt", ".py", ".js", ".json", ".o", ".log", ""};
  for (int i = 0; i < 20000; ++i) {
    paths.push_back(std::string(dirs[i % 8]) + "/file" + std::to_string(i) + exts[i % 10]);
  }
  size_t ignored = 0;
  auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 5; ++round) {
    for (const std::string& p : paths) ignored += rules.ignored(p, false) ? 1 : 0;
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                  .count() /
              (5.0 * static_cast<double>(paths.size()));
  std::printf("[ timing ] IgnoreRules::ignored: %.0f ns per path (53 lines, %zu paths, depth 2-4)\n",
              ns, paths.size());
  EXPECT_EQ(ignored, 5u * 4000u);  // the ".o" and ".log" tenths
}

}  // namespace
}  // namespace weft::source
