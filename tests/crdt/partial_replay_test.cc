// Eg-walker's partial replay (src/crdt/partial_replay.cc): a concurrent import goes
// through a temporary tracker holding placeholders for the common ancestor's
// state and the ops since, and the container is a plain state again after.
// Checked against docs that build the whole tracker from the op log
// (partial_enabled false), which the loro vectors pin to Loro's results.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/doc_compare.h"
#include "plain_support.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

using testing::is_plain;
using testing::plain_with_ids;

// The plain state's own consistency check for every plain container of `doc`
// ("" when all are consistent).
std::string plain_structure(const Doc& doc) {
  for (const auto& cs : doc.core()->live().containers) {
    if (cs && cs->plain()) {
      std::string why = cs->plain()->check_structure();
      if (!why.empty()) return why;
    }
  }
  return "";
}

// One peer seen twice: `partial` merges through partial trackers (with the
// tracker's self-check on every op), `whole` builds the whole tracker.
struct ReplayReplica {
  explicit ReplayReplica(PeerId peer) : partial(peer), whole(peer) {
    test_options(partial).check_tracker = true;
    test_options(whole).partial_enabled = false;
  }
  Doc partial, whole;
};

const char* const kReplayPieces[] = {"a", "bc", "é", "😀", "xyz", "\n", "ü1"};

// The same random local edit on both docs of `r`.
void edit(ReplayReplica& r) {
  const int what = *rc::gen::inRange(0, 6);
  TextRef tp = r.partial.get_text("t"), tw = r.whole.get_text("t");
  ListRef lp = r.partial.get_list("l"), lw = r.whole.get_list("l");
  if (what <= 2) {
    std::string s;
    const int pieces = *rc::gen::inRange(1, 5);
    for (int k = 0; k < pieces; ++k) s += kReplayPieces[*rc::gen::inRange(0, 7)];
    const size_t pos = *rc::gen::inRange<size_t>(0, tp.len() + 1);
    RC_ASSERT(tp.insert(pos, s).ok());
    RC_ASSERT(tw.insert(pos, s).ok());
  } else if (what == 3 && tp.len() > 0) {
    const size_t pos = *rc::gen::inRange<size_t>(0, tp.len());
    const size_t n = *rc::gen::inRange<size_t>(1, std::min<size_t>(tp.len() - pos, 6) + 1);
    RC_ASSERT(tp.erase(pos, n).ok());
    RC_ASSERT(tw.erase(pos, n).ok());
  } else if (what == 4 || lp.len() == 0) {
    const size_t pos = *rc::gen::inRange<size_t>(0, lp.len() + 1);
    const Value v(int64_t{*rc::gen::inRange(0, 1000)});
    RC_ASSERT(lp.insert(pos, v).ok());
    RC_ASSERT(lw.insert(pos, v).ok());
  } else {
    const size_t pos = *rc::gen::inRange<size_t>(0, lp.len());
    RC_ASSERT(lp.erase(pos, 1).ok());
    RC_ASSERT(lw.erase(pos, 1).ok());
  }
  if (*rc::gen::inRange(0, 3) == 0) {
    RC_ASSERT(r.partial.commit().ok());
    RC_ASSERT(r.whole.commit().ok());
  }
}

void sync(ReplayReplica& from, ReplayReplica& to) {
  RC_ASSERT(to.partial.import(from.partial.export_updates(to.partial.oplog_version())).ok());
  RC_ASSERT(to.whole.import(from.whole.export_updates(to.whole.oplog_version())).ok());
  RC_ASSERT(to.partial.to_json_string() == to.whole.to_json_string());
  // (By id: get_text / get_list would make the roots appear in to_json.)
  // A container whose replay was long enough keeps its whole tracker.
  if (to.partial.core()->partial_stats().kept == 0) {
    RC_ASSERT(is_plain(to.partial, ContainerId::root("t", ContainerType::kText)));
    RC_ASSERT(is_plain(to.partial, ContainerId::root("l", ContainerType::kList)));
  }
  RC_ASSERT(plain_structure(to.partial) == "");
}

