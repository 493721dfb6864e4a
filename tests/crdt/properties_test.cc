// RapidCheck properties: random multi-replica editing converges under random
// sync orders; encodings round-trip; fork/checkout/revert invariants; undo
// then redo restores the state.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <memory>

#include "crdt/core_access.h"
#include "crdt/doc_compare.h"
#include "weft/crdt/doc.h"
#include "weft/crdt/undo.h"

namespace weft::crdt {
namespace {

const std::vector<std::string> kPropertyPieces = {"a",       "bc", "é",    "😀",  "👍🏽",
                                          "e\u0301", "🇯🇵", "中文", "\n", "xyz"};

// The doc value without empty roots (a root read through get_* shows up in
// to_json() even before any op touches it, as in Loro).
std::string norm(const Doc& doc) {
  Value v = doc.to_json();
  ValueMap out;
  for (const auto& [k, e] : v.as_map()) {
    bool empty = (e.kind() == Value::Kind::kString && e.as_string().empty()) ||
                 (e.kind() == Value::Kind::kList && e.as_list().empty()) ||
                 (e.kind() == Value::Kind::kMap && e.as_map().empty()) ||
                 (e.kind() == Value::Kind::kF64 && e.as_f64() == 0);
    if (!empty) out.emplace(k, e);
  }
  return Value(out).to_json_string();
}

// Applies one random local edit to `doc` (text, list, map, counter, children).
void random_edit(Doc& doc) {
  int kind = *rc::gen::inRange(0, 9);
  TextRef t = doc.get_text("t");
  ListRef l = doc.get_list("l");
  MapRef m = doc.get_map("m");
  switch (kind) {
    case 0:
    case 1: {
      size_t pos = *rc::gen::inRange<size_t>(0, t.len() + 1);
      RC_ASSERT(t.insert(pos, *rc::gen::elementOf(kPropertyPieces)).ok());
      break;
    }
    case 2: {
      if (t.len() == 0) break;
      size_t pos = *rc::gen::inRange<size_t>(0, t.len());
      size_t n = *rc::gen::inRange<size_t>(1, std::min<size_t>(4, t.len() - pos) + 1);
      RC_ASSERT(t.erase(pos, n).ok());
      break;
    }
    case 3: {
      size_t pos = *rc::gen::inRange<size_t>(0, l.len() + 1);
      RC_ASSERT(l.insert(pos, Value(int64_t(*rc::gen::inRange(-100, 100)))).ok());
      break;
    }
    case 4:
      if (l.len() > 0) RC_ASSERT(l.erase(*rc::gen::inRange<size_t>(0, l.len())).ok());
      break;
    case 5:
      RC_ASSERT(m.set(*rc::gen::elementOf(std::vector<std::string>{"a", "b", "ключ"}),
                      Value(*rc::gen::arbitrary<bool>()))
                    .ok());
      break;
    case 6:
      RC_ASSERT(m.erase("a").ok());
      break;
    case 7:
      RC_ASSERT(doc.get_counter("c").increment(*rc::gen::inRange(-5, 6)).ok());
      break;
    case 8: {
      auto kid = m.set_container("kid", ContainerType::kText);
      RC_ASSERT(kid.ok());
      RC_ASSERT(doc.text(*kid)->insert(0, *rc::gen::elementOf(kPropertyPieces)).ok());
      break;
    }
  }
  testing::check_doc(doc);
  RC_ASSERT(doc.commit().ok());
  testing::check_doc(doc);
}

void sync(Doc& from, Doc& to, bool binary) {
  std::string data = binary ? from.export_updates(to.oplog_version())
                            : from.export_json_updates(to.oplog_version());
  auto st = to.import(data);
  RC_ASSERT(st.ok());
  testing::check_doc(to);
}

RC_GTEST_PROP(CrdtProperties, ReplicasConverge, ()) {
  const int n = *rc::gen::inRange(2, 5);
  std::vector<std::unique_ptr<Doc>> docs;
  for (int i = 0; i < n; ++i) docs.push_back(std::make_unique<Doc>(PeerId(i * 7 + 1)));
  const int steps = *rc::gen::inRange(5, 40);
  for (int s = 0; s < steps; ++s) {
    int i = *rc::gen::inRange(0, n);
    if (*rc::gen::inRange(0, 3) == 0) {
      int j = *rc::gen::inRange(0, n);
      if (i != j) sync(*docs[i], *docs[j], *rc::gen::arbitrary<bool>());
    } else {
      random_edit(*docs[i]);
    }
  }
  // Full sync in a random order, then everyone must agree.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j) sync(*docs[i], *docs[j], (i + j + round) % 2 == 0);
      }
    }
  }
  for (int i = 1; i < n; ++i) {
    RC_ASSERT(norm(*docs[i]) == norm(*docs[0]));
    RC_ASSERT(docs[i]->oplog_version() == docs[0]->oplog_version());
  }
  // A fresh doc importing everything in one go agrees too.
  Doc fresh(999);
  RC_ASSERT(fresh.import(docs[n - 1]->export_snapshot()).ok());
  RC_ASSERT(norm(fresh) == norm(*docs[0]));
  Doc from_json(998);
  RC_ASSERT(from_json.import(docs[0]->export_json_updates()).ok());
  RC_ASSERT(norm(from_json) == norm(*docs[0]));
}

