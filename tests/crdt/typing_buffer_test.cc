// The typing buffer (DocCore::typing): keystrokes typed on are held back and
// applied at the next other call. Every public entry point must see the doc
// as if they had been applied: random editor sessions interleave typing
// bursts (committed or not, default or other commit options), jumps, deletes
// and every kind of public read and operation on two docs, one buffering
// and one with fast_commit off (no buffer, no lane, the general path), and
// compare what each call returns and everything observable at the end.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <functional>
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

// What an event says that the buffer could change (its versions and diffs).
std::string event_line(const DocEvent& e) {
  std::string s = std::to_string(static_cast<int>(e.by)) + " " + e.origin + " " +
                  e.from.to_json_string() + e.to.to_json_string();
  for (const ContainerDiff& d : e.diffs) {
    s += " " + d.target.to_string();
    if (const auto* t = std::get_if<TextDelta>(&d.diff)) {
      for (const auto& item : *t) s += "/" + std::to_string(item.len) + ":" + item.text;
    }
  }
  return s;
}

std::string changes_line(const Doc& doc) {
  std::string s;
  for (const ChangeMeta& c : doc.changes()) {
    s += c.id.to_string() + "+" + std::to_string(c.len) + "@" + std::to_string(c.lamport) +
         (c.message ? "m" + *c.message : "") + " ";
  }
  return s;
}

// A doc that buffers keystrokes (`fast`) or takes the general path.
struct Side {
  explicit Side(bool fast)
      : doc(7),
        text(doc.get_text("t")),
        list(doc.get_list("l")),
        map(doc.get_map("m")),
        counter(doc.get_counter("c")) {
    test_options(doc).fast_commit = fast;
    core = doc.core().get();
  }
  Doc doc;
  // Handles made once: a call through them is the only entry point a step
  // uses (a Doc::get_text first would flush and hide a missing flush).
  TextRef text;
  ListRef list;
  MapRef map;
  CounterRef counter;
  detail::DocCore* core;  // (raw: reading through it does not flush)
  std::vector<std::string> seen;
  std::vector<Subscription> subs;
  std::unique_ptr<UndoManager> undo;
  Frontiers saved;  // a version kept from an earlier step (readers' arguments)
  VersionVector saved_vv;
};

// A step's random draws.
struct Draw {
  int kind;
  uint32_t r, s;
};

// Cursor state shared by both sides (their texts are equal).
struct Cursor {
  size_t len = 0, at = 0;
};

// One public read, picked by `r`; returns what it saw.
std::string read_one(Side& side, uint32_t r, const Cursor& cur) {
  Doc& doc = side.doc;
  TextRef& text = side.text;
  switch (r % 30) {
    case 0:
      return text.to_string();
    case 1:
      return std::to_string(text.len()) + " " + std::to_string(text.len(PosUnit::kUtf16)) + " " +
             std::to_string(text.len(PosUnit::kBytes));
    case 2: {
      auto p = text.convert_pos(cur.at, PosUnit::kUnicode, PosUnit::kBytes);
      return p.ok() ? std::to_string(*p) : p.status().to_string();
    }
    case 3:
      return doc.to_json_string();
    case 4:
      return doc.to_json().to_json_string();
    case 5: {
      auto v = doc.get_value(text.id());
      return v.ok() ? v->to_json_string() : v.status().to_string();
    }
    case 6:
      return doc.version().to_json_string();
    case 7:
      return doc.oplog_version().to_json_string();
    case 8:
      return doc.frontiers().to_json_string();
    case 9:
      return doc.oplog_frontiers().to_json_string();
    case 10: {
      auto vv = doc.frontiers_to_vv(side.saved);
      return vv.ok() ? vv->to_json_string() : vv.status().to_string();
    }
    case 11:
      return doc.vv_to_frontiers(side.saved_vv).to_json_string();
    case 12: {
      auto o = doc.compare(side.saved, side.saved);
      return o.ok() ? std::to_string(static_cast<int>(*o)) : o.status().to_string();
    }
    case 13:
      return std::to_string(doc.change_count()) + " " + std::to_string(doc.op_count());
    case 14:
      return changes_line(doc);
    case 15:
      return doc.export_updates();
    case 16:
      return doc.export_updates(side.saved_vv);
    case 17:
      return doc.export_json_updates();
    case 18:
      return doc.export_snapshot(r % 2 ? SnapshotCompression::kFast
                                       : SnapshotCompression::kSmallest);
    case 19: {
      Doc f = doc.fork();
      return f.to_json_string() + f.oplog_version().to_json_string() + changes_line(f);
    }
    case 20: {
      auto f = doc.fork_at(side.saved);
      return f.ok() ? f->to_json_string() : f.status().to_string();
    }
    case 21: {
      auto d = doc.diff(side.saved, Frontiers());
      return d.ok() ? std::to_string(d->size()) : d.status().to_string();
    }
    case 22:
      return std::to_string(doc.is_detached()) + std::to_string(doc.peer_id()) +
             std::to_string(text.is_attached_to_root());
    case 23: {
      auto t = doc.text(text.id());
      return t.ok() ? t->to_string() : t.status().to_string();
    }
    case 24:
      return side.list.values().size() ? side.list.values()[0].to_json_string() : "[]";
    case 25:
      return std::to_string(side.map.size()) + std::to_string(side.map.values().size()) +
             std::to_string(side.counter.value());
    case 26:
      // The internals as a test sees them (Doc::core flushes too).
      return doc.core()->log().empty() ? "none"
                                         : std::to_string(doc.core()->log().size()) + " " +
                                               std::to_string(doc.core()->log().back().len);
    case 27: {
      auto d = doc.diff(Frontiers(), doc.frontiers());
      return d.ok() ? std::to_string(d->size()) : d.status().to_string();
    }
    case 28: {
      auto l = side.list.get(0);
      return l.ok() ? l->to_json_string() : "none";
    }
    default:
      side.saved = doc.frontiers();
      side.saved_vv = doc.version();
      return side.saved.to_json_string();
  }
}

