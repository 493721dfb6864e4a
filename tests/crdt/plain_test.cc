// The plain state (Eg-walker "state" half) against a model and against docs
// forced to keep a Fugue tracker: same values, same exports, lazy tracker
// building on concurrent imports, marks and undo, and the causal import path.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "crdt/core_access.h"
#include "crdt/plain_support.h"
#include "support/test_support.h"
#include "weft/base/utf.h"
#include "weft/crdt/doc.h"
#include "weft/crdt/undo.h"

namespace weft::crdt {
namespace {

using detail::PlainSeq;
using testing::is_plain;
using testing::tracker_doc;

std::string utf8_of(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

// An empty state at the version of `s` (what a snapshot loader starts from).
std::unique_ptr<detail::State> empty_state_like(const detail::State& s) {
  auto fresh = std::make_unique<detail::State>();
  fresh->vv = s.vv;
  fresh->vv_total = s.vv_total;
  return fresh;
}

TEST(PlainSeqTest, MatchesAModelUnderRandomEdits) {
  rc::check([] {
    // Ids kept, not kept from the start, or dropped at step `drop_at`.
    const int ids_mode = *rc::gen::inRange(0, 3);
    PlainSeq seq(true, /*track_ids=*/ids_mode != 1);
    std::u32string model;
    std::vector<std::pair<uint32_t, int32_t>> ids;  // model ids
    // All-ASCII text takes the one-key erase's own path.
    const bool ascii = *rc::gen::arbitrary<bool>();
    const std::u32string alphabet = ascii ? U"abc \n" : U"ab\u00e9\u4e2d\U0001F600\n";
    int32_t counters[3] = {0, 0, 0};  // per peer (1 and 2 write)
    const int steps = *rc::gen::inRange(1, 400);
    const int drop_at = ids_mode == 2 ? *rc::gen::inRange(0, steps) : -1;
    for (int i = 0; i < steps; ++i) {
      if (i == drop_at) seq.set_ids_unknown();
      if (model.empty() || *rc::gen::inRange(0, 3) > 0) {
        const size_t pos = *rc::gen::inRange<size_t>(0, model.size() + 1);
        // Mostly short inserts (typing extends id runs), sometimes long ones.
        const size_t n =
            *rc::gen::inRange<size_t>(1, *rc::gen::elementOf(std::vector<size_t>{4, 700}));
        const uint32_t peer = *rc::gen::inRange<uint32_t>(1, 3);
        int32_t& counter = counters[peer];
        std::vector<uint32_t> cps(n);
        for (size_t k = 0; k < n; ++k) cps[k] = alphabet[(i + k) % alphabet.size()];
        RC_ASSERT(seq.insert(peer, counter, static_cast<uint32_t>(pos), cps.data(), n).ok());
        for (size_t k = 0; k < n; ++k) {
          model.insert(model.begin() + pos + k, static_cast<char32_t>(cps[k]));
          ids.insert(ids.begin() + pos + k, {peer, counter + static_cast<int32_t>(k)});
        }
        counter += static_cast<int32_t>(n);
      } else {
        const size_t pos = *rc::gen::inRange<size_t>(0, model.size());
        const size_t n = *rc::gen::inRange<size_t>(
            1, std::min<size_t>(model.size() - pos,
                                *rc::gen::elementOf(std::vector<size_t>{3, 1000})) +
                   1);
        RC_ASSERT(seq.erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)).ok());
        model.erase(pos, n);
        ids.erase(ids.begin() + pos, ids.begin() + pos + n);
      }
      RC_ASSERT(seq.visible_units() == model.size());
      // The structure walk is the cost of this test; sanitizer builds take every 16th step.
      if (!weft::testing::kSanitizerBuild || i % 16 == 15) RC_ASSERT(seq.check_structure() == "");
    }
    RC_ASSERT(seq.check_structure() == "");
    RC_ASSERT(seq.ids_known() == (ids_mode == 0));
    const std::string text = utf8_of(model);
    RC_ASSERT(seq.to_utf8() == text);
    RC_ASSERT(seq.utf8_len() == text.size());
    const auto astral = static_cast<size_t>(
        std::count_if(model.begin(), model.end(), [](char32_t c) { return c > 0xFFFF; }));
    RC_ASSERT(seq.utf16_len() == model.size() + astral);
    // Unit conversions agree with the model at a few positions.
    for (int probe = 0; probe < 8; ++probe) {
      const size_t n = *rc::gen::inRange<size_t>(0, model.size() + 1);
      auto b = seq.locate(n, 0);
      RC_ASSERT(b.ok());
      RC_ASSERT(b->units == n);
      RC_ASSERT(b->u8 == utf8_of(model.substr(0, n)).size());
      auto back = seq.locate(b->u8, 2);
      RC_ASSERT(back.ok());
      RC_ASSERT(back->units == n);
      const auto astral_before = static_cast<size_t>(
          std::count_if(model.begin(), model.begin() + n, [](char32_t c) { return c > 0xFFFF; }));
      RC_ASSERT(b->u16 == n + astral_before);
    }
    RC_ASSERT(!seq.locate(model.size() + 1, 0).ok());
    RC_ASSERT(!seq.erase(static_cast<uint32_t>(model.size()), 1).ok());
    if (!seq.ids_known()) return;
    // Id runs cover the range with the model's ids.
    const size_t from = *rc::gen::inRange<size_t>(0, model.size() + 1);
    const size_t to = *rc::gen::inRange<size_t>(from, model.size() + 1);
    size_t unit = from;
    for (const auto& run : seq.unit_runs(from, to)) {
      RC_ASSERT(run.entity == unit);
      for (uint32_t k = 0; k < run.len; ++k) {
        RC_ASSERT(ids[unit + k].first == run.peer);
        RC_ASSERT(ids[unit + k].second == run.counter + static_cast<int32_t>(k));
      }
      unit += run.len;
    }
    RC_ASSERT(unit == to);
    if (!model.empty()) {
      const size_t at = *rc::gen::inRange<size_t>(0, model.size());
      uint32_t peer = 0;
      int32_t counter = 0;
      const size_t run = seq.id_at(at, &peer, &counter);
      RC_ASSERT(peer == ids[at].first);
      RC_ASSERT(counter == ids[at].second);
      RC_ASSERT(run >= 1u);
      RC_ASSERT(at + run <= model.size());
      for (size_t k = 1; k < run; ++k) {
        RC_ASSERT(ids[at + k].first == peer);
        RC_ASSERT(ids[at + k].second == counter + static_cast<int32_t>(k));
      }
    }
  });
}

TEST(PlainSeqTest, AssignUtf8MatchesInsertedContent) {
  std::u32string model;
  for (int i = 0; i < 1000; ++i)
    model += (i % 7 == 0) ? U"\U0001F600" : (i % 5 == 0) ? U"\u00e9" : U"x";
  const std::string text = utf8_of(model);
  PlainSeq assigned(true), inserted(true);
  assigned.assign_utf8(text);
  std::vector<uint32_t> cps(model.begin(), model.end());
  ASSERT_TRUE(inserted.insert(1, 0, 0, cps.data(), cps.size()).ok());
  EXPECT_FALSE(assigned.ids_known());
  EXPECT_EQ(assigned.to_utf8(), text);
  EXPECT_EQ(assigned.visible_units(), model.size());
  EXPECT_EQ(assigned.utf16_len(), inserted.utf16_len());
  EXPECT_EQ(assigned.utf8_len(), text.size());
  for (size_t n = 0; n <= model.size(); n += 37) {
    auto a = assigned.locate(n, 0), b = inserted.locate(n, 0);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->u16, b->u16);
    EXPECT_EQ(a->u8, b->u8);
    EXPECT_EQ(assigned.locate(b->u16, 1)->units, n);
  }
  // Edits work on an assigned state (ids are only needed for deletes' ops).
  ASSERT_TRUE(assigned.erase(3, 500).ok());
  ASSERT_TRUE(assigned.insert(1, 0, 2, cps.data(), 3).ok());
  model.erase(3, 500);
  model.insert(2, std::u32string(cps.begin(), cps.begin() + 3));
  EXPECT_EQ(assigned.to_utf8(), utf8_of(model));
  PlainSeq empty(true);
  empty.assign_utf8("");
  EXPECT_EQ(empty.visible_units(), 0u);
  EXPECT_TRUE(empty.locate(0, 2).ok());
}

