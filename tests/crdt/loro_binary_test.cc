// Loro binary format: the envelope and checksum, LEB128 / postcard integers,
// the serde_columnar columns, hand-made change blocks, Loro VersionVector /
// Frontiers bytes, round trips through Doc, and corrupt input.
#define XXH_INLINE_ALL
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <xxhash.h>

#include <string>

#include "crdt/loro_binary.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

namespace lb = detail::loro;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

TEST(LoroBinary, XxHash32KnownValues) {
  EXPECT_EQ(lb::xxhash32("", 0), 0x02CC5D05u);
  EXPECT_EQ(lb::xxhash32("a", 0), 0x550D7456u);
  EXPECT_EQ(lb::xxhash32("abc", 0), 0x32D153FFu);
}

RC_GTEST_PROP(LoroBinary, XxHash32MatchesTheReference, (const std::string& s, uint32_t seed)) {
  RC_ASSERT(lb::xxhash32(s, seed) == XXH32(s.data(), s.size(), seed));
}

TEST(LoroBinary, Leb128AndZigzag) {
  std::string out;
  lb::put_uleb(out, 300);
  EXPECT_EQ(out, bytes({0xAC, 0x02}));
  out.clear();
  lb::put_sleb(out, -1);
  EXPECT_EQ(out, bytes({0x7F}));
  out.clear();
  lb::put_zigzag(out, -1);  // postcard's signed form differs from sleb
  EXPECT_EQ(out, bytes({0x01}));
  out.clear();
  lb::put_sleb(out, 64);
  EXPECT_EQ(out, bytes({0xC0, 0x00}));

  // (Reader views its bytes: they must outlive it.)
  const std::string in = bytes({0xAC, 0x02, 0x7F, 0x01});
  lb::Reader r(in);
  EXPECT_EQ(r.uleb(), 300u);
  EXPECT_EQ(r.sleb(), -1);
  EXPECT_EQ(r.zigzag(), -1);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(r.u8(), 0);  // past the end: sticky error
  EXPECT_FALSE(r.ok());

  const std::string long_in = std::string(11, '\x80') + '\x01';
  lb::Reader too_long(long_in);
  too_long.uleb();
  EXPECT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), StatusCode::kDataLoss);
}

RC_GTEST_PROP(LoroBinary, SignedLeb128RoundTrips, (int64_t v)) {
  std::string out;
  lb::put_sleb(out, v);
  lb::put_zigzag(out, v);
  lb::Reader r(out);
  RC_ASSERT(r.sleb() == v);
  RC_ASSERT(r.zigzag() == v);
  RC_ASSERT(r.at_end() && r.ok());
}

TEST(LoroBinary, ColumnsKnownBytes) {
  std::string out;
  lb::write_bool_rle(out, {0, 1, 1});
  EXPECT_EQ(out, bytes({1, 2}));
  out.clear();
  lb::write_bool_rle(out, {1});
  EXPECT_EQ(out, bytes({0, 1}));  // the first run (false) may be empty
  out.clear();
  lb::write_any_rle(out, {5, 5, 5, 1, 2});
  EXPECT_EQ(out, bytes({6, 5, 3, 1, 2}));  // run of 3 (zigzag 6), literals of 2 (zigzag -2 = 3)
  out.clear();
  lb::write_delta_of_delta(out, {});
  EXPECT_EQ(out, bytes({0, 0}));
  out.clear();
  lb::write_delta_of_delta(out, {5});
  EXPECT_EQ(out, bytes({1, 10, 0}));
  out.clear();
  // 1, 2, 3: delta-of-deltas 1 ("10" + 64 in 7 bits), then 0 ("0"): 10 bits.
  lb::write_delta_of_delta(out, {1, 2, 3});
  EXPECT_EQ(out, bytes({1, 2, 2, 0b10100000, 0b00000000}));
  out.clear();
  lb::write_delta_rle(out, {3, 4, 5});
  EXPECT_EQ(out, bytes({1, 6, 4, 2}));  // literal 3, then a run of 2 deltas of 1
}

