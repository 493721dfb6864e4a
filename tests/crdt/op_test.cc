// The compact op representation: OpText (code points stored as UTF-8) against
// a std::u32string model, and Op's payload box (copies are deep, absent
// payloads read as empty).
#include "crdt/op.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace weft::crdt::detail {
namespace {

std::vector<uint32_t> cps_of(const std::u32string& s) {
  return std::vector<uint32_t>(s.begin(), s.end());
}

std::u32string decoded(const OpText& t, size_t n) {
  std::vector<uint32_t> out(n);
  t.decode(n, out.data());
  return std::u32string(out.begin(), out.end());
}

// Scalar values from every UTF-8 length class.
rc::Gen<std::u32string> gen_text() {
  return rc::gen::container<std::u32string>(rc::gen::elementOf(
      std::vector<char32_t>{U'a', U'z', U' ', U'\n', U'\u00e9', U'\u07ff', U'\u0800', U'\u4e2d',
                            U'\uffff', U'\U00010000', U'\U0001f600', U'\U0010ffff'}));
}

TEST(OpText, EmptyHoldsNothing) {
  OpText t;
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.utf8(), "");
  EXPECT_TRUE(t.substr(0).empty());
  t.append(OpText());
  EXPECT_TRUE(t.empty());
}

TEST(OpText, StoresUtf8AndCountsCodePoints) {
  OpText t;
  const std::u32string s = U"h\u00e9\u4e2d\U0001f600";
  const auto cps = cps_of(s);
  t.assign(cps.data(), cps.size());
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.utf8(), "h\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
  EXPECT_EQ(decoded(t, 4), s);
  EXPECT_EQ(decoded(t, 2), s.substr(0, 2));
  EXPECT_EQ(t.substr(2).to_u32(), s.substr(2));
  t.truncate(3);
  EXPECT_EQ(t.to_u32(), s.substr(0, 3));
  EXPECT_EQ(t.utf8(), "h\xc3\xa9\xe4\xb8\xad");
}

TEST(OpText, SelfAppendDoublesTheText) {
  OpText t;
  const std::u32string s = U"ab\u00e9";
  const auto cps = cps_of(s);
  t.assign(cps.data(), cps.size());
  t.append(t);
  EXPECT_EQ(t.to_u32(), s + s);
  EXPECT_EQ(t.size(), 6u);
}

TEST(OpText, ShortTextsStayInlineAndGrowIntoABlock) {
  OpText t;
  const auto seven = cps_of(U"abc\u00e9d");  // 6 bytes: inline
  t.assign(seven.data(), seven.size());
  EXPECT_EQ(t.utf8(),
            "abc\xc3\xa9"
            "d");
  const auto more = cps_of(U"\U0001f600xyz");  // 13 bytes in all: a heap block
  t.append(more.data(), more.size());
  EXPECT_EQ(t.to_u32(), U"abc\u00e9d\U0001f600xyz");
  EXPECT_EQ(t.size(), 9u);
  t.assign(seven.data(), 2);  // reuses the block
  EXPECT_EQ(t.utf8(), "ab");
  t.truncate(0);
  EXPECT_TRUE(t.empty());
  OpText copy = t;
  EXPECT_TRUE(copy.empty());
}

TEST(OpText, PooledTextsCopyOutOnWrite) {
  OpTextPool pool;
  const std::string long_text = "pooled text \xc3\xa9";  // 14 code points, 15 bytes
  OpText a;
  a.assign_utf8(long_text, 14, pool);
  OpText b;
  b.assign_utf8("short", 5, pool);  // fits inline
  EXPECT_EQ(a.utf8(), long_text);
  EXPECT_EQ(a.size(), 14u);
  EXPECT_EQ(b.utf8(), "short");
  OpText copy = a;
  const auto tail = cps_of(U"!");
  a.append(tail.data(), 1);  // a gets a heap block; the pooled bytes stay
  EXPECT_EQ(a.utf8(), long_text + "!");
  EXPECT_EQ(copy.utf8(), long_text);
  OpText cut;
  cut.assign_utf8(long_text, 14, pool);
  cut.truncate(6);
  EXPECT_EQ(cut.utf8(), "pooled");
  OpText again;
  again.assign_utf8(long_text, 14, pool);
  EXPECT_EQ(again.utf8(), long_text);  // the truncate did not touch the pool
  OpText moved = std::move(again);
  EXPECT_EQ(moved.size(), 14u);
  std::string big(100000, 'x');  // larger than a slab
  OpText huge;
  huge.assign_utf8(big, big.size(), pool);
  EXPECT_EQ(huge.utf8(), big);
}

