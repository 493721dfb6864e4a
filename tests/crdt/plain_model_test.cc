// PlainSeq against a naive model (a std::u32string of code points and a
// vector of ids): random inserts (as code points and as UTF-8), erases of
// short and chunk-spanning ranges, and position conversions in all three
// units, with emoji, astral modifiers and combining marks.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "crdt/plain_state.h"
#include "weft/base/utf.h"

namespace weft::crdt {
namespace {

using detail::PlainSeq;

std::string utf8_of(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

size_t utf16_of(std::u32string_view s) {
  size_t n = 0;
  for (char32_t c : s) n += c > 0xFFFF ? 2 : 1;
  return n;
}

// Pieces of text the edits draw from: ASCII, 2- / 3- / 4-byte characters, a
// letter with a combining mark, an emoji with a skin-tone modifier, a ZWJ
// family, a line break.
const std::vector<std::u32string>& pieces() {
  static const std::vector<std::u32string> kPieces = {
      U"a",
      U"xyz",
      U"\u00e9",
      U"\u4e2d\u6587",
      U"\U0001F600",
      U"e\u0301",
      U"\n",
      U"\U0001F44D\U0001F3FD",
      U"ab\U0001F600cd",
      U"\U0001F468\u200D\U0001F469\u200D\U0001F467"};
  return kPieces;
}

// The model's ids: (peer, counter) per unit.
using Ids = std::vector<std::pair<uint32_t, int32_t>>;

// The ids unit_runs reports for [from, to), flattened, equal the model's. The
// run list is one a caller reuses: it holds the previous check's runs, which
// must not show.
void check_ids(const PlainSeq& seq, const Ids& ids, size_t from, size_t to) {
  static std::vector<weft::crdt::detail::Seq::Run> reused;
  seq.unit_runs(from, to, reused);
  Ids got;
  for (const auto& run : reused) {
    RC_ASSERT(run.entity == from + got.size());
    for (uint32_t k = 0; k < run.len; ++k) got.emplace_back(run.peer, run.counter + int32_t(k));
  }
  RC_ASSERT(got == Ids(ids.begin() + static_cast<ptrdiff_t>(from),
                       ids.begin() + static_cast<ptrdiff_t>(to)));
}

// id_at(pos) names the model's id of unit `pos` and a run of consecutive ids
// from there that the model confirms.
void check_id_at(const PlainSeq& seq, const Ids& ids, size_t pos) {
  uint32_t peer = 0;
  int32_t counter = 0;
  const size_t len = seq.id_at(pos, &peer, &counter);
  RC_ASSERT(len >= 1u);
  RC_ASSERT(pos + len <= ids.size());
  for (size_t k = 0; k < len; ++k)
    RC_ASSERT(ids[pos + k] == std::make_pair(peer, counter + static_cast<int32_t>(k)));
}

// Conversions at unit boundary k in all three units, and positions inside a
// character are refused.
void check_locate(const PlainSeq& seq, const std::u32string& model, size_t k) {
  const size_t u16 = utf16_of(std::u32string_view(model).substr(0, k));
  const size_t u8 = utf8_of(std::u32string_view(model).substr(0, k)).size();
  for (int kind = 0; kind < 3; ++kind) {
    const size_t at = kind == 0 ? k : kind == 1 ? u16 : u8;
    auto b = seq.locate(at, kind);
    RC_ASSERT(b.ok());
    RC_ASSERT(b->units == k);
    RC_ASSERT(b->u16 == u16);
    RC_ASSERT(b->u8 == u8);
    RC_ASSERT(b->entity == k);
  }
  if (k < model.size() && model[k] > 0xFFFF) {
    RC_ASSERT(seq.locate(u16 + 1, 1).status().code() == StatusCode::kInvalidArgument);
  }
  if (k < model.size() && model[k] >= 0x80) {
    RC_ASSERT(seq.locate(u8 + 1, 2).status().code() == StatusCode::kInvalidArgument);
  }
}

RC_GTEST_PROP(PlainSeqModel, TextMatchesAU32StringModel, ()) {
  // One run in four keeps no ids (a state replayed for reading): the same
  // contents and counts, no id checks.
  const bool track_ids = *rc::gen::inRange(0, 4) != 0;
  PlainSeq seq(true, track_ids);
  std::u32string model;
  Ids ids;
  int32_t counters[3] = {0, 0, 0};
  size_t cursor = 0;  // where typing goes on
  const int steps = *rc::gen::inRange(1, 300);
  for (int i = 0; i < steps; ++i) {
    const int what = model.empty() ? 0 : *rc::gen::inRange(0, 12);
    if (what >= 10) {
      if (!track_ids) continue;
      // Id lookups between edits (they move the search hint the next edit
      // starts from): id_at at the cursor or anywhere, unit_runs of a range.
      const size_t pos =
          what == 10 && cursor < model.size() ? cursor : *rc::gen::inRange<size_t>(0, model.size());
      check_id_at(seq, ids, pos);
      const size_t to = *rc::gen::inRange<size_t>(pos, model.size() + 1);
      check_ids(seq, ids, pos, to);
      continue;
    }
    if (what < 6) {
      // Insert: typing at the cursor, a piece somewhere, or a long paste.
      std::u32string text;
      size_t pos = what < 3 ? std::min(cursor, model.size())
                            : *rc::gen::inRange<size_t>(0, model.size() + 1);
      const int reps = what == 5 ? *rc::gen::inRange(50, 400) : 1;
      for (int r = 0; r < reps; ++r) text += *rc::gen::elementOf(pieces());
      const uint32_t peer = *rc::gen::inRange<uint32_t>(1, 3);
      int32_t& counter = counters[peer];
      if (*rc::gen::arbitrary<bool>()) {
        const std::vector<uint32_t> cps(text.begin(), text.end());
        RC_ASSERT(
            seq.insert(peer, counter, static_cast<uint32_t>(pos), cps.data(), cps.size()).ok());
      } else {
        RC_ASSERT(
            seq.insert_utf8(peer, counter, static_cast<uint32_t>(pos), utf8_of(text), text.size())
                .ok());
      }
      model.insert(pos, text);
      for (size_t k = 0; k < text.size(); ++k)
        ids.insert(ids.begin() + static_cast<ptrdiff_t>(pos + k),
                   {peer, counter + static_cast<int32_t>(k)});
      counter += static_cast<int32_t>(text.size());
      cursor = pos + text.size();
    } else {
      // Erase: a backspace, a short range, or a range across many chunks.
      const size_t pos = what == 6 && cursor > 0 && cursor <= model.size()
                             ? cursor - 1
                             : *rc::gen::inRange<size_t>(0, model.size());
      const size_t most = std::min<size_t>(model.size() - pos, what == 9 ? 3000 : 4);
      const size_t n = *rc::gen::inRange<size_t>(1, most + 1);
      RC_ASSERT(seq.erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)).ok());
      model.erase(pos, n);
      ids.erase(ids.begin() + static_cast<ptrdiff_t>(pos),
                ids.begin() + static_cast<ptrdiff_t>(pos + n));
      cursor = pos;
    }
    RC_ASSERT(seq.visible_units() == model.size());
    RC_ASSERT(seq.utf16_len() == utf16_of(model));
    RC_ASSERT(seq.utf8_len() == utf8_of(model).size());
    RC_ASSERT(seq.check_structure() == "");
  }
  RC_ASSERT(seq.ids_known() == track_ids);
  RC_ASSERT(seq.to_utf8() == utf8_of(model));
  const std::vector<uint32_t> contents = seq.visible_contents();
  RC_ASSERT(std::u32string(contents.begin(), contents.end()) == model);
  if (track_ids) check_ids(seq, ids, 0, model.size());
  for (int probe = 0; probe < 12; ++probe)
    check_locate(seq, model, *rc::gen::inRange<size_t>(0, model.size() + 1));
  check_locate(seq, model, model.size());
  RC_ASSERT(!seq.locate(model.size() + 1, 0).ok());
  RC_ASSERT(!seq.locate(utf16_of(model) + 1, 1).ok());
  RC_ASSERT(!seq.insert_utf8(1, 0, static_cast<uint32_t>(model.size() + 1), "a", 1).ok());
  RC_ASSERT(!seq.erase(static_cast<uint32_t>(model.size()), 1).ok());
  RC_ASSERT(seq.visible_units() == model.size());
}

// Two typists in one text (a flattened two-author trace): edits alternate
// between two cursors, so a switch seeks back to the other cursor's
// remembered position (PlainSeq::alt_), which every edit before it must keep
// right. Keys go through the typing lane (lane_type / lane_type_n where the
// last insert ended, else insert_utf8), backspaces through lane_erase_one
// (else id_at + erase); pastes with non-ASCII pieces and long erases split,
// merge and drop chunks under both cursors. After every step: the counts,
// a random boundary in all three units and the ids at both cursors.
RC_GTEST_PROP(PlainSeqModel, TwoCursorsStayRightAcrossEdits, ()) {
  PlainSeq seq(true);
  std::u32string model;
  Ids ids;
  int32_t counter = 0;  // one peer, as in a flattened trace
  size_t cursors[2] = {0, 0};
  const auto insert = [&](size_t pos, const std::u32string& text) {
    model.insert(pos, text);
    for (size_t k = 0; k < text.size(); ++k)
      ids.insert(ids.begin() + static_cast<ptrdiff_t>(pos + k),
                 {1u, counter + static_cast<int32_t>(k)});
    counter += static_cast<int32_t>(text.size());
    for (size_t& c : cursors) c += c > pos ? text.size() : 0;
  };
  const auto erase = [&](size_t pos, size_t n) {
    model.erase(pos, n);
    ids.erase(ids.begin() + static_cast<ptrdiff_t>(pos),
              ids.begin() + static_cast<ptrdiff_t>(pos + n));
    for (size_t& c : cursors) c = c <= pos ? c : c < pos + n ? pos : c - n;
  };
  const int steps = *rc::gen::inRange(1, 400);
  int who = 0;
  for (int i = 0; i < steps; ++i) {
    if (*rc::gen::inRange(0, 3) == 0) who = 1 - who;             // a switch of typist
    if (const int move = *rc::gen::inRange(0, 20); move == 0) {  // a jump
      cursors[who] = *rc::gen::inRange<size_t>(0, model.size() + 1);
    } else if (move == 1) {  // a move of a chunk or two, either way
      const size_t at = cursors[who], by = *rc::gen::inRange<size_t>(0, 700);
      cursors[who] =
          *rc::gen::arbitrary<bool>() ? std::min(model.size(), at + by) : (at > by ? at - by : 0);
    }
    const int what = *rc::gen::inRange(0, 20);
    if (what < 12) {
      // A burst of ASCII keys, one or a few bytes per lane call.
      const int keys = *rc::gen::inRange(1, 12);
      for (int k = 0; k < keys;) {
        const size_t at = cursors[who];
        const int m = std::min(keys - k, *rc::gen::inRange(1, 5));
        std::string bytes;
        for (int j = 0; j < m; ++j) bytes += static_cast<char>('a' + (k + j + who * 13) % 26);
        const bool lane = m == 1 ? seq.lane_type(1, counter, at, bytes[0])
                                 : seq.lane_type_n(1, counter, at, bytes.data(), bytes.size());
        if (!lane)
          RC_ASSERT(
              seq.insert_utf8(1, counter, static_cast<uint32_t>(at), bytes, bytes.size()).ok());
        insert(at, std::u32string(bytes.begin(), bytes.end()));
        cursors[who] = at + bytes.size();
        k += m;
      }
    } else if (what < 16) {
      // Backspaces.
      const int keys = *rc::gen::inRange(1, 4);
      for (int k = 0; k < keys && cursors[who] > 0; ++k) {
        const size_t pos = cursors[who] - 1;
        uint32_t peer = 0;
        int32_t ctr = 0;
        if (!seq.lane_erase_one(pos, &peer, &ctr)) {
          seq.id_at(pos, &peer, &ctr);
          RC_ASSERT(seq.erase(static_cast<uint32_t>(pos), 1).ok());
        }
        RC_ASSERT(ids[pos] == std::make_pair(peer, ctr));
        erase(pos, 1);
        cursors[who] = pos;
      }
    } else if (what < 18) {
      // A paste at the cursor (splits its chunk), sometimes not ASCII.
      std::u32string text;
      const int reps = *rc::gen::inRange(1, 200);
      for (int r = 0; r < reps; ++r)
        text += *rc::gen::arbitrary<bool>() ? U"paste " : *rc::gen::elementOf(pieces());
      const size_t at = cursors[who];
      RC_ASSERT(
          seq.insert_utf8(1, counter, static_cast<uint32_t>(at), utf8_of(text), text.size()).ok());
      insert(at, text);
      cursors[who] = at + text.size();
    } else if (!model.empty()) {
      // A range erase anywhere, short or across chunks (merges and drops them).
      const size_t pos = *rc::gen::inRange<size_t>(0, model.size());
      const size_t most = std::min<size_t>(model.size() - pos, what == 19 ? 2000 : 6);
      const size_t n = *rc::gen::inRange<size_t>(1, most + 1);
      RC_ASSERT(seq.erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)).ok());
      erase(pos, n);
    }
    RC_ASSERT(seq.visible_units() == model.size());
    RC_ASSERT(seq.utf16_len() == utf16_of(model));
    RC_ASSERT(seq.utf8_len() == utf8_of(model).size());
    check_locate(seq, model, *rc::gen::inRange<size_t>(0, model.size() + 1));
    for (const size_t c : cursors) {
      if (c < model.size()) check_id_at(seq, ids, c);
    }
  }
  RC_ASSERT(seq.to_utf8() == utf8_of(model));
  check_ids(seq, ids, 0, model.size());
}