// One public operation other than typing, picked by `r`.
Status operate(Side& side, uint32_t r, uint32_t s, const std::string& blob) {
  Doc& doc = side.doc;
  TextRef& text = side.text;
  switch (r % 20) {
    case 0: {
      WEFT_RETURN_IF_ERROR(doc.checkout(side.saved));
      side.seen.push_back("at " + text.to_string());
      return doc.checkout_to_latest();
    }
    case 1:
      doc.detach();
      side.seen.push_back("detached " + text.to_string());
      return doc.attach();
    case 2:
      return doc.revert_to(side.saved);
    case 3:
      return blob.empty() ? Status() : doc.import(blob).status();
    case 4:
      side.subs.push_back(
          doc.subscribe_root([&side](const DocEvent& e) { side.seen.push_back(event_line(e)); }));
      return Status();
    case 5:
      side.subs.push_back(doc.subscribe(
          text.id(), [&side](const DocEvent& e) { side.seen.push_back("t " + event_line(e)); }));
      return Status();
    case 6:
      side.subs.push_back(doc.subscribe_local_update(
          [&side](const std::string& bytes) { side.seen.push_back("bytes " + bytes); }));
      return Status();
    case 7:
      side.subs.clear();  // the buffer only runs without observers
      return Status();
    case 8:
      if (side.undo) {
        side.undo.reset();
      } else {
        side.undo = std::make_unique<UndoManager>(doc);
      }
      return Status();
    case 9:
      if (side.undo) {
        auto done = s % 2 ? side.undo->undo() : side.undo->redo();
        if (!done.ok()) return done.status();
        side.seen.push_back(*done ? "did" : "nothing");
      }
      return Status();
    case 10:
      if (side.undo) {
        if (s % 2) return side.undo->group_start().ok() ? Status() : Status();
        side.undo->group_end();
      }
      return Status();
    case 11:
      doc.set_auto_commit(s % 3 == 0);
      return Status();
    case 12:
      doc.set_change_merge_interval(s % 3 == 0 ? -1 : s % 3 == 1 ? 0 : 1000);
      return Status();
    case 13:
      doc.set_record_timestamp(false);
      return doc.set_peer_id(7 + s % 2);
    case 14:
      WEFT_RETURN_IF_ERROR(side.list.insert(0, Value(int64_t(s % 100))));
      WEFT_RETURN_IF_ERROR(side.map.set("k" + std::to_string(s % 3), Value(true)));
      return side.counter.increment(1);
    case 15:
      return text.len() >= 2 ? text.mark(0, 1 + s % (text.len() - 1), "bold", Value(true))
                             : Status();
    case 16:
      return text.update(text.to_string() + (s % 2 ? "!" : ""));
    case 17:
      return text.splice(0, text.len() ? 1 : 0, "Zz");
    case 18:
      return text.insert(0, s % 2 ? "é" : "x", s % 3 ? PosUnit::kUtf16 : PosUnit::kBytes);
    default:
      return side.list.len() ? side.list.erase(0) : Status();
  }
}

