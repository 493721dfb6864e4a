// CRDT editing-trace benchmark: replays ../shared/data/traces through
// weft::crdt::Doc and a plain gap buffer, and prints one JSON object per
// trace (see bench/traces.sh, which also runs the Node peers).
//
//   weft_traces_bench [--dir DIR] [--reps N] [--only NAME[,NAME...]] [--save-updates DIR]
//                     [--read-each]
//
// --read-each reads the text's length after every commit of the local replay
// (an editor that reads after each keystroke: no keystroke stays buffered).
// --save-updates writes each concurrent trace's merged history (the bytes
// merge_ms imports) to DIR/NAME.weft, for profiling the merge alone
// (`valgrind --tool=callgrind weft loro merge DIR/NAME.weft`).
// DIR defaults to $WEFT_SHARED_DIR/data/traces, else ../shared/data/traces.
// Fields: trace, group, patches, weft_ms (local replay, one commit per txn),
// floor_ms (gap buffer), merge_ms (all txns imported into an empty doc, from
// their encoded bytes), replay_ms (the same merge from the op log already in
// memory: checkout of the whole history, as diamond-types' oplog.checkout()),
// build_ms (constructing the concurrent history, not a bar), encoded_bytes
// (snapshot with full history), updates_bytes, load_ms (snapshot -> text),
// load_delete_ms / merge_delete_ms (the first local delete after a load /
// merge, which rebuilds the element ids those skip),
// live_bytes (heap held by the replayed doc), peak_rss_kb, correct, and
// "unsupported"/"error" strings when the engine cannot do a step.
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "gap_buffer.h"
#include "trace_loader.h"
#include "weft/base/allocator.h"
#include "weft/crdt/doc.h"

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

size_t heap_in_use() { return mallinfo2().uordblks + mallinfo2().hblkhd; }

long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Runs `fn` `reps` times and returns the fastest run in ms; `untimed` runs
// before each run, outside the timing.
template <typename Fn, typename Untimed>
double best_of(int reps, Fn&& fn, Untimed&& untimed) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    untimed();
    auto start = Clock::now();
    fn();
    best = std::min(best, ms_since(start));
  }
  return best;
}
template <typename Fn>
double best_of(int reps, Fn&& fn) {
  return best_of(reps, std::forward<Fn>(fn), [] {});
}

// Inlined into its callers, as the peers' harness loops are (diamond-types'
// dtReplay is one function): a call per txn is the harness's cost, not weft's
// (7% of the flat traces' instructions when it was a call).
[[gnu::always_inline]] inline Status apply_patches(crdt::TextRef& text,
                                                   const std::vector<Patch>& patches) {
  for (const Patch& p : patches) {
    if (p.del) WEFT_RETURN_IF_ERROR(text.erase(p.pos, p.del));
    if (!p.ins.empty()) WEFT_RETURN_IF_ERROR(text.insert(p.pos, p.ins));
  }
  return Status();
}

bool g_read_each = false;  // --read-each

// Local replay: one doc, one commit per txn. Returns the doc.
Result<crdt::Doc> replay_local(const Trace& trace) {
  crdt::Doc doc(1);
  crdt::TextRef text = doc.get_text("text");
  if (!trace.start_content.empty()) {
    WEFT_RETURN_IF_ERROR(text.insert(0, trace.start_content));
    WEFT_RETURN_IF_ERROR(doc.commit());
  }
  for (const Txn& txn : trace.txns) {
    WEFT_RETURN_IF_ERROR(apply_patches(text, txn.patches));
    WEFT_RETURN_IF_ERROR(doc.commit());
    if (g_read_each && text.len() == SIZE_MAX) return internal_error("impossible length");
  }
  return doc;
}

std::string replay_floor(const Trace& trace) {
  GapBuffer buffer(trace.start_content.size() + 1024);
  buffer.splice(0, 0, trace.start_content);
  for (const Txn& txn : trace.txns) {
    for (const Patch& p : txn.patches) buffer.splice(p.pos, p.del, p.ins);
  }
  return buffer.to_string();
}

// Builds the concurrent history: each txn is authored by its agent's doc
// brought to exactly the txn's parents (by importing the missing txns'
// update blobs, or forking the merged doc there the first time an agent
// appears), then its update is merged into `merged`.
class HistoryBuilder {
 public:
  explicit HistoryBuilder(const Trace& trace) : trace_(trace) {
    const char* env = std::getenv("WEFT_TRACES_BUILD_BUDGET_S");
    if (env && *env) budget_ms_ = 1000.0 * std::atof(env);
  }

