// Tests of weft's binary format (docs/formats/binary.md): round trips of
// every op kind, updates since a version, the version-1 reader, size on a
// typing history, and rejection of truncated, bit-flipped and forged input
// with the doc left unchanged.
#include <gtest/gtest.h>
#include <zstd.h>

#include <random>

#include "weft/base/hash.h"
#include "weft/base/varint.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

// Frames `raw` as an uncompressed payload of `version` and `kind`.
std::string frame(std::string_view raw, uint8_t version = 2, uint8_t kind = 1) {
  std::string out = "WFTC";
  out.push_back(static_cast<char>(version));
  out.push_back(static_cast<char>(kind));
  out.push_back(0);
  out.push_back(0);
  put_fixed32(out, static_cast<uint32_t>(raw.size()));
  put_fixed32(out, checksum32(raw));
  out += raw;
  return out;
}

// A doc with every op kind, two authors, messages, timestamps, a backspace
// run, marks and nested children.
Doc rich_doc() {
  Doc a(11), b(22);
  TextRef t = a.get_text("text");
  EXPECT_TRUE(t.insert(0, "héllo wörld 😀 tail").ok());
  EXPECT_TRUE(a.commit({"first", 1700000000, ""}).ok());
  EXPECT_TRUE(t.erase(3, 2).ok());
  EXPECT_TRUE(t.mark(0, 4, "bold", Value(true)).ok());
  EXPECT_TRUE(a.commit({std::nullopt, 1700000005, ""}).ok());
  ListRef l = a.get_list("list");
  EXPECT_TRUE(l.push(Value(int64_t{-5})).ok());
  EXPECT_TRUE(l.push(Value(2.5)).ok());
  EXPECT_TRUE(l.push(Value(ValueList{Value("x"), Value(ValueMap{{"k", Value(false)}})})).ok());
  auto child = l.insert_container(1, ContainerType::kText);
  EXPECT_TRUE(child.ok());
  EXPECT_TRUE(a.text(*child)->insert(0, "child").ok());
  MapRef m = a.get_map("map");
  EXPECT_TRUE(m.set("s", Value("v")).ok());
  EXPECT_TRUE(m.set("bin", Value(Binary{{0, 1, 255}})).ok());
  EXPECT_TRUE(m.set("null", Value()).ok());
  EXPECT_TRUE(m.set_container("sub", ContainerType::kMap).ok());
  EXPECT_TRUE(m.erase("s").ok());
  EXPECT_TRUE(a.get_counter("count").increment(1.5).ok());
  EXPECT_TRUE(a.get_counter("count").increment(-4).ok());
  EXPECT_TRUE(a.commit({"second", 1700000100, ""}).ok());
  EXPECT_TRUE(b.import(a.export_updates()).ok());
  // Concurrent edits, then a backspace run by b.
  EXPECT_TRUE(a.get_text("text").insert(1, "A").ok());
  EXPECT_TRUE(a.commit().ok());
  TextRef bt = b.get_text("text");
  EXPECT_TRUE(bt.insert(5, "xyz").ok());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bt.erase(7 - i, 1).ok());
  EXPECT_TRUE(b.get_map("map").set("s", Value("from b")).ok());
  EXPECT_TRUE(b.commit().ok());
  EXPECT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  EXPECT_TRUE(a.get_text("text").insert(0, ">").ok());
  EXPECT_TRUE(a.commit().ok());
  return a;
}

void expect_same_history(const Doc& a, const Doc& b) {
  EXPECT_EQ(a.to_json_string(), b.to_json_string());
  EXPECT_EQ(a.oplog_version(), b.oplog_version());
  EXPECT_EQ(a.oplog_frontiers(), b.oplog_frontiers());
  auto ca = a.changes(), cb = b.changes();
  ASSERT_EQ(ca.size(), cb.size());
  for (size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(ca[i].id, cb[i].id);
    EXPECT_EQ(ca[i].len, cb[i].len);
    EXPECT_EQ(ca[i].lamport, cb[i].lamport);
    EXPECT_EQ(ca[i].timestamp, cb[i].timestamp);
    EXPECT_EQ(ca[i].message, cb[i].message);
    EXPECT_EQ(ca[i].deps, cb[i].deps);
  }
}

