// The workspace kernel in process (bench/kernel.sh runs it; the MCP parts are
// bench/peers/kernel_bench.mjs):
//  - watch latency: a Kernel with watch=true on a temporary root; another
//    writer rewrites files (different content each time, some ms apart); the
//    time from its close() (or rename(), for editor-style saves) to the
//    kernel's change listener firing for that block (block committed, stored,
//    subscribers told);
//  - reconcile of a 1 MB file: through the kernel (an agent change by
//    Kernel::change_text, then the file rewritten on disk elsewhere with
//    watch=false, then the Kernel::read_text or Kernel::change_text that
//    reconciles it, timed), and FileBlock::reconcile alone on a block whose
//    memory and disk both changed (a CRDT merge);
//  - Kernel::change_text of a one-line edit to a 100 KB file (fs_edit's work
//    in the kernel, no MCP), early and late in a run of edits;
//  - blocks (blocks.h): single-character appends into one conversation block
//    through the API (batched), a 10-line edit of a 10,000-line block, and
//    list{parent_id} among many conversation blocks.
// The allocator is tuned as `weft mcp` tunes it. Prints one JSON object.
//   weft_kernel_bench [--quick] [--only watch|change|reconcile|blocks|block_edit]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "weft/kernel/kernel.h"
#include "weft/server/workspace_server.h"
#include "weft/source/file_block.h"

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace stdfs = std::filesystem;
using weft::kernel::Kernel;
using weft::source::Attribution;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double round3(double x) { return static_cast<double>(static_cast<int64_t>(x * 1000 + 0.5)) / 1000; }

Json percentiles(std::vector<double> ms) {
  if (ms.empty()) return {{"samples", 0}};
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return round3(ms[static_cast<size_t>(q * (ms.size() - 1) + 0.5)]); };
  return {{"p50_ms", at(0.5)}, {"p90_ms", at(0.9)},   {"p99_ms", at(0.99)},
          {"max_ms", at(1.0)}, {"min_ms", at(0.0)}, {"samples", ms.size()}};
}

// ~`bytes` of numbered lines.
std::string make_text(size_t bytes, const std::string& tag) {
  std::string out;
  for (size_t i = 0; out.size() < bytes; ++i) {
    out += tag + " line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog\n";
  }
  return out;
}

// `text` with its line `line` (0-based) replaced by `with` (no newline).
std::string replace_line(const std::string& text, size_t line, const std::string& with) {
  size_t start = 0;
  for (size_t i = 0; i < line; ++i) start = text.find('\n', start) + 1;
  size_t end = text.find('\n', start);
  return text.substr(0, start) + with + text.substr(end);
}

bool write_file(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return ::close(fd) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(stdfs::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    stdfs::remove_all(dir_);
    stdfs::create_directories(dir_ / "root");
  }
  ~Scratch() {
    std::error_code ec;
    stdfs::remove_all(dir_, ec);
  }
  std::string root() const { return (dir_ / "root").string(); }
  std::string state() const { return (dir_ / "state").string(); }

 private:
  stdfs::path dir_;
};

weft::Result<std::unique_ptr<Kernel>> open_kernel(const Scratch& s, bool watch) {
  weft::fs::HostOptions host;
  host.durability = weft::fs::WriteDurability::kAtomicRename;  // as `weft mcp` without --fsync
  host.limits.max_write_chars = 64ll << 20;
  auto filesystem = weft::fs::make_host_filesystem(s.root(), host);
  if (!filesystem.ok()) return filesystem.status();
  weft::kernel::KernelOptions options;
  options.state_dir = s.state();
  options.watch = watch;
  return Kernel::open(std::shared_ptr<weft::fs::Filesystem>(std::move(*filesystem)), options);
}

// Counts the listener's calls per block, with the time of the last one.
struct Notifications {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::pair<uint64_t, Clock::time_point>> by_block;

