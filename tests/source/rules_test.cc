#include "weft/source/rules.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_support.h"

namespace weft::source {
namespace {

using weft::testing::write_file;

using doc::MemoryPermission;
using doc::PermissionDecision;
constexpr auto kAllowed = PermissionDecision::kAllowed;
constexpr auto kNeedsApproval = PermissionDecision::kNeedsApproval;
constexpr auto kDenied = PermissionDecision::kDenied;

// The example of include/weft/source/rules.h.
constexpr std::string_view kExample = R"(# weft.toml
[permissions]
default = "read_write"   # read_only | human | partner | append | read_write | admin
rules = [
  { glob = "vendor/**", level = "read_only" },
  { glob = "docs/**",   level = "human", escalate = ["delete", "overwrite"] },
]
)";

WorkspaceRules parsed(std::string_view text) {
  Result<WorkspaceRules> rules = WorkspaceRules::parse(text);
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? std::move(rules).value() : WorkspaceRules();
}

// The error message of parsing `text`, which must fail with kInvalidArgument.
std::string error_of(std::string_view text) {
  Result<WorkspaceRules> rules = WorkspaceRules::parse(text);
  EXPECT_FALSE(rules.ok()) << "parsed: " << text;
  if (rules.ok()) return "";
  EXPECT_EQ(rules.status().code(), StatusCode::kInvalidArgument) << rules.status();
  return std::string(rules.status().message());
}

TEST(FileOpTest, NamesRoundTrip) {
  for (FileOp op : {FileOp::kRead, FileOp::kCreate, FileOp::kAppend, FileOp::kOverwrite,
                    FileOp::kDelete, FileOp::kMove}) {
    Result<FileOp> back = parse_file_op(file_op_name(op));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, op);
  }
  Result<FileOp> bad = parse_file_op("remove");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("read, create, append, overwrite, delete, move"),
            std::string_view::npos)
      << bad.status();
}

TEST(WorkspaceRulesTest, DefaultsWithoutConfiguration) {
  WorkspaceRules rules;
  EXPECT_EQ(rules.default_level(), MemoryPermission::kReadWrite);
  EXPECT_TRUE(rules.rules().empty());
  EXPECT_EQ(rules.permission_for("a/b.txt"), MemoryPermission::kReadWrite);
  RuleDecision d = rules.decide("a/b.txt", FileOp::kOverwrite);
  EXPECT_EQ(d.decision, kAllowed);
  EXPECT_EQ(d.reason, "default");
  // A file delete is an overwrite: allowed under read_write.
  EXPECT_EQ(rules.decide("a/b.txt", FileOp::kDelete).decision, kAllowed);
  EXPECT_EQ(rules.decide("a/b.txt", FileOp::kMove).decision, kAllowed);
  EXPECT_EQ(rules.decide("new.txt", FileOp::kCreate).decision, kAllowed);
}

TEST(WorkspaceRulesTest, EmptyOrForeignTomlGivesDefaults) {
  for (std::string_view text : {"", "# only a comment\n", "[tool]\nname = 1\n[other.deep]\nx=[1]\n"}) {
    WorkspaceRules rules = parsed(text);
    EXPECT_EQ(rules.default_level(), MemoryPermission::kReadWrite) << text;
    EXPECT_TRUE(rules.rules().empty()) << text;
  }
  WorkspaceRules only_default = parsed("[permissions]\ndefault = \"append\"\n");
  EXPECT_EQ(only_default.default_level(), MemoryPermission::kAppend);
  EXPECT_EQ(only_default.decide("x", FileOp::kOverwrite).decision, kDenied);
}