// Replicas edit concurrently and sync in random directions: each merge
// through a partial tracker gives the whole tracker's value, leaves plain
// states, and the local edits that follow (whose delete ops name their
// targets' ids) are the same ops, so both histories export the same bytes.
RC_GTEST_PROP(PartialReplay, MatchesTheWholeTracker, ()) {
  const int n = *rc::gen::inRange(2, 4);
  std::vector<std::unique_ptr<ReplayReplica>> rs;
  for (int i = 0; i < n; ++i) rs.push_back(std::make_unique<ReplayReplica>(PeerId(10 + 7 * i)));
  // How far below its ops' lowest position a partial tracker starts (0, the
  // edge, in most cases: the documents here are short).
  const size_t margin = *rc::gen::element<size_t>(0, 0, 1, 4, 1024);
  // How many changes a replay keeps the whole tracker at (the default, or
  // few enough that the trackers are kept in many cases).
  const size_t keep = *rc::gen::element<size_t>(256, 256, 1, 2, 6);
  for (auto& r : rs) {
    test_options(r->partial).partial_skip_margin = margin;
    test_options(r->partial).keep_tracker_changes = keep;
  }
  // Half the cases start from a shared text of a few hundred units, so that
  // edits often lie far from its start (where trackers leave units out).
  if (*rc::gen::arbitrary<bool>()) {
    std::string seed;
    for (int k = 0; k < 40; ++k) seed += kReplayPieces[k % 7] + std::to_string(k);
    RC_ASSERT(rs[0]->partial.get_text("t").insert(0, seed).ok());
    RC_ASSERT(rs[0]->whole.get_text("t").insert(0, seed).ok());
    RC_ASSERT(rs[0]->partial.commit().ok());
    RC_ASSERT(rs[0]->whole.commit().ok());
    for (int i = 1; i < n; ++i) sync(*rs[0], *rs[i]);
  }
  const int steps = *rc::gen::inRange(5, 60);
  for (int s = 0; s < steps; ++s) {
    const int i = *rc::gen::inRange(0, n);
    if (*rc::gen::inRange(0, 4) == 0) {
      const int j = *rc::gen::inRange(0, n);
      if (i == j) continue;
      RC_ASSERT(rs[i]->partial.commit().ok());
      RC_ASSERT(rs[i]->whole.commit().ok());
      sync(*rs[i], *rs[j]);
    } else {
      edit(*rs[i]);
    }
    testing::check_doc(rs[i]->partial);
    testing::check_doc(rs[i]->whole);
  }
  for (auto& r : rs) {
    RC_ASSERT(r->partial.commit().ok());
    RC_ASSERT(r->whole.commit().ok());
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) sync(*rs[i], *rs[j]);
    }
  }
  uint64_t begun = 0, skipped = 0, whole = 0, kept = 0;
  for (auto& r : rs) {
    begun += r->partial.core()->partial_stats().begun;
    skipped += r->partial.core()->partial_stats().skipped;
    whole += r->partial.core()->partial_stats().whole;
    kept += r->partial.core()->partial_stats().kept;
  }
  RC_CLASSIFY(kept > 0, "a long replay kept the whole tracker");
  RC_CLASSIFY(begun > 0, "partial trackers merged");
  RC_CLASSIFY(skipped > 0, "a partial tracker left base units out");
  RC_CLASSIFY(whole > 0, "a partial tracker gave way to the whole one");
  std::string converged;
  for (auto& r : rs) {
    RC_ASSERT(r->partial.export_json_updates() == r->whole.export_json_updates());
    // A fresh doc replaying the whole history (log order: bases go up and
    // down) agrees too.
    Doc fresh(999), fresh_whole(999);
    test_options(fresh).check_tracker = true;
    test_options(fresh_whole).partial_enabled = false;
    RC_ASSERT(fresh.import(r->partial.export_updates()).ok());
    RC_ASSERT(fresh_whole.import(r->whole.export_updates()).ok());
    RC_ASSERT(fresh.to_json_string() == fresh_whole.to_json_string());
    RC_ASSERT(plain_structure(fresh) == "");
    // (Compared through fresh docs: a replica that never touched the list
    // holds no local root for it.)
    if (converged.empty()) converged = fresh.to_json_string();
    RC_ASSERT(fresh.to_json_string() == converged);
  }
}