  void on_commit(const std::string& block_id, const std::string& origin) {
    auto now = Clock::now();
    if (origin != weft::source::kDiskOrigin) return;
    std::lock_guard lock(mu);
    auto& [count, at] = by_block[block_id];
    ++count;
    at = now;
    cv.notify_all();
  }
  uint64_t count(const std::string& block_id) {
    std::lock_guard lock(mu);
    return by_block[block_id].first;
  }
  // The time of the commit after `seen` commits, or nullopt after 2 s.
  std::optional<Clock::time_point> wait_past(const std::string& block_id, uint64_t seen) {
    std::unique_lock lock(mu);
    bool ok = cv.wait_for(lock, std::chrono::seconds(2),
                          [&] { return by_block[block_id].first > seen; });
    if (!ok) return std::nullopt;
    return by_block[block_id].second;
  }
};

// One disk write (plain rewrite, or temp file + rename like an editor) to the
// listener, per sample; files rotate so each write is to a quiet path.
Json bench_watch(int writes, int rename_writes) {
  Scratch s("weft-kernel-bench-watch");
  constexpr int kFiles = 8;
  std::vector<std::string> rel;
  for (int f = 0; f < kFiles; ++f) {
    rel.push_back("dir" + std::to_string(f % 2) + "/file" + std::to_string(f) + ".txt");
    stdfs::create_directories(stdfs::path(s.root()) / ("dir" + std::to_string(f % 2)));
  }
  auto kernel = open_kernel(s, true);
  if (!kernel.ok()) return {{"error", kernel.status().to_string()}};
  Notifications seen;
  (*kernel)->set_change_listener(
      [&](const std::string& id, const std::string&, const std::string& origin) {
        seen.on_commit(id, origin);
      });
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> gap_ms(5, 15);
  std::vector<double> close_ms, rename_ms;
  int missed = 0;
  int sequence = 0;  // makes every write's bytes differ from all before
  auto one = [&](int i, bool by_rename, std::vector<double>* out) {
    const std::string& r = rel[static_cast<size_t>(i) % rel.size()];
    std::string path = s.root() + "/" + r;
    std::string id = weft::kernel::file_block_id(r);
    std::string body = make_text(2048 + static_cast<size_t>(i % 7) * 100, "w" + std::to_string(sequence++));
    uint64_t before = seen.count(id);
    Clock::time_point done;
    if (by_rename) {
      std::string tmp = path + ".tmp~";
      if (!write_file(tmp, body) || ::rename(tmp.c_str(), path.c_str()) != 0) return false;
    } else if (!write_file(path, body)) {
      return false;
    }
    done = Clock::now();
    auto fired = seen.wait_past(id, before);
    if (!fired) {
      ++missed;
    } else if (out) {
      out->push_back(std::max(0.0, ms_between(done, *fired)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms(rng)));
    return true;
  };
  // The first write of each file creates its block (not timed).
  for (int f = 0; f < kFiles; ++f) {
    if (!one(f, false, nullptr)) return {{"error", "cannot write under " + s.root()}};
  }
  missed = 0;
  for (int i = 0; i < writes; ++i) one(i, false, &close_ms);
  for (int i = 0; i < rename_writes; ++i) one(i, true, &rename_ms);
  return {{"close_to_listener", percentiles(close_ms)},
          {"rename_to_listener", percentiles(rename_ms)},
          {"missed", missed},
          {"files", kFiles},
          {"file_bytes", "2-3 KB"},
          {"gap_ms", "5-15"}};
}

// Kernel::read_text / change_text reconciling a 1 MB file changed on disk after an agent's
// change, and FileBlock::reconcile merging a block and a disk that both changed.
Json bench_reconcile(int rounds) {
  Scratch s("weft-kernel-bench-reconcile");
  const std::string rel = "big.txt";
  const std::string path = s.root() + "/" + rel;
  const std::string base = make_text(1 << 20, "r");
  size_t lines = static_cast<size_t>(std::count(base.begin(), base.end(), '\n'));
  if (!write_file(path, base)) return {{"error", "cannot write " + path}};
  auto opened = open_kernel(s, false);
  if (!opened.ok()) return {{"error", opened.status().to_string()}};
  Kernel& kernel = **opened;
  Attribution agent{"agent:bench", "fs_edit", std::nullopt};
  auto first = kernel.read_text(rel);  // makes the block
  if (!first.ok()) return {{"error", first.status().to_string()}};

  std::vector<double> agent_change_ms, read_reconcile_ms, change_reconcile_ms, block_ms;
  std::string failure;
  auto agent_line = [&](int i) { return static_cast<size_t>(i * 37) % (lines / 10); };
  auto disk_line = [&](int i) { return lines - 1 - static_cast<size_t>(i * 41) % (lines / 10); };
  for (int i = 0; i < rounds && failure.empty(); ++i) {
    // The agent changes a line in the first tenth (committed, stored, written).
    std::string agent_text = "agent edit " + std::to_string(i);
    auto t0 = Clock::now();
    auto changed = kernel.change_text(
        rel, agent, weft::source::FileOp::kOverwrite,
        [&](const std::optional<std::string>& old) -> weft::Result<std::string> {
          return replace_line(*old, agent_line(i), agent_text);
        });
    agent_change_ms.push_back(ms_between(t0, Clock::now()));
    if (!changed.ok() || !changed->applied) {
      failure = "change_text: " + (changed.ok() ? "not applied" : changed.status().to_string());
      break;
    }
    // Another writer changes a line in the last tenth (its size differs each round).
    std::string disk_text = "disk edit " + std::string(static_cast<size_t>(i % 5), '+') +
                            std::to_string(i);
    if (!write_file(path, replace_line(read_file(path), disk_line(i), disk_text))) {
      failure = "cannot write " + path;
      break;
    }
    bool by_read = i % 2 == 0;
    std::string text;
    t0 = Clock::now();
    if (by_read) {
      auto r = kernel.read_text(rel);
      read_reconcile_ms.push_back(ms_between(t0, Clock::now()));
      if (!r.ok()) failure = "read_text: " + r.status().to_string();
      if (r.ok()) text = std::move(*r);
    } else {
      // A one-line agent change that first reconciles the disk's change.
      auto r = kernel.change_text(
          rel, agent, weft::source::FileOp::kOverwrite,
          [&](const std::optional<std::string>& old) -> weft::Result<std::string> {
            return replace_line(*old, agent_line(i) + 1, agent_text + "b");
          });
      change_reconcile_ms.push_back(ms_between(t0, Clock::now()));
      if (!r.ok()) failure = "change_text: " + r.status().to_string();
      if (r.ok()) text = r->new_text;
    }
    if (failure.empty() && (text.find(agent_text) == std::string::npos ||
                            text.find(disk_text) == std::string::npos)) {
      failure = "round " + std::to_string(i) + ": the reconciled text lost a change";
    }
  }

  // FileBlock alone: memory and disk both changed since the last sync -> kMerged.
  Attribution disk_origin{std::string(weft::source::kDiskOrigin), "changed on disk", std::nullopt};
  auto disk_state = [](const std::string& text, int64_t stamp) {
    return weft::source::DiskState{weft::source::content_hash(text),
                                   static_cast<int64_t>(text.size()), stamp, 1};
  };
  auto block = weft::source::FileBlock::create(base, disk_state(base, 1), disk_origin);
  if (!block.ok()) return {{"error", block.status().to_string()}};
  std::string synced = base;
  for (int i = 0; i < rounds && failure.empty(); ++i) {
    std::string agent_text = "agent merge " + std::to_string(i);
    std::string disk_text = "disk merge " + std::to_string(i);
    auto c = block->change(replace_line(synced, agent_line(i), agent_text), agent);
    if (!c.ok()) {
      failure = "FileBlock::change: " + c.status().to_string();
      break;
    }
    std::string on_disk = replace_line(synced, disk_line(i), disk_text);
    auto t0 = Clock::now();
    auto r = block->reconcile(on_disk, disk_state(on_disk, 2 + i), weft::doc::MemoryPermission::kReadWrite,
                              disk_origin);
    block_ms.push_back(ms_between(t0, Clock::now()));
    if (!r.ok() || r->action != weft::source::ReconcileResult::Action::kMerged) {
      failure = "FileBlock::reconcile: " +
                (r.ok() ? std::string(weft::source::reconcile_action_name(r->action))
                        : r.status().to_string());
      break;
    }
    synced = block->text();
    if (synced.find(agent_text) == std::string::npos || synced.find(disk_text) == std::string::npos) {
      failure = "FileBlock::reconcile lost a change";
      break;
    }
    block->mark_synced(disk_state(synced, 2 + i));
  }
  if (!failure.empty()) return {{"error", failure}};
  return {{"file_bytes", base.size()},
          {"lines", lines},
          {"agent_change_text", percentiles(agent_change_ms)},
          {"kernel_read_text_reconcile", percentiles(read_reconcile_ms)},
          {"kernel_change_text_reconcile", percentiles(change_reconcile_ms)},
          {"file_block_reconcile_merge", percentiles(block_ms)}};
}

// Kernel::change_text of a one-line edit to a 100 KB file (what fs_edit runs in
// the kernel), early (the author's undo stack nearly empty) and late (the stack
// at its cap), with the watcher on as in `weft mcp`.
Json bench_change(int edits) {
  Scratch s("weft-kernel-bench-change");
  const std::string rel = "file100k.txt";
  std::string text = make_text(100 << 10, "c");
  text = replace_line(text, static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) / 2,
                      "MARKER_0");
  if (!write_file(s.root() + "/" + rel, text)) return {{"error", "cannot write under " + s.root()}};
  auto opened = open_kernel(s, true);
  if (!opened.ok()) return {{"error", opened.status().to_string()}};
  Attribution agent{"agent:bench", "fs_edit", std::nullopt};
  std::vector<double> ms;
  for (int i = 0; i < edits; ++i) {
    std::string from = "MARKER_" + std::to_string(i % 2);
    std::string to = "MARKER_" + std::to_string((i + 1) % 2);
    auto t0 = Clock::now();
    auto r = (*opened)->change_text(
        rel, agent, weft::source::FileOp::kOverwrite,
        [&](const std::optional<std::string>& old) -> weft::Result<std::string> {
          std::string out = *old;
          size_t at = out.find(from);
          if (at == std::string::npos) return weft::not_found("no marker");
          return out.replace(at, from.size(), to);
        });
    ms.push_back(ms_between(t0, Clock::now()));
    if (!r.ok() || !r->applied) {
      return {{"error", "change_text: " + (r.ok() ? std::string("not applied") : r.status().to_string())}};
    }
  }
  size_t early = std::min<size_t>(20, ms.size());
  std::vector<double> first(ms.begin() + 1, ms.begin() + static_cast<std::ptrdiff_t>(early));
  std::vector<double> last(ms.end() - static_cast<std::ptrdiff_t>(ms.size() / 4), ms.end());
  return {{"file_bytes", text.size()},
          {"edits", edits},
          {"edits_2_to_20", percentiles(first)},
          {"last_quarter", percentiles(last)}};
}