TEST(WorkspaceRulesTest, HeaderExample) {
  WorkspaceRules rules = parsed(kExample);
  ASSERT_EQ(rules.rules().size(), 2u);
  EXPECT_EQ(rules.rules()[0].glob, "vendor/**");
  EXPECT_EQ(rules.rules()[0].level, MemoryPermission::kReadOnly);
  EXPECT_EQ(rules.rules()[0].line, 5);
  EXPECT_TRUE(rules.rules()[0].escalate.empty());
  EXPECT_EQ(rules.rules()[1].level, MemoryPermission::kHuman);
  EXPECT_EQ(rules.rules()[1].line, 6);
  EXPECT_EQ(rules.rules()[1].escalate, (std::vector<FileOp>{FileOp::kDelete, FileOp::kOverwrite}));

  EXPECT_EQ(rules.permission_for("vendor/lib/x.c"), MemoryPermission::kReadOnly);
  EXPECT_EQ(rules.permission_for("docs/a.md"), MemoryPermission::kHuman);
  EXPECT_EQ(rules.permission_for("src/main.cc"), MemoryPermission::kReadWrite);

  RuleDecision read = rules.decide("vendor/lib/x.c", FileOp::kRead);
  EXPECT_EQ(read.decision, kAllowed);
  EXPECT_EQ(read.reason, "rule 1 (glob \"vendor/**\", line 5)");
  RuleDecision write = rules.decide("vendor/lib/x.c", FileOp::kAppend);
  EXPECT_EQ(write.decision, kDenied);
  EXPECT_EQ(write.level, MemoryPermission::kReadOnly);
  RuleDecision doc = rules.decide("docs/guide/a.md", FileOp::kOverwrite);
  EXPECT_EQ(doc.decision, kNeedsApproval);
  EXPECT_EQ(doc.reason, "rule 2 (glob \"docs/**\", line 6)");
  EXPECT_EQ(rules.decide("docs/a.md", FileOp::kCreate).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("src/main.cc", FileOp::kDelete).decision, kAllowed);
  EXPECT_EQ(rules.decide("src/main.cc", FileOp::kDelete).reason, "default");
}

TEST(WorkspaceRulesTest, ArrayOfTablesSyntax) {
  WorkspaceRules rules = parsed(R"([permissions]
default = "read_only"

[[permissions.rules]]
glob = "notes/*.md"
level = "append"

[[permissions.rules]]
glob = "src/**"
level = "admin"
)");
  ASSERT_EQ(rules.rules().size(), 2u);
  EXPECT_EQ(rules.rules()[0].line, 4);
  EXPECT_EQ(rules.permission_for("notes/a.md"), MemoryPermission::kAppend);
  EXPECT_EQ(rules.permission_for("notes/sub/a.md"), MemoryPermission::kReadOnly);
  EXPECT_EQ(rules.permission_for("src/x/y.cc"), MemoryPermission::kAdmin);
  EXPECT_EQ(rules.permission_for("README"), MemoryPermission::kReadOnly);
}

TEST(WorkspaceRulesTest, FirstMatchWins) {
  WorkspaceRules rules = parsed(R"([permissions]
rules = [
  { glob = "docs/public/**", level = "admin" },
  { glob = "docs/**", level = "read_only" },
  { glob = "docs/public/x.md", level = "append" },
]
)");
  EXPECT_EQ(rules.permission_for("docs/public/x.md"), MemoryPermission::kAdmin);
  EXPECT_EQ(rules.permission_for("docs/private/x.md"), MemoryPermission::kReadOnly);
  EXPECT_EQ(rules.decide("docs/public/x.md", FileOp::kRead).reason,
            "rule 1 (glob \"docs/public/**\", line 3)");
}

TEST(WorkspaceRulesTest, LevelAliasesFromDoc) {
  WorkspaceRules rules = parsed("[permissions]\ndefault = \"Read-Only\"\n");
  EXPECT_EQ(rules.default_level(), MemoryPermission::kReadOnly);
}

TEST(WorkspaceRulesTest, TableOfLevelsAndOperations) {
  struct Row {
    std::string_view level;
    PermissionDecision read, create, append, overwrite, del;
  };
  const Row rows[] = {
      {"read_only", kAllowed, kDenied, kDenied, kDenied, kDenied},
      {"partner", kAllowed, kNeedsApproval, kNeedsApproval, kNeedsApproval, kNeedsApproval},
      {"human", kAllowed, kNeedsApproval, kNeedsApproval, kNeedsApproval, kNeedsApproval},
      {"append", kAllowed, kAllowed, kAllowed, kDenied, kDenied},
      // delete of a file = overwrite, so read_write may delete (a block delete may not).
      {"read_write", kAllowed, kAllowed, kAllowed, kAllowed, kAllowed},
      {"admin", kAllowed, kAllowed, kAllowed, kAllowed, kAllowed},
  };
  for (const Row& row : rows) {
    WorkspaceRules rules =
        parsed("[permissions]\ndefault = \"" + std::string(row.level) + "\"\n");
    SCOPED_TRACE(row.level);
    EXPECT_EQ(rules.decide("f", FileOp::kRead).decision, row.read);
    EXPECT_EQ(rules.decide("f", FileOp::kCreate).decision, row.create);
    EXPECT_EQ(rules.decide("f", FileOp::kAppend).decision, row.append);
    EXPECT_EQ(rules.decide("f", FileOp::kOverwrite).decision, row.overwrite);
    EXPECT_EQ(rules.decide("f", FileOp::kDelete).decision, row.del);
    EXPECT_EQ(rules.decide("f", FileOp::kMove).decision, row.del);
  }
}

