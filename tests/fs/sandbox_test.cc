// SandboxWorkspace: exec() under bubblewrap (skipped with the reason when
// bubblewrap cannot create namespaces here) and hydration.
#include <signal.h>
#include <stdlib.h>

#include <csignal>

#include <fstream>

#include "backends.h"
#include "weft/fs/hydrate.h"

namespace weft::fs::testing {
namespace {

namespace stdfs = std::filesystem;

class SandboxExec : public ::testing::Test {
 protected:
  void SetUp() override {
    Status avail = sandbox_available();
    if (!avail.ok()) GTEST_SKIP() << "bubblewrap unavailable here: " << avail;
    SandboxOptions o;
    o.overlay_dir = (tmp_.path() / "overlay").string();
    o.host.git_dir = (tmp_.path() / "store.git").string();
    auto ws = make_sandbox_workspace(o);
    ASSERT_TRUE(ws.ok()) << ws.status();
    ws_ = std::move(*ws);
  }
  weft::testing::TempDir tmp_;
  std::unique_ptr<SandboxWorkspace> ws_;
};

TEST_F(SandboxExec, RunsInWorkspaceAndSeesFiles) {
  ASSERT_TRUE(ws_->write("in.txt", "hello\n").ok());
  auto r = ws_->exec({"/bin/sh", "-c", "pwd; cat in.txt; echo out > made.txt; echo err >&2"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stdout_text, "/workspace\nhello\n");
  EXPECT_EQ(r->stderr_text, "err\n");
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(ws_->read("made.txt")->content, "out\n");
  EXPECT_EQ(ws_->overlay_dir(), ws_->root());
}

TEST_F(SandboxExec, ExitCodeCwdAndEnv) {
  ASSERT_TRUE(ws_->mkdir("sub").ok());
  ExecOptions o;
  o.cwd = "sub";
  o.env["GREETING"] = "hi";
  auto r = ws_->exec({"/bin/sh", "-c", "pwd; echo $GREETING; echo $HOME; exit 7"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->stdout_text, "/workspace/sub\nhi\n/workspace\n");
  o.cwd = "missing";
  EXPECT_EQ(ws_->exec({"true"}, o).status().code(), StatusCode::kNotFound);
  o.cwd = "../..";
  EXPECT_EQ(ws_->exec({"true"}, o).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws_->exec({}).status().code(), StatusCode::kInvalidArgument);
}

// A server blocks SIGINT / SIGTERM on its threads (to stop gracefully) and
// ignores SIGPIPE; the commands it runs must start with neither.
TEST_F(SandboxExec, CommandsStartWithNoSignalBlockedOrIgnored) {
  sigset_t blocked, old_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &blocked, &old_mask);
  auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
  auto r = ws_->exec({"/bin/sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status"});
  std::signal(SIGPIPE, old_pipe);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->stderr_text;
  EXPECT_NE(r->stdout_text.find("SigBlk:\t0000000000000000"), std::string::npos) << r->stdout_text;
  const size_t ign = r->stdout_text.find("SigIgn:\t");
  ASSERT_NE(ign, std::string::npos) << r->stdout_text;
  const uint64_t ignored = std::stoull(r->stdout_text.substr(ign + 8, 16), nullptr, 16);
  EXPECT_EQ(ignored & (uint64_t{1} << (SIGPIPE - 1)), 0u) << r->stdout_text;
}

TEST_F(SandboxExec, TimeoutAndBoundedOutput) {
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(300);
  auto start = std::chrono::steady_clock::now();
  auto r = ws_->exec({"/bin/sh", "-c", "sleep 30"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ExecOptions small;
  small.max_output_bytes = 1000;
  auto big = ws_->exec({"/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}, small);
  ASSERT_TRUE(big.ok());
  EXPECT_TRUE(big->truncated);
  EXPECT_EQ(big->stdout_text.size(), 1000u);
  EXPECT_EQ(big->exit_code, 0);
}

TEST_F(SandboxExec, RestOfSystemReadOnlyNoNetworkStoreHidden) {
  ASSERT_TRUE(ws_->snapshot().ok());
  std::string outside = (tmp_.path() / "outside.txt").string();
  std::string store = (tmp_.path() / "store.git").string();
  auto r = ws_->exec({"/bin/sh", "-c",
                      "echo x > " + outside +
                          " 2>/dev/null; "  // lands in the private /tmp
                          "echo x > /etc/weft-test 2>/dev/null && echo WROTE_ETC; "
                          "ls " +
                          store +
                          " | wc -l; "
                          "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_text.find("WROTE"), std::string::npos) << r->stdout_text;
  EXPECT_FALSE(stdfs::exists(outside));
  EXPECT_NE(r->stdout_text.find("0\n"), std::string::npos) << r->stdout_text;  // store hidden
  EXPECT_NE(r->stdout_text.find("lo"), std::string::npos);
  EXPECT_EQ(r->stdout_text.find("eth"), std::string::npos) << "[" << r->stdout_text << "]";
}

TEST_F(SandboxExec, HostFilesOutsideTheWorkspaceAreInvisible) {
  ASSERT_TRUE(ws_->snapshot().ok());
  // A secret in a host temp dir and one under $HOME (as the user's files are).
  std::string tmp_secret = (tmp_.path() / "secret.txt").string();
  { std::ofstream(tmp_secret) << "TMP-SECRET\n"; }
  const char* home_env = std::getenv("HOME");
  std::string home = home_env && *home_env == '/' ? home_env : "/root";
  std::string home_dir = home + "/weft-sandbox-test-XXXXXX";
  ASSERT_NE(::mkdtemp(home_dir.data()), nullptr);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      stdfs::remove_all(dir, ec);
    }
  } cleanup{home_dir};
  std::string home_secret = home_dir + "/secret.txt";
  { std::ofstream(home_secret) << "HOME-SECRET\n"; }
  std::string store = (tmp_.path() / "store.git").string();
  ASSERT_TRUE(stdfs::is_directory(store));
  auto r = ws_->exec({"/bin/sh", "-c",
                      "cat " + tmp_secret + " " + home_secret + " 2>/dev/null; " + "for p in " +
                          store + " " + home + " /root /home /work /var/lib /srv " + ws_->root() +
                          "; do test -e $p && echo SEES $p; done; echo done"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stdout_text, "done\n");
  EXPECT_EQ(r->exit_code, 0);
}

TEST_F(SandboxExec, CommonToolsStillRun) {
  ASSERT_TRUE(ws_->write("x.py", "print(6 * 7)\n").ok());
  auto r = ws_->exec({"/bin/sh", "-c",
                      "ls /usr/bin >/dev/null && echo ls-ok; id -un >/dev/null && echo id-ok; "
                      "echo hi | tr a-z A-Z"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stdout_text, "ls-ok\nid-ok\nHI\n") << r->stderr_text;
  if (stdfs::exists("/etc/os-release")) {
    auto os = ws_->exec({"/bin/sh", "-c", "grep -q '^ID=' /etc/os-release && echo os-ok"});
    ASSERT_TRUE(os.ok());
    EXPECT_EQ(os->stdout_text, "os-ok\n") << os->stderr_text;
  }
  if (stdfs::exists("/usr/bin/python3")) {
    auto py = ws_->exec({"python3", "x.py"});
    ASSERT_TRUE(py.ok());
    EXPECT_EQ(py->stdout_text, "42\n") << py->stderr_text;
  }
  if (stdfs::exists("/usr/bin/git")) {
    auto git = ws_->exec({"/bin/sh", "-c", "git init -q . && git status --short && echo git-ok"});
    ASSERT_TRUE(git.ok());
    EXPECT_EQ(git->stdout_text, "?? x.py\ngit-ok\n") << git->stderr_text;
  }
}

TEST(SandboxPaths, ExtraReadOnlyPathsAreVisibleAndValidated) {
  Status avail = sandbox_available();
  if (!avail.ok()) GTEST_SKIP() << "bubblewrap unavailable here: " << avail;
  weft::testing::TempDir tmp, tools;
  { std::ofstream(tools.path() / "tool.txt") << "tool\n"; }
  SandboxOptions o;
  o.overlay_dir = (tmp.path() / "overlay").string();
  o.host.git_dir = (tmp.path() / "store.git").string();
  o.extra_read_only_paths = {tools.path().string()};
  auto ws = make_sandbox_workspace(o);
  ASSERT_TRUE(ws.ok()) << ws.status();
  std::string file = (tools.path() / "tool.txt").string();
  auto r = (*ws)->exec({"/bin/sh", "-c", "cat " + file + "; echo x >> " + file + " || echo RO"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_text, "tool\nRO\n");
  for (std::string bad : {"relative/path", "/a/../etc", "/a/./b", ""}) {
    o.extra_read_only_paths = {bad};
    EXPECT_EQ(make_sandbox_workspace(o).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(SandboxExec, SnapshotCapturesCommandChanges) {
  ASSERT_TRUE(ws_->write("a.txt", "a").ok());
  auto s = ws_->snapshot();
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(ws_->exec({"/bin/sh", "-c", "rm a.txt; echo b > b.txt"}).ok());
  EXPECT_FALSE(ws_->exists("a.txt"));
  ASSERT_TRUE(ws_->restore(*s).ok());
  EXPECT_TRUE(ws_->exists("a.txt"));
  EXPECT_FALSE(ws_->exists("b.txt"));
}

TEST(SandboxUnavailable, ClearErrorWhenBwrapMissing) {
  weft::testing::TempDir tmp;
  Status s = sandbox_available("/nonexistent/bwrap");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("bubblewrap"), std::string::npos) << s;
  SandboxOptions o;
  o.overlay_dir = (tmp.path() / "ov").string();
  o.host.git_dir = (tmp.path() / "g.git").string();
  o.bwrap_path = "/nonexistent/bwrap";
  auto ws = make_sandbox_workspace(o);
  ASSERT_TRUE(ws.ok()) << ws.status();  // still a usable filesystem
  EXPECT_TRUE((*ws)->write("x", "y").ok());
  EXPECT_EQ((*ws)->exec({"true"}).status().code(), StatusCode::kUnavailable);
}

class Hydrate : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = tmp_.path() / "project";
    stdfs::create_directories(host_ / "src" / "pkg");
    stdfs::create_directories(host_ / "docs");
    std::ofstream(host_ / "src" / "main.py") << "print('hi')\n";
    std::ofstream(host_ / "src" / "pkg" / "mod.py") << "x = 1\r\n";
    std::ofstream(host_ / "src" / "notes.txt") << "n";
    std::ofstream(host_ / "docs" / "a.md") << "# A";
    std::ofstream(tmp_.path() / "secret.txt") << "SECRET";
    stdfs::create_symlink(tmp_.path() / "secret.txt", host_ / "src" / "leak.py");
  }
  weft::testing::TempDir tmp_;
  stdfs::path host_;
};

TEST_F(Hydrate, IncludeExcludeAndAllowedRoots) {
  auto fs = make_in_memory_filesystem();
  HostMount m;
  m.host_path = "src";
  m.mount_path = "src";
  m.include_glob = {"**/*.py"};
  m.exclude_glob = {"pkg/**"};
  auto st = hydrate_from_host(*fs, m, {host_.string()});
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->files, 1);
  EXPECT_EQ(fs->read("src/main.py")->content, "print('hi')\n");
  EXPECT_FALSE(fs->exists("src/pkg/mod.py"));
  EXPECT_FALSE(fs->exists("src/notes.txt"));
  EXPECT_FALSE(fs->exists("src/leak.py"));  // symlinks are skipped
  m.exclude_glob.clear();
  ASSERT_TRUE(hydrate_from_host(*fs, m, {host_.string()}).ok());
  EXPECT_EQ(fs->read_bytes("src/pkg/mod.py")->content, "x = 1\r\n");
  HostMount escape;
  escape.host_path = "../secret.txt";
  EXPECT_EQ(hydrate_from_host(*fs, escape, {host_.string()}).status().code(),
            StatusCode::kPermissionDenied);
  HostMount abs;
  abs.host_path = (tmp_.path() / "secret.txt").string();
  EXPECT_EQ(hydrate_from_host(*fs, abs, {host_.string()}).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(hydrate_from_host(*fs, m, {}).status().code(), StatusCode::kPermissionDenied);
  HostMount missing;
  missing.host_path = "nope";
  EXPECT_EQ(hydrate_from_host(*fs, missing, {host_.string()}).status().code(),
            StatusCode::kNotFound);
}

TEST_F(Hydrate, LargeFilesGoInChunksAndSandboxHydrates) {
  std::string big(120'000, 'z');
  std::ofstream(host_ / "docs" / "big.txt") << big;
  SandboxOptions o;
  o.overlay_dir = (tmp_.path() / "overlay").string();
  o.host.git_dir = (tmp_.path() / "g.git").string();
  HostMount m;
  m.host_path = host_.string();
  m.include_glob = {"docs/*"};
  o.mounts = {m};
  o.allowed_host_roots = {tmp_.path().string()};
  auto ws = make_sandbox_workspace(o);
  ASSERT_TRUE(ws.ok()) << ws.status();
  EXPECT_EQ((*ws)->read_bytes("docs/big.txt")->content, big);
  EXPECT_EQ((*ws)->read("docs/a.md")->content, "# A");
  EXPECT_FALSE((*ws)->exists("src"));
}

}  // namespace
}  // namespace weft::fs::testing