// block_edit of 10 lines spread over a 10,000-line block (fields
// block_edit_p50_us, block_edit_p90_us).
Json bench_block_edit(weft::kernel::Blocks& b, int edits) {
  using namespace weft::kernel;
  Attribution who{"agent:bench", "block_edit", std::nullopt};
  Json out = Json::object();
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "line " + std::to_string(i) + " of the block text\n";
  CreateBlock big;
  big.content = text;
  auto edited = b.create(who, big);
  if (!edited.ok()) return {{"error", edited.status().to_string()}};
  std::mt19937 rng(7);
  std::vector<double> us;
  for (int i = 0; i < edits; ++i) {
    std::vector<LineEdit> ops;
    for (int j = 0; j < 10; ++j) {
      size_t line = j * 1000 + rng() % 999;
      ops.push_back(LineEdit::replace(line, line + 1, "edited " + std::to_string(i) + "\n"));
    }
    auto t0 = Clock::now();
    auto w = b.edit(who, edited->block_id, ops);
    us.push_back(ms_between(t0, Clock::now()) * 1000);
    if (!w.ok()) return {{"error", "edit: " + w.status().to_string()}};
  }
  std::sort(us.begin(), us.end());
  out["block_edit_p50_us"] = round3(us[us.size() / 2]);
  out["block_edit_p90_us"] = round3(us[us.size() * 9 / 10]);
  return out;
}

