// `weft history|diff|rollback PATH` and `weft approvals list|show|approve|reject`:
// a person's view of the workspace kernel. Each goes through the root's
// running kernel (a `weft mcp` or `weft serve` on the same root), or runs one
// for the command when none is running. Every command takes --root, --state
// and --json.
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command_registry.h"
#include "cli/kernel_client.h"
#include "weft/server/kernel_service.h"
#include "weft/server/workspace_server.h"

namespace weft::cli {
namespace {

using server::Json;

std::string when(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

void print_approval(const Json& a, bool full) {
  std::cout << a.value("id", "") << "  " << a.value("state", "") << "  "
            << when(a.value("created_at_ms", int64_t{0})) << "  " << a.value("author", "") << "  "
            << a.value("op", "") << " " << a.value("path", "");
  if (!a.value("target_path", "").empty()) std::cout << " -> " << a.value("target_path", "");
  std::cout << "  (" << a.value("what", "") << ")\n";
  if (!full) return;
  std::cout << "  why: " << a.value("rule", "") << "\n";
  if (!a.value("decided_by", "").empty()) std::cout << "  decided by: " << a.value("decided_by", "") << "\n";
  std::cout << "\n" << a.value("diff", "");
  if (!a.value("disk_diff", "").empty()) {
    std::cout << "\nMeanwhile on disk:\n" << a.value("disk_diff", "");
  }
}

void run_approvals(const KernelArgs& a, Json request) {
  auto built = connect_kernel(a);
  if (!built.ok()) {
    fail(built.status());
    return;
  }
  request["op"] = "approvals";
  request["person"] = person();
  auto reply = server::kernel_request(*built->kernel_link, request);
  if (!reply.ok()) {
    fail(reply.status());
    return;
  }
  if (a.json) {
    std::cout << reply->dump(2) << "\n";
  } else if (reply->contains("approvals")) {
    const Json& list = (*reply)["approvals"];
    if (list.empty()) std::cout << "No pending approvals.\n";
    for (const auto& item : list) print_approval(item, false);
  } else {
    const Json& item = (*reply)["approval"];
    std::string action = request.value("action", "");
    if (action == "show") {
      print_approval(item, true);
    } else {
      std::cout << (action == "approve" ? "Approved " : "Rejected ") << item.value("id", "")
                << ": " << item.value("op", "") << " " << item.value("path", "")
                << (reply->contains("version") && !(*reply)["version"].get<std::string>().empty()
                        ? " (now version " + (*reply)["version"].get<std::string>() + ")"
                        : "")
                << "\n";
    }
  }
  set_exit_code(kExitOk);
}

void setup_history(CLI::App& app) {
  {
    auto a = std::make_shared<KernelArgs>();
    auto path = std::make_shared<std::string>();
    auto limit = std::make_shared<int64_t>(50);
    auto* cmd = app.add_subcommand("history", "The changes to a text file, newest first");
    cmd->add_option("PATH", *path, "File in the workspace")->required();
    cmd->add_option("--limit", *limit, "Most changes to show (default 50)")
        ->check(CLI::Range(1, 10000));
    add_kernel_options(cmd, *a);
    cmd->callback([a, path, limit] { run_kernel_tool(*a, "fs_history", {{"path", *path}, {"limit", *limit}}); });
  }
  {
    auto a = std::make_shared<KernelArgs>();
    auto path = std::make_shared<std::string>();
    auto from = std::make_shared<std::string>();
    auto to = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand(
        "diff", "A unified diff between two versions of a text file (default: its last change)");
    cmd->add_option("PATH", *path, "File in the workspace")->required();
    cmd->add_option("--from", *from, "Older version (from `weft history`)");
    cmd->add_option("--to", *to, "Newer version (default: the current one)");
    add_kernel_options(cmd, *a);
    cmd->callback([a, path, from, to] {
      Json args = {{"path", *path}};
      if (!from->empty()) args["from"] = *from;
      if (!to->empty()) args["to"] = *to;
      run_kernel_tool(*a, "fs_diff", std::move(args));
    });
  }
  {
    auto a = std::make_shared<KernelArgs>();
    auto path = std::make_shared<std::string>();
    auto to = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand(
        "rollback", "Make a text file what it was at a version, as a new change (nothing is lost)");
    cmd->add_option("PATH", *path, "File in the workspace")->required();
    cmd->add_option("--to", *to, "The version (from `weft history`)")->required();
    add_kernel_options(cmd, *a);
    cmd->callback(
        [a, path, to] { run_kernel_tool(*a, "fs_rollback", {{"path", *path}, {"version", *to}}); });
  }
}

void setup_approvals(CLI::App& app) {
  auto* group = app.add_subcommand(
      "approvals", "Changes agents asked for that the rules (weft.toml) send to a person");
  group->require_subcommand(1);
  {
    auto a = std::make_shared<KernelArgs>();
    auto all = std::make_shared<bool>(false);
    auto* cmd = group->add_subcommand("list", "The pending approvals, oldest first");
    cmd->add_flag("--all", *all, "Also those already approved or rejected");
    add_kernel_options(cmd, *a);
    cmd->callback([a, all] { run_approvals(*a, {{"action", "list"}, {"all", *all}}); });
  }
  for (const char* action : {"show", "approve", "reject"}) {
    auto a = std::make_shared<KernelArgs>();
    auto id = std::make_shared<std::string>();
    std::string help = std::string(action) == "show"
                           ? "The change an approval holds, with its diff"
                       : std::string(action) == "approve"
                           ? "Apply the change, merged with whatever changed since"
                           : "Drop the change; the file stays as it is";
    auto* cmd = group->add_subcommand(action, help);
    cmd->add_option("ID", *id, "The approval's id (apr_...)")->required();
    add_kernel_options(cmd, *a);
    std::string act = action;
    cmd->callback([a, id, act] { run_approvals(*a, {{"action", act}, {"id", *id}}); });
  }
}

}  // namespace
}  // namespace weft::cli

WEFT_REGISTER_COMMAND("history", 30, weft::cli::setup_history);
WEFT_REGISTER_COMMAND("approvals", 31, weft::cli::setup_approvals);