RC_GTEST_PROP(LoroBinary, ColumnsRoundTrip,
              (const std::vector<uint8_t>& flags, const std::vector<uint32_t>& small,
               const std::vector<int32_t>& signed_values)) {
  std::vector<uint8_t> bools;
  for (uint8_t f : flags) bools.push_back(f & 1);
  std::vector<uint64_t> any(small.begin(), small.end());
  std::vector<int64_t> deltas(signed_values.begin(), signed_values.end());
  std::string out;
  lb::write_bool_rle(out, bools);
  lb::write_any_rle(out, any);
  lb::write_delta_of_delta(out, deltas);
  const size_t before_delta = out.size();
  lb::write_delta_rle(out, deltas);
  lb::Reader r(std::string_view(out).substr(0, before_delta));
  std::vector<uint8_t> b2;
  std::vector<uint64_t> a2;
  std::vector<int64_t> d2;
  lb::read_bool_rle(r, bools.size(), b2);
  lb::read_any_rle(r, any.size(), a2);
  lb::read_delta_of_delta(r, deltas.size(), d2);
  RC_ASSERT(r.ok());
  RC_ASSERT(r.at_end());
  RC_ASSERT(b2 == bools);
  RC_ASSERT(a2 == any);
  RC_ASSERT(d2 == deltas);
  lb::Reader rd(std::string_view(out).substr(before_delta));
  std::vector<int64_t> d3;
  lb::read_delta_rle_all(rd, deltas.size(), INT32_MIN, INT32_MAX, d3);
  RC_ASSERT(rd.ok());
  RC_ASSERT(d3 == deltas);
}

TEST(LoroBinary, ColumnDecodersRefuseOverlongRuns) {
  std::vector<uint64_t> out;
  const std::string run = bytes({0xFE, 0xFF, 0xFF, 0xFF, 0x0F, 1});  // a run of 2^31 - 1 values
  lb::Reader r(run);
  lb::read_any_rle_all(r, 1000, out);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(out.empty());
  const std::string empty_segment = bytes({0});  // a segment of length 0
  lb::Reader zero(empty_segment);
  lb::read_any_rle_all(zero, 1000, out);
  EXPECT_FALSE(zero.ok());
}