  // True when fork_at gave a wrong version and catch-up imports were used.
  bool fork_broken() const { return fork_broken_; }

  Result<crdt::Doc> build() {
    crdt::Doc merged(kMergedPeer);
    blobs_.resize(trace_.txns.size());
    frontiers_.resize(trace_.txns.size());
    const auto start = Clock::now();
    for (size_t i = 0; i < trace_.txns.size(); ++i) {
      if (ms_since(start) > budget_ms_) {
        return deadline_exceeded("building the history took over " +
                                 std::to_string(static_cast<long>(budget_ms_ / 1000)) +
                                 " s (WEFT_TRACES_BUILD_BUDGET_S); stopped at txn " +
                                 std::to_string(i) + " of " + std::to_string(trace_.txns.size()));
      }
      const Txn& txn = trace_.txns[i];
      crdt::Frontiers parents = parent_frontiers(txn);
      WEFT_ASSIGN_OR_RETURN(crdt::Doc * author, author_at(merged, txn, parents));
      crdt::VersionVector before = author->oplog_version();
      crdt::TextRef text = author->get_text("text");
      WEFT_RETURN_IF_ERROR(
          apply_patches(text, txn.patches).with_context("txn " + std::to_string(i)));
      WEFT_RETURN_IF_ERROR(author->commit());
      frontiers_[i] = author->oplog_frontiers();
      blobs_[i] = author->export_updates(before);
      auto end = author->oplog_version().get(peer_of(txn.agent));
      if (end > before.get(peer_of(txn.agent))) {
        by_start_[txn.agent].emplace(before.get(peer_of(txn.agent)), i);
      }
      auto imported = merged.import(blobs_[i]);
      if (!imported.ok()) return imported.status().with_context("merging txn " + std::to_string(i));
    }
    return merged;
  }

 private:
  static constexpr crdt::PeerId kMergedPeer = 1u << 30;
  static crdt::PeerId peer_of(uint32_t agent) { return agent + 1; }

  crdt::Frontiers parent_frontiers(const Txn& txn) const {
    crdt::Frontiers out;
    for (uint32_t p : txn.parents) {
      for (const crdt::ID& id : frontiers_[p].ids()) out.push(id);
    }
    return out;
  }

  Result<crdt::Doc*> author_at(const crdt::Doc& merged, const Txn& txn,
                               const crdt::Frontiers& parents) {
    auto it = docs_.find(txn.agent);
    if (it == docs_.end()) {
      crdt::Doc doc(peer_of(txn.agent));
      if (!parents.empty() && !fork_broken_) {
        // Fork the merged doc at the parents; if the fork's version is not
        // the parents' version (an engine bug seen 2026-11-26), fall back
        // to catching a fresh doc up blob by blob.
        WEFT_ASSIGN_OR_RETURN(crdt::Doc fork, merged.fork_at(parents));
        WEFT_ASSIGN_OR_RETURN(crdt::VersionVector want, merged.frontiers_to_vv(parents));
        WEFT_RETURN_IF_ERROR(fork.set_peer_id(peer_of(txn.agent)));
        if (fork.oplog_version() == want) {
          doc = std::move(fork);
        } else {
          fork_broken_ = true;
        }
      }
      it = docs_.emplace(txn.agent, std::move(doc)).first;
    }
    // Import the txns in the parents' version that this doc lacks, oldest first.
    WEFT_ASSIGN_OR_RETURN(crdt::VersionVector want, merged.frontiers_to_vv(parents));
    crdt::VersionVector have = it->second.oplog_version();
    std::vector<size_t> missing;
    for (const auto& [peer, end] : want.entries()) {
      Counter from = have.get(peer);
      if (from >= end || peer == kMergedPeer) continue;
      const auto& starts = by_start_[static_cast<uint32_t>(peer - 1)];
      auto at = starts.upper_bound(from);
      if (at != starts.begin()) --at;
      for (; at != starts.end() && at->first < end; ++at) missing.push_back(at->second);
    }
    std::sort(missing.begin(), missing.end());
    for (size_t j : missing) {
      auto imported = it->second.import(blobs_[j]);
      if (!imported.ok()) return imported.status().with_context("catching up an author");
    }
    return &it->second;
  }

