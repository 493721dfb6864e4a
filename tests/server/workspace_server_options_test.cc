// The workspace server's options reaching the filesystem (write durability)
// and a cancelled fs_grep stopping its scan (the flag of the call reaches
// fs::GrepOptions::cancel).
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace stdfs = std::filesystem;

TEST(WorkspaceServerOptions, DurabilityFollowsTheFsyncFlag) {
  WorkspaceServerOptions options;
  EXPECT_FALSE(options.fsync);
  EXPECT_EQ(server_host_options(options).durability, fs::WriteDurability::kAtomicRename);
  options.fsync = true;
  options.read_only = true;
  fs::HostOptions host = server_host_options(options);
  EXPECT_EQ(host.durability, fs::WriteDurability::kFsync);
  EXPECT_TRUE(host.read_only);
  EXPECT_EQ(host.limits.max_write_chars, server_fs_limits().max_write_chars);
}

class WorkspaceServerFixture : public ::testing::Test {
 protected:
  void build(bool fsync) {
    stdfs::create_directories(tmp_.path() / "ws");
    setenv("XDG_STATE_HOME", (tmp_.path() / "state").c_str(), 1);
    WorkspaceServerOptions options;
    options.root = (tmp_.path() / "ws").string();
    options.fsync = fsync;
    auto built = make_workspace_server(options);
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = std::move(*built);
  }
  Json call(const std::string& tool, const Json& args,
            std::shared_ptr<std::atomic<bool>> cancel = nullptr) {
    const ToolSpec* spec = built_.tools->find(tool);
    EXPECT_NE(spec, nullptr) << tool;
    if (!spec) return Json();
    ToolContext ctx(built_.workspace.get(), {}, std::move(cancel), nullptr, nullptr);
    return built_.tools->call(*spec, args, ctx);
  }
  static bool failed(const Json& result) { return result.value("isError", false); }

  weft::testing::TempDir tmp_;
  WorkspaceServer built_;
};

TEST_F(WorkspaceServerFixture, EditsWorkInBothDurabilityModes) {
  for (bool fsync : {false, true}) {
    build(fsync);
    std::ofstream(tmp_.path() / "ws" / "a.txt", std::ios::binary) << "one\r\ntwo\r\n";
    stdfs::permissions(tmp_.path() / "ws" / "a.txt", stdfs::perms::owner_all);
    Json r = call("fs_edit",
                  {{"path", "a.txt"}, {"edits", {{{"old_string", "two"}, {"new_string", "2"}}}}});
    ASSERT_FALSE(failed(r)) << r.dump();
    EXPECT_EQ(weft::testing::read_file(tmp_.path() / "ws" / "a.txt"), "one\r\n2\r\n");
    EXPECT_EQ(stdfs::status(tmp_.path() / "ws" / "a.txt").permissions(), stdfs::perms::owner_all);
  }
}

TEST_F(WorkspaceServerFixture, CancelledGrepStopsItsScan) {
  build(false);
  std::string body;
  for (int l = 0; l < 40; ++l) body += "fn item_" + std::to_string(l) + "() {}\n";
  for (int d = 0; d < 40; ++d) {
    stdfs::path sub = tmp_.path() / "ws" / ("pkg" + std::to_string(d));
    stdfs::create_directories(sub);
    for (int f = 0; f < 100; ++f) {
      std::ofstream(sub / ("f" + std::to_string(f) + ".rs"), std::ios::binary) << body;
    }
  }
  Json args = {{"pattern", "NEVER_THERE"}, {"output_mode", "files_with_matches"}};
  // The handler runs on this thread. Its CPU clock, unlike wall time, does not advance while
  // a loaded machine keeps the thread off a core.
  auto cpu_ms = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  };
  double start = cpu_ms();
  Json full = call("fs_grep", args, std::make_shared<std::atomic<bool>>(false));
  const double full_cpu = cpu_ms() - start;
  ASSERT_FALSE(failed(full)) << full.dump();
  EXPECT_TRUE(full["structuredContent"]["files"].empty());
  // A call whose flag is already set (as notifications/cancelled does while it runs): the
  // scan polls the flag and stops at once. Before the hook the tool scanned the whole tree
  // and only then noticed the cancellation. (tests/fs covers a flag set mid-scan.)
  start = cpu_ms();
  Json cancelled = call("fs_grep", args, std::make_shared<std::atomic<bool>>(true));
  const double cancelled_cpu = cpu_ms() - start;
  ASSERT_TRUE(failed(cancelled)) << cancelled.dump();
  EXPECT_NE(cancelled["content"][0]["text"].get<std::string>().find("cancel"), std::string::npos)
      << cancelled.dump();
  EXPECT_LT(cancelled_cpu, full_cpu / 4) << "CPU ms: cancelled call vs a full scan " << full_cpu;
}

}  // namespace
}  // namespace weft::server