RC_GTEST_PROP(CrdtProperties, CheckoutForkRevertInvariants, ()) {
  Doc doc(5);
  std::vector<std::pair<Frontiers, std::string>> versions;
  const int steps = *rc::gen::inRange(1, 15);
  for (int s = 0; s < steps; ++s) {
    random_edit(doc);
    versions.emplace_back(doc.frontiers(), norm(doc));
  }
  const auto& [f, value] = versions[*rc::gen::inRange<size_t>(0, versions.size())];
  std::string latest = norm(doc);
  RC_ASSERT(doc.checkout(f).ok());
  RC_ASSERT(norm(doc) == value);
  RC_ASSERT(doc.checkout_to_latest().ok());
  RC_ASSERT(norm(doc) == latest);
  auto forked = doc.fork_at(f);
  RC_ASSERT(forked.ok());
  RC_ASSERT(norm(*forked) == value);
  RC_ASSERT(doc.revert_to(f).ok());
  RC_ASSERT(norm(doc) == value);
}

RC_GTEST_PROP(CrdtProperties, UndoThenRedoRestores, ()) {
  Doc doc(3);
  UndoManager undo(doc);
  const int steps = *rc::gen::inRange(1, 10);
  std::vector<std::string> states = {norm(doc)};
  for (int s = 0; s < steps; ++s) {
    random_edit(doc);
    states.push_back(norm(doc));
  }
  const int k = *rc::gen::inRange(1, steps + 1);
  for (int i = 0; i < k; ++i) {
    auto r = undo.undo();
    RC_ASSERT(r.ok());
  }
  for (int i = 0; i < k; ++i) {
    auto r = undo.redo();
    RC_ASSERT(r.ok());
  }
  RC_ASSERT(norm(doc) == states.back());
}

// Every Text / List op applied to `doc` first recomputes the Eg-walker
// tracker's prepare state from scratch (known = in the op's version, deletes
// counted in it) and fails on any difference from the incrementally moved one:
// the merge then resolves positions exactly as a per-element version scan would.
Doc& checked(Doc& doc) {
  test_options(doc).check_tracker = true;
  return doc;
}

