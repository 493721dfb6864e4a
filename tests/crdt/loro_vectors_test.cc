// Differential tests against loro-crdt 1.17.1 vectors (../shared/data/loro-vectors):
// importing every peer's own changes in several orders reaches the final
// state and version; replaying each peer's events reproduces every state.
// The `movable` set (MovableList included, which weft does not implement
// yet) checks that such imports are refused cleanly and the rest still works.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>

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

// The doc's whole observable content: value, versions and history.
struct DocImage {
  std::string value, version, frontiers, updates;
  bool operator==(const DocImage&) const = default;
};
DocImage image_of(const Doc& doc) {
  return {doc.to_json_string(), doc.oplog_version().to_json_string(),
          doc.oplog_frontiers().to_json_string(), doc.export_updates()};
}

// An import that touches a MovableList (an op on one, or a value creating
// one) must fail with kUnimplemented, naming MovableList, and leave the doc
// exactly as it was; any other import must succeed. Returns "" on success;
// `*refused` counts the refused imports.
std::string import_or_refuse(Doc& doc, const json& updates, const std::string& what, int* refused) {
  const std::string text = updates.dump();
  const bool movable = text.find("MovableList") != std::string::npos;
  const DocImage before = image_of(doc);
  auto st = doc.import(text);
  if (st.ok()) {
    return movable ? what + ": imported MovableList ops instead of refusing them" : "";
  }
  if (!movable) return what + ": import failed: " + st.status().to_string();
  if (st.status().code() != StatusCode::kUnimplemented ||
      st.status().message().find("MovableList") == std::string::npos) {
    return what + ": refused with the wrong error: " + st.status().to_string();
  }
  if (!(image_of(doc) == before)) return what + ": the refused import changed the doc";
  ++*refused;
  return "";
}

TEST(LoroVectors, MovableListIsRefusedCleanly) {
  WEFT_REQUIRE_SHARED_DIR(shared);
  auto files = testing::session_files(shared / "data/loro-vectors/movable");
  ASSERT_FALSE(files.empty());
  int refused = 0, finals_checked = 0, events_checked = 0, failures = 0;
  for (const auto& f : files) {
    json s = testing::load_json(f);
    std::string err;
    // Own changes in peer order: when none is refused, the final state.
    Doc doc(1);
    const int refused_before = refused;
    for (const auto& peer : s["peers"]) {
      const std::string p = peer;
      err = import_or_refuse(doc, s["peer_updates"][p]["own_changes"], "own changes of " + p,
                             &refused);
      if (!err.empty()) break;
    }
    if (err.empty() && refused == refused_before) {
      ++finals_checked;
      if (!json_equal(json::parse(doc.to_json_string()), s["final"]["state"]["value"]))
        err = "final value " + doc.to_json_string();
    }
    // Events: each peer's doc follows its events until its first refusal.
    std::map<std::string, Doc> docs;
    std::set<std::string> stopped;
    int i = 0;
    for (const auto& ev : s["events"]) {
      if (!err.empty()) break;
      ++i;
      const std::string peer = ev["peer"];
      if (stopped.count(peer)) continue;
      auto it = docs.try_emplace(peer, Doc(1)).first;
      const int n = refused;
      err = import_or_refuse(it->second, ev["updates"], "event " + std::to_string(i), &refused);
      if (!err.empty()) break;
      if (refused != n) {
        stopped.insert(peer);
        continue;
      }
      ++events_checked;
      if (!json_equal(json::parse(it->second.to_json_string()), ev["state_after"]["value"]))
        err = "event " + std::to_string(i) + ": value " + it->second.to_json_string();
    }
    if (!err.empty()) {
      ++failures;
      ADD_FAILURE() << f.filename() << ": " << err.substr(0, 2000);
    }
  }
  EXPECT_EQ(failures, 0);
  // The set exercises both sides: refusals, and imports checked against Loro.
  EXPECT_GT(refused, 0);
  EXPECT_GT(events_checked, 0);
  std::printf("movable set: %zu sessions, %d imports refused, %d finals and %d events checked\n",
              files.size(), refused, finals_checked, events_checked);
}

}  // namespace
}  // namespace weft::crdt
