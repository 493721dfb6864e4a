// shell_exec when a command fills the disk (issue 27, "bad input and
// faults"): the workspace and the kernel's state directory live on a small
// tmpfs of their own (a private mount namespace in a child process; a user
// namespace when the process may not mount), a command writes until
// ENOSPC, and the result must report it while the kernel keeps its blocks:
// earlier blocks read back unchanged, the kernel keeps working once space is
// freed, and its database reopens intact. Where no namespace can be made,
// the same run is made with the command's file size capped (ulimit -f), a
// quota-like limit on the command alone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "support/test_support.h"
#include "weft/fs/sandbox.h"
#include "weft/server/workspace_server.h"

namespace weft::server {
namespace {

namespace stdfs = std::filesystem;

// The small disk's size: room for the kernel's database and a few files.
constexpr const char* kDiskSize = "size=3m";

bool write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return ::close(fd) == 0 && ok;
}

// A private mount namespace for this process (plain, else inside a user
// namespace mapping us to root) with a small tmpfs at `dir`.
bool mount_small_disk(const std::string& dir) {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWNS) != 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
    (void)write_file("/proc/self/setgroups", "deny");
    if (!write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) {
      return false;
    }
  }
  // Nothing mounted here may reach the parent's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  return ::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, kDiskSize) == 0;
}

#define CHECK_OR_FAIL(cond, what)                                         \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::cerr << "disk full check failed: " << (what) << std::endl;     \
      return 1;                                                           \
    }                                                                     \
  } while (0)

struct Server {
  WorkspaceServer built;
  Json call(const std::string& tool, const Json& args) {
    const ToolSpec* spec = built.tools->find(tool);
    if (!spec) return Json{{"isError", true}, {"content", {{{"text", "no tool " + tool}}}}};
    ToolContext ctx(built.workspace.get(), {}, nullptr, nullptr, nullptr);
    ctx.set_client_name("claude");
    return built.tools->call(*spec, args, ctx);
  }
};

Result<Server> open_server(const stdfs::path& disk) {
  WorkspaceServerOptions options;
  options.root = (disk / "ws").string();
  options.state_dir = (disk / "state").string();
  options.sandbox = true;
  options.shell_enforcement = source::Enforcement::kStrict;
  WEFT_ASSIGN_OR_RETURN(WorkspaceServer built, make_workspace_server(options));
  return Server{std::move(built)};
}

std::string content_of(const Json& r) {
  return r.value("structuredContent", Json::object()).value("content", std::string());
}