// Imports `blobs` into `doc` in a random order.
void import_shuffled(Doc& doc, std::vector<std::string> blobs) {
  while (!blobs.empty()) {
    const size_t k = *rc::gen::inRange<size_t>(0, blobs.size());
    RC_ASSERT(doc.import(blobs[k]).ok());
    blobs.erase(blobs.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

RC_GTEST_PROP(CrdtProperties, MergeMatchesFullTrackerPath, ()) {
  // Up to 6 peers edit concurrently (text, deletes of text others inserted
  // concurrently, list, map, nested text, counter) with partial syncs, and
  // peer 0 undoes after merges; every replica checks its tracker on every op.
  const int n = *rc::gen::inRange(2, 7);
  std::vector<std::unique_ptr<Doc>> docs;
  for (int i = 0; i < n; ++i) docs.push_back(std::make_unique<Doc>(PeerId(i * 11 + 2)));
  for (auto& d : docs) checked(*d);
  UndoManager undo(*docs[0]);
  const int steps = *rc::gen::inRange(5, 60);
  for (int s = 0; s < steps; ++s) {
    const int i = *rc::gen::inRange(0, n);
    const int what = *rc::gen::inRange(0, 6);
    if (what == 0) {
      const int j = *rc::gen::inRange(0, n);
      if (i != j) sync(*docs[i], *docs[j], *rc::gen::arbitrary<bool>());
    } else if (what == 1 && i == 0) {
      RC_ASSERT(undo.undo().ok());
    } else {
      random_edit(*docs[i]);
    }
  }
  std::vector<std::string> blobs;
  for (auto& d : docs) blobs.push_back(d->export_updates());
  // The plain-state path and the path that keeps every Text / List as a full
  // Fugue Seq from its first op, each importing the peers' histories in a
  // random order, reach the same value.
  Doc plain(901);
  import_shuffled(checked(plain), blobs);
  Doc full(902);
  test_options(full).plain_enabled = false;
  import_shuffled(checked(full), blobs);
  RC_ASSERT(norm(plain) == norm(full));
  // So do the peers after a full sync, and peer 0 can still undo.
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) sync(*docs[i], *docs[j], (i + j) % 2 == 0);
    }
  }
  for (auto& d : docs) RC_ASSERT(norm(*d) == norm(plain));
  RC_ASSERT(undo.undo().ok());
  Doc after(903);
  RC_ASSERT(checked(after).import(docs[0]->export_updates()).ok());
  RC_ASSERT(norm(after) == norm(*docs[0]));
}

TEST(CrdtMerge, LongConcurrentInsertsSplitTrackerChunks) {
  // Inserts far longer than a tracker chunk (256 elements), concurrent at
  // the same places, with deletes across them: the full-Seq docs split chunks
  // many ways at once; every op is checked against a from-scratch tracker.
  Doc a(1), b(2);
  Doc ta(1), tb(2);
  for (Doc* d : {&ta, &tb}) test_options(*d).plain_enabled = false;
  for (Doc* d : {&a, &b, &ta, &tb}) checked(*d);
  std::string long_a(1000, 'a'), long_b(700, 'b');
  for (Doc* d : {&a, &ta}) ASSERT_TRUE(d->get_text("t").insert(0, "xy" + long_a).ok());
  for (Doc* d : {&b, &tb}) ASSERT_TRUE(d->get_text("t").insert(0, long_b + "z").ok());
  for (Doc* d : {&a, &b, &ta, &tb}) ASSERT_TRUE(d->commit().ok());
  ASSERT_TRUE(a.import(b.export_updates()).ok());
  ASSERT_TRUE(ta.import(tb.export_updates()).ok());
  for (Doc* d : {&a, &ta}) {
    ASSERT_TRUE(d->get_text("t").insert(600, long_b).ok());
    ASSERT_TRUE(d->get_text("t").erase(100, 900).ok());
    ASSERT_TRUE(d->commit().ok());
  }
  for (Doc* d : {&b, &tb}) {
    ASSERT_TRUE(d->get_text("t").insert(350, long_a).ok());
    ASSERT_TRUE(d->get_text("t").erase(10, 300).ok());
    ASSERT_TRUE(d->commit().ok());
  }
  ASSERT_TRUE(a.import(b.export_updates()).ok());
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  ASSERT_TRUE(ta.import(tb.export_updates()).ok());
  ASSERT_TRUE(tb.import(ta.export_updates()).ok());
  const std::string text = a.get_text("t").to_string();
  EXPECT_EQ(b.get_text("t").to_string(), text);
  EXPECT_EQ(ta.get_text("t").to_string(), text);
  EXPECT_EQ(tb.get_text("t").to_string(), text);
  EXPECT_EQ(text.size(), 1000u + 2 + 700 + 1 + 700 + 1000 - 900 - 300);
}

}  // namespace
}  // namespace weft::crdt