RC_GTEST_PROP(PlainSeqModel, ListMatchesAVectorModel, ()) {
  const bool track_ids = *rc::gen::inRange(0, 4) != 0;  // as for a Text
  PlainSeq seq(false, track_ids);
  std::vector<uint32_t> model;
  Ids ids;
  int32_t counter = 0;
  uint32_t next_value = 0;
  const int steps = *rc::gen::inRange(1, 200);
  for (int i = 0; i < steps; ++i) {
    if (model.empty() || *rc::gen::inRange(0, 3) > 0) {
      const size_t pos = *rc::gen::inRange<size_t>(0, model.size() + 1);
      const size_t n =
          *rc::gen::inRange<size_t>(1, *rc::gen::elementOf(std::vector<size_t>{3, 600}));
      std::vector<uint32_t> values(n);
      for (uint32_t& v : values) v = next_value++;
      RC_ASSERT(seq.insert(1, counter, static_cast<uint32_t>(pos), values.data(), n).ok());
      model.insert(model.begin() + static_cast<ptrdiff_t>(pos), values.begin(), values.end());
      for (size_t k = 0; k < n; ++k)
        ids.insert(ids.begin() + static_cast<ptrdiff_t>(pos + k),
                   {1u, counter + static_cast<int32_t>(k)});
      counter += static_cast<int32_t>(n);
    } else {
      const size_t pos = *rc::gen::inRange<size_t>(0, model.size());
      const size_t n = *rc::gen::inRange<size_t>(1, model.size() - pos + 1);
      RC_ASSERT(seq.erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)).ok());
      model.erase(model.begin() + static_cast<ptrdiff_t>(pos),
                  model.begin() + static_cast<ptrdiff_t>(pos + n));
      ids.erase(ids.begin() + static_cast<ptrdiff_t>(pos),
                ids.begin() + static_cast<ptrdiff_t>(pos + n));
    }
    RC_ASSERT(seq.visible_units() == model.size());
    RC_ASSERT(seq.utf8_len() == model.size());
    RC_ASSERT(seq.check_structure() == "");
    if (track_ids && !model.empty())
      check_id_at(seq, ids, *rc::gen::inRange<size_t>(0, model.size()));
  }
  RC_ASSERT(seq.visible_contents() == model);
  if (track_ids) check_ids(seq, ids, 0, model.size());
  const size_t k = *rc::gen::inRange<size_t>(0, model.size() + 1);
  auto b = seq.locate(k, 1);
  RC_ASSERT(b.ok());
  RC_ASSERT(b->units == k);
}