  using Counter = crdt::Counter;
  const Trace& trace_;
  bool fork_broken_ = false;
  double budget_ms_ = 180'000;  // history construction is setup, not a measured figure
  std::vector<std::string> blobs_;
  std::vector<crdt::Frontiers> frontiers_;
  std::map<uint32_t, crdt::Doc> docs_;
  std::map<uint32_t, std::map<Counter, size_t>> by_start_;  // agent -> start counter -> txn
};

// Builds the concurrent history directly as Loro JSON changes (positions are
// the trace's, which are already in each txn's parents' version), without
// authoring docs: for histories with many agents (A1: 204, A2: 375), where
// bringing one doc per agent to every txn's parents takes minutes and GBs.
// A delete's `start_id` (its leftmost target's id) would need the state at
// the parents; it is set to the deleting change's own first id instead.
// Positions alone decide the merge result, but encoded sizes of such a history
// are not comparable with ones built through docs.
Result<crdt::Doc> build_direct(const Trace& trace) {
  constexpr uint64_t kMergedPeer = 1u << 30;
  std::map<uint32_t, uint32_t> peer_slot;  // agent -> index in "peers"
  std::map<uint32_t, int32_t> next;        // agent -> next counter
  Json peers = Json::array();
  Json changes = Json::array();
  // Per txn: its frontier (ids as "counter@slot") and the lamport after it.
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> frontier(trace.txns.size());
  std::vector<int64_t> lamport_end(trace.txns.size(), 0);
  for (size_t i = 0; i < trace.txns.size(); ++i) {
    const Txn& txn = trace.txns[i];
    auto [slot_it, fresh] = peer_slot.emplace(txn.agent, static_cast<uint32_t>(peers.size()));
    if (fresh) peers.push_back(std::to_string(txn.agent + 1));
    const uint32_t slot = slot_it->second;
    std::vector<std::pair<int32_t, uint32_t>> deps;
    int64_t lamport = 0;
    for (uint32_t p : txn.parents) {
      if (p >= i) return invalid_argument("txn " + std::to_string(i) + " has a later parent");
      for (const auto& id : frontier[p]) {
        if (std::find(deps.begin(), deps.end(), id) == deps.end()) deps.push_back(id);
      }
      lamport = std::max(lamport, lamport_end[p]);
    }
    const int32_t start = next[txn.agent];
    int32_t counter = start;
    Json ops = Json::array();
    const std::string self_id = std::to_string(start) + "@" + std::to_string(slot);
    for (const Patch& patch : txn.patches) {
      if (patch.del) {
        ops.push_back(
            {{"container", "cid:root-text:Text"},
             {"content",
              {{"type", "delete"}, {"pos", patch.pos}, {"len", patch.del}, {"start_id", self_id}}},
             {"counter", counter}});
        counter += static_cast<int32_t>(patch.del);
      }
      if (!patch.ins.empty()) {
        ops.push_back({{"container", "cid:root-text:Text"},
                       {"content", {{"type", "insert"}, {"pos", patch.pos}, {"text", patch.ins}}},
                       {"counter", counter}});
        for (unsigned char ch : patch.ins) counter += (ch & 0xC0) != 0x80;
      }
    }
    if (counter == start) {  // no ops: the txn's version is its parents'
      frontier[i] = deps;
      lamport_end[i] = lamport;
      continue;
    }
    Json dep_ids = Json::array();
    for (const auto& [c, s] : deps) dep_ids.push_back(std::to_string(c) + "@" + std::to_string(s));
    changes.push_back({{"id", self_id},
                       {"timestamp", 0},
                       {"deps", dep_ids},
                       {"lamport", lamport},
                       {"msg", nullptr},
                       {"ops", ops}});
    next[txn.agent] = counter;
    frontier[i] = {{counter - 1, slot}};
    lamport_end[i] = lamport + (counter - start);
  }
  Json update = {{"schema_version", 1},
                 {"start_version", Json::object()},
                 {"peers", peers},
                 {"changes", changes}};
  crdt::Doc merged(kMergedPeer);
  auto imported = merged.import(update.dump());
  if (!imported.ok()) return imported.status().with_context("importing the built history");
  if (!imported->pending.empty()) return internal_error("the built history has missing deps");
  return merged;
}

