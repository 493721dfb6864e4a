// shell_exec with its hooks, through the workspace server (--sandbox, with
// the kernel): a protected file attacked by 20 routes at each enforcement
// level (the sandbox alone, and with the predictor), the result's fields,
// the pre-hook on real commands (refusals, approvals, unpredictable
// constructs, warnings), bad command lines, attribution in fs_history and
// fs_undo, and the limits.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "weft/fs/sandbox.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace stdfs = std::filesystem;
using source::Enforcement;

constexpr std::string_view kRules = R"([permissions]
rules = [
  { glob = "vendor/**", level = "read_only" },
  { glob = "docs/**",   level = "human" },
  { glob = "**/*.lock", level = "read_only" },
]
)";
constexpr std::string_view kOriginal = "original\n";

bool have(const char* tool) {
  return std::system(("command -v " + std::string(tool) + " >/dev/null 2>&1").c_str()) == 0;
}

// The routes by which a command can change the protected file P (each also
// run against a file under a whole protected directory and a file bound on
// its own). "%P" is replaced by the path.
std::vector<std::pair<std::string, std::string>> attack_routes() {
  std::vector<std::pair<std::string, std::string>> r = {
      {"redirection", "echo evil > %P"},
      {"sed -i", "sed -i s/original/evil/ %P"},
      {"cp over", "echo evil > /tmp/e; cp /tmp/e %P"},
      {"mv onto", "echo evil > e.tmp; mv -f e.tmp %P"},
      {"ln -sf", "echo evil > e.tmp; ln -sf \"$PWD/e.tmp\" %P"},
      {"python3", "python3 -c \"open('%P','w').write('evil')\""},
      {"dd", "echo evil | dd of=%P 2>/dev/null"},
      {"tee", "echo evil | tee %P"},
      {"find -exec", "find . -path ./%P -exec sh -c 'echo evil > \"$1\"' _ {} \\;"},
      {"script file", "printf 'echo evil > %P\\n' > s.sh; sh s.sh"},
      {"truncate", "truncate -s 0 %P"},
      {"chmod+write", "chmod 666 %P; echo evil > %P"},
      {"rm+recreate", "rm -f %P; echo evil > %P"},
      {"install", "echo evil > e.tmp; install -m 644 e.tmp %P"},
      {"cat >>", "echo evil | cat >> %P"},
      {"printf >", "printf evil > %P"},
      {"hard link", "ln %P h.tmp && echo evil > h.tmp"},
      {"exec 3>", "exec 3> %P; echo evil >&3"},
  };
  if (have("perl")) r.push_back({"perl -i", "perl -pi -e s/original/evil/ %P"});
  if (have("gawk")) r.push_back({"awk -i inplace", "gawk -i inplace '{print \"evil\"}' %P"});
  if (have("rsync")) r.push_back({"rsync", "echo evil > e.tmp; rsync e.tmp %P"});
  if (r.size() < 20) r.push_back({"mv away", "mv %P moved.tmp"});
  if (r.size() < 20) r.push_back({"rm", "rm -f %P"});
  return r;
}

// A predictor that predicts nothing: the sandbox and the post-hook alone.
Result<source::ShellPrediction> nothing_predicted(std::string_view, const source::ShellOptions&) {
  return source::ShellPrediction{};
}

std::string replace_p(std::string command, const std::string& path) {
  for (size_t at = command.find("%P"); at != std::string::npos; at = command.find("%P", at)) {
    command.replace(at, 2, path);
    at += path.size();
  }
  return command;
}

class ShellExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status avail = fs::sandbox_available();
    if (!avail.ok()) GTEST_SKIP() << "bubblewrap unavailable here: " << avail;
    stdfs::create_directories(ws());
  }
  stdfs::path ws() const { return tmp_.path() / "ws"; }
  void write(const std::string& rel, std::string_view text) {
    stdfs::create_directories((ws() / rel).parent_path());
    std::ofstream(ws() / rel, std::ios::binary | std::ios::trunc) << text;
  }
  std::string read(const std::string& rel) {
    std::error_code ec;
    if (!stdfs::is_regular_file(stdfs::symlink_status(ws() / rel, ec))) return "<not a file>";
    return weft::testing::read_file(ws() / rel);
  }
  void build(std::optional<Enforcement> level, source::ShellPredictor predictor = nullptr) {
    built_ = WorkspaceServer();
    WorkspaceServerOptions options;
    options.root = ws().string();
    options.sandbox = true;
    options.state_dir = (tmp_.path() / "state").string();
    options.shell_enforcement = level;
    options.shell_predictor = std::move(predictor);
    auto built = make_workspace_server(options);
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
  }
  Json call(const std::string& tool, const Json& args) {
    const ToolSpec* spec = built_.tools->find(tool);
    EXPECT_NE(spec, nullptr) << tool;
    if (!spec) return Json();
    ToolContext ctx(built_.workspace.get(), {}, nullptr, nullptr,
                    [this](LogLevel, const std::string& line) { logged_.push_back(line); });
    ctx.set_client_name("claude");
    return built_.tools->call(*spec, args, ctx);
  }
  Json shell(const std::string& command) { return call("shell_exec", {{"command", command}}); }
  // An attack route, after clearing what earlier routes left.
  Json attack(const std::string& route, const std::string& target) {
    return shell("rm -f e.tmp h.tmp s.sh moved.tmp; " + replace_p(route, target));
  }
  static bool failed(const Json& result) { return result.value("isError", false); }
  static std::string text(const Json& result) {
    return result["content"][0].value("text", std::string());
  }

  weft::testing::TempDir tmp_;
  WorkspaceServer built_;
  std::vector<std::string> logged_;
};

TEST_F(ShellExecTest, ResultCarriesOutputChangesAndLimits) {
  write("a.txt", "a\n");
  write("gone.txt", "g\n");
  build(Enforcement::kWarned);
  Json r = call("shell_exec", {{"command", "echo out; echo err >&2; echo more >> a.txt; "
                                           "echo n > new.txt; rm gone.txt; head -c 5000 "
                                           "/dev/zero | tr '\\0' y; exit 3"},
                               {"max_output_bytes", 100}});
  ASSERT_FALSE(failed(r)) << r.dump();
  const Json& s = r["structuredContent"];
  EXPECT_EQ(s["exit_code"], 3);
  EXPECT_EQ(s["stderr"], "err\n");
  EXPECT_EQ(s["stdout_bytes"], 5004);
  EXPECT_EQ(s["stdout"].get<std::string>().size(), 100u);
  EXPECT_TRUE(s["truncated"].get<bool>());
  EXPECT_FALSE(s["timed_out"].get<bool>());
  EXPECT_EQ(s["created"], Json::array({"new.txt"}));
  EXPECT_EQ(s["modified"], Json::array({"a.txt"}));
  EXPECT_EQ(s["deleted"], Json::array({"gone.txt"}));
  EXPECT_EQ(s["violations"], Json::array());
  EXPECT_EQ(s["enforcement"], "warned");

  Json t = call("shell_exec", {{"command", "sleep 20"}, {"timeout_ms", 300}});
  EXPECT_TRUE(t["structuredContent"]["timed_out"].get<bool>());
}

