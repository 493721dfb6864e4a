// The sequence tracker on long sequences (thousands of units, so many chunks
// and chunk splits): the Seq against a naive model, and concurrent typing
// bursts merged with the tracker's self-check on every op (its per-chunk
// visibility flags and prepare counts recomputed from scratch and compared).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/fugue_tracker.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

using detail::Seq;

// Random runs inserted and deleted at the current version (the fast path):
// the visible contents equal a vector model's, and the incrementally kept
// flags and counts equal the recomputed ones.
RC_GTEST_PROP(SeqTracker, LongSequenceMatchesModel, ()) {
  const std::vector<uint64_t> peer_ids = {7, 3};
  Seq seq(&peer_ids, /*is_text=*/false);
  std::vector<uint32_t> model;
  int32_t counter[2] = {0, 0};
  uint32_t next_content = 0;
  const int steps = *rc::gen::inRange(20, 200);
  for (int s = 0; s < steps; ++s) {
    const uint32_t peer = *rc::gen::inRange<uint32_t>(0, 2);
    const int what = *rc::gen::inRange(0, 4);
    if (what < 2 || model.empty()) {
      const uint32_t pos = *rc::gen::inRange<uint32_t>(0, uint32_t(model.size()) + 1);
      const size_t n = *rc::gen::inRange<size_t>(1, what == 0 ? 3 : 90);
      std::vector<uint32_t> contents(n);
      for (uint32_t& c : contents) c = next_content++;
      RC_ASSERT(seq.insert(peer, counter[peer], pos, contents.data(), n, nullptr).ok());
      counter[peer] += int32_t(n);
      model.insert(model.begin() + pos, contents.begin(), contents.end());
    } else if (what == 2) {
      const uint32_t pos = *rc::gen::inRange<uint32_t>(0, uint32_t(model.size()));
      const int32_t n =
          *rc::gen::inRange<int32_t>(1, int32_t(std::min<size_t>(300, model.size() - pos)) + 1);
      RC_ASSERT(seq.erase_forward(peer, counter[peer], pos, n, nullptr).ok());
      counter[peer] += n;
      model.erase(model.begin() + pos, model.begin() + pos + n);
    } else {
      const uint32_t pos = *rc::gen::inRange<uint32_t>(0, uint32_t(model.size()));
      RC_ASSERT(seq.erase_one(peer, counter[peer], pos, nullptr).ok());
      counter[peer] += 1;
      model.erase(model.begin() + pos);
    }
    RC_ASSERT(seq.visible_units() == model.size());
  }
  RC_ASSERT(seq.visible_contents() == model);
  RC_ASSERT(seq.check_prepare(nullptr).ok());
  // Past the end is an error, not a crash.
  const uint32_t c = 0;
  RC_ASSERT(!seq.insert(0, counter[0], uint32_t(model.size()) + 1, &c, 1, nullptr).ok());
  RC_ASSERT(!seq.erase_one(0, counter[0], uint32_t(model.size()), nullptr).ok());
}