// The first local delete (one unit in the middle, committed) on a doc that
// imported `bytes` into an empty state, timed alone: the replay that brings
// back the element ids the load or merge did not keep (a delete names the ids
// it removes; see DocCore::recover_ids). Null when a step fails.
Json first_delete_ms(int reps, const std::string& bytes) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    crdt::Doc doc;
    if (!doc.import(bytes).ok()) return nullptr;
    crdt::TextRef text = doc.get_text("text");
    if (text.len() == 0) return nullptr;
    auto start = Clock::now();
    if (!text.erase(text.len() / 2, 1).ok() || !doc.commit().ok()) return nullptr;
    best = std::min(best, ms_since(start));
  }
  return best;
}

// Live sync with a concurrent edit: `doc` (the replayed trace, whose Text
// holds its ids) and a fork of it each insert a word and commit; the time of
// the doc's import of the fork's change (it is concurrent with the doc's own
// edit: Eg-walker's partial replay), then of a second such round on the same
// two docs: row fields concurrent_import_{first,second}_ms (null when a step
// fails).
void concurrent_import_ms(const crdt::Doc& doc, int reps, Json& row) {
  row["concurrent_import_first_ms"] = nullptr;
  row["concurrent_import_second_ms"] = nullptr;
  double first = 1e300, second = 1e300;
  for (int i = 0; i < reps; ++i) {
    crdt::Doc a = doc.fork(), b = doc.fork();
    for (double* best : {&first, &second}) {
      crdt::TextRef ta = a.get_text("text"), tb = b.get_text("text");
      if (!ta.insert(ta.len() / 2, "mine ").ok() || !a.commit().ok()) return;
      if (!tb.insert(tb.len() / 3, "theirs ").ok() || !b.commit().ok()) return;
      const std::string update = b.export_updates(a.oplog_version());
      auto start = Clock::now();
      if (!a.import(update).ok()) return;
      *best = std::min(*best, ms_since(start));
      if (!b.import(a.export_updates(b.oplog_version())).ok()) return;
    }
  }
  row["concurrent_import_first_ms"] = first;
  row["concurrent_import_second_ms"] = second;
}

void measure_snapshot(const crdt::Doc& doc, int reps, Json& row) {
  std::string snapshot = doc.export_snapshot();
  row["encoded_bytes"] = snapshot.size();
  row["updates_bytes"] = doc.export_updates().size();
  std::string loaded;
  Status status;
  row["load_ms"] = best_of(reps, [&] {
    crdt::Doc fresh;
    auto imported = fresh.import(snapshot);
    if (!imported.ok()) {
      status = imported.status();
      return;
    }
    loaded = fresh.get_text("text").to_string();
  });
  if (!status.ok()) row["load_error"] = status.to_string();
  row["load_delete_ms"] = first_delete_ms(reps, snapshot);
}

std::string g_save_updates_dir;  // --save-updates
// More agents than this: the history is built directly (build_direct).
constexpr size_t kMaxAuthorDocs = 16;