TEST(WorkspaceRulesTest, EscalateTurnsAllowedIntoNeedsApproval) {
  WorkspaceRules rules = parsed(R"([permissions]
rules = [
  { glob = "a/**", level = "read_write", escalate = ["delete"] },
  { glob = "b/**", level = "read_write", escalate = ["overwrite"] },
  { glob = "c/**", level = "append", escalate = ["overwrite", "create"] },
  { glob = "d/**", level = "admin", escalate = ["move", "read"] },
  { glob = "e/**", level = "read_only", escalate = ["append", "append"] },
]
)");
  // delete escalated: delete (and move, a delete at the source) need approval;
  // overwrite does not.
  EXPECT_EQ(rules.decide("a/f", FileOp::kDelete).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("a/f", FileOp::kMove).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("a/f", FileOp::kOverwrite).decision, kAllowed);
  EXPECT_EQ(rules.decide("a/f", FileOp::kAppend).decision, kAllowed);
  // overwrite escalated: a delete, being an overwrite, needs approval too.
  EXPECT_EQ(rules.decide("b/f", FileOp::kOverwrite).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("b/f", FileOp::kDelete).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("b/f", FileOp::kAppend).decision, kAllowed);
  // a denial stays a denial.
  EXPECT_EQ(rules.decide("c/f", FileOp::kOverwrite).decision, kDenied);
  EXPECT_EQ(rules.decide("c/f", FileOp::kCreate).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("c/f", FileOp::kAppend).decision, kAllowed);
  EXPECT_EQ(rules.decide("d/f", FileOp::kMove).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("d/f", FileOp::kDelete).decision, kAllowed);
  EXPECT_EQ(rules.decide("d/f", FileOp::kRead).decision, kNeedsApproval);
  EXPECT_EQ(rules.decide("e/f", FileOp::kAppend).decision, kDenied);
  EXPECT_EQ(rules.rules()[4].escalate.size(), 1u);  // duplicates dropped
}

// Escalation only ever turns Allowed into NeedsApproval: adding an escalate
// list never allows more and never denies what was allowed.
RC_GTEST_PROP(WorkspaceRulesProperty, EscalateOnlyAsksForApproval, ()) {
  const std::vector<std::string> levels = {"read_only", "partner",    "human",
                                           "append",    "read_write", "admin"};
  const std::vector<std::string> ops = {"read", "create", "append", "overwrite", "delete", "move"};
  std::string level = *rc::gen::elementOf(levels);
  auto escalate = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(ops));
  std::string list;
  for (const std::string& op : escalate) list += (list.empty() ? "\"" : ", \"") + std::string(op) + "\"";
  std::string base = "[permissions]\nrules = [{ glob = \"**\", level = \"" + level + "\"";
  Result<WorkspaceRules> plain = WorkspaceRules::parse(base + " }]\n");
  Result<WorkspaceRules> escalated =
      WorkspaceRules::parse(base + ", escalate = [" + list + "] }]\n");
  RC_ASSERT(plain.ok());
  RC_ASSERT(escalated.ok());
  for (FileOp op : {FileOp::kRead, FileOp::kCreate, FileOp::kAppend, FileOp::kOverwrite,
                    FileOp::kDelete, FileOp::kMove}) {
    PermissionDecision before = plain->decide("f", op).decision;
    PermissionDecision after = escalated->decide("f", op).decision;
    if (before == after) continue;
    RC_ASSERT(before == kAllowed);
    RC_ASSERT(after == kNeedsApproval);
  }
}