// The whole scenario; 0 when every check held. `small_disk`: the tmpfs is
// mounted at `disk` (else the command's file size is capped instead).
int fill_the_disk(const stdfs::path& disk, bool small_disk) {
  stdfs::create_directories(disk / "ws" / "src");
  std::ofstream(disk / "ws" / "notes.txt") << "original\n";
  std::ofstream(disk / "ws" / "src" / "a.txt") << "alpha\n";
  std::string conversation;
  {
    auto server = open_server(disk);
    CHECK_OR_FAIL(server.ok(), "the server opens: " + server.status().to_string());
    Server& s = *server;
    CHECK_OR_FAIL(!s.call("fs_read", {{"path", "src/a.txt"}}).value("isError", false),
                  "src/a.txt becomes a block");
    CHECK_OR_FAIL(!s.call("fs_read", {{"path", "notes.txt"}}).value("isError", false),
                  "notes.txt becomes a block");
    Json c = s.call("block_create",
                    {{"role", "user"}, {"kind", "text"}, {"content", "before the flood\n"}});
    CHECK_OR_FAIL(!c.value("isError", false), "a conversation block: " + c.dump());
    conversation = c["structuredContent"]["block_id"];

    // Write until the disk (or the cap) says no; the last write's failure is
    // the command's exit status.
    std::string command = "echo appended >> notes.txt; head -c 50000000 /dev/zero > fill.bin";
    if (!small_disk) command = "ulimit -f 256; " + command;
    Json r = s.call("shell_exec", {{"command", command}, {"timeout_ms", 60000}});
    CHECK_OR_FAIL(!r.value("isError", false), "the tool answers: " + r.dump().substr(0, 2000));
    const Json& out = r["structuredContent"];
    std::cerr << (small_disk ? "on a full tmpfs" : "under ulimit -f") << ": exit "
              << out["exit_code"].dump() << ", stderr " << out.value("stderr", Json("")).dump()
              << ", post_hook_problems " << out.value("post_hook_problems", Json::array()).dump()
              << std::endl;
    CHECK_OR_FAIL(out["exit_code"].is_number_integer() && out["exit_code"] != 0,
                  "the failure is the exit code: " + out.dump().substr(0, 2000));
    const std::string err = out.value("stderr", std::string());
    CHECK_OR_FAIL(err.find(small_disk ? "No space left on device" : "File size limit") !=
                          std::string::npos ||
                      (!small_disk && out["exit_code"] != 0),
                  "stderr says why: " + err);
    CHECK_OR_FAIL(out.contains("created") && out.contains("modified"),
                  "the changes are listed: " + out.dump().substr(0, 2000));

    // The kernel kept every block, whether or not it could store the
    // command's changes (post_hook_problems says when it could not).
    Json a = s.call("block_read", {{"block_id", "file:src/a.txt"}, {"line_numbers", false}});
    CHECK_OR_FAIL(content_of(a) == "alpha\n", "src/a.txt's block: " + a.dump());
    Json b = s.call("block_read", {{"block_id", conversation}, {"line_numbers", false}});
    CHECK_OR_FAIL(content_of(b) == "before the flood\n", "the conversation block: " + b.dump());
    Json h = s.call("block_history", {{"block_id", "file:src/a.txt"}});
    CHECK_OR_FAIL(!h.value("isError", false) && !h["structuredContent"]["changes"].empty(),
                  "src/a.txt's history: " + h.dump());

    // Space freed: the kernel works again and catches up with notes.txt.
    Json rm = s.call("shell_exec", {{"command", "rm -f fill.bin"}});
    CHECK_OR_FAIL(!rm.value("isError", false) && rm["structuredContent"]["exit_code"] == 0,
                  "rm: " + rm.dump().substr(0, 2000));
    Json w = s.call("block_append", {{"block_id", conversation}, {"text", "after\n"}});
    CHECK_OR_FAIL(!w.value("isError", false), "a write after the flood: " + w.dump());
    Json e = s.call("fs_edit", {{"path", "src/a.txt"},
                                {"edits", {{{"old_string", "alpha"}, {"new_string", "beta"}}}}});
    CHECK_OR_FAIL(!e.value("isError", false), "a file edit after the flood: " + e.dump());
    Json n = s.call("block_read", {{"block_id", "file:notes.txt"}, {"line_numbers", false}});
    CHECK_OR_FAIL(content_of(n) == "original\nappended\n", "notes.txt's block: " + n.dump());
  }
  // The database reopens intact, with everything the kernel acknowledged.
  auto again = open_server(disk);
  CHECK_OR_FAIL(again.ok(), "the server reopens: " + again.status().to_string());
  Json b = again->call("block_read", {{"block_id", conversation}, {"line_numbers", false}});
  CHECK_OR_FAIL(content_of(b) == "before the flood\nafter\n", "after a reopen: " + b.dump());
  Json a = again->call("block_read", {{"block_id", "file:src/a.txt"}, {"line_numbers", false}});
  CHECK_OR_FAIL(content_of(a) == "beta\n", "src/a.txt after a reopen: " + a.dump());
  Json h = again->call("fs_history", {{"path", "notes.txt"}});
  CHECK_OR_FAIL(h.dump().find("original") != std::string::npos ||
                    h["structuredContent"]["changes"].size() >= 1,
                "notes.txt's history after a reopen: " + h.dump());
  return 0;
}

// Runs the scenario in a child process (its own mount namespace dies with it).
int run_in_child(const stdfs::path& disk, bool small_disk) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int code = 2;
    if (!small_disk || mount_small_disk(disk.string())) code = fill_the_disk(disk, small_disk);
    if (small_disk) (void)::umount2(disk.c_str(), MNT_DETACH);
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ShellDiskFull, TheCommandFailsCleanlyAndTheKernelKeepsItsBlocks) {
  Status avail = fs::sandbox_available();
  if (!avail.ok()) GTEST_SKIP() << "bubblewrap unavailable here: " << avail;
  weft::testing::TempDir tmp;
  stdfs::path disk = tmp.path() / "disk";
  stdfs::create_directories(disk);
  int code = run_in_child(disk, /*small_disk=*/true);
  if (code == 2) {
    // No namespace for a tmpfs here: cap the command's file size instead.
    std::cerr << "no mount namespace for a small tmpfs: capping the command's file size\n";
    code = run_in_child(disk, /*small_disk=*/false);
  }
  EXPECT_EQ(code, 0) << "the child's checks failed (its stderr says which)";
}

}  // namespace
}  // namespace weft::server