// A commit after a keystroke: mostly the default (commit(), sometimes as
// options with every field default), sometimes none (an uncommitted tail),
// sometimes with a message, a timestamp or an origin.
Status commit_after_key(Doc& doc, uint32_t bits) {
  switch (bits % 16) {
    case 0:
    case 1:
    case 2:
      return Status();
    case 3: {
      CommitOptions o;
      o.message = "m" + std::to_string(bits / 16 % 2);
      return doc.commit(o);
    }
    case 4: {
      CommitOptions o;
      o.timestamp = static_cast<int64_t>(bits / 16 % 3000);
      return doc.commit(o);
    }
    case 5: {
      CommitOptions o;
      o.origin = "user";
      return doc.commit(o);
    }
    case 6:
      return doc.commit(CommitOptions{});
    default:
      return doc.commit();
  }
}

// Applies one step to one side; returns what it observed. The cursor is
// updated from what the step did (both sides alike).
std::string step(Side& side, const Draw& d, Cursor& cur, const std::string& blob) {
  Doc& doc = side.doc;
  TextRef& text = side.text;
  switch (d.kind) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4: {  // a burst of typing at the cursor, each key perhaps committed
      const int keys = 1 + static_cast<int>(d.r % 40);
      uint32_t bits = d.s;
      for (int k = 0; k < keys; ++k) {
        RC_ASSERT(text.insert(cur.at, std::string(1, static_cast<char>('a' + k % 26))).ok());
        ++cur.at, ++cur.len;
        RC_ASSERT(commit_after_key(doc, bits).ok());
        bits = bits * 1103515245u + 12345u;
      }
      return "";
    }
    case 5:
      cur.at = d.r % (cur.len + 1);
      return "";
    case 6: {  // backspaces
      for (uint32_t k = 0; k < 1 + d.r % 6 && cur.at > 0; ++k) {
        RC_ASSERT(text.erase(--cur.at, 1).ok());
        --cur.len;
        RC_ASSERT(commit_after_key(doc, d.s >> k).ok());
      }
      return "";
    }
    case 7:
      if (cur.at < cur.len) {
        RC_ASSERT(text.erase(cur.at, 1).ok());
        --cur.len;
      }
      return "";
    case 8:
    case 9:
    case 10:
    case 11:
      return read_one(side, d.r, cur);
    default: {
      Status st = operate(side, d.r, d.s, blob);
      // The general path refuses what the buffering side refuses, alike.
      std::string out = st.ok() ? "ok" : st.to_string();
      // The text may have changed length: both sides read it.
      cur.len = text.len();
      cur.at = std::min(cur.at, cur.len);
      return out;
    }
  }
}

// Everything observable about a side.
std::string everything(Side& side) {
  Doc& doc = side.doc;
  std::string s = doc.to_json_string() + "|" + doc.version().to_json_string() + "|" +
                  doc.oplog_version().to_json_string() + "|" + doc.frontiers().to_json_string() +
                  "|" + doc.oplog_frontiers().to_json_string() + "|" + changes_line(doc) + "|" +
                  doc.export_updates() + "|" + doc.export_json_updates() + "|" +
                  doc.export_snapshot();
  for (const std::string& e : side.seen) s += "|" + e;
  // The exported bytes decode to the same doc.
  Doc copy(5);
  RC_ASSERT(copy.import(doc.export_updates()).ok());
  return s + "|" + copy.to_json_string() + changes_line(copy);
}

RC_GTEST_PROP(TypingBuffer, EveryEntryPointSeesBufferedKeystrokes, ()) {
  Side fast(true), slow(false);
  Doc remote(99);
  Cursor cf, cs;
  const int steps = *rc::gen::inRange(1, 200);
  bool buffered_call = false, fresh_buffered = false;
  for (int i = 0; i < steps; ++i) {
    const int pick = *rc::gen::inRange(0, 30);
    Draw d{pick < 10   ? pick % 5
           : pick < 13 ? 5
           : pick < 15 ? 6
           : pick < 16 ? 7
           : pick < 24 ? 8
                       : 12,
           *rc::gen::arbitrary<uint32_t>(), *rc::gen::arbitrary<uint32_t>()};
    std::string blob;
    if (d.kind == 12 && d.r % 20 == 3) {
      // A remote edit, after our history or concurrent with it.
      if (d.s % 2) RC_ASSERT(remote.import(slow.doc.export_updates()).ok());
      const VersionVector before = remote.oplog_version();
      RC_ASSERT(remote.get_text("t").insert(0, "R").ok());
      RC_ASSERT(remote.commit().ok());
      blob = remote.export_updates(before);
    }
    // (What the cases cover: a read or an operation while keys are buffered.)
    buffered_call = buffered_call || (d.kind >= 6 && detail::CoreAccess::typing(*fast.core).n != 0);
    const std::string a = step(fast, d, cf, blob);
    fresh_buffered = fresh_buffered || (detail::CoreAccess::typing(*fast.core).n != 0 && detail::CoreAccess::typing(*fast.core).fresh);
    const std::string b = step(slow, d, cs, blob);
    RC_ASSERT(a == b);
    RC_ASSERT(cf.len == cs.len);
    RC_ASSERT(cf.at == cs.at);
    testing::check_doc(fast.doc);
    testing::check_doc(slow.doc);
  }
  RC_CLASSIFY(buffered_call, "a call while keys were buffered");
  RC_CLASSIFY(fresh_buffered, "keys buffered as a new op (another cursor)");
  RC_ASSERT(fast.doc.commit().ok());
  RC_ASSERT(slow.doc.commit().ok());
  RC_ASSERT(everything(fast) == everything(slow));
}

