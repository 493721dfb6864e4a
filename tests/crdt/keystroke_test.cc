// The keystroke commit (DocCore::commit_in_place) against the general commit
// path: random typing sessions with random commit options, subscribers,
// undo managers, auto-commit and remote imports give byte-identical exports,
// the same value, versions, change lists, events and local-update bytes
// whether or not the in-place paths (a direct keystroke written into the
// last change, commit_direct, commit_in_place) may run, also when the op log
// is read while a transaction is open.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/doc_compare.h"
#include "weft/crdt/doc.h"
#include "weft/crdt/undo.h"

namespace weft::crdt {
namespace {

const std::vector<std::string> kTyped = {
    "a", "b", " ", "xy", "é", "😀", "中", "e\u0301", "\n", "long enough to leave the inline text"};

// Everything an event says, as one string.
std::string describe(const DocEvent& e) {
  std::string s = std::to_string(static_cast<int>(e.by)) + "|" + e.origin + "|" +
                  (e.message ? "m:" + *e.message : "-") + "|" + e.from.to_json_string() + "|" +
                  e.to.to_json_string();
  for (const ContainerDiff& d : e.diffs) {
    s += "|" + d.target.to_string() + ":";
    if (const auto* t = std::get_if<TextDelta>(&d.diff)) {
      for (const auto& i : *t)
        s += std::to_string(static_cast<int>(i.kind)) + "," + std::to_string(i.len) + "," + i.text +
             ";";
    } else if (const auto* l = std::get_if<ListDelta>(&d.diff)) {
      for (const auto& i : *l) {
        s += std::to_string(static_cast<int>(i.kind)) + "," + std::to_string(i.len) + ",";
        for (const auto& v : i.values) s += v.to_json_string() + ",";
        s += ";";
      }
    } else if (const auto* m = std::get_if<MapDelta>(&d.diff)) {
      for (const auto& [k, v] : m->updated) s += k + "=" + (v ? v->to_json_string() : "del") + ";";
    } else {
      s += std::to_string(std::get<CounterDelta>(d.diff).delta);
    }
  }
  return s;
}

// One replica of the session and what its observers saw.
struct Replica {
  explicit Replica(bool fast) : doc(7) { test_options(doc).fast_commit = fast; }
  Doc doc;
  std::vector<std::string> seen;  // events and local-update bytes, in order
  std::vector<Subscription> subs;
  std::unique_ptr<UndoManager> undo;
  size_t cursor = 0;
};

// One step of a random session; `r` picks positions, texts and options.
struct Step {
  int kind = 0;
  uint32_t r = 0;
  uint32_t s = 0;
};

// Applies `step` to `rep`; `remote` is the blob a remote step imports.
void apply(Replica& rep, const Step& step, const std::string& remote) {
  Doc& doc = rep.doc;
  TextRef text = doc.get_text("t");
  const size_t len = text.len();
  rep.cursor = std::min(rep.cursor, len);
  switch (step.kind) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4: {  // typing at the cursor (the keystroke case)
      const std::string& piece = kTyped[step.r % (step.kind == 4 ? kTyped.size() : 3)];
      RC_ASSERT(text.insert(rep.cursor, piece).ok());
      rep.cursor = text.len() - (len - rep.cursor);
      break;
    }
    case 5:
      rep.cursor = step.r % (len + 1);
      break;
    case 6:  // backspace
      if (rep.cursor > 0) RC_ASSERT(text.erase(--rep.cursor, 1).ok());
      break;
    case 7:  // forward delete
      if (rep.cursor < len) RC_ASSERT(text.erase(rep.cursor, 1).ok());
      break;
    case 8:
      if (len > 0) {
        const size_t at = step.r % len;
        RC_ASSERT(text.erase(at, 1 + step.s % std::min<size_t>(len - at, 5)).ok());
      }
      break;
    case 9:
    case 10: {  // a commit with options
      CommitOptions o;
      if (step.r % 3 == 1) o.message = "m" + std::to_string(step.s % 2);
      if (step.r % 5 >= 3) o.timestamp = static_cast<int64_t>(step.s % 4000) - 1000;
      if (step.s % 3 == 0) o.origin = step.s % 2 ? "x-skip" : "user";
      RC_ASSERT(doc.commit(o).ok());
      break;
    }
    case 11:
    case 12:
      RC_ASSERT(doc.commit().ok());
      break;
    case 13:  // another container in the same transaction
      RC_ASSERT(
          doc.get_map("m").set("k" + std::to_string(step.r % 3), Value(int64_t(step.s))).ok());
      break;
    case 14:
      RC_ASSERT(doc.get_text("u").insert(0, kTyped[step.r % kTyped.size()]).ok());
      break;
    case 15:
      RC_ASSERT(text.splice(rep.cursor, step.r % 2 && rep.cursor < len ? 1 : 0, "zq").ok());
      break;
    case 16:
      if (!remote.empty()) RC_ASSERT(doc.import(remote).ok());
      break;
    case 17: {  // observers come and go, also while a transaction is open
      switch (step.r % 5) {
        case 0:
          rep.subs.push_back(
              doc.subscribe_root([&rep](const DocEvent& e) { rep.seen.push_back(describe(e)); }));
          break;
        case 1:
          rep.subs.push_back(doc.subscribe(
              text.id(), [&rep](const DocEvent& e) { rep.seen.push_back("t " + describe(e)); }));
          break;
        case 2:
          rep.subs.push_back(doc.subscribe_local_update(
              [&rep](const std::string& bytes) { rep.seen.push_back("bytes " + bytes); }));
          break;
        case 3:
          if (!rep.undo) {
            rep.undo = std::make_unique<UndoManager>(doc);
            rep.undo->add_exclude_origin_prefix("x-");
          } else {
            rep.undo.reset();
          }
          break;
        default:
          if (!rep.subs.empty()) rep.subs.erase(rep.subs.begin() + step.s % rep.subs.size());
          break;
      }
      break;
    }
    case 18:
      if (rep.undo) {
        auto undone = rep.undo->undo();
        RC_ASSERT(undone.ok());
        rep.seen.push_back(*undone ? "undo" : "no undo");
      }
      break;
    case 19:
      doc.set_auto_commit(step.r % 2 == 1);
      break;
    case 20:
      doc.set_change_merge_interval(step.r % 3 == 0 ? -1 : step.r % 3 == 1 ? 0 : 1000);
      break;
    default: {  // one reader of the op log, while a transaction may be open
      std::string peek;
      switch (step.r % 9) {
        case 0:
          peek = doc.export_updates();
          break;
        case 1:
          peek = testing::describe_changes(doc.changes());
          break;
        case 2:
          peek = std::to_string(doc.change_count()) + " " + std::to_string(doc.op_count());
          break;
        case 3:
          peek = doc.oplog_version().to_json_string() + doc.version().to_json_string() +
                 doc.frontiers().to_json_string() + doc.oplog_frontiers().to_json_string();
          break;
        case 4:
          peek = doc.vv_to_frontiers(doc.version()).to_json_string();
          break;
        case 5:
          peek = doc.export_json_updates();
          break;
        case 6:
          peek = doc.export_snapshot();
          break;
        case 7: {
          auto d = doc.diff(Frontiers(), doc.oplog_frontiers());
          RC_ASSERT(d.ok());
          peek = std::to_string(d->size());
          break;
        }
        default: {
          auto vv = doc.frontiers_to_vv(doc.oplog_frontiers());
          RC_ASSERT(vv.ok());
          peek = vv->to_json_string();
          break;
        }
      }
      // A reader of the op log sees it whole: every change's ops add up to
      // its length (a direct keystroke was settled first).
      if (step.r % 9 != 3) {
        for (const auto& ch : doc.core()->log()) {
          Counter units = 0;
          for (const auto& op : ch.ops) units += op.atom_len();
          RC_ASSERT(units == ch.len);
        }
      }
      rep.seen.push_back(std::move(peek));
      break;
    }
  }
}

// Everything observable about a replica's history and state.
void expect_same(const Replica& a, const Replica& b) {
  testing::expect_same_doc(a.doc, b.doc);
  RC_ASSERT(a.seen == b.seen);
}

RC_GTEST_PROP(KeystrokeCommit, InPlaceMatchesGeneralPath, ()) {
  Replica fast(true), slow(false);
  Doc remote(99);
  const int steps = *rc::gen::inRange(1, 120);
  for (int i = 0; i < steps; ++i) {
    // Mostly typing and plain commits, as an editor does.
    const int pick = *rc::gen::inRange(0, 43);
    Step step;
    step.kind = pick < 21   ? pick
                : pick < 30 ? pick % 5
                : pick < 36 ? 11
                : pick < 40 ? 6 + pick % 3
                            : 21;
    step.r = *rc::gen::arbitrary<uint32_t>();
    step.s = *rc::gen::arbitrary<uint32_t>();
    std::string blob;
    if (step.kind == 16) {
      // The remote peer sometimes saw our latest change (then its edit is
      // the next dep) and sometimes not (a concurrent edit).
      if (step.s % 2) RC_ASSERT(remote.import(fast.doc.export_updates()).ok());
      const VersionVector before = remote.oplog_version();
      RC_ASSERT(remote.get_text("t").insert(0, kTyped[step.r % kTyped.size()]).ok());
      RC_ASSERT(remote.commit().ok());
      blob = remote.export_updates(before);
    }
    apply(fast, step, blob);
    apply(slow, step, blob);
    testing::check_doc(fast.doc);
    testing::check_doc(slow.doc);
    if (step.kind == 11 || step.kind == 9) expect_same(fast, slow);
  }
  RC_ASSERT(fast.doc.commit().ok());
  RC_ASSERT(slow.doc.commit().ok());
  expect_same(fast, slow);
  // The replicas' histories load into a third doc identically.
  Doc copy_fast(5), copy_slow(5);
  RC_ASSERT(copy_fast.import(fast.doc.export_snapshot()).ok());
  RC_ASSERT(copy_slow.import(slow.doc.export_updates()).ok());
  RC_ASSERT(copy_fast.to_json_string() == copy_slow.to_json_string());
}

// Editor sessions without observers (where keystrokes go direct), read
// between keystrokes: every reader sees the op log the general path shows.
RC_GTEST_PROP(KeystrokeCommit, DirectKeystrokeReadsMatchGeneralPath, ()) {
  Replica fast(true), slow(false);
  static const int kKinds[] = {0, 1, 2, 4, 5, 6, 7, 8, 9, 11, 11, 15, 21, 21, 21};
  const int steps = *rc::gen::inRange(1, 80);
  for (int i = 0; i < steps; ++i) {
    Step step;
    step.kind = kKinds[*rc::gen::inRange(0, static_cast<int>(std::size(kKinds)))];
    step.r = *rc::gen::arbitrary<uint32_t>();
    step.s = *rc::gen::arbitrary<uint32_t>();
    apply(fast, step, "");
    apply(slow, step, "");
    testing::check_doc(fast.doc);
    testing::check_doc(slow.doc);
    RC_ASSERT(fast.seen == slow.seen);
  }
  RC_ASSERT(fast.doc.commit().ok());
  RC_ASSERT(slow.doc.commit().ok());
  expect_same(fast, slow);
}

// The typing lane (DocCore::lane_insert / lane_erase, PlainSeq::lane_type /
// lane_erase_one) against the general path on texts long enough to span
// several plain-state chunks: runs of typing, backspace and forward delete
// at a moving cursor cross chunk-full and chunk-merge boundaries, run ends
// and non-ASCII chunks, interleaved with other containers, commit messages,
// auto-commit, undo and exports.
RC_GTEST_PROP(KeystrokeCommit, TypingLaneMatchesGeneralPath, ()) {
  Replica fast(true), slow(false);
  const size_t start_len = *rc::gen::inRange<size_t>(0, 1400);
  const bool non_ascii = *rc::gen::arbitrary<bool>();
  std::string start;
  for (size_t k = 0; k < start_len; ++k) {
    start += non_ascii && k % 97 == 13 ? "é" : std::string(1, static_cast<char>('a' + k % 26));
  }
  for (Replica* rep : {&fast, &slow}) {
    RC_ASSERT(rep->doc.get_text("t").insert(0, start).ok());
    RC_ASSERT(rep->doc.commit().ok());
    rep->cursor = start_len / 2;
  }
  const int bursts = *rc::gen::inRange(1, 30);
  for (int b = 0; b < bursts; ++b) {
    // A burst: one kind of keystroke repeated, each committed, as an editor does.
    const int pick = *rc::gen::inRange(0, 12);
    const int repeat = *rc::gen::inRange(1, 300);
    Step step;
    step.kind = pick < 4 ? 0 : pick < 6 ? 6 : pick < 8 ? 7 : pick == 8 ? 5 : pick == 9 ? 4 : 21;
    // 8: a delete across several id runs (one plain erase when fast).
    if (pick == 10) step.kind = *rc::gen::element(8, 8, 9, 13, 14, 17, 18, 19);
    step.s = *rc::gen::arbitrary<uint32_t>();
    for (int k = 0; k < (step.kind == 0 || step.kind == 6 || step.kind == 7 ? repeat : 1); ++k) {
      step.r = step.kind == 0 ? static_cast<uint32_t>(k % 3) : *rc::gen::arbitrary<uint32_t>();
      apply(fast, step, "");
      apply(slow, step, "");
      testing::check_doc(fast.doc);
      testing::check_doc(slow.doc);
      if (!fast.doc.core()->auto_commits()) {
        RC_ASSERT(fast.doc.commit().ok());
        RC_ASSERT(slow.doc.commit().ok());
      }
    }
    RC_ASSERT(fast.doc.get_text("t").to_string() == slow.doc.get_text("t").to_string());
    RC_ASSERT(fast.seen == slow.seen);
  }
  RC_ASSERT(fast.doc.commit().ok());
  RC_ASSERT(slow.doc.commit().ok());
  expect_same(fast, slow);
}

// A delete across several id runs (typing at scattered cursors, then one
// range delete) erases the plain state once on the fast path and once per
// run on the general path: same text, ops, changes and exports.
RC_GTEST_PROP(KeystrokeCommit, MultiRunDeleteMatchesGeneralPath, ()) {
  Replica fast(true), slow(false);
  const int steps = *rc::gen::inRange(1, 120);
  for (int i = 0; i < steps; ++i) {
    const int pick = *rc::gen::inRange(0, 6);
    const auto r = *rc::gen::arbitrary<uint32_t>();
    const auto s = *rc::gen::arbitrary<uint32_t>();
    for (Replica* rep : {&fast, &slow}) {
      TextRef text = rep->doc.get_text("t");
      const size_t len = text.len();
      if (pick < 4 || len == 0) {  // a short piece typed at a random spot: a new id run
        Step step;
        step.kind = pick == 3 ? 4 : 0;
        step.r = r;
        rep->cursor = s % (len + 1);
        apply(*rep, step, "");
        testing::check_doc(rep->doc);
      } else {  // a range delete, usually across several runs
        const size_t at = r % len;
        RC_ASSERT(text.erase(at, 1 + s % std::min<size_t>(len - at, 40)).ok());
      }
      RC_ASSERT(rep->doc.commit().ok());
    }
    RC_ASSERT(fast.doc.get_text("t").to_string() == slow.doc.get_text("t").to_string());
  }
  expect_same(fast, slow);
}

// A whole session as one transaction (the S2 / S3 one-txn replay): typing,
// pastes, backspace and forward-delete bursts and range deletes at a moving
// cursor on a text spanning several plain-state chunks, without a commit
// until the end (sometimes a reader or another container in between). The
// open transaction's shortcuts (the plain lane for typing on and for
// one-unit deletes, pooled texts of new ops, the list's relocation as it
// grows) leave the same text, ops, changes and exports as the general path.
RC_GTEST_PROP(KeystrokeCommit, OneTransactionMatchesGeneralPath, ()) {
  Replica fast(true), slow(false);
  const size_t start_len = *rc::gen::inRange<size_t>(0, 1400);
  std::string start;
  for (size_t k = 0; k < start_len; ++k)
    start += k % 211 == 17 ? "é" : std::string(1, static_cast<char>('a' + k % 26));
  for (Replica* rep : {&fast, &slow}) {
    RC_ASSERT(rep->doc.get_text("t").insert(0, start).ok());
    RC_ASSERT(rep->doc.commit().ok());
    rep->doc.set_auto_commit(false);
    rep->cursor = start_len / 3;
    // A first op in another container opens the transaction on the general
    // path (a keystroke first would go direct into the committed change).
    RC_ASSERT(rep->doc.get_map("m").set("k", Value(int64_t{1})).ok());
  }
  const int bursts = *rc::gen::inRange(1, 40);
  for (int b = 0; b < bursts; ++b) {
    const int pick = *rc::gen::inRange(0, 14);
    const int repeat = *rc::gen::inRange(1, 200);
    Step step;
    // 0: typing single ASCII keys; 4: a random piece (pastes leave the inline text).
    step.kind = pick < 4 ? 0 : pick < 6 ? 6 : pick < 8 ? 7 : pick < 10 ? 5 : pick == 10 ? 4 : 8;
    if (pick == 13) step.kind = *rc::gen::element(13, 14, 21);
    step.s = *rc::gen::arbitrary<uint32_t>();
    const bool burst = step.kind == 0 || step.kind == 4 || step.kind == 6 || step.kind == 7;
    for (int k = 0; k < (burst ? repeat : 1); ++k) {
      step.r = step.kind == 0 ? static_cast<uint32_t>(k % 3) : *rc::gen::arbitrary<uint32_t>();
      apply(fast, step, "");
      apply(slow, step, "");
      testing::check_doc(fast.doc);
      testing::check_doc(slow.doc);
    }
    RC_ASSERT(fast.doc.get_text("t").to_string() == slow.doc.get_text("t").to_string());
  }
  RC_ASSERT(fast.doc.commit().ok());
  RC_ASSERT(slow.doc.commit().ok());
  expect_same(fast, slow);
}

TEST(KeystrokeCommit, TypingExtendsOneChangeInPlace) {
  Doc doc(3);
  TextRef text = doc.get_text("t");
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(text.insert(static_cast<size_t>(i), "x").ok());
    ASSERT_TRUE(doc.commit().ok());
  }
  for (int i = 0; i < 10; ++i) {  // backspace
    ASSERT_TRUE(text.erase(99 - static_cast<size_t>(i), 1).ok());
    ASSERT_TRUE(doc.commit().ok());
  }
  for (int i = 0; i < 5; ++i) {  // forward delete
    ASSERT_TRUE(text.erase(10, 1).ok());
    ASSERT_TRUE(doc.commit().ok());
  }
  ASSERT_EQ(doc.change_count(), 1u);
  EXPECT_EQ(doc.op_count(), 115u);
  EXPECT_EQ(text.to_string(), std::string(85, 'x'));
  const auto& core = *doc.core();
  // One insert run, one backspace run, one forward-delete run.
  ASSERT_EQ(core.log().size(), 1u);
  const auto& ops = core.log()[0].ops;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].text.size(), 100u);
  EXPECT_EQ(ops[1].len, -10);
  EXPECT_EQ(ops[2].len, 5);
  EXPECT_EQ(doc.frontiers(), Frontiers({ID{3, 114}}));
  EXPECT_EQ(doc.version().get(3), 115);
  // A different message starts a new change.
  ASSERT_TRUE(text.insert(0, "y").ok());
  CommitOptions o;
  o.message = "other";
  ASSERT_TRUE(doc.commit(o).ok());
  EXPECT_EQ(doc.change_count(), 2u);
  // The round trip keeps the merged change.
  Doc copy(4);
  ASSERT_TRUE(copy.import(doc.export_snapshot()).ok());
  EXPECT_EQ(copy.get_text("t").to_string(), "y" + std::string(85, 'x'));
  EXPECT_EQ(copy.change_count(), 2u);
}

