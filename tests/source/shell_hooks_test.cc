// Shell hooks without a sandbox: levels and [shell], command-line checks,
// rule checks, protection and the metadata index.
#include "weft/source/shell_hooks.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_support.h"

namespace weft::source {
namespace {

using weft::testing::write_file;

namespace stdfs = std::filesystem;

WorkspaceRules rules_of(std::string_view toml) {
  auto r = WorkspaceRules::parse(toml);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : WorkspaceRules();
}

TEST(Enforcement, NamesRoundTripAndUnknownIsAnError) {
  for (auto e : {Enforcement::kStrict, Enforcement::kWarned, Enforcement::kAudit,
                 Enforcement::kNone}) {
    EXPECT_EQ(*parse_enforcement(enforcement_name(e)), e);
  }
  auto bad = parse_enforcement("lenient");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("strict, warned, audit or none"), std::string::npos);
}

TEST(ShellSettings, ParsesTheShellTableAndNamesTheLine) {
  auto none = parse_shell_settings("[permissions]\ndefault = \"read_write\"\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->enforcement);
  EXPECT_FALSE(none->network);
  auto set = parse_shell_settings(
      "[shell]\nenforcement = \"audit\"\nnetwork = true\n[shell.commands.make]\nwrites = []\n");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->enforcement, Enforcement::kAudit);
  EXPECT_TRUE(set->network);
  auto bad_level = parse_shell_settings("[shell]\n\nenforcement = \"loose\"\n");
  ASSERT_FALSE(bad_level.ok());
  EXPECT_NE(bad_level.status().message().find("weft.toml:3:"), std::string::npos)
      << bad_level.status();
  EXPECT_FALSE(parse_shell_settings("[shell]\nnetwork = \"yes\"\n").ok());
  EXPECT_FALSE(parse_shell_settings("[shell]\nenforcement = 1\n").ok());
  EXPECT_FALSE(parse_shell_settings("shell = 3\n").ok());
  EXPECT_FALSE(parse_shell_settings("[shell\n").ok());
}

TEST(ShellSettings, LoadsFromTheRoot) {
  weft::testing::TempDir dir;
  EXPECT_FALSE(load_shell_settings(dir.path().string())->enforcement);
  write_file(dir.path() / "weft.toml", "[shell]\nenforcement = \"warned\"\n");
  EXPECT_EQ(load_shell_settings(dir.path().string())->enforcement, Enforcement::kWarned);
}

TEST(CommandLine, AcceptsWhatShAccepts) {
  for (std::string ok :
       {"true", "echo 'a b' \"c 'd'\"", "echo \"it's\"", "echo a\\'b", "echo $(echo \"a b\")",
        "echo \"$(echo \"in\")\"", "echo `echo x`", "echo $((1<<2))", "# it's a comment\ntrue",
        "cat <<EOF\nit's\nEOF\necho done", "cat <<-'END'\n\tdon't\n\tEND\n", "cat <<< 'x'",
        "case a in a) echo 'x';; esac"}) {
    EXPECT_TRUE(check_command_line(ok).ok()) << ok << ": " << check_command_line(ok);
  }
}

TEST(CommandLine, RefusesBrokenLinesSayingWhy) {
  struct Bad {
    std::string command;
    std::string says;
  };
  std::vector<Bad> bad = {{"", "empty"},
                          {"echo 'abc", "single quote"},
                          {"echo \"abc", "double quote"},
                          {"echo `ls", "backquote"},
                          {"echo $(ls", "$("},
                          {"echo x\\", "backslash"},
                          {std::string("echo a\0b", 8), "NUL"},
                          {"cat <<EOF\nno end\n", "here-document"},
                          {"echo \xff", "UTF-8"},
                          {std::string(kMaxCommandBytes + 1, 'x'), "over the limit"}};
  for (const auto& b : bad) {
    Status s = check_command_line(b.command);
    ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << b.command.substr(0, 40);
    EXPECT_NE(s.message().find(b.says), std::string::npos) << s;
  }
  // 1 MB of text is refused before any parsing.
  EXPECT_FALSE(check_command_line(std::string(1 << 20, 'a')).ok());
}

RC_GTEST_PROP(CommandLine, NeverCrashesAndQuotedWordsPass, (std::string text)) {
  (void)check_command_line(text);
  // Any text without quotes inside single quotes is one fine word.
  std::string word;
  for (char c : text) {
    if (c != '\'' && c != '\0' && static_cast<unsigned char>(c) < 0x80) word += c;
  }
  RC_ASSERT(check_command_line("echo '" + word + "'").ok());
}

constexpr std::string_view kRules = R"([permissions]
rules = [
  { glob = "vendor/**", level = "read_only" },
  { glob = "docs/**",   level = "human" },
  { glob = "src/**",    level = "read_write", escalate = ["delete"] },
  { glob = "**/*.lock", level = "read_only" },
]
)";