// ---------------------------------------------------------------- unit tests

// Types "hello" (each key committed) and "xy" (not committed) into a doc
// that buffers and into one that does not.
struct Typed {
  Typed() : fast(7), slow(7) {
    test_options(slow).fast_commit = false;
    core = fast.core().get();
    for (Doc* d : {&fast, &slow}) {
      TextRef t = d->get_text("t");
      // The first key opens the insert op the buffer continues.
      EXPECT_TRUE(t.insert(0, "[").ok());
      EXPECT_TRUE(d->commit().ok());
      for (char c : std::string("hello")) {
        EXPECT_TRUE(t.insert(t.len(), std::string(1, c)).ok());
        EXPECT_TRUE(d->commit().ok());
      }
    }
    // No reads from here on: the keys stay buffered.
    tf = fast.get_text("t");
    ts = slow.get_text("t");
    for (size_t k = 0; k < 8; ++k) {
      const std::string key(1, static_cast<char>('0' + k));
      EXPECT_TRUE(tf.insert(6 + k, key).ok());
      EXPECT_TRUE(ts.insert(6 + k, key).ok());
      if (k < 6) {
        EXPECT_TRUE(fast.commit().ok());
        EXPECT_TRUE(slow.commit().ok());
      }
    }
  }
  Doc fast, slow;
  TextRef tf, ts;  // (a call through them is the only entry point)
  detail::DocCore* core;
};

TEST(TypingBuffer, KeystrokesWaitInTheBufferUntilRead) {
  Typed t;
  EXPECT_EQ(detail::CoreAccess::typing(*t.core).n, 8u);
  EXPECT_EQ(detail::CoreAccess::typing(*t.core).committed, 6u);
  EXPECT_FALSE(t.core->direct_open());
  EXPECT_EQ(t.fast.get_text("t").to_string(), "[hello01234567");
  EXPECT_EQ(detail::CoreAccess::typing(*t.core).n, 0u);
  // The uncommitted tail is the lane's direct keystroke.
  EXPECT_TRUE(t.core->direct_open());
  EXPECT_EQ(detail::CoreAccess::txn_len(*t.core), 2);
  EXPECT_EQ(t.fast.export_updates(), t.slow.export_updates());
  EXPECT_EQ(changes_line(t.fast), changes_line(t.slow));
}