TEST(BinaryCodecTest, SnapshotRoundTripsEveryOpKind) {
  Doc a = rich_doc();
  std::string snap = a.export_snapshot();
  ASSERT_EQ(snap.substr(0, 4), "WFTC");
  EXPECT_EQ(snap[4], 2);  // format version
  EXPECT_EQ(snap[5], 2);  // snapshot
  Doc b(99);
  ASSERT_TRUE(b.import(snap).ok());
  expect_same_history(a, b);
  // The re-export is byte-identical (the encoding is deterministic).
  EXPECT_EQ(b.export_snapshot(), snap);
  // Edits after loading still merge both ways.
  ASSERT_TRUE(b.get_text("text").insert(2, "Q").ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  EXPECT_EQ(a.to_json_string(), b.to_json_string());
}

TEST(BinaryCodecTest, SnapshotStateLoadsLikeAReplay) {
  // Maps and counters load from the state section; the result must equal a
  // replay of the same history, including who wins a later concurrent write.
  Doc a(1), x(3);
  MapRef m = a.get_map("m");
  ASSERT_TRUE(m.set("k", Value("a1")).ok());
  ASSERT_TRUE(m.set("gone", Value(int64_t{1})).ok());
  ASSERT_TRUE(a.get_counter("c").increment(2).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(x.import(a.export_updates()).ok());
  ASSERT_TRUE(m.erase("gone").ok());
  ASSERT_TRUE(m.set("k", Value("a2")).ok());
  ASSERT_TRUE(m.set_container("child", ContainerType::kList).ok());
  ASSERT_TRUE(a.get_counter("c").increment(0.5).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(x.get_map("m").set("k", Value("x")).ok());  // concurrent with "a2"
  ASSERT_TRUE(x.get_map("m").set("gone", Value("x")).ok());
  ASSERT_TRUE(x.commit().ok());

  Doc loaded(7), replayed(8);
  auto st = loaded.import(a.export_snapshot());
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  ASSERT_EQ(st->success.size(), 1u);
  EXPECT_EQ(st->success[0], (IdSpan{1, 0, a.oplog_version().get(1)}));
  ASSERT_TRUE(replayed.import(a.export_updates()).ok());
  expect_same_history(loaded, replayed);
  EXPECT_EQ(loaded.to_json_string(), a.to_json_string());
  const std::string from_x = x.export_updates();
  ASSERT_TRUE(loaded.import(from_x).ok());
  ASSERT_TRUE(replayed.import(from_x).ok());
  ASSERT_TRUE(a.import(from_x).ok());
  EXPECT_EQ(loaded.to_json_string(), replayed.to_json_string());
  EXPECT_EQ(loaded.to_json_string(), a.to_json_string());
  // Local edits after loading behave like on the replayed doc.
  ASSERT_TRUE(loaded.get_counter("c").increment(1).ok());
  ASSERT_TRUE(loaded.commit().ok());
  EXPECT_EQ(*loaded.get_value(ContainerId::root("c", ContainerType::kCounter)), Value(3.5));
  // A second snapshot load into a non-empty doc takes the replay path.
  ASSERT_TRUE(replayed.import(loaded.export_snapshot()).ok());
  EXPECT_EQ(replayed.to_json_string(), loaded.to_json_string());
}

TEST(BinaryCodecTest, SnapshotTextAndListStateSurviveLaterEdits) {
  // Text and List load plainly (ids unknown); inserts, deletes, concurrent
  // imports and marks afterwards must give what a replayed doc gives.
  Doc a(1), x(3);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "hello wörld 😀").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(x.import(a.export_updates()).ok());
  ASSERT_TRUE(t.erase(0, 1).ok());
  ASSERT_TRUE(t.insert(0, "H").ok());
  ListRef l = a.get_list("l");
  ASSERT_TRUE(l.push(Value(int64_t{1})).ok());
  ASSERT_TRUE(l.insert_container(1, ContainerType::kMap).ok());
  ASSERT_TRUE(l.push(Value("three")).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(x.get_text("t").insert(5, ",").ok());  // concurrent with a's edits
  ASSERT_TRUE(x.get_list("l").push(Value(true)).ok());
  ASSERT_TRUE(x.commit().ok());
  const std::string snap = a.export_snapshot();
  const std::string from_x = x.export_updates();

  auto edit = [&](Doc& d) {
    ASSERT_TRUE(d.get_text("t").insert(3, "-").ok());
    ASSERT_TRUE(d.get_text("t").erase(7, 2).ok());
    ASSERT_TRUE(d.get_list("l").erase(0).ok());
    ASSERT_TRUE(d.commit().ok());
    ASSERT_TRUE(d.import(from_x).ok());
    ASSERT_TRUE(d.get_text("t").mark(0, 3, "bold", Value(true)).ok());
    ASSERT_TRUE(d.commit().ok());
  };
  Doc loaded(7), replayed(7);
  ASSERT_TRUE(loaded.import(snap).ok());
  ASSERT_TRUE(replayed.import(a.export_updates()).ok());
  EXPECT_EQ(loaded.to_json_string(), a.to_json_string());
  EXPECT_EQ(loaded.get_text("t").len(PosUnit::kUtf16), a.get_text("t").len(PosUnit::kUtf16));
  expect_same_history(loaded, replayed);
  edit(loaded);
  edit(replayed);
  expect_same_history(loaded, replayed);
  // Both re-export the same history; loading the new snapshot agrees too.
  EXPECT_EQ(loaded.export_updates(), replayed.export_updates());
  Doc again(9);
  ASSERT_TRUE(again.import(loaded.export_snapshot()).ok());
  EXPECT_EQ(again.to_json_string(), replayed.to_json_string());
}

TEST(BinaryCodecTest, UpdatesSinceAVersionCutStraddlingChanges) {
  Doc a(1);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "abc").ok());
  ASSERT_TRUE(a.commit().ok());
  Doc b(2);
  ASSERT_TRUE(b.import(a.export_updates()).ok());
  ASSERT_TRUE(t.insert(3, "def").ok());
  ASSERT_TRUE(t.erase(0, 1).ok());
  ASSERT_TRUE(a.commit().ok());  // merges into the first change
  ASSERT_EQ(a.change_count(), 1u);
  std::string upd = a.export_updates(b.oplog_version());
  EXPECT_LT(upd.size(), a.export_updates().size());
  ASSERT_TRUE(b.import(upd).ok());
  EXPECT_EQ(b.to_json_string(), a.to_json_string());
  // An empty update decodes to nothing.
  std::string none = a.export_updates(a.oplog_version());
  ASSERT_TRUE(b.import(none).ok());
  EXPECT_EQ(b.to_json_string(), a.to_json_string());
}

TEST(BinaryCodecTest, TypingHistoryIsCompact) {
  // 20,000 keystrokes with a backspace now and then: each costs a few bits.
  Doc a(1);
  TextRef t = a.get_text("t");
  std::mt19937 rng(7);
  size_t len = 0;
  for (int i = 0; i < 20000; ++i) {
    if (len > 0 && rng() % 8 == 0) {
      ASSERT_TRUE(t.erase(len - 1, 1).ok());
      --len;
    } else {
      ASSERT_TRUE(t.insert(len, std::string(1, char('a' + rng() % 26))).ok());
      ++len;
    }
    ASSERT_TRUE(a.commit().ok());
  }
  std::string snap = a.export_snapshot();
  EXPECT_LT(snap.size(), 20000u);  // under a byte per keystroke, text included
  Doc b(2);
  ASSERT_TRUE(b.import(snap).ok());
  expect_same_history(a, b);
}

// Random text of `n` code points mixing ASCII with 2-, 3- and 4-byte UTF-8.
std::string mixed_text(std::mt19937& rng, int n) {
  static const char* const kPieces[] = {"a", "b", " ", "é", "ß", "€", "中", "😀", "z", "\n"};
  std::string out;
  const bool ascii_only = rng() % 3 == 0;
  for (int i = 0; i < n; ++i) out += kPieces[ascii_only ? (rng() % 3) : (rng() % 10)];
  return out;
}

TEST(BinaryCodecTest, MixedScriptTextsDecodeAcrossOps) {
  // Inserts of every length class (inline <= 7 bytes, pooled longer), ASCII
  // and not, by two concurrent peers: the decoder measures each op's bytes
  // from the code point counts, across ASCII stretches and multi-byte runs.
  Doc a(1), b(2);
  std::mt19937 rng(99);
  for (int round = 0; round < 60; ++round) {
    for (Doc* d : {&a, &b}) {
      TextRef t = d->get_text("t");
      const size_t len = t.len();
      const int n = 1 + static_cast<int>(rng() % (rng() % 4 == 0 ? 40 : 6));
      ASSERT_TRUE(t.insert(rng() % (len + 1), mixed_text(rng, n)).ok());
      if (len > 4 && rng() % 3 == 0) {
        ASSERT_TRUE(t.erase(rng() % (len - 2), 2).ok());
      }
      ASSERT_TRUE(d->commit().ok());
    }
    if (round % 7 == 0) {
      ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
      ASSERT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
    }
  }
  ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  for (const std::string& data : {a.export_updates(), a.export_snapshot()}) {
    Doc c(3);
    ASSERT_TRUE(c.import(data).ok());
    expect_same_history(a, c);
    EXPECT_EQ(c.get_text("t").to_string(), a.get_text("t").to_string());
  }
}

TEST(BinaryCodecTest, EveryByteOfANonAsciiBodyIsValidated) {
  // Each byte of a small raw body (non-ASCII text, a delete, a map op) set to
  // a few values behind a valid checksum: refused with the doc untouched, or
  // accepted as a history that re-encodes to itself.
  Doc src(4);
  ASSERT_TRUE(src.get_text("t").insert(0, "aé€😀bc").ok());
  ASSERT_TRUE(src.commit().ok());
  ASSERT_TRUE(src.get_text("t").erase(1, 2).ok());
  ASSERT_TRUE(src.get_text("t").insert(3, "xyzé").ok());
  ASSERT_TRUE(src.get_map("m").set("k", Value(int64_t{3})).ok());
  ASSERT_TRUE(src.commit().ok());
  const std::string upd = src.export_updates();
  ASSERT_EQ(upd[6], 0) << "small payloads stay uncompressed";
  const std::string raw = upd.substr(16);
  int refused = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    const auto b = static_cast<uint8_t>(raw[i]);
    for (uint8_t v : {uint8_t{0}, uint8_t{1}, uint8_t{2}, uint8_t{0x7f}, uint8_t{0x80},
                      uint8_t{0xff}, uint8_t(b + 1), uint8_t(b - 1)}) {
      if (v == b) continue;
      std::string body = raw;
      body[i] = static_cast<char>(v);
      Doc fresh(9);
      auto st = fresh.import(frame(body));
      if (!st.ok()) {
        ++refused;
        const StatusCode code = st.status().code();
        EXPECT_TRUE(code == StatusCode::kDataLoss || code == StatusCode::kInvalidArgument ||
                    code == StatusCode::kUnimplemented || code == StatusCode::kOutOfRange)
            << st.status().to_string();
        EXPECT_EQ(fresh.to_json_string(), "{}") << "byte " << i;
        continue;
      }
      Doc again(10);
      ASSERT_TRUE(again.import(fresh.export_updates()).ok()) << "byte " << i;
      EXPECT_EQ(again.to_json_string(), fresh.to_json_string()) << "byte " << i;
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(BinaryCodecTest, FastSnapshotLoadsTheSameDoc) {
  Doc a = rich_doc();
  std::string small = a.export_snapshot(SnapshotCompression::kSmallest);
  std::string fast = a.export_snapshot(SnapshotCompression::kFast);
  EXPECT_NE(small, fast);  // different zstd levels, same body
  for (const std::string* snap : {&small, &fast}) {
    Doc b(3);
    ASSERT_TRUE(b.import(*snap).ok());
    expect_same_history(a, b);
    EXPECT_EQ(b.to_json(), a.to_json());
  }
}

TEST(BinaryCodecTest, ReadsVersionOne) {
  // A version-1 body written by hand from the v1 layout: peer 5 inserts "hé"
  // into root text "t" then deletes its first char; a second change (with a
  // message) sets map "m".k = 7.
  std::string raw;
  put_uvarint(raw, 1);
  put_fixed64(raw, 5);
  put_uvarint(raw, 2);
  raw += std::string("\x00\x01", 2);
  put_bytes(raw, "t");
  raw += std::string("\x01\x01", 2);
  put_bytes(raw, "m");
  put_uvarint(raw, 2);  // changes
  // change 1: peer 0, counter 0, ts 0, no msg, no deps, 2 ops
  raw += std::string("\x00\x00\x00\x00\x00\x02", 6);
  raw += std::string("\x00\x00\x00", 3);  // text insert, container 0, pos 0
  put_bytes(raw, "hé");
  raw += std::string("\x02\x00\x00", 3);  // delete, container 0, pos 0
  put_svarint(raw, 1);
  raw += std::string("\x00\x00", 2);  // start id 5@0
  // change 2: peer 0, counter 3, ts 9, msg "m", dep 5@2, 1 op
  raw += std::string("\x00\x03", 2);
  put_svarint(raw, 9);
  raw.push_back(1);
  put_bytes(raw, "msg");
  raw += std::string("\x01\x00\x02\x01", 4);
  raw += std::string("\x05\x01", 2);  // map set, container 1
  put_bytes(raw, "k");
  raw += std::string("\x03", 1);
  put_svarint(raw, 7);
  Doc d(1);
  auto st = d.import(frame(raw, 1, 1));
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  EXPECT_EQ(d.to_json_string(), "{\"m\":{\"k\":7},\"t\":\"é\"}");
  auto ch = d.changes();
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[1].message, "msg");
  EXPECT_EQ(ch[1].timestamp, 9);
  // A v1 payload with a trailing byte is refused.
  EXPECT_EQ(Doc(1).import(frame(raw + "x", 1, 1)).status().code(), StatusCode::kDataLoss);
}

TEST(BinaryCodecTest, UnknownVersionIsAClearError) {
  std::string snap = rich_doc().export_snapshot();
  snap[4] = 3;
  Doc d(1);
  auto st = d.import(snap);
  EXPECT_EQ(st.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.status().to_string().find("version 3"), std::string::npos);
}

TEST(BinaryCodecTest, CompressedBodiesAreCheckedBeforeDecompressing) {
  const std::string snap = rich_doc().export_snapshot();
  ASSERT_EQ(snap[6], 3) << "compressed, with the checksum over the stored bytes";
  Doc reference(5);
  ASSERT_TRUE(reference.import(snap).ok());
  auto fixed32_at = [&](size_t at) {
    ByteReader r(std::string_view(snap).substr(at, 4));
    return *r.read_fixed32();
  };
  const std::string_view stored = std::string_view(snap).substr(16);
  EXPECT_EQ(fixed32_at(12), checksum32(stored));
  // A body as older writers sealed it (flag bit 0 alone, the checksum of the
  // decompressed body) still reads.
  std::string raw(fixed32_at(8), '\0');
  ASSERT_EQ(ZSTD_decompress(raw.data(), raw.size(), stored.data(), stored.size()), raw.size());
  std::string legacy = snap.substr(0, 12);
  legacy[6] = 1;
  put_fixed32(legacy, checksum32(raw));
  legacy += stored;
  Doc old(5);
  ASSERT_TRUE(old.import(legacy).ok());
  EXPECT_EQ(old.to_json_string(), reference.to_json_string());
  // Each checksum only counts under its own flag; bit 1 without bit 0 is refused.
  std::string mixed = snap;
  mixed[6] = 1;
  EXPECT_EQ(Doc(5).import(mixed).status().code(), StatusCode::kDataLoss);
  std::string plain_flagged = frame(raw, 2, 2);
  ASSERT_TRUE(Doc(5).import(plain_flagged).ok());
  plain_flagged[6] = 2;
  auto refused = Doc(5).import(plain_flagged);
  EXPECT_EQ(refused.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(refused.status().to_string().find("flags"), std::string::npos);
  // The hash covers every stored byte: no flip in the frame gets to zstd.
  for (size_t i = 16; i < snap.size(); ++i) {
    std::string flipped = snap;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x10);
    auto st = Doc(5).import(flipped);
    ASSERT_FALSE(st.ok()) << "flip at " << i;
    EXPECT_NE(st.status().to_string().find("checksum"), std::string::npos);
  }
}

TEST(BinaryCodecTest, TruncatedAndFlippedInputLeavesTheDocUnchanged) {
  Doc src = rich_doc();
  const std::string snap = src.export_snapshot();
  Doc target(5);
  ASSERT_TRUE(target.get_text("text").insert(0, "mine").ok());
  ASSERT_TRUE(target.commit().ok());
  const std::string before = target.to_json_string();
  const VersionVector vv = target.oplog_version();
  for (size_t n = 0; n < snap.size(); ++n) {
    auto st = target.import(std::string_view(snap).substr(0, n));
    EXPECT_FALSE(st.ok()) << "truncated at " << n;
  }
  Doc reference(5);
  ASSERT_TRUE(reference.import(snap).ok());
  for (size_t i = 0; i < snap.size(); ++i) {
    for (int bit : {0, 3, 7}) {
      std::string c = snap;
      c[i] = static_cast<char>(c[i] ^ (1 << bit));
      auto st = target.import(c);
      if (st.ok()) {
        // Only a flip zstd ignores (the body and its checksum are intact) may
        // pass, and then it must mean exactly the same history.
        Doc fresh(5);
        ASSERT_TRUE(fresh.import(c).ok());
        EXPECT_EQ(fresh.to_json_string(), reference.to_json_string()) << "flip at " << i;
        EXPECT_EQ(fresh.oplog_version(), reference.oplog_version());
        EXPECT_GE(i, 16u) << "a header flip was accepted";
        // Undo its effect on `target` for the next rounds.
        target = Doc(5);
        ASSERT_TRUE(target.get_text("text").insert(0, "mine").ok());
        ASSERT_TRUE(target.commit().ok());
        continue;
      }
      auto code = st.status().code();
      EXPECT_TRUE(code == StatusCode::kDataLoss || code == StatusCode::kInvalidArgument)
          << st.status().to_string();
    }
  }
  EXPECT_EQ(target.to_json_string(), before);
  EXPECT_EQ(target.oplog_version(), vv);
}

TEST(BinaryCodecTest, ForgedBodiesBehindAValidChecksumAreRejected) {
  // The checksum stops accidents; these bodies carry a correct one, so the
  // decoder's own validation is what refuses them.
  Doc src = rich_doc();
  Doc probe(1);
  ASSERT_TRUE(probe.import(src.export_updates()).ok());
  std::mt19937 rng(42);
  // Re-frame the raw body (decompressed by re-exporting small pieces).
  Doc small(3);
  ASSERT_TRUE(small.get_text("t").insert(0, "ab").ok());
  ASSERT_TRUE(small.get_map("m").set("k", Value(int64_t{1})).ok());
  ASSERT_TRUE(small.commit().ok());
  const std::string upd = small.export_updates();
  ASSERT_EQ(upd[6], 0) << "small payloads stay uncompressed";
  const std::string raw = upd.substr(16);
  Doc target(9);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string body = raw;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body[at] = static_cast<char>(rng());
          break;
        case 1:
          body.erase(at, 1);
          break;
        default:
          body.insert(at, 1, static_cast<char>(rng()));
      }
    }
    Doc fresh(9);
    auto st = fresh.import(frame(body));
    if (st.ok()) {
      ++accepted;
    } else {
      EXPECT_EQ(fresh.to_json_string(), "{}") << st.status().to_string();
    }
  }
  // Some edits yield another valid history; most must be refused.
  EXPECT_LT(accepted, 3000);
  // Random bodies.
  for (int round = 0; round < 2000; ++round) {
    std::string body(rng() % 64, '\0');
    for (char& c : body) c = static_cast<char>(rng());
    Doc fresh(9);
    auto st = fresh.import(frame(body));
    if (!st.ok()) {
      EXPECT_EQ(fresh.to_json_string(), "{}");
    }
  }
}

}  // namespace
}  // namespace weft::crdt