TEST(PlainSeqModel, ChunkSpanningEraseKeepsCountsAndIds) {
  // Ten pastes of 1,000 mixed-width characters make many chunks; erasing
  // across most of them in one call leaves the two ends joined.
  PlainSeq seq(true);
  std::u32string model;
  for (int i = 0; i < 10; ++i) {
    std::u32string text;
    for (int k = 0; k < 500; ++k) text += (k % 3 == 0) ? U"a\U0001F600" : U"\u00e9\u4e2d";
    ASSERT_TRUE(seq.insert_utf8(1, static_cast<int32_t>(model.size()),
                                static_cast<uint32_t>(model.size()), utf8_of(text), text.size())
                    .ok());
    model += text;
  }
  ASSERT_TRUE(seq.erase(7, 9000).ok());
  model.erase(7, 9000);
  EXPECT_EQ(seq.to_utf8(), utf8_of(model));
  EXPECT_EQ(seq.utf16_len(), utf16_of(model));
  const auto runs = seq.unit_runs(0, model.size());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].counter, 0);
  EXPECT_EQ(runs[1].counter, 9007);
}

TEST(PlainSeqModel, LargePasteIntoAChunkKeepsItsNeighboursIds) {
  // A paste of many chunks' worth (the bulk insert path) into the middle of
  // a chunk, at its start and at the end: the text reads back, and the ids
  // are the head's, the paste's and the tail's, each one run.
  for (const bool text : {true, false}) {
    for (const uint32_t at : {0u, 37u, 100u}) {
      PlainSeq seq(text);
      std::vector<uint32_t> head(100), paste(3000);
      for (uint32_t k = 0; k < head.size(); ++k) head[k] = 'a' + k % 26;
      for (uint32_t k = 0; k < paste.size(); ++k) paste[k] = k % 7 == 0 ? 0x1F600 : 0xE9;
      ASSERT_TRUE(seq.insert(1, 0, 0, head.data(), head.size()).ok());
      ASSERT_TRUE(seq.insert(2, 0, at, paste.data(), paste.size()).ok());
      std::vector<uint32_t> want = head;
      want.insert(want.begin() + at, paste.begin(), paste.end());
      EXPECT_EQ(seq.visible_contents(), want);
      EXPECT_EQ(seq.visible_units(), want.size());
      if (text) {
        EXPECT_EQ(seq.utf16_len(), want.size() + (paste.size() + 6) / 7);
        EXPECT_EQ(seq.to_utf8().size(), seq.utf8_len());
      }
      const auto runs = seq.unit_runs(0, want.size());
      std::vector<std::pair<uint32_t, int32_t>> got;  // (peer, counter) of each run
      for (const auto& run : runs) got.emplace_back(run.peer, run.counter);
      std::vector<std::pair<uint32_t, int32_t>> expect;
      if (at > 0) expect.emplace_back(1u, 0);
      expect.emplace_back(2u, 0);
      if (at < head.size()) expect.emplace_back(1u, static_cast<int32_t>(at));
      EXPECT_EQ(got, expect);
      uint32_t peer = 0;
      int32_t counter = 0;
      EXPECT_GE(seq.id_at(at + 2999, &peer, &counter), 1u);
      EXPECT_EQ(std::make_pair(peer, counter), std::make_pair(2u, 2999));
    }
  }
}

