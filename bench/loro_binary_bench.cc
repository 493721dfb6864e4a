// Loro binary benchmark: imports a Loro FastUpdates file (written by
// loro-crdt: bench/peers/loro_binary.mjs) into an empty weft::crdt::Doc and
// exports the doc again as Loro FastUpdates; prints one JSON object (see
// bench/loro_binary.sh, which runs the loro-crdt side in the same run).
//
//   weft_loro_binary_bench FILE [--reps N]
//
// Fields: weft_import_ms (best of N: bytes -> doc with its text read),
// weft_update_bytes (the doc's export_loro_updates()), weft_export_ms,
// weft_snapshot_bytes, text_units, ok.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "weft/base/allocator.h"
#include "weft/crdt/doc.h"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <typename F>
double best_of(int reps, F f) {
  for (int i = 0; i < 2; ++i) f();  // warm-up
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, ms_since(t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  weft::keep_freed_memory_for_reuse();
  std::string file;
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--json") {
      continue;
    } else if (file.empty() && arg[0] != '-') {
      file = arg;
    } else {
      std::fprintf(stderr, "usage: weft_loro_binary_bench FILE [--reps N]\n");
      return 2;
    }
  }
  std::ifstream in(file, std::ios::binary);
  if (file.empty() || !in) {
    std::fprintf(stderr, "weft_loro_binary_bench: cannot read '%s'\n", file.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();

  bool ok = true;
  size_t units = 0;
  const double import_ms = best_of(reps, [&] {
    weft::crdt::Doc doc(7);
    auto st = doc.import(bytes);
    if (!st.ok()) {
      std::fprintf(stderr, "import failed: %s\n", st.status().to_string().c_str());
      ok = false;
    }
    units = doc.get_text("text").len();
  });
  weft::crdt::Doc doc(7);
  ok = ok && doc.import(bytes).ok();
  std::string updates;
  const double export_ms = best_of(reps, [&] { updates = doc.export_loro_updates(); });
  const std::string snapshot = doc.export_loro_snapshot();
  std::printf(
      "{\"weft_import_ms\":%.3f,\"weft_export_ms\":%.3f,\"weft_update_bytes\":%zu,"
      "\"weft_snapshot_bytes\":%zu,\"input_bytes\":%zu,\"text_units\":%zu,\"ok\":%s}\n",
      import_ms, export_ms, updates.size(), snapshot.size(), bytes.size(), units,
      ok ? "true" : "false");
  return ok ? 0 : 1;
}
