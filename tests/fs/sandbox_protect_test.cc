// SandboxWorkspace::exec with read-only workspace paths, the network switch,
// the PID namespace (nothing outlives the call) and the output counters.
#include <fstream>
#include <thread>

#include "backends.h"

namespace weft::fs::testing {
namespace {

namespace stdfs = std::filesystem;

class SandboxProtect : public ::testing::Test {
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
    ASSERT_TRUE(ws_->write("vendor/lib.c", "original\n", WriteMode::kOverwrite, true).ok());
    ASSERT_TRUE(ws_->write("keep.txt", "keep\n").ok());
    ASSERT_TRUE(ws_->write("free.txt", "free\n").ok());
  }
  std::string content(const std::string& p) {
    auto r = ws_->read(p);
    return r.ok() ? r->content : "<" + std::string(r.status().message()) + ">";
  }
  weft::testing::TempDir tmp_;
  std::unique_ptr<SandboxWorkspace> ws_;
};

TEST_F(SandboxProtect, ReadOnlyPathsResistWritesRenamesAndDeletes) {
  ExecOptions o;
  o.read_only_workspace_paths = {"vendor", "keep.txt", "missing.txt"};
  auto r = ws_->exec({"/bin/sh", "-c",
                      "echo x > vendor/lib.c; echo y >> keep.txt; rm -f keep.txt; "
                      "mv free.txt keep.txt; echo new > vendor/new.c; "
                      "python3 -c \"open('vendor/lib.c','w')\" 2>&1 | tail -1; "
                      "echo ok > free2.txt"},
                     o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(content("vendor/lib.c"), "original\n");
  EXPECT_EQ(content("keep.txt"), "keep\n");
  EXPECT_FALSE(ws_->exists("vendor/new.c"));
  EXPECT_EQ(content("free2.txt"), "ok\n");  // the rest stays writable
  if (stdfs::exists("/usr/bin/python3")) {
    EXPECT_NE(r->stdout_text.find("Read-only file system"), std::string::npos) << r->stdout_text;
  }
  EXPECT_EQ(r->unprotected, std::vector<std::string>{"missing.txt"});
}

TEST_F(SandboxProtect, BadPathsAreRefused) {
  for (std::string bad : {"/etc", "../x", "a/../b", "", "a//b", "./a"}) {
    ExecOptions o;
    o.read_only_workspace_paths = {bad};
    EXPECT_EQ(ws_->exec({"true"}, o).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  ExecOptions many;
  many.read_only_workspace_paths.assign(kMaxReadOnlyWorkspacePaths + 1, "keep.txt");
  EXPECT_EQ(ws_->exec({"true"}, many).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SandboxProtect, LinkIsNotFollowedOutOfTheWorkspace) {
  std::string outside = (tmp_.path() / "outside").string();
  stdfs::create_directories(outside);
  stdfs::create_symlink(outside, stdfs::path(ws_->root()) / "out");
  ExecOptions o;
  o.read_only_workspace_paths = {"out"};
  auto r = ws_->exec({"true"}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->unprotected, std::vector<std::string>{"out"});
}

TEST_F(SandboxProtect, NetworkOnlyWhenAsked) {
  auto ifaces = [&](bool network) {
    ExecOptions o;
    o.network = network;
    auto r = ws_->exec({"/bin/sh", "-c", "tail -n +3 /proc/net/dev | wc -l"}, o);
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::stoi(r->stdout_text) : -1;
  };
  EXPECT_EQ(ifaces(false), 1);  // lo only
  int host_ifaces = 0;
  {
    std::ifstream in("/proc/net/dev");
    std::string line;
    while (std::getline(in, line)) ++host_ifaces;
  }
  EXPECT_EQ(ifaces(true), host_ifaces - 2);
}

TEST_F(SandboxProtect, DaemonDiesWithTheCommandAndCountsAreKept) {
  // The daemon closes its streams and outlives its parent: the PID namespace
  // ends it when the command returns, so it never writes its file.
  auto r = ws_->exec({"/bin/sh", "-c",
                      "(setsid sh -c 'sleep 1; echo late > daemon.txt' </dev/null >/dev/null "
                      "2>&1 &); head -c 5000 /dev/zero | tr '\\0' y"},
                     [] {
                       ExecOptions o;
                       o.max_output_bytes = 100;
                       return o;
                     }());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stdout_bytes, 5000);
  EXPECT_EQ(r->stdout_text.size(), 100u);
  EXPECT_TRUE(r->truncated);
  EXPECT_GE(r->elapsed_ms, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(ws_->exists("daemon.txt"));
}

}  // namespace
}  // namespace weft::fs::testing