TEST(ShellRules, PredictionsAndChangesAreCheckedAgainstTheRules) {
  WorkspaceRules rules = rules_of(kRules);
  // [shell] enforcement/network sit beside [shell.commands] in one weft.toml.
  ASSERT_TRUE(WorkspaceRules::parse("[shell]\nenforcement = \"warned\"\nnetwork = true\n"
                                    "[shell.commands.protoc]\noperands = \"read\"\n")
                  .ok());
  // The predictor's operations, decided by the rules (kind unknown: the
  // redirection to docs/x.md stays an overwrite).
  ShellOptions options;
  options.root = "/workspace";
  auto p = predict_shell("cat vendor/a.c; echo x > vendor/a.c; echo y > docs/x.md; "
                         "sed -i s/a/b/ src/a.c; rm src/b.c",
                         options);
  ASSERT_TRUE(p.ok()) << p.status();
  auto checks = check_prediction(*p, rules);
  std::vector<std::pair<std::string, doc::PermissionDecision>> got;
  for (const auto& c : checks) {
    if (c.decision != doc::PermissionDecision::kAllowed) got.emplace_back(c.path, c.decision);
  }
  using D = doc::PermissionDecision;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], std::make_pair(std::string("vendor/a.c"), D::kDenied));
  EXPECT_EQ(got[1], std::make_pair(std::string("docs/x.md"), D::kNeedsApproval));
  EXPECT_EQ(got[2], std::make_pair(std::string("src/b.c"), D::kNeedsApproval));
  auto vendor = std::find_if(checks.begin(), checks.end(), [](const ShellOpCheck& c) {
    return c.path == "vendor/a.c" && c.decision != doc::PermissionDecision::kAllowed;
  });
  ASSERT_NE(vendor, checks.end());
  ShellViolation denied{"vendor/a.c", FileOp::kOverwrite, vendor->reason, false};
  EXPECT_NE(denied.rule.find("vendor/**"), std::string::npos) << denied.rule;
  EXPECT_NE(describe_violation(denied).find("is not allowed"), std::string::npos);
  EXPECT_NE(describe_violation({"docs/x.md", FileOp::kOverwrite, "rule 2", true}).find("approval"),
            std::string::npos);

  ShellChanges c;
  c.created = {"a.lock", "new.txt"};
  c.modified = {"src/a.c", "vendor/x"};
  c.deleted = {"weft.toml"};
  auto cv = check_changes(c, rules);
  std::vector<std::string> paths;
  for (const auto& x : cv) paths.push_back(x.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"a.lock", "vendor/x", "weft.toml"}));
}

TEST(ShellRules, ProtectedMeansNoInPlaceChange) {
  WorkspaceRules rules = rules_of(kRules);
  EXPECT_TRUE(is_protected(rules, "vendor/a.c"));
  EXPECT_TRUE(is_protected(rules, "docs/a.md"));
  EXPECT_TRUE(is_protected(rules, "x/y.lock"));
  EXPECT_TRUE(is_protected(rules, "weft.toml"));
  EXPECT_TRUE(is_protected(rules, ".weftignore"));
  EXPECT_FALSE(is_protected(rules, "src/a.c"));  // only delete is escalated: caught after
  EXPECT_FALSE(is_protected(rules, "README.md"));
}

class MetaIndexTest : public ::testing::Test {
 protected:
  std::string root() const { return dir_.path().string(); }
  weft::testing::TempDir dir_;
};