TEST(PlainSeqTest, RejectsOutOfRangeAndSplitUtf16) {
  PlainSeq seq(true);
  const uint32_t cps[] = {U'a', 0x1F600, U'b'};
  EXPECT_FALSE(seq.insert(1, 0, 1, cps, 3).ok());
  ASSERT_TRUE(seq.insert(1, 0, 0, cps, 3).ok());
  EXPECT_EQ(seq.utf16_len(), 4u);
  EXPECT_EQ(seq.locate(2, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(seq.locate(3, 1)->units, 2u);
  EXPECT_EQ(seq.erase(2, 2).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(seq.to_utf8(), "a\U0001F600b");
}

TEST(PlainStateTest, UnicodeFastPathRejectsBadRangesLikeTheTracker) {
  // TextRef skips the unit conversion for unicode positions on a plain
  // state; its errors must match the converting path's (a tracker doc).
  Doc plain(1);
  Doc tracked = tracker_doc(1);
  for (Doc* d : {&plain, &tracked}) {
    TextRef t = d->get_text("t");
    ASSERT_TRUE(t.insert(0, "a\U0001F600b").ok());
    EXPECT_EQ(t.insert(4, "x").code(), StatusCode::kOutOfRange);
    EXPECT_EQ(t.erase(2, 2).code(), StatusCode::kOutOfRange);
    EXPECT_EQ(t.erase(1, SIZE_MAX).code(), StatusCode::kOutOfRange);
    EXPECT_TRUE(t.erase(3, 0).ok());
    ASSERT_TRUE(t.insert(3, "c").ok());
    ASSERT_TRUE(t.erase(1, 1).ok());
    EXPECT_EQ(t.to_string(), "abc");
  }
  EXPECT_TRUE(is_plain(plain, ContainerId::root("t", ContainerType::kText)));
}

// Random local edits on a plain doc and on a tracker doc with the same peer.
void random_text_list_edit(std::vector<Doc*> docs) {
  const int kind = *rc::gen::inRange(0, 6);
  const std::vector<std::string> pieces = {"a", "xyz", "\u00e9", "\U0001F600", "\u4e2d\u6587"};
  TextRef t0 = docs[0]->get_text("t");
  ListRef l0 = docs[0]->get_list("l");
  const size_t tlen = t0.len(), llen = l0.len();
  const size_t tpos = *rc::gen::inRange<size_t>(0, tlen + 1);
  const size_t lpos = *rc::gen::inRange<size_t>(0, llen + 1);
  const size_t tn =
      tlen > tpos ? *rc::gen::inRange<size_t>(1, std::min<size_t>(5, tlen - tpos) + 1) : 0;
  const std::string piece = *rc::gen::elementOf(pieces);
  const int64_t number = *rc::gen::inRange(0, 100);
  for (Doc* d : docs) {
    TextRef t = d->get_text("t");
    ListRef l = d->get_list("l");
    switch (kind) {
      case 0:
      case 1:
        RC_ASSERT(t.insert(tpos, piece).ok());
        break;
      case 2:
        if (tn) RC_ASSERT(t.erase(tpos, tn).ok());
        break;
      case 3:
        RC_ASSERT(l.insert(lpos, Value(number)).ok());
        break;
      case 4:
        if (lpos < llen) RC_ASSERT(l.erase(lpos, 1).ok());
        break;
      case 5:
        RC_ASSERT(d->commit().ok());
        break;
    }
  }
}

RC_GTEST_PROP(PlainStateTest, PlainAndTrackerDocsAgree, ()) {
  // Two authors edit concurrently and sync at random points; each author is
  // mirrored by a doc forced to keep a tracker. Values and exports agree.
  Doc a(1), b(2);
  Doc ta = tracker_doc(1), tb = tracker_doc(2);
  for (Doc* d : {&a, &b, &ta, &tb}) {
    d->get_text("t");
    d->get_list("l");
  }
  const int rounds = *rc::gen::inRange(1, 6);
  for (int r = 0; r < rounds; ++r) {
    const int edits = *rc::gen::inRange(0, 12);
    for (int i = 0; i < edits; ++i) {
      if (*rc::gen::arbitrary<bool>())
        random_text_list_edit({&a, &ta});
      else
        random_text_list_edit({&b, &tb});
    }
    for (Doc* d : {&a, &b, &ta, &tb}) RC_ASSERT(d->commit().ok());
    RC_ASSERT(a.to_json_string() == ta.to_json_string());
    RC_ASSERT(b.to_json_string() == tb.to_json_string());
    RC_ASSERT(a.export_json_updates() == ta.export_json_updates());
    const int sync = *rc::gen::inRange(0, 3);
    if (sync == 1) {
      RC_ASSERT(a.import(b.export_updates(a.oplog_version())).ok());
      RC_ASSERT(ta.import(tb.export_updates(ta.oplog_version())).ok());
    } else if (sync == 2) {
      RC_ASSERT(b.import(a.export_updates(b.oplog_version())).ok());
      RC_ASSERT(tb.import(ta.export_updates(tb.oplog_version())).ok());
    }
  }
  for (Doc* d : {&a, &ta}) RC_ASSERT(d->import(b.export_updates()).ok());
  for (Doc* d : {&b, &tb}) RC_ASSERT(d->import(a.export_updates()).ok());
  RC_ASSERT(a.to_json_string() == b.to_json_string());
  RC_ASSERT(a.to_json_string() == ta.to_json_string());
  RC_ASSERT(tb.to_json_string() == ta.to_json_string());
  RC_ASSERT(a.export_json_updates() == ta.export_json_updates());
  const size_t u16 = a.get_text("t").len(PosUnit::kUtf16);
  RC_ASSERT(u16 == ta.get_text("t").len(PosUnit::kUtf16));
  RC_ASSERT(a.get_text("t").len(PosUnit::kBytes) == ta.get_text("t").len(PosUnit::kBytes));
}

// Two peers edit "hello world" concurrently and sync; returns both texts.
// `plain` false runs the same scenario on docs that keep a tracker throughout.
std::pair<std::string, std::string> concurrent_scenario(bool plain) {
  Doc a = plain ? Doc(1) : tracker_doc(1);
  TextRef t = a.get_text("t");
  EXPECT_TRUE(t.insert(0, "hello world").ok());
  EXPECT_TRUE(a.commit().ok());
  Doc b = plain ? Doc(2) : tracker_doc(2);
  EXPECT_TRUE(b.import(a.export_updates()).ok());
  EXPECT_TRUE(t.insert(5, ",").ok());
  EXPECT_TRUE(t.erase(0, 1).ok());
  EXPECT_TRUE(t.insert(0, "H").ok());
  EXPECT_TRUE(a.commit().ok());
  EXPECT_EQ(is_plain(a, t.id()), plain);
  EXPECT_TRUE(b.get_text("t").insert(11, "!").ok());
  EXPECT_TRUE(b.get_text("t").insert(0, ">").ok());
  EXPECT_TRUE(b.commit().ok());
  // b's change is concurrent with a's state: a merges it through a
  // temporary tracker and stays plain.
  EXPECT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  EXPECT_EQ(is_plain(a, t.id()), plain);
  EXPECT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
  EXPECT_EQ(b.get_text("t").to_string(), t.to_string());
  std::string merged = t.to_string();
  // Editing after the tracker was built keeps working.
  EXPECT_TRUE(t.erase(0, 1).ok());
  EXPECT_TRUE(t.insert(t.len(), "?").ok());
  EXPECT_TRUE(a.commit().ok());
  EXPECT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
  EXPECT_EQ(b.get_text("t").to_string(), t.to_string());
  return {merged, t.to_string()};
}

TEST(PlainStateTest, LocalEditsStayPlainThroughAConcurrentImport) {
  auto plain = concurrent_scenario(true);
  auto tracker = concurrent_scenario(false);
  EXPECT_EQ(plain, tracker);
  EXPECT_EQ(plain.first.size(), std::string(">Hello, world!").size());
}

TEST(PlainStateTest, TrackerBuiltMidTransactionKeepsTheOpenOps) {
  Doc a(1);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "abcdef").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(t.insert(3, "XY").ok());  // open transaction
  ASSERT_TRUE(t.erase(0, 1).ok());
  // A mark needs style anchors, i.e. the tracker, in the middle of the txn.
  ASSERT_TRUE(t.mark(0, 2, "bold", Value(true)).ok());
  EXPECT_FALSE(is_plain(a, t.id()));
  ASSERT_TRUE(t.insert(t.len(), "!").ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(t.to_string(), "bcXYdef!");
  Doc c(3);
  ASSERT_TRUE(c.import(a.export_updates()).ok());
  EXPECT_EQ(c.get_text("t").to_string(), "bcXYdef!");
}

TEST(PlainStateTest, CausalImportStaysPlain) {
  Doc a(1);
  TextRef t = a.get_text("t");
  ListRef l = a.get_list("l");
  Doc b(2);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(t.insert(t.len() / 2, std::to_string(i)).ok());
    if (i % 7 == 3) {
      ASSERT_TRUE(t.erase(1, 2).ok());
    }
    ASSERT_TRUE(l.insert(l.len(), Value(int64_t{i})).ok());
    ASSERT_TRUE(a.commit().ok());
    if (i % 10 == 9) {
      ASSERT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
      EXPECT_TRUE(is_plain(b, t.id()));
      EXPECT_TRUE(is_plain(b, l.id()));
      EXPECT_EQ(b.to_json_string(), a.to_json_string());
    }
  }
  // b answers on top of a's history: causal for a too.
  ASSERT_TRUE(b.get_text("t").insert(0, "<").ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  EXPECT_TRUE(is_plain(a, t.id()));
  EXPECT_EQ(a.to_json_string(), b.to_json_string());
  Doc tracker = tracker_doc(3);
  ASSERT_TRUE(tracker.import(a.export_updates()).ok());
  EXPECT_EQ(tracker.to_json_string(), a.to_json_string());
}

TEST(PlainStateTest, UndoBuildsTheTracker) {
  Doc a(1);
  UndoManager undo(a);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "abc").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(t.erase(1, 1).ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_TRUE(is_plain(a, t.id()));
  ASSERT_TRUE(undo.undo().ok());
  EXPECT_EQ(t.to_string(), "abc");
  ASSERT_TRUE(undo.redo().ok());
  EXPECT_EQ(t.to_string(), "ac");
}

TEST(PlainStateTest, UndoOfAMapEditLeavesTextPlain) {
  Doc a(1);
  UndoManager undo(a);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "abc").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(a.get_map("m").set("k", Value(true)).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(undo.undo().ok());
  EXPECT_FALSE(a.get_map("m").get("k").has_value());
  EXPECT_TRUE(is_plain(a, t.id()));
  ASSERT_TRUE(undo.undo().ok());  // the text insert: now the tracker is built
  EXPECT_EQ(t.to_string(), "");
  EXPECT_FALSE(is_plain(a, t.id()));
}

TEST(PlainStateTest, SetPlainTextThenEditBuildsIdsFromTheLog) {
  Doc a(1);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "h\u00e9llo").ok());
  ASSERT_TRUE(a.commit().ok());
  auto& core = *a.core();
  const uint32_t idx = *core.find_container(t.id());
  // What a snapshot loader does: the log holds the history, the state is set.
  auto fresh = empty_state_like(core.live());
  ASSERT_TRUE(core.set_plain_text(*fresh, idx, "h\u00e9llo").ok());
  EXPECT_FALSE(core.set_plain_text(*fresh, idx, "\xff").ok());
  EXPECT_FALSE(core.set_plain_list(*fresh, idx, {}).ok());
  detail::CoreAccess::state(core) = std::move(fresh);
  EXPECT_EQ(t.to_string(), "h\u00e9llo");
  EXPECT_EQ(t.len(PosUnit::kBytes), 6u);
  EXPECT_EQ(*t.convert_pos(2, PosUnit::kUnicode, PosUnit::kBytes), 3u);
  ASSERT_TRUE(t.insert(5, "!").ok());  // insert: no ids needed for the rest
  ASSERT_TRUE(t.erase(0, 1).ok());     // delete: needs the ids, from the log
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(t.to_string(), "\u00e9llo!");
  Doc c(3);
  ASSERT_TRUE(c.import(a.export_updates()).ok());
  EXPECT_EQ(c.get_text("t").to_string(), "\u00e9llo!");
}

TEST(PlainStateTest, SetPlainListReadsBack) {
  Doc a(1);
  ListRef l = a.get_list("l");
  ASSERT_TRUE(l.insert(0, Value(int64_t{1})).ok());
  ASSERT_TRUE(l.insert(1, Value("x")).ok());
  ASSERT_TRUE(a.commit().ok());
  auto& core = *a.core();
  const uint32_t idx = *core.find_container(l.id());
  auto fresh = empty_state_like(core.live());
  ASSERT_TRUE(core.set_plain_list(*fresh, idx, {Value(int64_t{1}), Value("x")}).ok());
  detail::CoreAccess::state(core) = std::move(fresh);
  EXPECT_EQ(*l.get(1), Value("x"));
  ASSERT_TRUE(l.erase(0, 1).ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(l.len(), 1u);
  EXPECT_EQ(*l.get(0), Value("x"));
}

TEST(LocalPathTest, KeystrokesMergeIntoRunsOfOneChange) {
  Doc a(7);
  TextRef t = a.get_text("t");
  for (char c : std::string("hello world")) {
    ASSERT_TRUE(t.insert(t.len(), std::string(1, c)).ok());
    ASSERT_TRUE(a.commit().ok());
  }
  for (int i = 0; i < 3; ++i) {  // backspace x3: "rld" (ids 8..10)
    ASSERT_TRUE(t.erase(t.len() - 1, 1).ok());
    ASSERT_TRUE(a.commit().ok());
  }
  ASSERT_TRUE(t.erase(0, 1).ok());  // forward delete x2 in one txn: "he"
  ASSERT_TRUE(t.erase(0, 1).ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(t.to_string(), "llo wo");
  const auto& core = *a.core();
  ASSERT_EQ(core.log().size(), 1u);
  const auto& ops = core.log()[0].ops;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].text.size(), 11u);
  EXPECT_EQ(ops[1].pos, 10);
  EXPECT_EQ(ops[1].len, -3);
  EXPECT_EQ(ops[1].start_id, (ID{7, 8}));  // the leftmost deleted id
  EXPECT_EQ(ops[2].pos, 0);
  EXPECT_EQ(ops[2].len, 2);
  EXPECT_EQ(ops[2].start_id, (ID{7, 0}));
  // Both encodings carry the runs to a doc that keeps a tracker.
  for (const std::string& data : {a.export_json_updates(), a.export_updates()}) {
    Doc b = tracker_doc(8);
    ASSERT_TRUE(b.import(data).ok());
    EXPECT_EQ(b.get_text("t").to_string(), "llo wo");
  }
  // Undo of a backspace run brings the characters back in place.
  Doc c(9);
  UndoManager undo(c);
  TextRef ct = c.get_text("t");
  ASSERT_TRUE(ct.insert(0, "abcd").ok());
  ASSERT_TRUE(c.commit().ok());
  ASSERT_TRUE(ct.erase(3, 1).ok());
  ASSERT_TRUE(ct.erase(2, 1).ok());
  ASSERT_TRUE(ct.erase(1, 1).ok());
  ASSERT_TRUE(c.commit().ok());
  EXPECT_EQ(ct.to_string(), "a");
  ASSERT_TRUE(undo.undo().ok());
  EXPECT_EQ(ct.to_string(), "abcd");
}

TEST(LocalPathTest, KeystrokesInOneTxnMatchTheTrackerPath) {
  // Typing, backspace and forward delete inside one open transaction (the
  // in-place extension) and across commits: the plain doc's ops, exports and
  // events equal those of a doc that takes the general path (tracker).
  Doc a(3);
  Doc ta = tracker_doc(3);
  int events_a = 0, events_ta = 0;
  auto sub_a = a.subscribe_root([&](const DocEvent&) { ++events_a; });
  auto sub_ta = ta.subscribe_root([&](const DocEvent&) { ++events_ta; });
  for (Doc* d : {&a, &ta}) {
    TextRef t = d->get_text("t");
    for (const char* piece : {"a", "b", "\u00e9", "\U0001F600", "cd"}) {
      ASSERT_TRUE(t.insert(t.len(), piece).ok());
    }
    ASSERT_TRUE(t.insert(1, "x").ok());  // not at the end of the last op: a new op
    ASSERT_TRUE(t.erase(t.len() - 1, 1).ok());
    ASSERT_TRUE(t.erase(t.len() - 1, 1).ok());  // backspace run
    ASSERT_TRUE(t.erase(0, 1).ok());
    ASSERT_TRUE(t.erase(0, 1).ok());  // forward-delete run
    ASSERT_TRUE(d->commit().ok());
    ASSERT_TRUE(t.insert(t.len(), "z").ok());  // merges into the previous change
    ASSERT_TRUE(d->commit().ok());
  }
  EXPECT_TRUE(is_plain(a, a.get_text("t").id()));
  EXPECT_EQ(a.get_text("t").to_string(), ta.get_text("t").to_string());
  EXPECT_EQ(a.get_text("t").to_string(), "b\u00e9\U0001F600z");
  EXPECT_EQ(a.export_json_updates(), ta.export_json_updates());
  EXPECT_EQ(a.export_updates(), ta.export_updates());
  ASSERT_EQ(a.core()->log().size(), 1u);
  EXPECT_EQ(a.core()->log()[0].ops.size(), ta.core()->log()[0].ops.size());
  EXPECT_EQ(events_a, 2);
  EXPECT_EQ(events_a, events_ta);
}

}  // namespace
}  // namespace weft::crdt