Json bench_trace(const Trace& trace, int reps) {
  Json row;
  row["trace"] = trace.name;
  row["group"] = trace.group;
  row["patches"] = trace.patch_count;
  row["txns"] = trace.txns.size();
  const bool sequential = !trace.concurrent || trace.linear;
  bool correct = true;

  if (sequential) {
    std::string floor_text;
    row["floor_ms"] = best_of(reps, [&] { floor_text = replay_floor(trace); });
    row["floor_correct"] = floor_text == trace.end_content;
    std::optional<crdt::Doc> kept;
    Status status;
    size_t heap_before = heap_in_use();
    // (The previous run's doc is freed outside the timing: the peers' harness
    // leaves theirs to the garbage collector.)
    row["weft_ms"] = best_of(
        reps,
        [&] {
          auto doc = replay_local(trace);
          if (doc.ok())
            kept.emplace(std::move(*doc));
          else
            status = doc.status();
        },
        [&] { kept.reset(); });
    if (kept) {
      row["live_bytes"] = static_cast<long>(heap_in_use()) - static_cast<long>(heap_before);
      bool ok = kept->get_text("text").to_string() == trace.end_content;
      row["local_correct"] = ok;
      correct = correct && ok;
      measure_snapshot(*kept, reps, row);
      concurrent_import_ms(*kept, reps, row);
    } else {
      row["weft_ms"] = nullptr;
      row["error"] = "local replay: " + status.to_string();
      correct = false;
    }
  }
  if (trace.concurrent) {
    auto start = Clock::now();
    HistoryBuilder builder(trace);
    std::set<uint32_t> agents;
    for (const Txn& txn : trace.txns) agents.insert(txn.agent);
    const bool direct = agents.size() > kMaxAuthorDocs;
    auto merged = direct ? build_direct(trace) : builder.build();
    row["build_ms"] = ms_since(start);
    if (direct) row["history"] = "direct (delete start ids are placeholders; see build_direct)";
    if (builder.fork_broken()) row["fork_at_broken"] = true;
    if (!merged.ok()) {
      row["merge_ms"] = nullptr;
      row["unsupported"] = "building the concurrent history: " + merged.status().to_string();
      correct = false;
    } else {
      std::string updates = merged->export_updates();
      if (!g_save_updates_dir.empty()) {
        std::ofstream(std::filesystem::path(g_save_updates_dir) / (trace.name + ".weft"),
                      std::ios::binary)
            << updates;
      }
      std::string text;
      Status status;
      row["merge_ms"] = best_of(reps, [&] {
        crdt::Doc fresh;
        auto imported = fresh.import(updates);
        if (!imported.ok()) {
          status = imported.status();
          return;
        }
        text = fresh.get_text("text").to_string();
      });
      bool ok = status.ok() && text == trace.end_content;
      row["merge_correct"] = ok;
      row["merge_delete_ms"] = first_delete_ms(reps, updates);
      if (!status.ok()) row["error"] = "merge: " + status.to_string();
      correct = correct && ok;
      if (status.ok()) {
        // The merge without decoding: the whole history replayed from the op
        // log into a new state (what diamond-types' dt_merge_ms times). It
        // must give the merge's text (A2's differs from endContent: exempt).
        crdt::Doc loaded;
        Status replayed = loaded.import(updates).status();
        std::string replay_text;
        row["replay_ms"] = best_of(reps, [&] {
          if (!replayed.ok()) return;
          replayed = loaded.checkout(loaded.oplog_frontiers());
          replay_text = loaded.get_text("text").to_string();
        });
        const bool replay_ok = replayed.ok() && replay_text == text;
        if (!replay_ok) row["error"] = "replay: " + replayed.to_string();
        correct = correct && replay_ok;
      }
      if (!sequential) measure_snapshot(*merged, reps, row);
    }
  }
  row["correct"] = correct;
  row["peak_rss_kb"] = peak_rss_kb();
  return row;
}

std::optional<std::filesystem::path> default_dir() {
  if (const char* env = std::getenv("WEFT_SHARED_DIR"); env && *env) {
    return std::filesystem::path(env) / "data" / "traces";
  }
  return std::filesystem::path("../shared/data/traces");
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  using namespace weft::bench;
  // As the weft executables do (src/cli/main.cc); the wasm peers keep their
  // linear memory between repetitions too.
  weft::keep_freed_memory_for_reuse();
  std::optional<std::filesystem::path> dir = default_dir();
  int reps = 3;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (arg == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (arg == "--save-updates" && i + 1 < argc)
      g_save_updates_dir = argv[++i];
    else if (arg == "--read-each")
      g_read_each = true;
    else if (arg == "--json")
      continue;  // output is always JSON lines
    else {
      std::fprintf(stderr,
                   "usage: weft_traces_bench [--dir DIR] [--reps N] [--only NAME] "
                   "[--save-updates DIR] [--read-each]\n");
      return 2;
    }
  }
  if (!dir || !std::filesystem::is_directory(*dir)) {
    std::printf(
        "{\"skipped\":\"trace directory %s is absent (set WEFT_SHARED_DIR or run from the "
        "repository root beside ../shared)\"}\n",
        dir ? dir->c_str() : "?");
    return 0;
  }
  for (const auto& path : find_traces(*dir)) {
    auto trace = load_trace(path);
    if (!trace.ok()) {
      std::printf("%s\n",
                  nlohmann::json{{"trace", path.string()}, {"error", trace.status().to_string()}}
                      .dump()
                      .c_str());
      continue;
    }
    // --only takes one name or a comma-separated list (to run a trace after another one).
    if (!only.empty() && ("," + only + ",").find("," + trace->name + ",") == std::string::npos)
      continue;
    std::printf("%s\n", bench_trace(*trace, reps).dump().c_str());
    std::fflush(stdout);
  }
  return 0;
}
