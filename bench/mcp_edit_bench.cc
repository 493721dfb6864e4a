// fs_edit inside the MCP server (no transport): a 1 MB file on the host
// filesystem, a unique marker toggled back and forth, timed around
// ToolRegistry::call (schema validation, read, edit, diff, atomic write).
// Prints JSON: p50/p90/p99 in milliseconds. Also fs_read of a 100 KB file.
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

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  stdfs::path dir =
      stdfs::temp_directory_path() / ("weft-mcp-edit-bench-" + std::to_string(getpid()));
  stdfs::create_directories(dir / "ws");
  std::ofstream(dir / "ws" / "big.txt", std::ios::binary) << make_text(1 << 20);
  std::ofstream(dir / "ws" / "small.txt", std::ios::binary) << make_text(100 << 10);
  setenv("XDG_STATE_HOME", (dir / "state").c_str(), 1);
  weft::server::WorkspaceServerOptions options;
  options.root = (dir / "ws").string();
  auto built = weft::server::make_workspace_server(options);
  if (!built.ok()) {
    std::fprintf(stderr, "%s\n", built.status().to_string().c_str());
    return 1;
  }
  const auto* edit = built->tools->find("fs_edit");
  const auto* read = built->tools->find("fs_read");
  weft::server::ToolContext ctx(built->workspace.get(), {}, nullptr, nullptr, nullptr);
  std::vector<double> edit_ms, dry_ms, read_ms;
  for (int i = 0; i < rounds; ++i) {
    Json args = {{"path", "big.txt"},
                 {"edits",
                  {{{"old_string", "MARKER_" + std::to_string(i % 2)},
                    {"new_string", "MARKER_" + std::to_string((i + 1) % 2)}}}}};
    auto start = std::chrono::steady_clock::now();
    Json result = built->tools->call(*edit, args, ctx);
    edit_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    if (result.value("isError", false)) {
      std::fprintf(stderr, "fs_edit failed: %s\n", result.dump().c_str());
      return 1;
    }
    args["dry_run"] = true;  // the same edit without the (fsync'd) write
    args["edits"][0]["old_string"] = "MARKER_" + std::to_string((i + 1) % 2);
    args["edits"][0]["new_string"] = "MARKER_2";
    start = std::chrono::steady_clock::now();
    result = built->tools->call(*edit, args, ctx);
    dry_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    start = std::chrono::steady_clock::now();
    Json page = built->tools->call(*read, {{"path", "small.txt"}, {"limit", 100000}}, ctx);
    read_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    (void)weft::server::serialize(page);
  }
  Json out = {{"fs_edit_1mb_in_server", percentiles(edit_ms)},
              {"fs_edit_1mb_dry_run_in_server", percentiles(dry_ms)},
              {"fs_read_100kb_in_server", percentiles(read_ms)}};
  std::printf("%s\n", out.dump(2).c_str());
  stdfs::remove_all(dir);
  return 0;
}
