// Range deletes and pastes in one long transaction (the S2 / S3 traces as
// one txn) on the plain state's shortcuts against the general path: a delete
// spanning several id runs is one PlainSeq::erase of the whole range, then one
// recorded op per run (delete_units) with fast_commit on, and one plain
// delete per run with it off; both must leave the same text, ops, changes,
// exports and events.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/doc_compare.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

const std::vector<std::string> kTxnPieces = {"a",
                                          "xy",
                                          "é",
                                          "😀",
                                          "中文",
                                          "word ",
                                          "a longer pasted sentence, ",
                                          "e\u0301",
                                          "ünïcödé and ASCII mixed over sixteen bytes"};

// A piece of 1 to ~700 code points built from kTxnPieces (long ones split chunks).
std::string piece(uint32_t r, uint32_t s) {
  std::string out;
  const uint32_t count = 1 + s % (r % 7 == 0 ? 60 : 4);
  for (uint32_t k = 0; k < count; ++k) out += kTxnPieces[(r + k * 7) % kTxnPieces.size()];
  return out;
}

struct Session {
  explicit Session(bool fast) : doc(5) {
    test_options(doc).fast_commit = fast;
    doc.set_auto_commit(false);
  }
  // Records every event's diffs (an observer turns the shortcut off: the
  // value before a transaction's first edit of a container is read first).
  void observe() {
    sub = doc.subscribe_root([this](const DocEvent& e) {
      for (const ContainerDiff& d : e.diffs) seen.emplace_back(d.target.to_string(), d.diff);
    });
  }
  Doc doc;
  std::vector<std::pair<std::string, decltype(ContainerDiff::diff)>> seen;
  Subscription sub;
};

void expect_same(Session& a, Session& b) {
  testing::expect_same_doc(a.doc, b.doc);
  RC_ASSERT(a.seen == b.seen);
}

RC_GTEST_PROP(PlainTransaction, RangeDeletesMatchGeneralPath, ()) {
  Session fast(true), slow(false);
  const size_t start_len = *rc::gen::inRange<size_t>(0, 2000);
  std::string start;
  for (size_t k = 0; k < start_len; ++k)
    start += k % 97 == 5 ? "ö" : std::string(1, static_cast<char>('a' + k % 26));
  for (Session* s : {&fast, &slow}) {
    if (!start.empty()) RC_ASSERT(s->doc.get_text("t").insert(0, start).ok());
    RC_ASSERT(s->doc.get_list("l").insert(0, Value(int64_t{0})).ok());
    RC_ASSERT(s->doc.commit().ok());
  }
  // Sometimes observed (then with frequent commits, so that a range delete is
  // often a container's first edit of its transaction).
  const bool observed = *rc::gen::arbitrary<bool>();
  if (observed) {
    fast.observe();
    slow.observe();
  }
  const int steps = *rc::gen::inRange(1, 300);
  for (int i = 0; i < steps; ++i) {
    const int kind = *rc::gen::inRange(0, observed ? 24 : 20);
    const auto r = *rc::gen::arbitrary<uint32_t>();
    const auto s = *rc::gen::arbitrary<uint32_t>();
    for (Session* ses : {&fast, &slow}) {
      TextRef text = ses->doc.get_text("t");
      ListRef list = ses->doc.get_list("l");
      const size_t len = text.len();
      if (kind < 8) {  // a paste or a word at a random place (fragments the ids)
        RC_ASSERT(text.insert(r % (len + 1), piece(r, s)).ok());
      } else if (kind < 15) {  // a range delete: often across runs and chunks
        if (len > 0) {
          const size_t at = r % len;
          const size_t max = kind < 12 ? 12 : 900;
          RC_ASSERT(text.erase(at, 1 + s % std::min(len - at, max)).ok());
        }
      } else if (kind < 17) {  // a replacement: delete, then insert at the same place
        if (len > 0) {
          const size_t at = r % len;
          RC_ASSERT(text.erase(at, 1 + s % std::min<size_t>(len - at, 40)).ok());
          RC_ASSERT(text.insert(at, piece(s, r)).ok());
        }
      } else if (kind < 19) {  // a list: values inserted one by one, ranges deleted
        const size_t n = list.len();
        if (s % 3 == 0 && n > 1) {
          const size_t at = r % n;
          RC_ASSERT(list.erase(at, 1 + s % (n - at)).ok());
        } else {
          RC_ASSERT(list.insert(r % (n + 1), Value(int64_t(s % 1000))).ok());
        }
      } else {
        RC_ASSERT(ses->doc.commit().ok());
      }
      testing::check_doc(ses->doc);
    }
    RC_ASSERT(fast.doc.get_text("t").to_string() == slow.doc.get_text("t").to_string());
  }
  RC_ASSERT(fast.doc.commit().ok());
  RC_ASSERT(slow.doc.commit().ok());
  expect_same(fast, slow);
}

// Op entries in the doc's log (op_count counts units).
size_t logged_ops(const Doc& doc) {
  size_t n = 0;
  for (const auto& c : doc.core()->log()) n += c.ops.size();
  return n;
}

// The reported runs themselves: typing each character at the front gives one
// id run per unit, so a range delete over them records one op per unit, the
// same on both paths.
TEST(PlainTransaction, RangeDeleteRecordsOneOpPerIdRun) {
  for (bool fast : {true, false}) {
    Session ses(fast);
    TextRef text = ses.doc.get_text("t");
    // Typing each character at the front: ids run backwards, one run per unit.
    for (int k = 0; k < 600; ++k) ASSERT_TRUE(text.insert(0, std::string(1, 'a' + k % 26)).ok());
    ASSERT_TRUE(ses.doc.commit().ok());
    const size_t ops_before = logged_ops(ses.doc);
    ASSERT_TRUE(text.erase(100, 400).ok());  // spans chunks and 400 one-unit runs
    ASSERT_TRUE(ses.doc.commit().ok());
    EXPECT_EQ(text.len(), 200u);
    EXPECT_EQ(logged_ops(ses.doc) - ops_before, 400u) << "fast " << fast;
    std::string expect;  // what is left: units 0..99 and 500..599 of the typed text
    for (int k = 599; k >= 500; --k) expect += static_cast<char>('a' + k % 26);
    for (int k = 99; k >= 0; --k) expect += static_cast<char>('a' + k % 26);
    EXPECT_EQ(text.to_string(), expect);
  }
}

}  // namespace
}  // namespace weft::crdt
