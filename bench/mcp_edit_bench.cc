// fs_edit inside the MCP server (no transport): a 1 MB file on the host
// filesystem, a unique marker toggled back and forth, timed around
// ToolRegistry::call (schema validation, read, edit, diff, atomic write).
// Prints JSON: p50/p90/p99 in milliseconds. Also the same edit with --fsync, the 1 MB write
// alone (the kernel's share), and fs_read of a 100 KB file with its serialisation.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weft/server/workspace_server.h"

namespace {

using weft::server::Json;
namespace stdfs = std::filesystem;

std::string make_text(size_t bytes) {
  std::string out;
  for (size_t i = 0; out.size() < bytes; ++i) {
    out += "line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog\n";
  }
  size_t mid = out.find('\n', out.size() / 2) + 1;
  out.insert(mid, "MARKER_0\n");
  return out;
}

Json percentiles(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[static_cast<size_t>(q * (ms.size() - 1))]; };
  return {{"p50_ms", at(0.5)}, {"p90_ms", at(0.9)}, {"p99_ms", at(0.99)}, {"samples", ms.size()}};
}

// Milliseconds `fn` takes.
template <typename Fn>
double time_ms(Fn&& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Json edit_args(int i, bool dry_run) {
  // Toggles MARKER_0 <-> MARKER_1; the dry run changes the current marker to MARKER_2.
  std::string from = "MARKER_" + std::to_string((i + (dry_run ? 1 : 0)) % 2);
  std::string to = dry_run ? "MARKER_2" : "MARKER_" + std::to_string((i + 1) % 2);
  Json args = {{"path", "big.txt"}, {"edits", {{{"old_string", from}, {"new_string", to}}}}};
  if (dry_run) args["dry_run"] = true;
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  stdfs::path dir =
      stdfs::temp_directory_path() / ("weft-mcp-edit-bench-" + std::to_string(getpid()));
  stdfs::create_directories(dir / "ws");
  std::ofstream(dir / "ws" / "big.txt", std::ios::binary) << make_text(1 << 20);
  std::ofstream(dir / "ws" / "small.txt", std::ios::binary) << make_text(100 << 10);
  setenv("XDG_STATE_HOME", (dir / "state").c_str(), 1);
  weft::server::tune_allocator_for_serving();  // as `weft mcp` does at startup
  weft::server::WorkspaceServerOptions options;
  options.root = (dir / "ws").string();
  auto built = weft::server::make_workspace_server(options);
  options.fsync = true;  // `weft mcp --fsync`
  auto durable = weft::server::make_workspace_server(options);
  if (!built.ok() || !durable.ok()) {
    std::fprintf(stderr, "%s\n", (built.ok() ? durable : built).status().to_string().c_str());
    return 1;
  }
  const auto* edit = built->tools->find("fs_edit");
  const auto* read = built->tools->find("fs_read");
  weft::server::ToolContext ctx(built->workspace.get(), {}, nullptr, nullptr, nullptr);
  weft::server::ToolContext durable_ctx(durable->workspace.get(), {}, nullptr, nullptr, nullptr);
  std::vector<double> edit_ms, dry_ms, fsync_ms, write_ms, read_ms, serialize_ms, dump_ms;
  bool failed = false;
  auto check = [&](const Json& result) {
    if (result.value("isError", false) && !failed) {
      std::fprintf(stderr, "call failed: %s\n", result.dump().c_str());
      failed = true;
    }
  };
  const std::string big = make_text(1 << 20);
  for (int i = 0; i < rounds && !failed; ++i) {
    edit_ms.push_back(time_ms([&] { check(built->tools->call(*edit, edit_args(i, false), ctx)); }));
    dry_ms.push_back(time_ms([&] { check(built->tools->call(*edit, edit_args(i, true), ctx)); }));
    // The write alone (fs layer: temp file + rename), to separate the kernel's share.
    write_ms.push_back(time_ms([&] {
      if (!built->workspace->fs().write_bytes("copy.txt", big).ok()) failed = true;
    }));
    Json page;
    read_ms.push_back(time_ms([&] {
      page = built->tools->call(*read, {{"path", "small.txt"}, {"limit", 100000}}, ctx);
    }));
    check(page);
    serialize_ms.push_back(time_ms([&] { (void)weft::server::serialize(page); }));
    dump_ms.push_back(
        time_ms([&] { (void)page.dump(-1, ' ', false, Json::error_handler_t::replace); }));
  }
  // Fewer rounds with --fsync: each waits for the disk.
  for (int i = 0; i < std::max(2, rounds / 10) * 2 && !failed; ++i) {
    fsync_ms.push_back(
        time_ms([&] { check(durable->tools->call(*edit, edit_args(i, false), durable_ctx)); }));
  }
  if (failed) return 1;
  Json out = {{"fs_edit_1mb_in_server", percentiles(edit_ms)},
              {"fs_edit_1mb_dry_run_in_server", percentiles(dry_ms)},
              {"fs_edit_1mb_in_server_fsync", percentiles(fsync_ms)},
              {"fs_write_bytes_1mb_atomic_rename", percentiles(write_ms)},
              {"fs_read_100kb_in_server", percentiles(read_ms)},
              {"fs_read_100kb_serialize", percentiles(serialize_ms)},
              {"fs_read_100kb_nlohmann_dump", percentiles(dump_ms)}};
  std::printf("%s\n", out.dump(2).c_str());
  stdfs::remove_all(dir);
  return 0;
}