TEST(PlainSeqModel, FragmentedIdsStayFindable) {
  // Typing backwards (each character before the last) gives every unit its
  // own id run, so chunks split on their run count; erasing every other unit
  // afterwards joins nothing. Every id stays where the model has it.
  for (const bool text : {true, false}) {
    PlainSeq seq(text);
    Ids ids;
    for (int32_t i = 0; i < 3000; ++i) {
      const uint32_t peer = 1 + static_cast<uint32_t>(i % 2);
      const uint32_t pos = static_cast<uint32_t>(ids.size() / 3);
      const uint32_t value = i % 5 == 0 ? 0x1F600 : 'a' + static_cast<uint32_t>(i % 26);
      ASSERT_TRUE(seq.insert(peer, i, pos, &value, 1).ok());
      ids.insert(ids.begin() + pos, {peer, i});
    }
    for (size_t pos = 0; pos < ids.size(); pos += 97) {
      uint32_t peer = 0;
      int32_t counter = 0;
      EXPECT_EQ(seq.id_at(pos, &peer, &counter), 1u);
      EXPECT_EQ(std::make_pair(peer, counter), ids[pos]);
    }
    for (size_t pos = ids.size() - 1; pos < ids.size(); pos -= std::min<size_t>(pos + 1, 2)) {
      ASSERT_TRUE(seq.erase(static_cast<uint32_t>(pos), 1).ok());
      ids.erase(ids.begin() + static_cast<ptrdiff_t>(pos));
      if (pos < 2) break;
    }
    Ids got;
    for (const auto& run : seq.unit_runs(0, ids.size())) {
      for (uint32_t k = 0; k < run.len; ++k)
        got.emplace_back(run.peer, run.counter + static_cast<int32_t>(k));
    }
    EXPECT_EQ(got, ids);
    EXPECT_EQ(seq.visible_units(), ids.size());
  }
}