TEST_F(ShellExecTest, ChangesAreTheShellsInHistoryAndTheAgentCanUndoThem) {
  write("a.txt", "one\n");
  build(Enforcement::kStrict);
  ASSERT_FALSE(failed(call("fs_read", {{"path", "a.txt"}})));
  Json r = shell("sed -i s/one/two/ a.txt; echo fresh > b.txt");
  ASSERT_FALSE(failed(r)) << r.dump();
  Json h = call("fs_history", {{"path", "a.txt"}});
  ASSERT_FALSE(failed(h)) << h.dump();
  EXPECT_NE(h.dump().find("shell:claude"), std::string::npos) << h.dump();
  EXPECT_NE(h.dump().find("sed -i s/one/two/ a.txt"), std::string::npos) << h.dump();
  EXPECT_NE(call("fs_history", {{"path", "b.txt"}}).dump().find("shell:claude"),
            std::string::npos);
  Json u = call("fs_undo", {{"path", "a.txt"}});
  ASSERT_FALSE(failed(u)) << u.dump();
  EXPECT_EQ(read("a.txt"), "one\n");
}

TEST_F(ShellExecTest, BadCommandLinesRunNothing) {
  build(Enforcement::kStrict);
  for (std::string bad : {std::string("touch ran1; echo 'open"),
                          std::string("touch ran2\0x", 12), std::string("touch ran3 \\"),
                          "touch ran4; " + std::string(1 << 20, 'x')}) {
    Json r = shell(bad);
    EXPECT_TRUE(failed(r)) << r.dump().substr(0, 200);
  }
  for (const char* f : {"ran1", "ran2", "ran3", "ran4"}) EXPECT_FALSE(stdfs::exists(ws() / f));
}

// A git repository on branch `work` whose vendor/a differs from main's.
bool make_repo(const stdfs::path& ws) {
  std::string at = "cd '" + ws.string() + "' && ";
  return std::system((at + "git init -q -b main . && git add -A && "
                      "git -c user.name=t -c user.email=t@t commit -qm init && "
                      "git checkout -q -b work && echo work > vendor/a && "
                      "git -c user.name=t -c user.email=t@t commit -qam work")
                         .c_str()) == 0;
}

