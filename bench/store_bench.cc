// Block store benchmark (`scripts/bench.sh store --json`): prints one JSON
// object per measurement.
//   persist_one_char   MemoryCache::persist_block after a one-character edit (p50/p99 µs)
//   load_100k_ops      cold get() of a block built by 1,000 edits of 100 characters (p50 ms)
//   load_100k_edits    cold get() of a block built by 100,000 one-character edits (p50 ms)
//   cache_hit          MemoryCache::get() of a cached block (ns per call)
//   open_list_10k      BlockStore::open + list_blocks() over 10,000 blocks of 1 KB (p50 ms)
// Durability mode: WAL, synchronous=NORMAL (the default).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "weft/store/memory_cache.h"

namespace {

using weft::store::BlockStore;
using weft::store::MemoryCache;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

void check(const weft::Status& s, const char* what) {
  if (!s.ok()) {
    std::cerr << what << ": " << s << "\n";
    std::exit(1);
  }
}

std::shared_ptr<BlockStore> open_store(const fs::path& p) {
  auto s = BlockStore::open(p.string());
  check(s.status(), "open");
  return std::shared_ptr<BlockStore>(std::move(*s));
}

void emit(nlohmann::json j) { std::cout << j.dump() << std::endl; }

void bench_persist(const fs::path& dir) {
  auto store = open_store(dir / "persist.db");
  MemoryCache cache(store);
  weft::store::CreateBlockRequest r;
  r.agent_id = "ada";
  r.label = "notes";
  r.initial_text = std::string(1024, 'x');
  auto doc = *cache.create_block(r);
  std::vector<double> persist, total;
  for (int i = 0; i < 3000; ++i) {
    auto t0 = Clock::now();
    check(doc->append_text("y"), "edit");
    auto t1 = Clock::now();
    check(cache.persist_block("ada", "notes"), "persist");
    auto t2 = Clock::now();
    if (i >= 100) {  // warm-up excluded
      persist.push_back(micros(t1, t2));
      total.push_back(micros(t0, t2));
    }
  }
  emit({{"bench", "persist_one_char"},
        {"durability", "WAL synchronous=NORMAL"},
        {"samples", persist.size()},
        {"p50_us", percentile(persist, 0.5)},
        {"p99_us", percentile(persist, 0.99)},
        {"edit_plus_persist_p50_us", percentile(total, 0.5)},
        {"edit_plus_persist_p99_us", percentile(total, 0.99)},
        {"compactions", cache.stats().compactions}});
}

// Builds block `label` in `db` by calling `edit(doc, rng, i)` for i in [0, edits), committing each
// edit and persisting every `persist_every` edits (so the stored history is a compaction snapshot
// plus later updates, as in use), then measures cold `MemoryCache::get` 15 times.
template <typename Edit>
void bench_load_case(const fs::path& db, const char* name, const char* label, int edits,
                     int persist_every, Edit edit) {
  size_t ops = 0;
  std::vector<double> persist_us;
  {
    auto store = open_store(db);
    MemoryCache cache(store);
    weft::store::CreateBlockRequest r;
    r.agent_id = "ada";
    r.label = label;
    auto doc = *cache.create_block(r);
    std::mt19937 rng(42);
    for (int i = 0; i < edits; ++i) {
      doc->with_doc([&](weft::crdt::Doc& d) { edit(d.get_text("content"), rng, i); });
      check(doc->commit_with_attribution("agent:ada:edit"), "commit");
      if ((i + 1) % persist_every == 0 || i + 1 == edits) {
        auto t0 = Clock::now();
        check(cache.persist_block("ada", label), "persist");
        persist_us.push_back(micros(t0, Clock::now()));
      }
    }
    ops = doc->with_doc([](weft::crdt::Doc& d) { return d.op_count(); });
  }
  std::vector<double> ms;
  size_t chars = 0;
  for (int i = 0; i < 15; ++i) {
    auto store = open_store(db);
    MemoryCache cache(store);
    auto t0 = Clock::now();
    auto d = cache.get("ada", label);
    auto t1 = Clock::now();
    check(d.status(), "get");
    chars = (*d)->content_chars();
    ms.push_back(micros(t0, t1) / 1000.0);
  }
  auto store = open_store(db);
  auto stored = store->load(store->get_block("ada", label)->id);
  emit({{"bench", name},
        {"edits", edits},
        {"ops", ops},
        {"chars", chars},
        {"stored_updates_after_snapshot", stored->updates.size()},
        {"snapshot_bytes", stored->snapshot ? stored->snapshot->data.size() : 0},
        {"p50_ms", percentile(ms, 0.5)},
        {"min_ms", percentile(ms, 0.0)},
        // persists while building, compactions (snapshot writes) included
        {"persist_p50_us", percentile(persist_us, 0.5)},
        {"persist_p99_us", percentile(persist_us, 0.99)},
        {"persist_max_us", percentile(persist_us, 1.0)}});
}

void bench_load(const fs::path& dir) {
  // 1,000 edits of 100 characters at random places: 100,000 op units.
  bench_load_case(dir / "load.db", "load_100k_ops", "big", 1000, 1,
                  [](weft::crdt::TextRef text, std::mt19937& rng, int i) {
                    size_t len = text.len();
                    size_t at = len ? rng() % (len + 1) : 0;
                    check(text.insert(at, std::string(100, static_cast<char>('a' + i % 26))),
                          "insert");
                  });
  // 100,000 single-character edits: typing runs at random places, one in five a
  // deletion, persisted every 100 edits.
  bench_load_case(dir / "load_edits.db", "load_100k_edits", "typed", 100000, 100,
                  [cursor = size_t{0}](weft::crdt::TextRef text, std::mt19937& rng, int i) mutable {
                    size_t len = text.len();
                    if (i % 50 == 0) cursor = len ? rng() % (len + 1) : 0;
                    cursor = std::min(cursor, len);
                    if (rng() % 5 == 0 && cursor > 0) {
                      check(text.erase(cursor - 1, 1), "erase");
                      --cursor;
                    } else {
                      check(text.insert(cursor, std::string(1, static_cast<char>('a' + i % 26))),
                            "insert");
                      ++cursor;
                    }
                  });
}

void bench_cache_hit(const fs::path& dir) {
  auto store = open_store(dir / "hit.db");
  MemoryCache cache(store);
  weft::store::CreateBlockRequest r;
  r.agent_id = "ada";
  r.label = "hot";
  check(cache.create_block(r).status(), "create");
  constexpr int kN = 1000000;
  auto t0 = Clock::now();
  for (int i = 0; i < kN; ++i) {
    auto d = cache.get("ada", "hot");
    if (!d.ok()) std::exit(1);
  }
  auto t1 = Clock::now();
  emit({{"bench", "cache_hit"}, {"calls", kN}, {"ns_per_get", micros(t0, t1) * 1000.0 / kN}});
}

void bench_open_list(const fs::path& dir) {
  fs::path db = dir / "many.db";
  {
    auto store = open_store(db);
    MemoryCache cache(store, {.memory_budget_bytes = 4u << 20, .compact_after_updates = 128});
    for (int i = 0; i < 10000; ++i) {
      weft::store::CreateBlockRequest r;
      r.agent_id = "agent" + std::to_string(i % 10);
      r.label = "block/" + std::to_string(i);
      r.initial_text = std::string(1024, static_cast<char>('a' + i % 26));
      check(cache.create_block(r).status(), "create");
    }
  }
  std::vector<double> ms;
  size_t listed = 0;
  for (int i = 0; i < 10; ++i) {
    auto t0 = Clock::now();
    auto store = open_store(db);
    auto list = store->list_blocks();
    auto t1 = Clock::now();
    check(list.status(), "list");
    listed = list->blocks.size();
    ms.push_back(micros(t0, t1) / 1000.0);
  }
  emit({{"bench", "open_list_10k"},
        {"blocks", listed},
        {"db_bytes", fs::file_size(db)},
        {"p50_ms", percentile(ms, 0.5)},
        {"min_ms", percentile(ms, 0.0)}});
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = argc > 2 ? argv[2] : "";  // store --json [name]
  fs::path dir = fs::temp_directory_path() / ("weft_store_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  if (only.empty() || only == "persist") bench_persist(dir);
  if (only.empty() || only == "load") bench_load(dir);
  if (only.empty() || only == "hit") bench_cache_hit(dir);
  if (only.empty() || only == "list") bench_open_list(dir);
  if (!getenv("WEFT_BENCH_KEEP"))
    fs::remove_all(dir);
  else
    std::cerr << dir << "\n";
  return 0;
}
