// inspect_loro_update: what a Loro binary update needs and carries, read from
// its change headers. Checked against the import itself (an update whose
// needs a doc holds imports whole; one whose needs it lacks waits), on
// chains of editors, a gap between two ranges of one peer, snapshots, and
// malformed or hostile bytes (a Status, never a crash).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "crdt/loro_binary.h"
#include "weft/crdt/doc.h"

namespace weft::crdt::update_info_test {
namespace {

namespace lb = detail::loro;

// Imports `update` only if none of its changes would wait.
bool imports_whole(Doc& doc, std::string_view update) {
  ImportOptions options;
  options.require_complete = true;
  return doc.import(update, options).ok();
}

void edit(Doc& doc, std::string_view text) {
  ASSERT_TRUE(doc.get_text("t").insert(0, text).ok());
  ASSERT_TRUE(doc.commit().ok());
}

TEST(LoroUpdateInfo, AChainOfEditorsNeedsWhatItBuiltOn) {
  Doc a(1), b(2), c(3);
  edit(a, "abc");
  ASSERT_TRUE(b.import(a.export_loro_updates()).ok());
  edit(b, "de");
  ASSERT_TRUE(c.import(b.export_loro_updates()).ok());
  const VersionVector before = c.oplog_version();
  edit(c, "f");
  const std::string update = c.export_loro_updates(before);

  auto info = inspect_loro_update(update);
  ASSERT_TRUE(info.ok()) << info.status();
  // c's change depends on b's last op, which depends on a's: the import
  // checks only the direct dependency, and b's op implies a's.
  EXPECT_EQ(info->needs, (VersionVector{{2, 2}}));
  EXPECT_EQ(info->spans, (std::vector<IdSpan>{{3, 0, 1}}));
  EXPECT_EQ(info->end, (VersionVector{{3, 1}}));

  Doc empty(9);
  EXPECT_FALSE(empty.oplog_version().includes(info->needs));
  EXPECT_FALSE(imports_whole(empty, update));
  Doc with_b(9);
  ASSERT_TRUE(with_b.import(b.export_loro_updates()).ok());
  EXPECT_TRUE(with_b.oplog_version().includes(info->needs));
  EXPECT_FALSE(with_b.oplog_version().includes(info->end));
  EXPECT_TRUE(imports_whole(with_b, update));
  EXPECT_TRUE(with_b.oplog_version().includes(info->end));  // now it has all of it
}

TEST(LoroUpdateInfo, AnUpdateFromTheMiddleNeedsItsOwnPeersStart) {
  Doc a(1);
  edit(a, "ab");
  const VersionVector mid = a.oplog_version();
  edit(a, "cd");
  auto info = inspect_loro_update(a.export_loro_updates(mid));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->needs, (VersionVector{{1, 2}}));
  EXPECT_EQ(info->spans, (std::vector<IdSpan>{{1, 2, 4}}));
  EXPECT_EQ(info->end, (VersionVector{{1, 4}}));
}

TEST(LoroUpdateInfo, AGapBetweenTwoRangesOfAPeerIsNeeded) {
  Doc a(1);
  for (const char* s : {"a", "b", "c", "d", "e", "f"}) edit(a, s);
  auto early = a.fork_at(Frontiers{ID{1, 1}});  // a's ops 0 and 1
  ASSERT_TRUE(early.ok());
  const std::string first = early->export_loro_updates();
  const std::string last = a.export_loro_updates(VersionVector{{1, 4}});  // ops 4 and 5
  std::string body = first.substr(lb::kHeaderSize) + last.substr(lb::kHeaderSize);
  auto info = inspect_loro_update(lb::wrap(lb::kModeFastUpdates, body));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->needs, (VersionVector{{1, 4}}));
  EXPECT_EQ(info->spans, (std::vector<IdSpan>{{1, 0, 2}, {1, 4, 6}}));
  EXPECT_EQ(info->end, (VersionVector{{1, 6}}));
  // Adjacent ranges join.
  body = first.substr(lb::kHeaderSize) + a.export_loro_updates(VersionVector{{1, 2}}).substr(lb::kHeaderSize);
  info = inspect_loro_update(lb::wrap(lb::kModeFastUpdates, body));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->needs.empty());
  EXPECT_EQ(info->spans, (std::vector<IdSpan>{{1, 0, 6}}));
}