TEST(WorkspaceRulesTest, MoveIsTheStricterOfSourceAndTarget) {
  WorkspaceRules rules = parsed(R"([permissions]
rules = [
  { glob = "ro/**", level = "read_only" },
  { glob = "ask/**", level = "human" },
  { glob = "in/**", level = "read_write", escalate = ["move"] },
]
)");
  EXPECT_EQ(rules.decide_move("a.txt", "b.txt").decision, kAllowed);
  RuleDecision from_ro = rules.decide_move("ro/a.txt", "b.txt");
  EXPECT_EQ(from_ro.decision, kDenied);
  EXPECT_EQ(from_ro.reason, "rule 1 (glob \"ro/**\", line 3)");
  RuleDecision to_ro = rules.decide_move("a.txt", "ro/a.txt");
  EXPECT_EQ(to_ro.decision, kDenied);
  EXPECT_EQ(to_ro.level, MemoryPermission::kReadOnly);
  EXPECT_EQ(rules.decide_move("a.txt", "ask/a.txt").decision, kNeedsApproval);
  EXPECT_EQ(rules.decide_move("ask/a.txt", "ro/a.txt").decision, kDenied);
  EXPECT_EQ(rules.decide_move("a.txt", "in/a.txt").decision, kNeedsApproval);
  EXPECT_EQ(rules.decide_move("a.txt", "weft.toml").reason, "weft's own configuration");
  EXPECT_EQ(rules.decide_move("weft.toml", "a.toml").decision, kDenied);
}

TEST(WorkspaceRulesTest, ConfigurationPathsAreNeverChanged) {
  EXPECT_TRUE(is_configuration_path("weft.toml"));
  EXPECT_TRUE(is_configuration_path(".weftignore"));
  EXPECT_FALSE(is_configuration_path("sub/weft.toml"));
  EXPECT_FALSE(is_configuration_path("sub/.weftignore"));
  EXPECT_FALSE(is_configuration_path(".gitignore"));
  EXPECT_FALSE(is_configuration_path("weft.toml.bak"));

  WorkspaceRules rules = parsed("[permissions]\ndefault = \"admin\"\n");
  for (std::string_view path : {"weft.toml", ".weftignore"}) {
    for (FileOp op : {FileOp::kCreate, FileOp::kAppend, FileOp::kOverwrite, FileOp::kDelete,
                      FileOp::kMove}) {
      RuleDecision d = rules.decide(path, op);
      EXPECT_EQ(d.decision, kDenied) << path << " " << file_op_name(op);
      EXPECT_EQ(d.reason, "weft's own configuration");
    }
    RuleDecision read = rules.decide(path, FileOp::kRead);
    EXPECT_EQ(read.decision, kAllowed);
    EXPECT_EQ(read.reason, "default");
  }
  // A file of that name elsewhere follows the rules.
  EXPECT_EQ(rules.decide("sub/weft.toml", FileOp::kDelete).decision, kAllowed);
}

TEST(WorkspaceRulesErrorsTest, UnknownLevelNamesTheLine) {
  std::string msg = error_of(R"([permissions]
default = "read_write"
rules = [
  { glob = "vendor/**", level = "read_only" },


  { glob = "docs/**", level = "reed_only" },
]
)");
  EXPECT_EQ(msg, "weft.toml:7: unknown level \"reed_only\"; use one of read_only, human, "
                 "partner, append, read_write, admin");
  EXPECT_EQ(error_of("[permissions]\ndefault = \"all\"\n"),
            "weft.toml:2: unknown level \"all\"; use one of read_only, human, partner, append, "
            "read_write, admin");
}

TEST(WorkspaceRulesErrorsTest, SyntaxErrorNamesTheLine) {
  std::string msg = error_of("[permissions]\ndefault = \"admin\"\nrules = [ { glob = \"a\" \n");
  EXPECT_EQ(msg.rfind("weft.toml:3: invalid TOML", 0), 0u) << msg;
  EXPECT_NE(msg.find("must fit on one line"), std::string::npos) << msg;
  msg = error_of("\n\n\n\n[permissions\n");
  EXPECT_EQ(msg.rfind("weft.toml:5: invalid TOML", 0), 0u) << msg;
  msg = error_of("[permissions]\ndefault = \"admin\"\ndefault = \"append\"\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: invalid TOML", 0), 0u) << msg;
  msg = error_of("a = \"\xff\"\n");  // not UTF-8
  EXPECT_EQ(msg.rfind("weft.toml:1: invalid TOML", 0), 0u) << msg;
}

