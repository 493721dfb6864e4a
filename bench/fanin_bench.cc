// Fan-in benchmark: what a sync room's doc spends importing the updates of
// many editors who merge what they receive late (the live-sync fan-out's
// server side, without sockets). `views` editor groups each type into one
// doc under `peers / views` peer ids in turn, `rate` updates per second in
// all; every `window` ms the room imports the window's updates (joined, as
// the sync server does), and a group imports the others' updates `lag` ms
// after they were sent. The larger the lag, the more of the history is
// concurrent with each update, and the more the room's import replays.
//
//   weft_fanin_bench [--views 2] [--peers 100] [--rate 1000] [--seconds 5]
//                    [--window-ms 16] [--lags 20,200,1000,3000] [--no-partial-only]
//
// Prints one JSON line per lag: import_us_per_update (the room's import
// time over the run, per update), the same with the room's partial replays
// never keeping the whole tracker (partial_only_us_per_update, the engine
// before kept trackers; --no-partial-only skips it), the room's text length
// and the imports made. The two rooms' texts must be equal.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "crdt/core.h"
#include "weft/base/allocator.h"
#include "weft/crdt/doc.h"

namespace {

using weft::crdt::Doc;

struct Sent {
  int64_t at_ms;
  int view;
  std::string bytes;
};

struct Options {
  int views = 2;
  int peers = 100;
  int rate = 1000;
  int seconds = 5;
  int window_ms = 16;
  std::vector<int> lags = {20, 200, 1000, 3000};
  bool partial_only = true;
};

struct Run {
  double import_us_per_update = 0;
  int imports = 0;
  size_t room_units = 0;
  std::string text;  // the room's text at the end
};

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

// Imports `parts` joined into one update, as the sync server's intake does.
bool import_joined(Doc& doc, const std::vector<std::string_view>& parts) {
  if (parts.empty()) return true;
  auto joined = weft::crdt::join_loro_updates(parts);
  if (!joined.ok()) return false;
  return doc.import(*joined).ok();
}

// One run at `lag_ms`; `keep`: whether the room may keep whole trackers.
std::optional<Run> run(const Options& o, int lag_ms, bool keep) {
  std::vector<Doc> views;
  for (int v = 0; v < o.views; ++v) views.emplace_back(Doc(1));
  Doc room(7);
  if (!keep) room.core()->test_options().keep_tracker_changes = std::numeric_limits<size_t>::max();
  std::vector<Sent> sent;
  std::vector<size_t> view_seen(o.views, 0);  // sent[] before this are in the view (or its own)
  size_t room_seen = 0;
  double import_ms = 0;
  int imports = 0;
  const int64_t total = int64_t{o.seconds} * o.rate;
  const int64_t end_ms = int64_t{o.seconds} * 1000;
  int64_t n = 0;
  for (int64_t t = 0; t <= end_ms + lag_ms + o.window_ms; ++t) {
    // Each view merges the others' updates sent at least `lag` ms ago,
    // once per window.
    if (t % o.window_ms == 0) {
      for (int v = 0; v < o.views; ++v) {
        std::vector<std::string_view> parts;
        size_t i = view_seen[v];
        for (; i < sent.size() && sent[i].at_ms + lag_ms <= t; ++i)
          if (sent[i].view != v) parts.push_back(sent[i].bytes);
        view_seen[v] = i;
        if (!import_joined(views[v], parts)) {
          std::fprintf(stderr, "fanin: a view failed to import\n");
          return std::nullopt;
        }
      }
    }
    // This millisecond's updates.
    for (int64_t due = std::min(total, (t + 1) * o.rate / 1000); n < due && t < end_ms; ++n) {
      const int peer = static_cast<int>(n % o.peers);
      Doc& view = views[peer % o.views];
      if (!view.set_peer_id(1000 + peer).ok()) return std::nullopt;
      const auto from = view.oplog_version();
      auto text = view.get_text("content");
      const size_t len = text.len();
      const size_t pos = len * static_cast<size_t>((n * 7919) % 1009) / 1009;
      const std::string marker = std::to_string(n);
      if (!text.insert(pos, "#" + marker + ";").ok() || !view.commit().ok())
        return std::nullopt;
      sent.push_back({t, peer % o.views, view.export_loro_updates(from)});
    }
    // The room imports the window's updates in the order they were sent.
    if (t % o.window_ms == o.window_ms - 1 && room_seen < sent.size()) {
      std::vector<std::string_view> parts;
      for (; room_seen < sent.size(); ++room_seen) parts.push_back(sent[room_seen].bytes);
      const auto t0 = std::chrono::steady_clock::now();
      const bool ok = import_joined(room, parts);
      import_ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ++imports;
      if (!ok) {
        std::fprintf(stderr, "fanin: the room failed to import\n");
        return std::nullopt;
      }
    }
  }
  return Run{import_ms * 1000.0 / static_cast<double>(total), imports,
             room.get_text("content").len(), room.get_text("content").to_string()};
}

}  // namespace

int main(int argc, char** argv) {
  weft::keep_freed_memory_for_reuse();
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--json") continue;
    if (arg == "--views" && has_value) {
      o.views = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--peers" && has_value) {
      o.peers = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--rate" && has_value) {
      o.rate = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--seconds" && has_value) {
      o.seconds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--window-ms" && has_value) {
      o.window_ms = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--lags" && has_value) {
      o.lags = parse_list(argv[++i]);
    } else if (arg == "--no-partial-only") {
      o.partial_only = false;
    } else {
      std::fprintf(stderr,
                   "usage: weft_fanin_bench [--views N] [--peers N] [--rate N] [--seconds N]"
                   " [--window-ms N] [--lags A,B,...] [--no-partial-only]\n");
      return 2;
    }
  }
  for (const int lag : o.lags) {
    const std::optional<Run> kept = run(o, lag, true);
    std::optional<Run> partial;
    if (o.partial_only) partial = run(o, lag, false);
    if (!kept || (o.partial_only && !partial)) return 1;
    if (partial && partial->text != kept->text) {
      std::fprintf(stderr, "fanin: the two rooms' texts differ at lag %d ms\n", lag);
      return 1;
    }
    std::printf(
        "{\"suite\":\"fanin\",\"views\":%d,\"peers\":%d,\"rate\":%d,\"window_ms\":%d,"
        "\"lag_ms\":%d,\"updates\":%lld,\"imports\":%d,\"import_us_per_update\":%.1f,",
        o.views, o.peers, o.rate, o.window_ms, lag, static_cast<long long>(o.seconds) * o.rate,
        kept->imports, kept->import_us_per_update);
    if (partial) {
      std::printf("\"partial_only_us_per_update\":%.1f,\"speedup\":%.2f,",
                  partial->import_us_per_update,
                  partial->import_us_per_update / kept->import_us_per_update);
    }
    std::printf("\"room_units\":%zu}\n", kept->room_units);
    std::fflush(stdout);
  }
  return 0;
}