TEST_F(ShellExecTest, PredictedViolationIsRefusedUnderStrictAndWarnedOtherwise) {
  write("weft.toml", kRules);
  write("vendor/a", kOriginal);
  build(Enforcement::kStrict);
  Json r = shell("touch ran; echo x > vendor/a");
  ASSERT_TRUE(failed(r)) << r.dump();
  EXPECT_NE(r["structuredContent"]["refused"].get<std::string>().find("vendor/**"),
            std::string::npos)
      << r.dump();
  EXPECT_NE(text(r).find("overwrite of 'vendor/a'"), std::string::npos) << r.dump();
  EXPECT_EQ(r["structuredContent"]["violations"][0]["path"], "vendor/a");
  EXPECT_EQ(r["structuredContent"]["violations"][0]["operation"], "overwrite");
  EXPECT_FALSE(stdfs::exists(ws() / "ran"));  // nothing was run
  EXPECT_EQ(read("vendor/a"), kOriginal);

  Json c = shell("cat vendor/a");
  ASSERT_FALSE(failed(c)) << c.dump();
  EXPECT_EQ(c["structuredContent"]["stdout"], kOriginal);
  EXPECT_FALSE(c["structuredContent"].contains("unpredictable")) << c.dump();

  // Unpredictable: it runs, listed; the sandbox holds the file.
  Json py = shell("python3 -c \"open('vendor/a','w')\"");
  ASSERT_FALSE(failed(py)) << py.dump();
  const Json& ps = py["structuredContent"];
  ASSERT_EQ(ps["unpredictable"].size(), 1u) << py.dump();
  EXPECT_EQ(ps["unpredictable"][0]["construct"], "inline_interpreter");
  EXPECT_FALSE(ps["unpredictable"][0]["text"].get<std::string>().empty());
  EXPECT_NE(ps["exit_code"], 0);
  EXPECT_NE(ps["stderr"].get<std::string>().find("Read-only file system"), std::string::npos)
      << py.dump();
  EXPECT_EQ(read("vendor/a"), kOriginal);

  // A tree operation reaching a read-only rule: a person decides.
  Json g = shell("git checkout main");
  ASSERT_FALSE(failed(g)) << g.dump();
  EXPECT_FALSE(g["structuredContent"].value("pending_approval", std::string()).empty())
      << g.dump();
  EXPECT_NE(g["structuredContent"]["violations"].dump().find("vendor/**"), std::string::npos)
      << g.dump();

  // A parse error is unpredictable, not a refusal: sh decides.
  Json bad = shell("echo ok; case x in");
  ASSERT_FALSE(failed(bad)) << bad.dump();
  EXPECT_EQ(bad["structuredContent"]["unpredictable"][0]["construct"], "parse_error") << bad.dump();
  EXPECT_NE(bad["structuredContent"]["unpredictable"][0]["text"].get<std::string>().find(
                "could not parse: "),
            std::string::npos);

  // Warned: the same commands run and report.
  const bool git = have("git") && make_repo(ws());
  build(Enforcement::kWarned);
  Json w = shell("touch ran; echo x > vendor/a");
  ASSERT_FALSE(failed(w)) << w.dump();
  EXPECT_NE(w["structuredContent"]["warnings"].dump().find("vendor/a"), std::string::npos);
  EXPECT_TRUE(stdfs::exists(ws() / "ran"));
  EXPECT_EQ(read("vendor/a"), "x\n");
  EXPECT_EQ(w["structuredContent"]["violations"][0]["path"], "vendor/a");
  EXPECT_NE(text(w).find("warning: overwrite of 'vendor/a'"), std::string::npos) << text(w);
  EXPECT_EQ(shell("cat vendor/a")["structuredContent"]["stdout"], "x\n");
  Json wp = shell("python3 -c \"open('vendor/a','w')\"");
  EXPECT_EQ(wp["structuredContent"]["unpredictable"][0]["construct"], "inline_interpreter");
  EXPECT_NE(wp["structuredContent"]["warnings"].dump().find("unpredictable"), std::string::npos);
  EXPECT_EQ(read("vendor/a"), "");
  EXPECT_EQ(wp["structuredContent"]["modified"], Json::array({"vendor/a"}));
  if (git) {
    ASSERT_EQ(std::system(("cd '" + ws().string() + "' && git checkout -q -- vendor/a").c_str()),
              0);
    Json wg = shell("git checkout main");
    ASSERT_FALSE(failed(wg)) << wg.dump();
    EXPECT_EQ(wg["structuredContent"]["exit_code"], 0) << wg.dump();
    EXPECT_NE(wg["structuredContent"]["warnings"].dump().find("vendor/**"), std::string::npos)
        << wg.dump();
    EXPECT_EQ(read("vendor/a"), kOriginal);
    EXPECT_EQ(wg["structuredContent"]["violations"][0]["path"], "vendor/a") << wg.dump();
  }
}

TEST_F(ShellExecTest, EscalationWaitsForAPersonThenRuns) {
  write("weft.toml", kRules);
  write("docs/guide.md", kOriginal);
  write("docs/other.md", kOriginal);
  build(Enforcement::kStrict);
  Json r = shell("echo approved > docs/guide.md; echo sneaky > docs/other.md");
  ASSERT_FALSE(failed(r)) << r.dump();
  std::string id = r["structuredContent"].value("pending_approval", std::string());
  ASSERT_FALSE(id.empty()) << r.dump();
  EXPECT_EQ(r["structuredContent"]["violations"].size(), 2u) << r.dump();
  EXPECT_EQ(read("docs/guide.md"), kOriginal);  // nothing ran yet
  kernel::Kernel* k = built_.workspace->kernel();
  ASSERT_NE(k, nullptr);
  auto approved = k->approve(id, "alice");
  ASSERT_TRUE(approved.ok()) << approved.status();
  EXPECT_EQ(read("docs/guide.md"), "approved\n");
  EXPECT_EQ(read("docs/other.md"), kOriginal);  // still protected: not what was approved
  Json h = call("fs_history", {{"path", "docs/guide.md"}, {"limit", 1}});
  EXPECT_NE(h.dump().find("shell:claude"), std::string::npos) << h.dump();
  EXPECT_EQ(k->approval(id)->state, "approved");
}