TEST(TypingBuffer, EachEntryPointFlushes) {
  const std::vector<std::pair<std::string, std::function<std::string(Doc&, TextRef&)>>> entries = {
      {"to_string", [](Doc&, TextRef& t) { return t.to_string(); }},
      {"len", [](Doc&, TextRef& t) { return std::to_string(t.len()); }},
      {"to_json", [](Doc& d, TextRef&) { return d.to_json_string(); }},
      {"version", [](Doc& d, TextRef&) { return d.version().to_json_string(); }},
      {"oplog_version", [](Doc& d, TextRef&) { return d.oplog_version().to_json_string(); }},
      {"frontiers", [](Doc& d, TextRef&) { return d.frontiers().to_json_string(); }},
      {"oplog_frontiers", [](Doc& d, TextRef&) { return d.oplog_frontiers().to_json_string(); }},
      {"op_count", [](Doc& d, TextRef&) { return std::to_string(d.op_count()); }},
      {"change_count", [](Doc& d, TextRef&) { return std::to_string(d.change_count()); }},
      {"export_updates", [](Doc& d, TextRef&) { return d.export_updates(); }},
      {"export_snapshot", [](Doc& d, TextRef&) { return d.export_snapshot(); }},
      {"fork", [](Doc& d, TextRef&) { return d.fork().to_json_string(); }},
      {"get_value",
       [](Doc& d, TextRef&) {
         return d.get_value(ContainerId::root("t", ContainerType::kText))->to_json_string();
       }},
      {"commit message",
       [](Doc& d, TextRef&) {
         CommitOptions o;
         o.message = "x";
         EXPECT_TRUE(d.commit(o).ok());
         return changes_line(d);
       }},
      {"erase",
       [](Doc&, TextRef& t) {
         EXPECT_TRUE(t.erase(2, 1).ok());
         return t.to_string();
       }},
      {"type elsewhere",
       [](Doc&, TextRef& t) {
         EXPECT_TRUE(t.insert(1, "Q").ok());
         return t.to_string();
       }},
      {"subscribe",
       [](Doc& d, TextRef& t) {
         auto seen = std::make_shared<std::string>();
         Subscription sub = d.subscribe_root([seen](const DocEvent& e) { *seen += event_line(e); });
         EXPECT_TRUE(t.insert(0, "S").ok());
         EXPECT_TRUE(d.commit().ok());
         return *seen;
       }},
      {"undo",
       [](Doc& d, TextRef& t) {
         UndoManager undo(d);
         EXPECT_TRUE(t.insert(0, "U").ok());
         EXPECT_TRUE(d.commit().ok());
         EXPECT_TRUE(undo.undo().ok());
         return t.to_string();
       }},
      {"checkout",
       [](Doc& d, TextRef& t) {
         Frontiers f = d.frontiers();
         EXPECT_TRUE(d.checkout(f).ok());
         return t.to_string() + std::to_string(d.is_detached());
       }},
  };
  for (const auto& [name, entry] : entries) {
    Typed t;
    ASSERT_EQ(detail::CoreAccess::typing(*t.core).n, 8u) << name;
    EXPECT_EQ(entry(t.fast, t.tf), entry(t.slow, t.ts)) << name;
    EXPECT_EQ(detail::CoreAccess::typing(*t.core).n, 0u) << name;
    EXPECT_EQ(t.fast.export_updates(), t.slow.export_updates()) << name;
    EXPECT_EQ(t.fast.get_text("t").to_string(), t.slow.get_text("t").to_string()) << name;
  }
}

TEST(TypingBuffer, FullBufferFlushesAndGoesOn) {
  Doc fast(3), slow(3);
  test_options(slow).fast_commit = false;
  detail::DocCore* core = fast.core().get();
  std::string expect = "a";
  for (Doc* d : {&fast, &slow}) {
    ASSERT_TRUE(d->get_text("t").insert(0, "a").ok());
    ASSERT_TRUE(d->commit().ok());
  }
  TextRef tf = fast.get_text("t"), ts = slow.get_text("t");
  for (size_t k = 1; k < 1000; ++k) {
    const std::string key(1, static_cast<char>('a' + k % 26));
    ASSERT_TRUE(tf.insert(k, key).ok());
    ASSERT_TRUE(ts.insert(k, key).ok());
    ASSERT_TRUE(fast.commit().ok());
    ASSERT_TRUE(slow.commit().ok());
    ASSERT_LE(detail::CoreAccess::typing(*core).n, detail::DocCore::kTypingMax);
    expect += key;
  }
  EXPECT_EQ(tf.to_string(), expect);
  EXPECT_EQ(fast.change_count(), 1u);
  EXPECT_EQ(fast.export_updates(), slow.export_updates());
}

TEST(TypingBuffer, NoBufferWhileObservedOrAutoCommitting) {
  Doc doc(3);
  detail::DocCore* core = doc.core().get();
  TextRef t = doc.get_text("t");
  ASSERT_TRUE(t.insert(0, "a").ok());
  ASSERT_TRUE(doc.commit().ok());
  {
    Subscription sub = doc.subscribe_root([](const DocEvent&) {});
    ASSERT_TRUE(t.insert(1, "b").ok());
    EXPECT_EQ(detail::CoreAccess::typing(*core).n, 0u);
    ASSERT_TRUE(doc.commit().ok());
  }
  doc.set_auto_commit(true);
  ASSERT_TRUE(t.insert(2, "c").ok());
  EXPECT_EQ(detail::CoreAccess::typing(*core).n, 0u);
  doc.set_auto_commit(false);
  ASSERT_TRUE(t.insert(3, "d").ok());
  EXPECT_EQ(detail::CoreAccess::typing(*core).n, 1u);
  EXPECT_EQ(t.to_string(), "abcd");
}

}  // namespace
}  // namespace weft::crdt
