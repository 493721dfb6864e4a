// The typing buffer at a second cursor (DocCore::typing.fresh and
// DocCore::retype): two typists in one doc, as in a flattened two-author
// trace, against a doc that takes the general path.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "crdt/core_access.h"
#include "crdt/doc_compare.h"
#include "weft/crdt/doc.h"

namespace weft::crdt {
namespace {

// Two typists in one doc (a flattened two-author trace): each switch of
// cursor, and each key after a delete or into another Text, starts a new op.
// Those keys are buffered too (`fresh`), and every way of ending the buffer
// (all committed, none, some) leaves what the general path leaves.
TEST(TypingBuffer, KeysAtAnotherCursorStartANewOpInTheBuffer) {
  for (int tail = 0; tail < 3; ++tail) {  // keys of each burst left uncommitted: 0, 1, all
    Doc fast(4), slow(4);
    test_options(slow).fast_commit = false;
    detail::DocCore* core = fast.core().get();
    for (Doc* d : {&fast, &slow}) {
      ASSERT_TRUE(d->get_text("t").insert(0, "0123456789").ok());
      ASSERT_TRUE(d->get_text("u").insert(0, "-").ok());  // (a Text with a state)
      ASSERT_TRUE(d->commit().ok());
    }
    TextRef tf = fast.get_text("t"), ts = slow.get_text("t");
    TextRef uf = fast.get_text("u"), us = slow.get_text("u");
    // (cursor, text, erase before typing, container u)
    const std::vector<std::tuple<size_t, std::string, bool, bool>> bursts = {
        {2, "ab", false, false}, {9, "xyz", false, false}, {4, "c", false, false},
        {11, "w", false, false}, {6, "de", true, false},   {0, "q", false, true},
        {1, "rs", false, false}, {0, "t", false, false}};
    size_t fresh_seen = 0;
    for (const auto& [at, keys, erase, other] : bursts) {
      for (auto [doc, text] : {std::pair{&fast, other ? &uf : &tf}, {&slow, other ? &us : &ts}}) {
        size_t pos = at;
        if (erase) {
          ASSERT_TRUE(text->erase(--pos, 1).ok());
          ASSERT_TRUE(doc->commit().ok());
        }
        for (size_t k = 0; k < keys.size(); ++k) {
          ASSERT_TRUE(text->insert(pos + k, std::string(1, keys[k])).ok());
          const bool uncommitted = tail == 2 || (tail == 1 && k + 1 == keys.size());
          if (!uncommitted) {
            ASSERT_TRUE(doc->commit().ok());
          }
          // At a commit boundary the first key is buffered, as a new op. (After
          // an uncommitted key the transaction is open and takes it.)
          if (doc == &fast && k == 0 && tail == 0) {
            EXPECT_EQ(detail::CoreAccess::typing(*core).n, 1u) << at;
            fresh_seen += detail::CoreAccess::typing(*core).fresh;
          }
        }
      }
    }
    if (tail == 0) {
      EXPECT_EQ(fresh_seen, bursts.size());
      EXPECT_NE(detail::CoreAccess::typing(*core).n, 0u);
    }
    EXPECT_EQ(fast.to_json_string(), slow.to_json_string()) << tail;
    EXPECT_EQ(fast.to_json_string(), R"({"t":"t0rs1abcde3456xwyz789","u":"q-"})") << tail;
    EXPECT_EQ(testing::describe_changes(fast.changes()), testing::describe_changes(slow.changes()))
        << tail;
    EXPECT_EQ(fast.op_count(), slow.op_count()) << tail;
    EXPECT_EQ(fast.oplog_version().to_json_string(), slow.oplog_version().to_json_string());
    EXPECT_EQ(fast.frontiers(), slow.frontiers()) << tail;
    EXPECT_EQ(fast.export_updates(), slow.export_updates()) << tail;
    EXPECT_EQ(fast.export_json_updates(), slow.export_json_updates()) << tail;
    EXPECT_EQ(fast.export_snapshot(), slow.export_snapshot()) << tail;
  }
}

}  // namespace
}  // namespace weft::crdt