TEST(LoroUpdateInfo, SnapshotsAndEmptyUpdatesNeedNothing) {
  Doc a(1), b(2);
  edit(a, "x");
  ASSERT_TRUE(b.import(a.export_loro_updates()).ok());
  edit(b, "y");
  ASSERT_TRUE(a.import(b.export_loro_updates()).ok());
  auto info = inspect_loro_update(a.export_loro_snapshot());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->needs.empty());
  EXPECT_EQ(info->end, a.oplog_version());

  info = inspect_loro_update(lb::wrap(lb::kModeFastUpdates, ""));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->needs.empty());
  EXPECT_TRUE(info->spans.empty());
}

// A one-change block by peer 7 of `len` ops whose header names `deps` in a
// peer table [7, 8]; its other sections are empty (enough for the header).
std::string block_with_deps(uint64_t counter_start, uint64_t len,
                            const std::vector<std::pair<uint64_t, int64_t>>& deps) {
  std::string header = "\x02";
  lb::put_u64le(header, 7);
  lb::put_u64le(header, 8);
  lb::write_bool_rle(header, {0});
  lb::write_any_rle(header, {deps.size()});
  std::vector<uint64_t> peers;
  std::vector<int64_t> counters;
  for (const auto& [p, c] : deps) {
    peers.push_back(p);
    counters.push_back(c);
  }
  lb::write_any_rle(header, peers);
  lb::write_delta_of_delta(header, counters);
  lb::write_delta_of_delta(header, {});
  std::string block;
  for (uint64_t v : {counter_start, len, uint64_t{10}, len, uint64_t{1}}) lb::put_uleb(block, v);
  lb::put_bytes(block, header);
  for (int k = 0; k < 7; ++k) lb::put_bytes(block, "");
  std::string body;
  lb::put_bytes(body, block);
  return lb::wrap(lb::kModeFastUpdates, body);
}

TEST(LoroUpdateInfo, HandMadeHeaders) {
  auto info = inspect_loro_update(block_with_deps(3, 2, {{1, 5}}));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->needs, (VersionVector{{7, 3}, {8, 6}}));
  EXPECT_EQ(info->spans, (std::vector<IdSpan>{{7, 3, 5}}));

  // A dependency that no op can ever be: refused, not a need that never comes.
  info = inspect_loro_update(block_with_deps(0, 1, {{1, INT32_MAX}}));
  EXPECT_EQ(info.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(info.status().message().find("dependency counter out of range"), std::string::npos);
  // Out of the peer table, negative, on its own future, past the header.
  for (const std::string& bad :
       {block_with_deps(0, 1, {{2, 0}}), block_with_deps(0, 1, {{1, -1}}),
        block_with_deps(0, 1, {{0, 0}}), block_with_deps(0, 1, {{1, int64_t{1} << 40}})}) {
    auto st = inspect_loro_update(bad);
    EXPECT_EQ(st.status().code(), StatusCode::kDataLoss) << st.status();
  }
  // A counter span past the counter range.
  auto st = inspect_loro_update(block_with_deps(INT32_MAX, 1, {}));
  EXPECT_EQ(st.status().code(), StatusCode::kDataLoss);
}