RC_GTEST_PROP(OpText, MatchesU32stringModel, ()) {
  const auto pieces = *rc::gen::container<std::vector<std::u32string>>(gen_text());
  OpText t;
  std::u32string model;
  for (const auto& p : pieces) {
    const auto cps = cps_of(p);
    if (*rc::gen::arbitrary<bool>()) {
      t.append(cps.data(), cps.size());
    } else {
      OpText other;
      other.assign(cps.data(), cps.size());
      t.append(other);
    }
    model += p;
    RC_ASSERT(t.size() == model.size());
  }
  RC_ASSERT(t.to_u32() == model);
  const OpText copy = t;  // NOLINT(performance-unnecessary-copy-initialization)
  RC_ASSERT(copy == t);
  const size_t k = *rc::gen::inRange<size_t>(0, model.size() + 1);
  RC_ASSERT(t.substr(k).to_u32() == model.substr(k));
  RC_ASSERT(decoded(t, k) == model.substr(0, k));
  OpText cut = t;
  cut.truncate(k);
  RC_ASSERT(cut.to_u32() == model.substr(0, k));
  OpText moved = std::move(cut);
  RC_ASSERT(moved.size() == k);
}

// Appending to a truncated text (whose inline word may still hold the cut
// bytes) and to short texts that stay inline (the commit's one-word join).
RC_GTEST_PROP(OpText, AppendAfterTruncateMatchesModel, ()) {
  const auto head = cps_of(*gen_text());
  const auto tail = cps_of(*gen_text());
  OpText t;
  t.append(head.data(), head.size());
  const size_t k = *rc::gen::inRange<size_t>(0, head.size() + 1);
  t.truncate(k);
  OpText other;
  other.append(tail.data(), tail.size());
  t.append(other);
  std::u32string model(head.begin(), head.begin() + static_cast<ptrdiff_t>(k));
  model.append(tail.begin(), tail.end());
  RC_ASSERT(t.size() == model.size());
  RC_ASSERT(t.to_u32() == model);
  const auto model_cps = cps_of(model);
  OpText expect;
  expect.assign(model_cps.data(), model_cps.size());
  RC_ASSERT(t.utf8() == expect.utf8());
}

TEST(OpText, TextsTypedOnGrowInThePool) {
  // Two texts typed on in turn (each outgrows its room while the other was
  // the pool's last block) and one alone (grown in place), past a slab.
  OpTextPool pool;
  OpText a, b, alone;
  std::string want_a, want_b, want_alone;
  for (int i = 0; i < 3000; ++i) {
    const std::string key = i % 9 == 0 ? "\xc3\xa9" : std::string(1, static_cast<char>('a' + i % 26));
    const size_t units = 1;
    a.append_utf8(key, units, &pool);
    want_a += key;
    if (i % 3 == 0) {
      b.append_utf8("xyz", 3, &pool);
      want_b += "xyz";
    }
    ASSERT_EQ(a.utf8(), want_a);
  }
  for (int i = 0; i < 70000; ++i) {
    alone.append_utf8("q", 1, &pool);
    want_alone += "q";
  }
  EXPECT_EQ(a.utf8(), want_a);
  EXPECT_EQ(a.size(), 3000u);
  EXPECT_EQ(b.utf8(), want_b);
  EXPECT_EQ(alone.utf8(), want_alone);
  EXPECT_EQ(alone.size(), 70000u);
  // A copy owns a heap block: editing either leaves the other alone.
  OpText copy = a;
  copy.append_utf8("!", 1);
  a.truncate(10);
  EXPECT_EQ(copy.utf8(), want_a + "!");
  EXPECT_EQ(a.utf8(), want_a.substr(0, a.utf8().size()));
  EXPECT_EQ(a.size(), 10u);
  // Moved and destroyed texts never free pooled blocks (ASan would see it).
  OpText moved = std::move(b);
  EXPECT_EQ(moved.utf8(), want_b);
  moved = OpText();
  EXPECT_TRUE(moved.empty());
}