TEST_F(ShellExecTest, ApprovedRecursiveRemoveReachesEveryPathUnderTheDirectory) {
  // The lock rule comes first, so it decides for docs/pinned.lock.
  write("weft.toml", R"([permissions]
rules = [
  { glob = "**/*.lock", level = "read_only" },
  { glob = "vendor/**", level = "read_only" },
  { glob = "docs/**",   level = "human" },
]
)");
  write("docs/guide.md", kOriginal);
  write("docs/sub/deep.md", kOriginal);
  write("docs/sub/deeper/x.md", kOriginal);
  write("docs/pinned.lock", kOriginal);  // read_only inside the human directory
  write("vendor/a", kOriginal);
  write("other/note.md", kOriginal);
  build(Enforcement::kStrict);
  for (const char* f : {"docs/guide.md", "docs/sub/deep.md", "docs/sub/deeper/x.md"}) {
    ASSERT_FALSE(failed(call("fs_read", {{"path", f}})));  // blocks with history
  }
  Json r = shell("rm -r docs; echo gone > other/note.md");
  ASSERT_FALSE(failed(r)) << r.dump();
  std::string id = r["structuredContent"].value("pending_approval", std::string());
  ASSERT_FALSE(id.empty()) << r.dump();
  EXPECT_EQ(read("docs/sub/deep.md"), kOriginal);  // nothing ran yet
  kernel::Kernel* k = built_.workspace->kernel();
  ASSERT_NE(k, nullptr);
  auto approved = k->approve(id, "alice");
  ASSERT_TRUE(approved.ok()) << approved.status();
  // Every file the rule only asked a person about is gone, at any depth, and
  // stays gone (no violation to revert) ...
  for (const char* f : {"docs/guide.md", "docs/sub/deep.md", "docs/sub/deeper/x.md"}) {
    EXPECT_FALSE(stdfs::exists(ws() / f)) << f;
  }
  EXPECT_FALSE(stdfs::exists(ws() / "docs/sub"));
  Json st = shell("ls -R docs");
  EXPECT_EQ(st["structuredContent"]["stdout"], "docs:\npinned.lock\n") << st.dump();
  // ... a file a rule denies stays (approval does not lift a denial), and so
  // does the rest of the workspace.
  EXPECT_EQ(read("docs/pinned.lock"), kOriginal);
  EXPECT_EQ(read("vendor/a"), kOriginal);
  EXPECT_EQ(read("other/note.md"), "gone\n");
  EXPECT_EQ(k->approval(id)->state, "approved");
}

TEST_F(ShellExecTest, ProtectedFilesResistEveryRouteUnderStrict) {
  write("weft.toml", kRules);
  write("vendor/lib.c", kOriginal);  // under a whole protected directory
  write("app/Cargo.lock", kOriginal);  // bound on its own
  // The sandbox and the post-hook alone (nothing predicted: every route
  // runs), then with the predictor (a route may be refused or wait for a
  // person instead).
  for (bool predicted : {false, true}) {
    SCOPED_TRACE(predicted ? "with the predictor" : "sandbox alone");
    build(Enforcement::kStrict, predicted ? source::ShellPredictor() : nothing_predicted);
    for (const char* target : {"vendor/lib.c", "app/Cargo.lock", "weft.toml"}) {
      std::string before = read(target);
      for (const auto& [name, route] : attack_routes()) {
        Json r = attack(route, target);
        const Json& s = r["structuredContent"];
        if (predicted && (s.contains("refused") || s.contains("pending_approval"))) {
          EXPECT_EQ(read(target), before) << name << ": " << r.dump();
          continue;
        }
        ASSERT_FALSE(failed(r)) << name << ": " << r.dump();
        EXPECT_EQ(read(target), before) << name << " changed " << target << ": " << r.dump();
        for (const auto& v : s["violations"]) {
          // Whatever got through (a file beside the target) was taken back.
          EXPECT_TRUE(v.value("reverted", false)) << name << ": " << r.dump();
        }
      }
    }
  }
  // A new file under a protected glob that no bind covers: caught and removed
  // after (the predictor would have refused it).
  build(Enforcement::kStrict, nothing_predicted);
  Json r = shell("mkdir -p lib && echo x > lib/new.lock");
  EXPECT_FALSE(stdfs::exists(ws() / "lib/new.lock")) << r.dump();
  EXPECT_EQ(r["structuredContent"]["violations"][0]["path"], "lib/new.lock");
  EXPECT_TRUE(r["structuredContent"]["violations"][0]["reverted"].get<bool>());
  EXPECT_NE(r["structuredContent"]["not_protected"].dump().find("**/*.lock"), std::string::npos);
}