TEST(KeystrokeCommit, LongTypingGrowsTheOpTextAcrossBlocks) {
  // Appends of short texts into a heap block of the change's last op: the
  // 8-byte store path and the grow path alternate.
  Doc fast(3), slow(3);
  test_options(slow).fast_commit = false;
  std::string expect;
  for (int i = 0; i < 500; ++i) {
    const std::string piece = i % 7 == 0 ? "😀" : i % 5 == 0 ? "abcdefg" : "q";
    for (Doc* d : {&fast, &slow}) {
      ASSERT_TRUE(d->get_text("t").insert(d->get_text("t").len(), piece).ok());
      ASSERT_TRUE(d->commit().ok());
    }
    expect += piece;
  }
  EXPECT_EQ(fast.get_text("t").to_string(), expect);
  EXPECT_EQ(fast.export_updates(), slow.export_updates());
  EXPECT_EQ(fast.change_count(), 1u);
  ASSERT_EQ(fast.core()->log()[0].ops.size(), 1u);
  EXPECT_EQ(fast.core()->log()[0].ops[0].text.utf8(), expect);
}

TEST(KeystrokeCommit, ALongSessionIsStoredInSeveralChangesListedAsOne) {
  // Every keystroke starts a new op (the cursor alternates between the two
  // ends), so the session's change passes kMergeOpsMax ops: the log opens a
  // new change, reserved whole, while the encoder and changes() join them.
  constexpr int kKeys = 3 * static_cast<int>(detail::DocCore::kMergeOpsMax) + 10;
  Doc fast(3), slow(3);
  test_options(slow).fast_commit = false;
  for (int i = 0; i < kKeys; ++i) {
    for (Doc* d : {&fast, &slow}) {
      TextRef t = d->get_text("t");
      const size_t pos = i % 2 == 0 ? 0 : t.len();
      if (i % 50 == 49) {
        ASSERT_TRUE(t.erase(pos == 0 ? 0 : pos - 1, 1).ok());
      } else {
        ASSERT_TRUE(t.insert(pos, i % 3 == 0 ? "x" : "y").ok());
      }
      ASSERT_TRUE(d->commit().ok());
    }
  }
  EXPECT_EQ(fast.get_text("t").to_string(), slow.get_text("t").to_string());
  EXPECT_EQ(fast.export_updates(), slow.export_updates());
  for (Doc* d : {&fast, &slow}) {
    const auto& changes = d->core()->log();
    ASSERT_GE(changes.size(), 3u);
    for (size_t c = 1; c < changes.size(); ++c) {
      // No change grew its op array past the reservation.
      EXPECT_GE(changes[c - 1].ops.capacity(), detail::DocCore::kMergeOpsMax);
      EXPECT_LE(changes[c].ops.size(), detail::DocCore::kMergeOpsMax + 1);
      if (c + 1 < changes.size()) {
        EXPECT_EQ(changes[c].ops.capacity(), detail::DocCore::kMergeOpsMax);
      }
    }
    ASSERT_EQ(d->change_count(), 1u);
    auto listed = d->changes();
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].len, kKeys);
    EXPECT_EQ(listed[0].id, (ID{3, 0}));
    EXPECT_TRUE(listed[0].deps.empty());
  }
  // The round trip stores one change; the value, versions and listing agree.
  Doc copy(4);
  ASSERT_TRUE(copy.import(fast.export_snapshot()).ok());
  EXPECT_EQ(copy.core()->log().size(), 1u);
  EXPECT_EQ(copy.to_json_string(), fast.to_json_string());
  EXPECT_EQ(copy.oplog_frontiers(), fast.oplog_frontiers());
  EXPECT_EQ(testing::describe_changes(copy.changes()), testing::describe_changes(fast.changes()));
  // A different message still starts a change of its own.
  ASSERT_TRUE(fast.get_text("t").insert(0, "m").ok());
  CommitOptions o;
  o.message = "other";
  ASSERT_TRUE(fast.commit(o).ok());
  EXPECT_EQ(fast.change_count(), 2u);
}

}  // namespace
}  // namespace weft::crdt