TEST(LoroUpdateInfo, MalformedInputIsAClearError) {
  auto st = inspect_loro_update(R"({"schema_version":1})");
  EXPECT_EQ(st.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(st.status().message().find("'loro' magic"), std::string::npos) << st.status();
  EXPECT_EQ(inspect_loro_update("").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(inspect_loro_update(lb::wrap(2, "")).status().code(), StatusCode::kUnimplemented);

  Doc a(1);
  edit(a, "hello");
  const std::string blob = a.export_loro_updates();
  std::string bad = blob;
  bad.back() ^= 1;  // stale checksum
  st = inspect_loro_update(bad);
  EXPECT_EQ(st.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(st.status().message().find("checksum"), std::string::npos);
  // Every truncation behind a fresh checksum: an answer, or kDataLoss.
  const std::string body = blob.substr(lb::kHeaderSize);
  for (size_t n = 0; n < body.size(); ++n) {
    auto r = inspect_loro_update(lb::wrap(lb::kModeFastUpdates, body.substr(0, n)));
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << n;
    }
  }
}

// Any bytes behind a fresh checksum, and random edits of a real body: a
// Status either way, never a crash.
RC_GTEST_PROP(LoroUpdateInfo, HostileBytesNeverCrash,
              (const std::string& noise, const std::vector<std::pair<uint16_t, uint8_t>>& edits,
               bool snapshot)) {
  for (uint16_t mode : {lb::kModeFastUpdates, lb::kModeFastSnapshot}) {
    auto r = inspect_loro_update(lb::wrap(mode, noise));
    if (!r.ok()) {
      RC_ASSERT(r.status().code() == StatusCode::kDataLoss ||
                r.status().code() == StatusCode::kUnimplemented);
    }
  }
  static const std::string updates = [] {
    Doc a(1), b(2);
    EXPECT_TRUE(a.get_text("t").insert(0, "one").ok());
    EXPECT_TRUE(a.commit().ok());
    EXPECT_TRUE(b.import(a.export_loro_updates()).ok());
    EXPECT_TRUE(b.get_text("t").insert(1, "two").ok());
    EXPECT_TRUE(b.commit().ok());
    EXPECT_TRUE(a.import(b.export_loro_updates()).ok());
    return a.export_loro_updates();
  }();
  static const std::string snap = [] {
    Doc d(3);
    EXPECT_TRUE(d.import(updates).ok());
    return d.export_loro_snapshot();
  }();
  const std::string& blob = snapshot ? snap : updates;
  std::string body = blob.substr(lb::kHeaderSize);
  for (const auto& [at, value] : edits) body[at % body.size()] = static_cast<char>(value);
  auto r = inspect_loro_update(
      lb::wrap(snapshot ? lb::kModeFastSnapshot : lb::kModeFastUpdates, body));
  if (!r.ok()) {
    RC_ASSERT(r.status().code() == StatusCode::kDataLoss ||
              r.status().code() == StatusCode::kUnimplemented);
  }
}

// Three editors exchanging some of their updates at random: for any update
// between two versions and any doc that holds none of its changes, the
// update imports whole exactly when the doc holds its needs, and then the
// doc holds its end.
RC_GTEST_PROP(LoroUpdateInfo, NeedsDecideWhetherAnImportWaits,
              (const std::vector<std::pair<uint8_t, uint8_t>>& steps)) {
  std::vector<Doc> docs;
  for (PeerId p = 1; p <= 3; ++p) docs.emplace_back(p);
  std::vector<std::string> history;  // updates as sent, in order
  for (const auto& [who, what] : steps) {
    Doc& d = docs[who % 3];
    if (what % 3 == 0) {
      const Doc& from = docs[(who / 3) % 3];
      RC_ASSERT(d.import(from.export_loro_updates(d.oplog_version())).ok());
    } else {
      const VersionVector before = d.oplog_version();
      RC_ASSERT(d.get_text("t").insert(0, std::string(1 + what % 4, static_cast<char>('a' + what % 26))).ok());
      RC_ASSERT(d.commit().ok());
      history.push_back(d.export_loro_updates(before));
    }
  }
  for (size_t i = 0; i < history.size(); ++i) {
    auto info = inspect_loro_update(history[i]);
    RC_ASSERT(info.ok());
    // A doc with some of the other updates: the earlier ones, every other one.
    Doc target(9);
    for (size_t j = 0; j < i; j += 2) (void)target.import(history[j]);
    bool overlaps = false;
    for (const IdSpan& sp : info->spans) overlaps |= target.oplog_version().get(sp.peer) > sp.start;
    if (overlaps) continue;
    const bool holds = target.oplog_version().includes(info->needs);
    RC_ASSERT(imports_whole(target, history[i]) == holds);
    if (holds) RC_ASSERT(target.oplog_version().includes(info->end));
  }
}

}  // namespace
}  // namespace weft::crdt::update_info_test