TEST_F(ShellExecTest, EveryRouteIsReportedUnderWarnedAndTheOthersLetItThrough) {
  for (Enforcement level : {Enforcement::kWarned, Enforcement::kAudit, Enforcement::kNone}) {
    SCOPED_TRACE(std::string(source::enforcement_name(level)));
    write("weft.toml", kRules);
    build(level);
    for (const auto& [name, route] : attack_routes()) {
      stdfs::remove_all(ws() / "vendor");
      write("vendor/lib.c", kOriginal);
      ASSERT_FALSE(failed(call("fs_read", {{"path", "vendor/lib.c"}})));
      logged_.clear();
      Json r = attack(route, "vendor/lib.c");
      ASSERT_FALSE(failed(r)) << name << ": " << r.dump();
      EXPECT_NE(read("vendor/lib.c"), kOriginal) << name << ": " << r.dump();
      std::string violations = r["structuredContent"]["violations"].dump();
      std::string logs;
      for (const auto& l : logged_) logs += l + "\n";
      switch (level) {
        case Enforcement::kWarned:
          EXPECT_NE(violations.find("vendor/lib.c"), std::string::npos) << name << ": " << r.dump();
          break;
        case Enforcement::kAudit:
          EXPECT_NE(logs.find("vendor/lib.c"), std::string::npos) << name << ": " << logs;
          EXPECT_EQ(violations, "[]");
          break;
        default:
          EXPECT_EQ(violations, "[]");
          break;
      }
      // A change of content is in the file's history as the shell's (a file
      // with a second hard link is refused to every tool, the kernel's too).
      if (read("vendor/lib.c") != "<not a file>" && name != "hard link") {
        Json h = call("fs_history", {{"path", "vendor/lib.c"}, {"limit", 1}});
        EXPECT_NE(h.dump().find("shell:claude"), std::string::npos) << name << ": " << h.dump();
      }
    }
  }
}

TEST_F(ShellExecTest, NetworkFollowsTheShellTable) {
  build(Enforcement::kStrict);
  Json off = shell("tail -n +3 /proc/net/dev | wc -l");
  EXPECT_EQ(off["structuredContent"]["stdout"], "1\n");
  write("weft.toml", "[shell]\nnetwork = true\n");
  Json on = shell("tail -n +3 /proc/net/dev | wc -l");
  int host = 0;
  {
    std::ifstream in("/proc/net/dev");
    std::string line;
    while (std::getline(in, line)) ++host;
  }
  EXPECT_EQ(on["structuredContent"]["stdout"], std::to_string(host - 2) + "\n");
  write("weft.toml", "[shell]\nenforcement = \"audit\"\n");
  build(std::nullopt);
  EXPECT_EQ(shell("true")["structuredContent"]["enforcement"], "audit");
}

}  // namespace
}  // namespace weft::server