// Typing-like edits (each near the previous one: inserts, backspaces,
// forward deletes, with now and then a jump) at the current version: with
// hint verification on, every position found by walking from the last op's
// cursor is also found through the chunk counts (a difference is an error),
// and the contents equal a vector model's.
RC_GTEST_PROP(SeqTracker, PositionHintMatchesCountedLookup, ()) {
  const std::vector<uint64_t> peer_ids = {7};
  Seq seq(&peer_ids, /*is_text=*/true);
  seq.set_verify_hints(true);
  std::vector<uint32_t> model;
  int32_t counter = 0;
  uint32_t next_content = 0;
  uint32_t pos = 0;
  const int steps = *rc::gen::inRange(50, 1500);
  for (int s = 0; s < steps; ++s) {
    const int what = *rc::gen::inRange(0, 12);
    const uint32_t size = static_cast<uint32_t>(model.size());
    if (what == 0 || pos > size) {
      pos = *rc::gen::inRange<uint32_t>(0, size + 1);
    } else if (what <= 2 && pos > 0) {  // backspace
      --pos;
      RC_ASSERT(seq.erase_one(0, counter++, pos, nullptr).ok());
      model.erase(model.begin() + pos);
    } else if (what == 3 && pos < size) {  // forward delete of a few
      const int32_t n =
          *rc::gen::inRange<int32_t>(1, int32_t(std::min<uint32_t>(4, size - pos)) + 1);
      RC_ASSERT(seq.erase_forward(0, counter, pos, n, nullptr).ok());
      counter += n;
      model.erase(model.begin() + pos, model.begin() + pos + n);
    } else {  // type one or a few units
      const size_t n = what == 4 ? *rc::gen::inRange<size_t>(2, 6) : 1;
      std::vector<uint32_t> contents(n);
      // ASCII, 2-, 3- and 4-byte UTF-8 (a surrogate pair in UTF-16).
      constexpr uint32_t kCodePoints[] = {'a', 'b', 0xE9, 0x4E2D, 0x1F600};
      for (uint32_t& c : contents) c = kCodePoints[next_content++ % 5];
      RC_ASSERT(seq.insert(0, counter, pos, contents.data(), n, nullptr).ok());
      counter += int32_t(n);
      model.insert(model.begin() + pos, contents.begin(), contents.end());
      pos += static_cast<uint32_t>(n);
    }
    if (s % 16 == 0) RC_ASSERT(seq.check_prepare(nullptr).ok());  // counts and caches
  }
  RC_ASSERT(seq.visible_contents() == model);
  RC_ASSERT(seq.check_prepare(nullptr).ok());
  size_t u8 = 0;
  for (uint32_t c : model) u8 += detail::utf8_width(c);
  RC_ASSERT(seq.utf8_len() == u8);
}

std::string text_of(Doc& doc) { return doc.get_text("t").to_string(); }

void sync(Doc& from, Doc& to) {
  auto st = to.import(from.export_updates(to.oplog_version()));
  RC_ASSERT(st.ok());
}

// One burst of typing: keystrokes (one commit each) from a random position
// on, with a few backspaces and forward deletes in between.
void type_burst(Doc& doc) {
  TextRef t = doc.get_text("t");
  size_t pos = *rc::gen::inRange<size_t>(0, t.len() + 1);
  const int keys = *rc::gen::inRange(1, 80);
  for (int k = 0; k < keys; ++k) {
    const int what = *rc::gen::inRange(0, 10);
    if (what == 0 && pos > 0) {
      RC_ASSERT(t.erase(pos - 1, 1).ok());
      --pos;
    } else if (what == 1 && pos < t.len()) {
      RC_ASSERT(t.erase(pos, std::min<size_t>(t.len() - pos, 3)).ok());
    } else {
      RC_ASSERT(t.insert(pos, std::string(1, char('a' + k % 26))).ok());
      ++pos;
    }
    RC_ASSERT(doc.commit().ok());
  }
}

// Two or three typists write long concurrent bursts with occasional syncs;
// an empty doc importing everything (tracker self-check on every op), a doc
// that keeps the Fugue sequence from the first op, and the synced typists
// all agree.
RC_GTEST_PROP(SeqTracker, ConcurrentBurstsMergeConsistently, ()) {
  const int n = *rc::gen::inRange(2, 4);
  std::vector<std::unique_ptr<Doc>> docs;
  for (int i = 0; i < n; ++i) docs.push_back(std::make_unique<Doc>(PeerId(40 + i * 13)));
  const int steps = *rc::gen::inRange(4, 40);
  for (int s = 0; s < steps; ++s) {
    const int i = *rc::gen::inRange(0, n);
    if (*rc::gen::inRange(0, 4) == 0) {
      const int j = *rc::gen::inRange(0, n);
      if (i != j) sync(*docs[i], *docs[j]);
    } else {
      type_burst(*docs[i]);
    }
  }
  std::string all;
  {
    Doc merged(900);
    for (auto& d : docs) RC_ASSERT(merged.import(d->export_updates()).ok());
    all = merged.export_updates();
  }
  Doc checked(901);
  test_options(checked).check_tracker = true;
  RC_ASSERT(checked.import(all).ok());
  Doc full(902);
  test_options(full).plain_enabled = false;
  test_options(full).check_tracker = true;
  RC_ASSERT(full.import(all).ok());
  RC_ASSERT(text_of(checked) == text_of(full));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) sync(*docs[i], *docs[j]);
    }
  }
  for (auto& d : docs) RC_ASSERT(text_of(*d) == text_of(checked));
}

}  // namespace
}  // namespace weft::crdt