TEST(PlainSeqModel, ChunkRoomOverflowsToTheHeapAndBack) {
  // A chunk keeps its bytes and first id runs in its own block; a paste that
  // overfills it before the split, and more id runs than the block holds,
  // move them to the heap (and a split or a spare's reuse back). Contents
  // and ids match the model at every step.
  for (const bool text : {true, false}) {
    PlainSeq seq(text);
    std::vector<uint32_t> model;
    Ids ids;
    int32_t counters[3] = {0, 0, 0};
    auto insert = [&](uint32_t peer, size_t pos, size_t n, uint32_t first) {
      std::vector<uint32_t> values(n);
      for (size_t k = 0; k < n; ++k) values[k] = first + static_cast<uint32_t>(k % 20);
      ASSERT_TRUE(
          seq.insert(peer, counters[peer], static_cast<uint32_t>(pos), values.data(), n).ok());
      model.insert(model.begin() + static_cast<ptrdiff_t>(pos), values.begin(), values.end());
      for (size_t k = 0; k < n; ++k) {
        ids.insert(ids.begin() + static_cast<ptrdiff_t>(pos + k),
                   {peer, counters[peer] + static_cast<int32_t>(k)});
      }
      counters[peer] += static_cast<int32_t>(n);
    };
    auto erase = [&](size_t pos, size_t n) {
      ASSERT_TRUE(seq.erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)).ok());
      model.erase(model.begin() + static_cast<ptrdiff_t>(pos),
                  model.begin() + static_cast<ptrdiff_t>(pos + n));
      ids.erase(ids.begin() + static_cast<ptrdiff_t>(pos),
                ids.begin() + static_cast<ptrdiff_t>(pos + n));
    };
    auto check = [&] {
      EXPECT_EQ(seq.visible_contents(), model);
      EXPECT_EQ(seq.visible_units(), model.size());
      Ids got;
      for (const auto& run : seq.unit_runs(0, ids.size())) {
        for (uint32_t k = 0; k < run.len; ++k)
          got.emplace_back(run.peer, run.counter + static_cast<int32_t>(k));
      }
      EXPECT_EQ(got, ids);
    };
    const size_t full = text ? PlainSeq::kTextChunkMax : PlainSeq::kListChunkMax;
    insert(1, 0, full - 4, 'a');  // one chunk, nearly full
    check();
    insert(2, full / 3, full / 2 - 1, 'A');  // over its own room: heap, then split
    check();
    // Alternating peers one unit at a time: a run per unit, past the runs the
    // block holds, until the chunk splits on its run count.
    for (int i = 0; i < 90; ++i) insert(1 + static_cast<uint32_t>(i % 2), 10 + i, 1, '0');
    check();
    // Erasing most of it drops and merges chunks (kept as spares); new
    // inserts reuse them.
    erase(5, model.size() - 10);
    check();
    for (int i = 0; i < 6; ++i) {
      insert(2, model.size() / 2, full / 2 + 7, 'k');
      check();
      for (int j = 0; j < 40; ++j) insert(1 + static_cast<uint32_t>(j % 2), 3 + 2 * j, 1, '#');
      check();
    }
  }
}

}  // namespace
}  // namespace weft::crdt