TEST(WorkspaceRulesErrorsTest, SourceNameReplacesWeftToml) {
  Result<WorkspaceRules> r =
      WorkspaceRules::parse("[permissions]\nlevel = 1\n", "/w/project/weft.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("/w/project/weft.toml:2: unknown key \"level\"", 0), 0u)
      << r.status();
}

TEST(WorkspaceRulesErrorsTest, UnknownKeys) {
  EXPECT_EQ(error_of("[permissions]\ndefault = \"admin\"\ndefualt = \"admin\"\n"),
            "weft.toml:3: unknown key \"defualt\" in [permissions]; use default or rules");
  EXPECT_EQ(error_of("[permissions]\nrules = [\n  { glob = \"a\", levle = \"admin\" },\n]\n"),
            "weft.toml:3: rule 1: unknown key \"levle\"; a rule has glob, level and escalate");
  EXPECT_EQ(error_of("[permissions.extra]\nx = 1\n"),
            "weft.toml:1: unknown key \"extra\" in [permissions]; use default or rules");
}

TEST(WorkspaceRulesErrorsTest, MissingGlobOrLevel) {
  EXPECT_EQ(error_of("[permissions]\nrules = [\n  { glob = \"a\", level = \"admin\" },\n"
                     "  { level = \"admin\" },\n]\n"),
            "weft.toml:4: rule 2 has no \"glob\"; add glob = \"PATTERN\"");
  std::string msg = error_of("[permissions]\n\n[[permissions.rules]]\nglob = \"a/**\"\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: rule 1 has no \"level\"", 0), 0u) << msg;
  EXPECT_NE(msg.find("read_only, human, partner, append, read_write, admin"), std::string::npos);
}

TEST(WorkspaceRulesErrorsTest, WrongTypes) {
  std::string msg = error_of("[permissions]\ndefault = 3\n");
  EXPECT_EQ(msg.rfind("weft.toml:2: \"default\" must be a string", 0), 0u) << msg;
  EXPECT_NE(msg.find("not an integer"), std::string::npos) << msg;
  msg = error_of("permissions = \"admin\"\n");
  EXPECT_EQ(msg.rfind("weft.toml:1: \"permissions\" must be a table", 0), 0u) << msg;
  msg = error_of("[permissions]\nrules = { glob = \"a\", level = \"admin\" }\n");
  EXPECT_EQ(msg.rfind("weft.toml:2: \"rules\" must be an array of tables", 0), 0u) << msg;
  msg = error_of("[permissions]\nrules = [\n  \"vendor/**\",\n]\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: rule 1 must be a table", 0), 0u) << msg;
  msg = error_of("[permissions]\nrules = [\n  { glob = 5, level = \"admin\" },\n]\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: rule 1: \"glob\" must be a string", 0), 0u) << msg;
  msg = error_of("[permissions]\nrules = [\n  { glob = \"a\", level = true },\n]\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: \"level\" must be a string", 0), 0u) << msg;
  EXPECT_NE(msg.find("not a boolean"), std::string::npos) << msg;
  msg = error_of(
      "[permissions]\nrules = [\n  { glob = \"a\", level = \"admin\", escalate = \"delete\" },\n]\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: \"escalate\" must be an array", 0), 0u) << msg;
  msg = error_of(
      "[permissions]\n[[permissions.rules]]\nglob = \"a\"\nlevel = \"admin\"\nescalate = [1]\n");
  EXPECT_EQ(msg.rfind("weft.toml:5: \"escalate\" lists operation names", 0), 0u) << msg;
}