// Two groups of editors who keep typing while each merges the other's
// edits late never share a version again, so a partial replay would reach
// back to the start of the history at every import. The room's text keeps
// its whole tracker after the first long replay, stays equal to a doc that
// only ever uses the whole tracker, and takes local edits after. A text
// longer than keep_tracker_max_units keeps its plain state all the same.
TEST(PartialReplayTest, EditorsWhoMergeLateKeepTheWholeTracker) {
  Doc room(7), whole(8), capped(9);
  test_options(room).keep_tracker_changes = 16;
  test_options(capped).keep_tracker_changes = 16;
  test_options(capped).keep_tracker_max_units = 10;
  test_options(whole).partial_enabled = false;
  Doc group[2] = {Doc(1), Doc(2)};
  std::vector<std::pair<int, std::string>> sent;  // (group, update)
  size_t merged[2] = {0, 0}, delivered = 0;
  const ContainerId text_id = room.get_text("t").id();
  for (int n = 0; n < 400; ++n) {
    Doc& g = group[n % 2];
    const auto from = g.oplog_version();
    TextRef t = g.get_text("t");
    ASSERT_TRUE(t.insert(t.len() * static_cast<size_t>(n % 7) / 7, "#" + std::to_string(n)).ok());
    ASSERT_TRUE(g.commit().ok());
    sent.emplace_back(n % 2, g.export_updates(from));
    // Each group merges the other's updates 10 steps late; the room gets
    // every update 3 at a time.
    for (int k = 0; k < 2; ++k) {
      for (; merged[k] + 10 < sent.size(); ++merged[k]) {
        if (sent[merged[k]].first != k) {
          ASSERT_TRUE(group[k].import(sent[merged[k]].second).ok());
        }
      }
    }
    if (sent.size() - delivered == 3) {
      for (; delivered < sent.size(); ++delivered) {
        ASSERT_TRUE(room.import(sent[delivered].second).ok());
        ASSERT_TRUE(whole.import(sent[delivered].second).ok());
        ASSERT_TRUE(capped.import(sent[delivered].second).ok());
      }
      ASSERT_EQ(room.to_json_string(), whole.to_json_string()) << n;
      ASSERT_EQ(capped.to_json_string(), whole.to_json_string()) << n;
    }
  }
  const detail::PartialStats& stats = room.core()->partial_stats();
  EXPECT_EQ(stats.kept, 1u);
  EXPECT_FALSE(is_plain(room, text_id));
  EXPECT_EQ(capped.core()->partial_stats().kept, 0u);
  EXPECT_TRUE(is_plain(capped, text_id));
  testing::check_doc(room);
  ASSERT_TRUE(room.get_text("t").insert(3, "local").ok());
  ASSERT_TRUE(whole.get_text("t").insert(3, "local").ok());
  ASSERT_TRUE(room.commit().ok());
  ASSERT_TRUE(whole.commit().ok());
  EXPECT_EQ(room.to_json_string(), whole.to_json_string());
  testing::check_doc(room);
}

TEST(PartialReplayTest, ConcurrentImportLeavesAPlainStateWithIds) {
  Doc a(1), b(2);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "hello world").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  ASSERT_TRUE(t.insert(5, " there").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.get_text("t").insert(11, "!").ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  EXPECT_EQ(a.core()->partial_stats().begun, 1u);
  EXPECT_EQ(a.core()->partial_stats().whole, 0u);
  EXPECT_TRUE(plain_with_ids(a, t.id()));
  EXPECT_EQ(t.to_string(), "hello there world!");
  // A delete right after needs no replay: the ids are there.
  ASSERT_TRUE(t.erase(3, 10).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
  EXPECT_EQ(b.get_text("t").to_string(), "helorld!");
  EXPECT_EQ(t.to_string(), "helorld!");
}

// A later op whose version lacks part of the partial tracker's base (its
// author never saw an edit the base holds) hands the container to the whole
// tracker for the rest of the import; the result is the same. (A binary
// update keeps its sender's log order, so such an op can come after the one
// that began the partial tracker.)
TEST(PartialReplayTest, AnOpOlderThanTheBaseTakesTheWholeTracker) {
  Doc a(1), b(2), c(3);
  ASSERT_TRUE(a.get_text("t").insert(0, "hello world").ok());  // r
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  ASSERT_TRUE(c.import(a.export_updates()).ok());
  ASSERT_TRUE(a.get_text("t").insert(0, "S").ok());  // s
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
  ASSERT_TRUE(b.get_text("t").insert(6, "Q").ok());  // q: has seen s
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.get_text("t").insert(a.get_text("t").len(), "X").ok());  // x: concurrent with q
  ASSERT_TRUE(a.commit().ok());
  Doc d(4), whole(5);
  test_options(whole).partial_enabled = false;
  for (Doc* e : {&d, &whole}) ASSERT_TRUE(e->import(a.export_updates()).ok());  // r, s, x
  ASSERT_TRUE(c.get_text("t").insert(3, "W").ok());                             // w: has not seen s
  ASSERT_TRUE(c.commit().ok());
  ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  ASSERT_TRUE(a.import(c.export_updates(a.oplog_version())).ok());
  // a's log: r, s, x, q, w. In d, q begins a partial tracker based on
  // {r, s}, and w lacks s.
  for (Doc* e : {&d, &whole}) ASSERT_TRUE(e->import(a.export_updates(e->oplog_version())).ok());
  EXPECT_EQ(d.core()->partial_stats().begun, 1u);
  EXPECT_EQ(d.core()->partial_stats().whole, 1u);
  EXPECT_EQ(d.to_json_string(), whole.to_json_string());
  EXPECT_EQ(d.to_json_string(), a.to_json_string());
  EXPECT_TRUE(plain_with_ids(d, d.get_text("t").id()));
}