TEST(Op, IsSmall) {
  // The op log holds tens of thousands of ops: keep the struct compact.
  EXPECT_LE(sizeof(Op), 56u);
}

TEST(Op, PayloadReadsEmptyUntilSetAndCopiesDeeply) {
  Op op;
  EXPECT_TRUE(op.values().empty());
  EXPECT_EQ(op.key(), "");
  EXPECT_TRUE(op.value().is_null());
  EXPECT_EQ(op.number(), 0.0);
  op.kind = OpKind::kListInsert;
  op.mutable_values().push_back(Value(int64_t{7}));
  op.set_key("k");
  op.set_value(Value("v"));
  op.set_number(2.5);
  Op copy = op;
  op.mutable_values().push_back(Value(int64_t{8}));
  op.set_key("changed");
  ASSERT_EQ(copy.values().size(), 1u);
  EXPECT_EQ(copy.values()[0], Value(int64_t{7}));
  EXPECT_EQ(copy.key(), "k");
  EXPECT_EQ(copy.value(), Value("v"));
  EXPECT_EQ(copy.number(), 2.5);
  EXPECT_EQ(copy.atom_len(), 1);
  EXPECT_EQ(op.atom_len(), 2);
}

TEST(Op, SliceDropsLeadingUnits) {
  Op ins;
  ins.kind = OpKind::kTextInsert;
  ins.counter = 10;
  ins.pos = 4;
  const auto cps = cps_of(U"x\u00e9yz");
  ins.text.assign(cps.data(), cps.size());
  const Op tail = slice_op(ins, 2);
  EXPECT_EQ(tail.counter, 12);
  EXPECT_EQ(tail.pos, 6);
  EXPECT_EQ(tail.text.to_u32(), U"yz");

  Op back;  // a backspace run of 3 whose first unit deleted position 9
  back.kind = OpKind::kSeqDelete;
  back.pos = 9;
  back.len = -3;
  const Op rest = slice_op(back, 1);
  EXPECT_EQ(rest.pos, 8);
  EXPECT_EQ(rest.len, -2);
}

// An op whose fields tell it apart (a key payload too, to catch shallow copies).
Op numbered_op(int k) {
  Op op;
  op.kind = OpKind::kMapSet;
  op.counter = k;
  op.set_key("key" + std::to_string(k));
  return op;
}

std::vector<int> counters_of(const OpList& ops) {
  std::vector<int> out;
  for (const Op& op : ops) {
    EXPECT_EQ(op.key(), "key" + std::to_string(op.counter));
    out.push_back(op.counter);
  }
  return out;
}