TEST_F(MetaIndexTest, UpdateReportsCreatedModifiedDeletedAndIgnoresTouches) {
  write_file(dir_.path() / "a.txt", "a");
  write_file(dir_.path() / "d/b.txt", "b");
  write_file(dir_.path() / "skip/c.txt", "c");
  FileMetaIndex index(root(), [](const std::string& p, bool) { return p == "skip"; });
  ASSERT_TRUE(index.build().ok());
  EXPECT_EQ(index.files().size(), 2u);
  write_file(dir_.path() / "a.txt", "changed");
  write_file(dir_.path() / "d/e/new.txt", "n");
  stdfs::remove(dir_.path() / "d/b.txt");
  write_file(dir_.path() / "skip/c.txt", "changed");
  ShellChanges c = index.update({"a.txt", "d"});
  EXPECT_EQ(c.modified, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(c.created, std::vector<std::string>{"d/e/new.txt"});
  EXPECT_EQ(c.deleted, std::vector<std::string>{"d/b.txt"});
  // Same bytes, new mtime: not a modification once the hash is known.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  write_file(dir_.path() / "a.txt", "changed");
  EXPECT_TRUE(index.update({"a.txt"}).empty());
  // A whole-tree update finds what no path named.
  write_file(dir_.path() / "z.txt", "z");
  EXPECT_EQ(index.update({"."}).created, std::vector<std::string>{"z.txt"});
  EXPECT_TRUE(index.update({"."}).empty());
}

TEST_F(MetaIndexTest, RefreshFollowsWatcherChanges) {
  write_file(dir_.path() / "d/a.txt", "a");
  FileMetaIndex index(root(), nullptr);
  ASSERT_TRUE(index.build().ok());
  stdfs::rename(dir_.path() / "d", dir_.path() / "e");
  index.refresh({FileChange{FileChange::Kind::kRenamed, "e", "d", true}});
  EXPECT_EQ(index.files().count("e/a.txt"), 1u);
  EXPECT_EQ(index.files().count("d/a.txt"), 0u);
  write_file(dir_.path() / "f.txt", "f");
  index.refresh({FileChange{FileChange::Kind::kRescan, "", "", false}});
  EXPECT_EQ(index.files().count("f.txt"), 1u);
}

TEST_F(MetaIndexTest, ProtectionBindsWholeDirectoriesFilesAndConfiguration) {
  write_file(dir_.path() / "vendor/lib/a.c", "a");
  write_file(dir_.path() / "docs/x.md", "x");
  write_file(dir_.path() / "src/Cargo.lock", "l");
  write_file(dir_.path() / "src/main.c", "m");
  write_file(dir_.path() / "weft.toml", std::string(kRules));
  FileMetaIndex index(root(), nullptr);
  ASSERT_TRUE(index.build().ok());
  WorkspaceRules rules = rules_of(kRules);
  Protection p = index.protection(rules);
  std::sort(p.read_only.begin(), p.read_only.end());
  // src/Cargo.lock: src/** (read_write) matches first, so it is not protected.
  EXPECT_EQ(p.read_only, (std::vector<std::string>{"docs", "vendor", "weft.toml"}));
  // **/*.lock: new files anywhere can only be caught after; .weftignore does not exist.
  std::string all;
  for (const auto& n : p.not_protected) all += n + "\n";
  EXPECT_NE(all.find("**/*.lock"), std::string::npos) << all;
  EXPECT_NE(all.find(".weftignore"), std::string::npos) << all;
  EXPECT_EQ(all.find("vendor"), std::string::npos) << all;

  // An earlier writable rule inside vendor/: files are bound one by one.
  WorkspaceRules carved = rules_of(R"([permissions]
rules = [
  { glob = "vendor/lib/ok.c", level = "read_write" },
  { glob = "vendor/**", level = "read_only" },
]
)");
  write_file(dir_.path() / "vendor/lib/ok.c", "ok");
  index.refresh({FileChange{FileChange::Kind::kCreated, "vendor/lib/ok.c", "", false}});
  Protection q = index.protection(carved);
  std::sort(q.read_only.begin(), q.read_only.end());
  EXPECT_EQ(q.read_only, (std::vector<std::string>{"vendor/lib/a.c", "weft.toml"}));
  ASSERT_FALSE(q.not_protected.empty());
  EXPECT_NE(q.not_protected[0].find("vendor/**"), std::string::npos);
}

}  // namespace
}  // namespace weft::source