// Concurrent edits near the end of a long text: the partial tracker leaves
// out the base units before them (PartialTracker::skip) and the merge is the
// whole tracker's. A later op of the same import that reaches below the
// units left out hands the container to the whole tracker, with the same
// result.
TEST(PartialReplayTest, UnitsBeforeTheOpsAreLeftOutOfTheTracker) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "line " + std::to_string(i) + "\n";
  Doc a(1), b(2);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, text).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  const size_t end = t.len();
  ASSERT_TRUE(t.insert(end - 5, "A").ok());  // a and b both edit near the end
  ASSERT_TRUE(a.commit().ok());
  TextRef tb = b.get_text("t");
  ASSERT_TRUE(tb.insert(end - 10, "B").ok());
  ASSERT_TRUE(tb.erase(end - 3, 2).ok());
  ASSERT_TRUE(b.commit().ok());
  const std::string from_b = b.export_updates(a.oplog_version());
  Doc whole(9);
  test_options(whole).partial_enabled = false;
  ASSERT_TRUE(whole.import(a.export_updates()).ok());
  ASSERT_TRUE(whole.import(from_b).ok());
  for (size_t margin : {size_t{0}, size_t{16}}) {
    Doc d = a.fork();
    test_options(d).check_tracker = true;
    test_options(d).partial_skip_margin = margin;
    ASSERT_TRUE(d.import(from_b).ok());
    EXPECT_EQ(d.core()->partial_stats().skipped, 1u) << margin;
    EXPECT_EQ(d.core()->partial_stats().whole, 0u) << margin;
    EXPECT_EQ(d.get_text("t").to_string(), whole.get_text("t").to_string()) << margin;
    EXPECT_TRUE(plain_with_ids(d, t.id()));
  }
  // b's next change has an op near the end, then one at the start: the
  // second reaches below the skip.
  ASSERT_TRUE(tb.insert(tb.len() - 1, "C").ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(tb.insert(2, "D").ok());
  ASSERT_TRUE(b.commit().ok());
  const std::string from_b2 = b.export_updates(a.oplog_version());
  ASSERT_TRUE(whole.import(from_b2).ok());
  Doc d = a.fork();
  test_options(d).check_tracker = true;
  test_options(d).partial_skip_margin = 0;
  ASSERT_TRUE(d.import(from_b2).ok());
  EXPECT_EQ(d.core()->partial_stats().skipped, 1u);
  EXPECT_EQ(d.core()->partial_stats().whole, 1u);
  EXPECT_EQ(d.get_text("t").to_string(), whole.get_text("t").to_string());
  EXPECT_EQ(d.get_text("t").to_string().substr(0, 4), "liDn");
  EXPECT_TRUE(plain_with_ids(d, t.id()));
  // A position past the end, in a tracker that left units out: refused, and
  // the doc is as it was.
  std::string bad = b.export_json_updates(a.oplog_version());
  const std::string pos = "\"pos\":" + std::to_string(end - 10);
  const size_t at = bad.find(pos);
  ASSERT_NE(at, std::string::npos) << bad;
  bad.replace(at, pos.size(), "\"pos\":" + std::to_string(end + 50));
  Doc e = a.fork();
  test_options(e).partial_skip_margin = 0;
  const std::string before = e.export_json_updates();
  auto st = e.import(bad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), StatusCode::kOutOfRange) << st.status().to_string();
  EXPECT_EQ(e.export_json_updates(), before);
  EXPECT_EQ(e.get_text("t").to_string(), t.to_string());
  ASSERT_TRUE(e.import(from_b2).ok());
  EXPECT_EQ(e.get_text("t").to_string(), whole.get_text("t").to_string());
}

// An op whose position is past the end of its version but lands in the
// padding placeholders (the bound on the base's length was loose: the
// replayed ops deleted units they had inserted) is refused like any other
// out-of-range op, and the doc is left as it was.
TEST(PartialReplayTest, APositionPastTheEndIsRefusedInThePadding) {
  Doc a(1), b(2);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "hello world").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  ASSERT_TRUE(t.insert(0, "12345").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(t.erase(0, 5).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.get_text("t").insert(3, "Z").ok());
  ASSERT_TRUE(b.commit().ok());
  std::string update = b.export_json_updates(a.oplog_version());
  const std::string pos = "\"pos\":3";
  const size_t at = update.find(pos);
  ASSERT_NE(at, std::string::npos) << update;
  update.replace(at, pos.size(), "\"pos\":13");  // b's version holds 11 units
  const std::string before = a.export_json_updates();
  auto st = a.import(update);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), StatusCode::kOutOfRange) << st.status().to_string();
  EXPECT_EQ(t.to_string(), "hello world");
  EXPECT_EQ(a.export_json_updates(), before);
  // The valid update still merges.
  ASSERT_TRUE(a.import(b.export_json_updates(a.oplog_version())).ok());
  EXPECT_EQ(t.to_string(), "helZlo world");
}

}  // namespace
}  // namespace weft::crdt