TEST(OpList, OneOpInlineMoreOnTheHeap) {
  OpList ops;
  EXPECT_TRUE(ops.empty());
  ops.push_back(numbered_op(0));
  const Op* inline_at = &ops[0];
  OpList moved = std::move(ops);  // the inline op moves over
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(counters_of(moved), (std::vector<int>{0}));
  EXPECT_NE(&moved[0], inline_at);
  for (int k = 1; k < 5; ++k) moved.push_back(numbered_op(k));
  const Op* heap_at = &moved[0];
  OpList taken = std::move(moved);  // the heap array is taken, not copied
  EXPECT_EQ(&taken[0], heap_at);
  EXPECT_EQ(counters_of(taken), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(moved.empty());
  moved.push_back(numbered_op(9));  // a moved-from list is usable
  EXPECT_EQ(counters_of(moved), (std::vector<int>{9}));
}

TEST(OpList, MovingOutAHeapArrayLeavesTheInlineSlot) {
  OpList txn;
  EXPECT_EQ(txn.capacity(), 1u);  // the inline op
  for (int k = 0; k < 70; ++k) txn.push_back(numbered_op(k));
  EXPECT_GE(txn.capacity(), 70u);
  OpList change = std::move(txn);  // a commit hands the array over whole
  EXPECT_EQ(change.size(), 70u);
  EXPECT_EQ(change[69].counter, 69);
  EXPECT_EQ(txn.capacity(), 1u);
  txn.push_back(numbered_op(7));
  EXPECT_EQ(counters_of(txn), (std::vector<int>{7}));
  txn = OpList();  // drops a large array, as the merged commit does
  EXPECT_TRUE(txn.empty());
  EXPECT_EQ(txn.capacity(), 1u);
}

TEST(OpList, OpenTransactionListGrowsEightfoldAndShrinksWhenCommitted) {
  OpList txn;
  constexpr int kOps = 40000;  // past 4096 ops, where the open list starts growing 8x
  size_t last_cap = txn.capacity();
  int eightfold = 0;
  for (int k = 0; k < kOps; ++k) {
    Op& op = txn.emplace_back_open();
    op.kind = OpKind::kTextInsert;
    op.counter = k;
    op.text.assign_utf8("word " + std::to_string(k), 5 + std::to_string(k).size());
    if (txn.capacity() != last_cap) {
      if (k > 4096) {
        EXPECT_EQ(txn.capacity(), 8 * last_cap);
        ++eightfold;
      }
      last_cap = txn.capacity();
    }
  }
  EXPECT_GE(eightfold, 1);
  ASSERT_EQ(txn.size(), size_t{kOps});
  const size_t before = txn.capacity();
  EXPECT_GT(before - kOps, before / 4);  // 40000 of 262144
  txn.shrink_to_fit();
  EXPECT_EQ(txn.capacity(), size_t{kOps});
  // The ops (heap texts included) survived both the realloc growth and the shrink.
  for (int k = 0; k < kOps; ++k) {
    ASSERT_EQ(txn[k].counter, k);
    ASSERT_EQ(txn[k].text.utf8(), "word " + std::to_string(k));
  }
  txn.shrink_to_fit();  // nothing past size(): no change
  EXPECT_EQ(txn.capacity(), size_t{kOps});
  OpList small;
  for (int k = 0; k < 5; ++k) small.push_back(numbered_op(k));
  const size_t small_cap = small.capacity();
  small.shrink_to_fit();  // a short list keeps its room (no realloc per commit)
  EXPECT_EQ(small.capacity(), small_cap);
  EXPECT_EQ(counters_of(small), (std::vector<int>{0, 1, 2, 3, 4}));
}

// Random operation sequences against a std::vector<Op> model (copies, moves,
// growth from the inline op, pushing a copy of an own element while growing).
RC_GTEST_PROP(OpList, MatchesVectorModel, ()) {
  OpList ops;
  std::vector<Op> model;
  const int steps = *rc::gen::inRange(0, 40);
  for (int step = 0; step < steps; ++step) {
    switch (*rc::gen::inRange(0, 7)) {
      case 0:
      case 1:
        ops.push_back(numbered_op(step));
        model.push_back(numbered_op(step));
        break;
      case 2:
        if (!model.empty()) {
          ops.pop_back();
          model.pop_back();
        }
        break;
      case 3:
        if (!model.empty()) {
          const size_t k = *rc::gen::inRange<size_t>(0, model.size());
          ops.push_back(ops[k]);  // may grow while copying its own element
          model.push_back(model[k]);
        }
        break;
      case 4: {
        OpList copy = ops;
        ops = std::move(copy);
        break;
      }
      case 5: {
        OpList moved(std::move(ops));
        ops = moved;
        break;
      }
      case 6: {
        const size_t n = *rc::gen::inRange<size_t>(0, model.size() + 3);
        ops.resize(n);
        model.resize(n);
        for (size_t k = 0; k < n; ++k) {
          if (model[k].kind != OpKind::kMapSet) {
            model[k] = numbered_op(step);
            ops[k] = numbered_op(step);
          }
        }
        break;
      }
    }
    RC_ASSERT(ops.size() == model.size());
    for (size_t k = 0; k < model.size(); ++k) {
      RC_ASSERT(ops[k].counter == model[k].counter);
      RC_ASSERT(ops[k].key() == model[k].key());
    }
  }
}

}  // namespace
}  // namespace weft::crdt::detail
