// Differential tests against loro-crdt 1.17.1 vectors (../shared/data/loro-vectors):
// importing every peer's own changes in several orders reaches the final
// state and version; replaying each peer's events reproduces every state.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "crdt/vector_support.h"
#include "support/test_support.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

using nlohmann::json;
using testing::json_equal;

json version_json(const VersionVector& vv) { return json::parse(vv.to_json_string()); }

// Returns "" on success, else a description of the first mismatch.
std::string check_own_changes(const json& session, const std::vector<std::string>& order) {
  Doc doc(1);
  for (const auto& p : order) {
    auto st = doc.import(session["peer_updates"][p]["own_changes"].dump());
    if (!st.ok()) return "import of " + p + " failed: " + st.status().to_string();
  }
  json value = json::parse(doc.to_json_string());
  if (!json_equal(value, session["final"]["state"]["value"])) {
    return "value " + value.dump() + " != " + session["final"]["state"]["value"].dump();
  }
  json ver = version_json(doc.oplog_version());
  if (!json_equal(ver, session["final"]["version"])) {
    return "version " + ver.dump() + " != " + session["final"]["version"].dump();
  }
  return "";
}

std::string check_events(const json& session) {
  std::map<std::string, Doc> docs;
  int i = 0;
  for (const auto& ev : session["events"]) {
    ++i;
    std::string peer = ev["peer"];
    auto it = docs.find(peer);
    if (it == docs.end()) it = docs.emplace(peer, Doc(1)).first;
    Doc& doc = it->second;
    auto st = doc.import(ev["updates"].dump());
    if (!st.ok())
      return "event " + std::to_string(i) + ": import failed: " + st.status().to_string();
    json value = json::parse(doc.to_json_string());
    if (!json_equal(value, ev["state_after"]["value"])) {
      return "event " + std::to_string(i) + " (" + std::string(ev["type"]) + " on " + peer +
             "): value " + value.dump() + " != " + ev["state_after"]["value"].dump();
    }
    json ver = version_json(doc.oplog_version());
    if (!json_equal(ver, ev["version_after"])) {
      return "event " + std::to_string(i) + ": version " + ver.dump() +
             " != " + ev["version_after"].dump();
    }
    // Frontiers as loro reports them.
    json fr = json::parse(doc.oplog_frontiers().to_json_string());
    json expected = ev["frontiers_after"];
    auto norm = [](json a) {
      std::vector<std::string> v;
      for (auto& x : a)
        v.push_back(std::string(x["peer"]) + "@" + std::to_string(int64_t(x["counter"])));
      std::sort(v.begin(), v.end());
      return v;
    };
    if (norm(fr) != norm(expected)) {
      return "event " + std::to_string(i) + ": frontiers " + fr.dump() + " != " + expected.dump();
    }
  }
  return "";
}

void run_set(const std::filesystem::path& dir, int* sessions_out) {
  auto files = testing::session_files(dir);
  ASSERT_FALSE(files.empty()) << "no sessions in " << dir;
  int failures = 0;
  for (const auto& f : files) {
    json s = testing::load_json(f);
    std::vector<std::string> peers = s["peers"];
    std::vector<std::vector<std::string>> orders = {peers, {peers.rbegin(), peers.rend()}};
    std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(f.filename().string())));
    auto shuffled = peers;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    orders.push_back(shuffled);
    for (const auto& order : orders) {
      std::string err = check_own_changes(s, order);
      if (!err.empty()) {
        ++failures;
        ADD_FAILURE() << f.filename() << " own_changes: " << err.substr(0, 2000);
        break;
      }
    }
    std::string err = check_events(s);
    if (!err.empty()) {
      ++failures;
      ADD_FAILURE() << f.filename() << " events: " << err.substr(0, 2000);
    }
  }
  *sessions_out = static_cast<int>(files.size());
  EXPECT_EQ(failures, 0);
}

TEST(LoroVectors, Basic) {
  WEFT_REQUIRE_SHARED_DIR(shared);
  int n = 0;
  run_set(shared / "data/loro-vectors/basic", &n);
  EXPECT_GT(n, 0);
}

TEST(LoroVectors, Ext) {
  WEFT_REQUIRE_SHARED_DIR(shared);
  int n = 0;
  run_set(shared / "data/loro-vectors/ext", &n);
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace weft::crdt