// The block API's hot paths (fields append_per_s_api, block_edit_p50_us,
// block_list_ms).
Json bench_blocks(bool quick) {
  using namespace weft::kernel;
  Scratch s("weft-kernel-bench-blocks");
  auto k = open_kernel(s, false);
  if (!k.ok()) return {{"error", k.status().to_string()}};
  Blocks& b = (*k)->blocks();
  Attribution who{"agent:bench", "block_append", std::nullopt};
  Json out = Json::object();
  // Appends: characters of text with a line break every 60.
  auto target = b.create(who, CreateBlock{});
  if (!target.ok()) return {{"error", target.status().to_string()}};
  const size_t appends = quick ? 50000 : 200000;
  auto start = Clock::now();
  for (size_t i = 0; i < appends; ++i) {
    char c = i % 60 == 59 ? '\n' : static_cast<char>('a' + i % 26);
    auto w = b.append(who, target->block_id, std::string_view(&c, 1));
    if (!w.ok()) return {{"error", "append: " + w.status().to_string()}};
  }
  auto flushed = b.flush(target->block_id);
  if (!flushed.ok()) return {{"error", flushed.status().to_string()}};
  double secs = ms_between(start, Clock::now()) / 1000;
  out["append_per_s_api"] = static_cast<int64_t>(static_cast<double>(appends) / secs);
  Json edits = bench_block_edit(b, quick ? 300 : 1000);
  if (edits.contains("error")) return edits;
  for (const auto& [key, value] : edits.items()) out[key] = value;
  // list{parent_id} among many blocks.
  const int total = quick ? 20000 : 100000;
  auto parent = b.create(who, CreateBlock{});
  if (!parent.ok()) return {{"error", parent.status().to_string()}};
  for (int i = 0; i < total; ++i) {
    CreateBlock r;
    r.content = "message " + std::to_string(i);
    if (i % 1000 == 0) r.parent_id = parent->block_id;
    auto w = b.create(who, r);
    if (!w.ok()) return {{"error", "create: " + w.status().to_string()}};
  }
  ListFilter f;
  f.parent_id = parent->block_id;
  std::vector<double> ms;
  for (int i = 0; i < 50; ++i) {
    auto t0 = Clock::now();
    auto l = b.list(who, f);
    ms.push_back(ms_between(t0, Clock::now()));
    if (!l.ok()) return {{"error", "list: " + l.status().to_string()}};
  }
  std::sort(ms.begin(), ms.end());
  out["block_list_ms"] = round3(ms[ms.size() / 2]);
  out["block_list_blocks"] = total + 3;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
  }
  weft::server::tune_allocator_for_serving();  // as in `weft mcp`, whose process runs the kernel
  Json out = Json::object();
  if (only.empty() || only == "watch") {
    out["watch"] = bench_watch(quick ? 60 : 250, quick ? 20 : 60);
  }
  if (only.empty() || only == "change") {
    out["change_text_100k"] = bench_change(quick ? 200 : 600);
  }
  if (only.empty() || only == "reconcile") {
    out["reconcile_1mb"] = bench_reconcile(quick ? 8 : 30);
  }
  if (only == "block_edit") {  // for profiling: only the edit loop, longer
    Scratch s("weft-kernel-bench-block-edit");
    auto k = open_kernel(s, false);
    if (!k.ok()) return 1;
    out = bench_block_edit((*k)->blocks(), quick ? 1000 : 5000);
  }
  if (only.empty() || only == "blocks") {
    Json blocks = bench_blocks(quick);
    for (const auto& [key, value] : blocks.items()) out[key] = value;
    if (blocks.contains("error")) out["blocks"] = blocks;
  }
  std::printf("%s\n", out.dump().c_str());
  for (const auto& [name, part] : out.items()) {
    if (part.contains("error")) return 1;
  }
  return 0;
}