TEST(WorkspaceRulesErrorsTest, BadGlob) {
  std::string msg = error_of("[permissions]\nrules = [\n  { glob = \"src/[ab\", level = \"admin\" },\n]\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: rule 1: bad glob \"src/[ab\": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("unclosed '['"), std::string::npos) << msg;
  msg = error_of("[permissions]\nrules = [\n  { glob = \"\", level = \"admin\" },\n]\n");
  EXPECT_EQ(msg.rfind("weft.toml:3: rule 1: bad glob \"\": ", 0), 0u) << msg;
}

TEST(WorkspaceRulesErrorsTest, UnknownEscalateOp) {
  EXPECT_EQ(error_of("[permissions]\n[[permissions.rules]]\nglob = \"a\"\nlevel = \"admin\"\n"
                     "escalate = [\"delete\",\n            \"remove\"]\n"),
            "weft.toml:6: unknown escalate op \"remove\"; use one of read, create, append, "
            "overwrite, delete, move");
}

TEST(WorkspaceRulesErrorsTest, OverOneMebibyteIsRefusedBeforeParsing) {
  // Not valid TOML either: the size check must come first.
  std::string big(size_t{1} << 20, '[');
  big += "x";
  Result<WorkspaceRules> r = WorkspaceRules::parse(big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("1 MiB"), std::string_view::npos) << r.status();
  EXPECT_EQ(r.status().message().find("invalid TOML"), std::string_view::npos) << r.status();
  // Exactly 1 MiB is accepted.
  std::string ok = "[permissions]\ndefault = \"admin\"\n";
  ok.append((size_t{1} << 20) - ok.size(), '\n');
  EXPECT_TRUE(WorkspaceRules::parse(ok).ok());
}

TEST(WorkspaceRulesErrorsTest, DeepNestingDoesNotCrash) {
  std::string deep = "x = " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  Result<WorkspaceRules> r = WorkspaceRules::parse(deep);
  // toml++ caps nesting; either way no crash and no exception.
  if (!r.ok()) {
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(WorkspaceRulesLoadTest, MissingFileGivesDefaults) {
  weft::testing::TempDir dir;
  Result<WorkspaceRules> rules = WorkspaceRules::load(dir.path().string());
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_TRUE(rules->rules().empty());
  EXPECT_EQ(rules->default_level(), MemoryPermission::kReadWrite);
  // A root that does not exist is no configuration either.
  EXPECT_TRUE(WorkspaceRules::load((dir.path() / "absent").string()).ok());
}

TEST(WorkspaceRulesLoadTest, ReadsTheFile) {
  weft::testing::TempDir dir;
  write_file(dir.path() / "weft.toml", kExample);
  Result<WorkspaceRules> rules = WorkspaceRules::load(dir.path().string());
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_EQ(rules->rules().size(), 2u);
  write_file(dir.path() / "weft.toml", "[permissions]\ndefault = \"nope\"\n");
  rules = WorkspaceRules::load(dir.path().string());
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().message().rfind("weft.toml:2: unknown level", 0), 0u)
      << rules.status();
}

TEST(WorkspaceRulesLoadTest, NotARegularFileIsUnavailable) {
  weft::testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "weft.toml");
  Result<WorkspaceRules> rules = WorkspaceRules::load(dir.path().string());
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kUnavailable) << rules.status();
  std::filesystem::remove(dir.path() / "weft.toml");
  // A FIFO must not block the load.
  ASSERT_EQ(::mkfifo((dir.path() / "weft.toml").c_str(), 0600), 0);
  rules = WorkspaceRules::load(dir.path().string());
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kUnavailable) << rules.status();
}

TEST(WorkspaceRulesLoadTest, UnreadableIsUnavailable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  weft::testing::TempDir dir;
  write_file(dir.path() / "weft.toml", kExample);
  ::chmod((dir.path() / "weft.toml").c_str(), 0);
  Result<WorkspaceRules> rules = WorkspaceRules::load(dir.path().string());
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kUnavailable) << rules.status();
}

TEST(WorkspaceRulesLoadTest, TooLargeIsInvalidArgument) {
  weft::testing::TempDir dir;
  write_file(dir.path() / "weft.toml", std::string((size_t{1} << 20) + 1, '\n'));
  Result<WorkspaceRules> rules = WorkspaceRules::load(dir.path().string());
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kInvalidArgument) << rules.status();
  EXPECT_NE(rules.status().message().find("1 MiB"), std::string_view::npos) << rules.status();
}

}  // namespace
}  // namespace weft::source
