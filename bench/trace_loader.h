// Loads editing traces (../shared/data/traces/**.json.gz, the
// josephg/editing-traces format) into plain structs for the benchmarks.
//
// Thread safety: stateless functions.
#ifndef WEFT_BENCH_TRACE_LOADER_H_
#define WEFT_BENCH_TRACE_LOADER_H_

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weft/base/status.h"

namespace weft::bench {

struct Patch {
  uint32_t pos = 0;  // Unicode code points
  uint32_t del = 0;  // code points deleted at pos
  std::string ins;   // inserted UTF-8 text
};

struct Txn {
  std::vector<uint32_t> parents;  // indexes of earlier txns (concurrent traces)
  uint32_t agent = 0;
  std::vector<Patch> patches;
};

struct Trace {
  std::string name;      // file name without .json.gz
  std::string group;     // folder: sequential, concurrent, egwalker-paper
  bool concurrent = false;
  std::string start_content;
  std::string end_content;
  std::vector<Txn> txns;
  size_t patch_count = 0;
  // True when the history is one chain (every txn's only parent is the
  // previous txn): it can be replayed locally as a sequential trace.
  bool linear = true;
};

inline Result<std::string> gunzip_file(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return not_found("cannot open " + path.string());
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(file, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int err = 0;
  const char* msg = gzerror(file, &err);
  std::string error = n < 0 ? std::string(msg) : "";
  gzclose(file);
  if (!error.empty()) return data_loss(path.string() + ": " + error);
  return out;
}

inline Result<Trace> load_trace(const std::filesystem::path& path) {
  WEFT_ASSIGN_OR_RETURN(std::string raw, gunzip_file(path));
  Trace trace;
  std::string file = path.filename().string();
  trace.name = file.substr(0, file.find(".json"));
  trace.group = path.parent_path().filename().string();
  try {
    nlohmann::json doc = nlohmann::json::parse(raw);
    trace.concurrent = doc.value("kind", "") == "concurrent";
    trace.start_content = doc.value("startContent", "");
    trace.end_content = doc.at("endContent").get<std::string>();
    const auto& txns = doc.at("txns");
    trace.txns.reserve(txns.size());
    for (size_t i = 0; i < txns.size(); ++i) {
      const auto& t = txns[i];
      Txn txn;
      if (t.contains("parents")) txn.parents = t["parents"].get<std::vector<uint32_t>>();
      txn.agent = t.value("agent", 0u);
      for (const auto& p : t.at("patches")) {
        txn.patches.push_back({p.at(0).get<uint32_t>(), p.at(1).get<uint32_t>(),
                               p.at(2).get<std::string>()});
      }
      trace.patch_count += txn.patches.size();
      bool chain = i == 0 ? txn.parents.empty()
                          : txn.parents.size() == 1 && txn.parents[0] == i - 1;
      if (trace.concurrent && !chain) trace.linear = false;
      trace.txns.push_back(std::move(txn));
    }
  } catch (const std::exception& e) {
    return invalid_argument(path.string() + ": " + e.what());
  }
  return trace;
}

// Every *.json.gz under `dir`, sorted by group then name.
inline std::vector<std::filesystem::path> find_traces(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() > 8 && name.ends_with(".json.gz")) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace weft::bench

#endif  // WEFT_BENCH_TRACE_LOADER_H_