TEST(LoroBinary, EnvelopeAndChecksum) {
  const std::string blob = lb::wrap(lb::kModeFastUpdates, "");
  ASSERT_EQ(blob.size(), lb::kHeaderSize);
  EXPECT_EQ(blob.substr(0, 4), "loro");
  EXPECT_EQ(blob.substr(4, 12), std::string(12, '\0'));
  EXPECT_EQ(blob.substr(20), bytes({0, 4}));
  const uint32_t sum = lb::xxhash32(bytes({0, 4}), lb::kSeed);
  EXPECT_EQ(blob.substr(16, 4), bytes({static_cast<int>(sum & 0xFF), static_cast<int>((sum >> 8) & 0xFF),
                                       static_cast<int>((sum >> 16) & 0xFF), static_cast<int>(sum >> 24)}));
  std::string_view body;
  ASSERT_TRUE(lb::unwrap(blob, &body).ok());

  Doc doc(1);
  EXPECT_TRUE(doc.import(blob).ok());  // an empty updates body is valid

  std::string bad = blob;
  bad[21] = 5;  // mode 5 with a stale checksum
  auto st = doc.import(bad);
  EXPECT_EQ(st.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(st.status().message().find("checksum"), std::string::npos);
  EXPECT_EQ(doc.import(lb::wrap(2, "")).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(doc.import(blob.substr(0, 21)).status().code(), StatusCode::kDataLoss);
}

// A hand-made one-change block by peer 7 on root container "t" of `kind`:
// one op with `value_type`, `prop`, atom length `len` and `values`.
std::string one_op_block(uint8_t kind, uint8_t value_type, int prop, uint32_t len,
                         const std::string& values) {
  std::string header = bytes({1});  // one peer
  lb::put_u64le(header, 7);
  // Single values as one-value literal segments (segment length -1: 01).
  header += bytes({1,     // dep_on_self: a run of one false
                   1, 0,  // non-self dep counts: [0]
                   0, 0,  // dependency counters: none
                   0, 0});  // lamports of the first n - 1 changes: none
  const std::string meta = bytes({1, 0, 0,  // timestamps: [0]
                                  1, 0});   // message lengths: [0]
  std::string cids = bytes({1, 4, 1, kind, 0, 0});  // one root container, name = key 0
  std::string keys = bytes({1, 't'});
  std::string ops = bytes({1, 4});
  lb::put_bytes(ops, bytes({1, 0}));  // container index 0
  std::string prop_col = bytes({1});
  lb::put_zigzag(prop_col, prop);
  lb::put_bytes(ops, prop_col);
  lb::put_bytes(ops, bytes({1, value_type}));
  std::string len_col = bytes({1});
  lb::put_uleb(len_col, len);
  lb::put_bytes(ops, len_col);
  std::string block;
  for (uint64_t v : {uint64_t{0}, uint64_t{len}, uint64_t{0}, uint64_t{len}, uint64_t{1}})
    lb::put_uleb(block, v);
  for (const std::string& f : {header, meta, cids, keys, std::string(), ops, std::string(), values})
    lb::put_bytes(block, f);
  std::string body;
  lb::put_bytes(body, block);
  return lb::wrap(lb::kModeFastUpdates, body);
}

TEST(LoroBinary, HandMadeTextInsert) {
  Doc doc(1);
  auto st = doc.import(one_op_block(/*Text*/ 2, /*Str*/ 5, 0, 2, bytes({2, 'h', 'i'})));
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  EXPECT_EQ(doc.to_json_string(), R"({"t":"hi"})");
  EXPECT_EQ(doc.oplog_version(), (VersionVector{{7, 2}}));
  // Weft writes the same op back as the same block.
  EXPECT_EQ(doc.export_loro_updates(), one_op_block(2, 5, 0, 2, bytes({2, 'h', 'i'})));
}

TEST(LoroBinary, HandMadeBlocksThatAreWrong) {
  Doc doc(1);
  // The op says 3 units, its text has 2.
  auto st = doc.import(one_op_block(2, 5, 0, 3, bytes({2, 'h', 'i'})));
  EXPECT_EQ(st.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(st.status().message().find("corrupt Loro binary data"), std::string::npos);
  // Value bytes left over.
  EXPECT_EQ(doc.import(one_op_block(2, 5, 0, 2, bytes({2, 'h', 'i', 0}))).status().code(),
            StatusCode::kDataLoss);
  // Bad UTF-8.
  EXPECT_EQ(doc.import(one_op_block(2, 5, 0, 1, bytes({1, 0xFF}))).status().code(),
            StatusCode::kDataLoss);
  // A Map op with a Str value.
  EXPECT_EQ(doc.import(one_op_block(0, 5, 0, 1, bytes({1, 'x'}))).status().code(),
            StatusCode::kDataLoss);
  // A MovableList insert of [1]: refused, naming the type.
  st = doc.import(one_op_block(4, 11, 0, 1, bytes({7, 1, 3, 1})));
  EXPECT_EQ(st.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.status().message().find("MovableList"), std::string::npos);
  // A Tree op.
  EXPECT_EQ(doc.import(one_op_block(3, 16, 0, 1, bytes({0, 0, 0, 1}))).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(doc.to_json_string(), "{}");
}

TEST(LoroBinary, VersionVectorAndFrontiersBytes) {
  const VersionVector vv{{1, 3}, {300, 1}};
  const std::string b = encode_loro_version_vector(vv);
  EXPECT_EQ(b, bytes({2, 1, 6, 0xAC, 0x02, 2}));
  auto back = decode_loro_version_vector(b);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, vv);
  // Entry order is not canonical.
  auto swapped = decode_loro_version_vector(bytes({2, 0xAC, 0x02, 2, 1, 6}));
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(*swapped, vv);
  EXPECT_EQ(encode_loro_version_vector({}), bytes({0}));

  const Frontiers f{ID{5, 2}, ID{1, 0}};
  EXPECT_EQ(encode_loro_frontiers(f), bytes({2, 1, 0, 5, 4}));
  auto fb = decode_loro_frontiers(encode_loro_frontiers(f));
  ASSERT_TRUE(fb.ok());
  EXPECT_EQ(*fb, f);

  for (const std::string& bad : {bytes({1}), bytes({1, 1, 1}), bytes({5, 1, 2}), bytes({0, 0}),
                                 bytes({1, 1, 0x80})}) {
    EXPECT_EQ(decode_loro_version_vector(bad).status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(decode_loro_frontiers(bad).status().code(), StatusCode::kDataLoss);
  }
}

// A doc with every kind of op weft writes as Loro binary.
Doc sample_doc() {
  Doc doc(11);
  auto text = doc.get_text("text");
  EXPECT_TRUE(text.insert(0, "héllo wörld 😀").ok());
  EXPECT_TRUE(text.mark(0, 5, "bold", Value(true)).ok());
  EXPECT_TRUE(doc.commit(CommitOptions{"first", 1700000000, ""}).ok());
  EXPECT_TRUE(text.erase(2, 3).ok());
  auto list = doc.get_list("list");
  EXPECT_TRUE(list.push(Value(1)).ok());
  EXPECT_TRUE(list.push(Value(2.5)).ok());
  EXPECT_TRUE(list.push(Value(ValueMap{{"a", Value("b")}, {"n", Value(nullptr)}})).ok());
  EXPECT_TRUE(list.push(Value(Binary{{1, 2, 3}})).ok());
  EXPECT_TRUE(list.erase(0, 1).ok());
  auto map = doc.get_map("map");
  EXPECT_TRUE(map.set("k", Value("v")).ok());
  EXPECT_TRUE(map.set("gone", Value(false)).ok());
  EXPECT_TRUE(map.erase("gone").ok());
  auto child = map.set_container("child", ContainerType::kText);
  EXPECT_TRUE(child.ok());
  if (child.ok()) {
    EXPECT_TRUE(doc.text(*child)->insert(0, "nested").ok());
  }
  auto counter = doc.get_counter("counter");
  EXPECT_TRUE(counter.increment(3).ok());
  EXPECT_TRUE(counter.increment(-0.25).ok());
  EXPECT_TRUE(doc.commit(CommitOptions{std::nullopt, 1700000100, ""}).ok());
  Doc other(22);
  EXPECT_TRUE(other.import(doc.export_loro_updates()).ok());
  EXPECT_TRUE(other.get_text("text").insert(0, ">> ").ok());
  EXPECT_TRUE(other.commit().ok());
  EXPECT_TRUE(doc.import(other.export_loro_updates(doc.oplog_version())).ok());
  return doc;
}

TEST(LoroBinary, DocRoundTrips) {
  Doc doc = sample_doc();
  for (const std::string& blob : {doc.export_loro_updates(), doc.export_loro_snapshot()}) {
    Doc back(2);
    auto st = back.import(blob);
    ASSERT_TRUE(st.ok()) << st.status().to_string();
    EXPECT_EQ(back.to_json_string(), doc.to_json_string());
    EXPECT_EQ(back.oplog_version(), doc.oplog_version());
    EXPECT_EQ(back.oplog_frontiers(), doc.oplog_frontiers());
    EXPECT_EQ(back.export_json_updates(), doc.export_json_updates());
  }
  // From a version inside a change: the change is sliced there.
  auto early = doc.fork_at(Frontiers{ID{11, 4}});
  ASSERT_TRUE(early.ok());
  ASSERT_EQ(early->oplog_version(), (VersionVector{{11, 5}}));
  auto st = early->import(doc.export_loro_updates(early->oplog_version()));
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  EXPECT_EQ(early->to_json_string(), doc.to_json_string());
  EXPECT_EQ(early->oplog_version(), doc.oplog_version());
  // From a version on: only the ops after it.
  Doc half(3);
  ASSERT_TRUE(half.import(doc.export_loro_updates()).ok());
  auto more = half.get_text("text");
  ASSERT_TRUE(more.insert(0, "x").ok());
  ASSERT_TRUE(half.commit().ok());
  const std::string delta = half.export_loro_updates(doc.oplog_version());
  EXPECT_LT(delta.size(), 120u);
  ASSERT_TRUE(doc.import(delta).ok());
  EXPECT_EQ(doc.to_json_string(), half.to_json_string());
}

TEST(LoroBinary, CorruptInputIsAStatusAndChangesNothing) {
  const Doc doc = sample_doc();
  for (const std::string& blob : {doc.export_loro_updates(), doc.export_loro_snapshot()}) {
    Doc target(9);
    ASSERT_TRUE(target.get_text("text").insert(0, "keep").ok());
    ASSERT_TRUE(target.commit().ok());
    const std::string before = target.to_json_string();
    const VersionVector vv = target.oplog_version();
    // Every truncation fails (the checksum); a body truncated behind a fresh
    // checksum fails unless it ends between two update blocks.
    std::string_view body = std::string_view(blob).substr(lb::kHeaderSize);
    const uint16_t mode = static_cast<uint8_t>(blob[21]);
    for (size_t n = 0; n < blob.size(); ++n) {
      auto st = target.import(blob.substr(0, n));
      ASSERT_FALSE(st.ok()) << n;
      auto st2 = target.import(lb::wrap(mode, body.substr(0, n < body.size() ? n : 0)));
      if (!st2.ok()) {
        EXPECT_TRUE(st2.status().code() == StatusCode::kDataLoss ||
                    st2.status().code() == StatusCode::kUnimplemented)
            << st2.status().to_string();
      }
      if (!st2.ok()) {
        ASSERT_EQ(target.to_json_string(), before);
        ASSERT_EQ(target.oplog_version(), vv);
      } else {
        target = Doc(9);
        ASSERT_TRUE(target.get_text("text").insert(0, "keep").ok());
        ASSERT_TRUE(target.commit().ok());
      }
    }
    // Every flipped byte behind a fresh checksum: a Status either way, and
    // an error changes nothing.
    for (size_t k = 0; k < body.size(); ++k) {
      std::string b(body);
      b[k] = static_cast<char>(b[k] ^ 0x5A);
      Doc t(9);
      ASSERT_TRUE(t.import(target.export_loro_updates()).ok());
      auto st = t.import(lb::wrap(mode, b));
      if (!st.ok()) {
        ASSERT_EQ(t.to_json_string(), before) << k;
      }
    }
  }
}

// Random edits of a valid body behind a fresh checksum: a Status either way,
// and an error leaves the doc as it was.
RC_GTEST_PROP(LoroBinary, MutatedBodiesNeverCrash,
              (const std::vector<std::pair<uint16_t, uint8_t>>& edits, bool snapshot)) {
  static const Doc source = sample_doc();
  static const std::string updates = source.export_loro_updates();
  static const std::string snap = source.export_loro_snapshot();
  const std::string& blob = snapshot ? snap : updates;
  std::string body = blob.substr(lb::kHeaderSize);
  for (const auto& [at, value] : edits) body[at % body.size()] = static_cast<char>(value);
  Doc doc(9);
  RC_ASSERT(doc.get_text("text").insert(0, "keep").ok());
  RC_ASSERT(doc.commit().ok());
  const std::string before = doc.to_json_string();
  auto st = doc.import(lb::wrap(snapshot ? lb::kModeFastSnapshot : lb::kModeFastUpdates, body));
  if (!st.ok()) {
    RC_ASSERT(doc.to_json_string() == before);
    RC_ASSERT(st.status().code() == StatusCode::kDataLoss ||
              st.status().code() == StatusCode::kUnimplemented ||
              st.status().code() == StatusCode::kInvalidArgument ||
              st.status().code() == StatusCode::kOutOfRange);
  }
}

}  // namespace
}  // namespace weft::crdt
