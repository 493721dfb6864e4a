// Text-layer costs on a 1 MB file with a small edit: the work behind the MCP
// fs_edit / fs_patch tools (whose bar is 1 ms p50 on a 1 MB file) and behind
// crdt Text::update. Google Benchmark; `scripts/bench.sh text`.
#include <benchmark/benchmark.h>

#include <string>

#include "weft/base/diff.h"
#include "weft/text/patch.h"
#include "weft/text/search.h"
#include "weft/text/unified_diff.h"

namespace {

// ~1 MB of source-like lines; `crlf` picks the line ending.
std::string make_file(bool crlf = false) {
  std::string out;
  out.reserve(1 << 20);
  for (int i = 0; out.size() < (1 << 20); ++i) {
    out += "    value_" + std::to_string(i) + " = compute(value_" + std::to_string(i - 1) +
           ", \"some text\");";
    out += crlf ? "\r\n" : "\n";
  }
  return out;
}

std::string edited(const std::string& text) {
  std::string out = text;
  out.replace(out.find("value_12000 ="), 11, "renamed_12000");
  out.insert(out.find("    value_20000 ="), "    // a new comment line\n");
  return out;
}

void BM_DiffText1MB(benchmark::State& state) {
  std::string a = make_file(), b = edited(a);
  for (auto _ : state) benchmark::DoNotOptimize(weft::diff_text(a, b));
}
BENCHMARK(BM_DiffText1MB)->Unit(benchmark::kMillisecond);

void BM_MakeUnifiedDiff1MB(benchmark::State& state) {
  std::string a = make_file(), b = edited(a);
  for (auto _ : state) benchmark::DoNotOptimize(weft::text::make_unified_diff(a, b));
}
BENCHMARK(BM_MakeUnifiedDiff1MB)->Unit(benchmark::kMillisecond);

void BM_ApplyPatch1MB(benchmark::State& state) {
  std::string a = make_file(), b = edited(a);
  auto files = weft::text::parse_unified_diff(weft::text::make_unified_diff(a, b));
  if (!files.ok()) {
    state.SkipWithError("diff did not parse");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(weft::text::apply_patch(a, (*files)[0]));
}
BENCHMARK(BM_ApplyPatch1MB)->Unit(benchmark::kMillisecond);

void BM_StringEdit1MB(benchmark::State& state) {
  std::string a = make_file(state.range(0) != 0);
  std::vector<weft::text::StringEdit> edits = {
      {"value_12000 = compute(value_11999", "renamed = compute(value_11999", false}};
  for (auto _ : state) benchmark::DoNotOptimize(weft::text::apply_string_edits(a, edits));
}
BENCHMARK(BM_StringEdit1MB)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_FindAll1MB(benchmark::State& state) {
  std::string a = make_file();
  for (auto _ : state) benchmark::DoNotOptimize(weft::text::find_all(a, "compute(value_1"));
}
BENCHMARK(BM_FindAll1MB)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
