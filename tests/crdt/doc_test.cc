// Unit tests of the Doc API: local edits, positions, commits, versions,
// time travel, encodings, events and bad input.
#include "weft/crdt/doc.h"

#include <gtest/gtest.h>

#include "weft/crdt/undo.h"

namespace weft::crdt {
namespace {

std::string sync_json(Doc& from, Doc& to) {
  auto st = to.import(from.export_json_updates(to.oplog_version()));
  return st.ok() ? "" : st.status().to_string();
}

TEST(DocTest, TextEditsInAllUnits) {
  Doc doc(1);
  TextRef t = doc.get_text("t");
  ASSERT_TRUE(t.insert(0, "a😀b").ok());
  EXPECT_EQ(t.len(PosUnit::kUnicode), 3u);
  EXPECT_EQ(t.len(PosUnit::kUtf16), 4u);
  EXPECT_EQ(t.len(PosUnit::kBytes), 6u);
  ASSERT_TRUE(t.insert(3, "X", PosUnit::kUtf16).ok());
  EXPECT_EQ(t.to_string(), "a😀Xb");
  EXPECT_EQ(t.insert(2, "Y", PosUnit::kUtf16).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.insert(99, "Y").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(t.insert(0, std::string("\xff")).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(t.erase(1, 4, PosUnit::kBytes).ok());
  EXPECT_EQ(t.to_string(), "aXb");
  ASSERT_TRUE(t.splice(1, 1, "é").ok());
  EXPECT_EQ(t.to_string(), "aéb");
  EXPECT_EQ(*t.convert_pos(2, PosUnit::kUnicode, PosUnit::kBytes), 3u);
  EXPECT_EQ(*t.convert_pos(3, PosUnit::kBytes, PosUnit::kUtf16), 2u);
  ASSERT_TRUE(doc.commit().ok());
  EXPECT_EQ(doc.to_json_string(), "{\"t\":\"aéb\"}");
}

TEST(DocTest, UpdateWritesSmallDiff) {
  Doc doc(1);
  TextRef t = doc.get_text("t");
  ASSERT_TRUE(t.insert(0, "line one\nline two\nline three\n").ok());
  ASSERT_TRUE(doc.commit().ok());
  size_t before = doc.op_count();
  ASSERT_TRUE(t.update("line one\nline 2\nline three\n").ok());
  ASSERT_TRUE(doc.commit().ok());
  EXPECT_EQ(t.to_string(), "line one\nline 2\nline three\n");
  EXPECT_LE(doc.op_count() - before, 6u);
}

TEST(DocTest, MarksOccupyPositionsButNotText) {
  Doc a(1), b(2);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "abcdef").ok());
  ASSERT_TRUE(t.mark(1, 3, "bold", Value(true)).ok());
  ASSERT_TRUE(t.insert(4, "Z").ok());  // after "d"
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(t.to_string(), "abcdZef");
  EXPECT_EQ(t.len(), 7u);
  EXPECT_EQ(sync_json(a, b), "");
  EXPECT_EQ(b.to_json_string(), a.to_json_string());
  // JSON positions count the two anchors.
  EXPECT_NE(a.export_json_updates().find("\"pos\":6"), std::string::npos);
}

TEST(DocTest, ListMapCounterAndChildren) {
  Doc a(1);
  ListRef l = a.get_list("l");
  ASSERT_TRUE(l.push(Value(1)).ok());
  ASSERT_TRUE(l.push(Value("x")).ok());
  ASSERT_TRUE(l.insert(0, Value(ValueList{Value(true), Value()})).ok());
  EXPECT_EQ(l.len(), 3u);
  EXPECT_EQ(*l.get(1), Value(1));
  ASSERT_TRUE(l.erase(1).ok());
  EXPECT_EQ(l.erase(5).code(), StatusCode::kOutOfRange);
  MapRef m = a.get_map("m");
  ASSERT_TRUE(m.set("k", Value(2.5)).ok());
  auto child = m.set_container("kid", ContainerType::kText);
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(a.text(*child)->insert(0, "hi").ok());
  auto lc = l.insert_container(0, ContainerType::kCounter);
  ASSERT_TRUE(lc.ok());
  ASSERT_TRUE(a.counter(*lc)->increment(3).ok());
  CounterRef c = a.get_counter("c");
  ASSERT_TRUE(c.increment(1.5).ok());
  ASSERT_TRUE(c.decrement(0.5).ok());
  ASSERT_TRUE(m.erase("k").ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(a.to_json_string(), "{\"c\":1,\"l\":[3,[true,null],\"x\"],\"m\":{\"kid\":\"hi\"}}");
  Doc b(2);
  ASSERT_TRUE(b.import(a.export_json_updates()).ok());
  EXPECT_EQ(b.to_json_string(), a.to_json_string());
  Doc c2(3);
  ASSERT_TRUE(c2.import(a.export_updates()).ok());
  EXPECT_EQ(c2.to_json_string(), a.to_json_string());
}

TEST(DocTest, ConcurrentInsertsOrderByPeer) {
  Doc a(1), b(2);
  ASSERT_TRUE(a.get_text("t").insert(0, "ab").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_EQ(sync_json(a, b), "");
  ASSERT_TRUE(b.get_text("t").insert(1, "<2>").ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.get_text("t").insert(1, "<1>").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_EQ(sync_json(a, b), "");
  ASSERT_EQ(sync_json(b, a), "");
  EXPECT_EQ(a.get_text("t").to_string(), "a<1><2>b");
  EXPECT_EQ(b.get_text("t").to_string(), "a<1><2>b");
}

TEST(DocTest, CommitsMergeLikeLoro) {
  Doc a(1);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "a").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(t.insert(1, "b").ok());
  ASSERT_TRUE(a.commit().ok());
  EXPECT_EQ(a.change_count(), 1u);
  ASSERT_TRUE(t.insert(2, "c").ok());
  CommitOptions o;
  o.message = "msg";
  o.timestamp = 1700000000;
  ASSERT_TRUE(a.commit(o).ok());
  EXPECT_EQ(a.change_count(), 2u);
  auto changes = a.changes();
  EXPECT_EQ(changes.back().message, std::optional<std::string>("msg"));
  EXPECT_EQ(changes.back().timestamp, 1700000000);
  ASSERT_TRUE(t.insert(3, "d").ok());
  ASSERT_TRUE(a.commit().ok());  // different message: a new change
  EXPECT_EQ(a.change_count(), 3u);
  EXPECT_EQ(a.changes().back().timestamp, 1700000000);  // never below its deps
}

TEST(DocTest, AutoCommit) {
  Doc a(1);
  a.set_auto_commit(true);
  ASSERT_TRUE(a.get_map("m").set("x", Value(1)).ok());
  EXPECT_EQ(a.oplog_version().get(1), 1);
}

TEST(DocTest, VersionsAndTimeTravel) {
  Doc a(1);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "hello").ok());
  ASSERT_TRUE(a.commit().ok());
  Frontiers v1 = a.frontiers();
  EXPECT_EQ(v1, Frontiers({ID{1, 4}}));
  ASSERT_TRUE(t.insert(5, " world").ok());
  ASSERT_TRUE(a.commit({.message = "w"}).ok());
  Frontiers v2 = a.frontiers();
  EXPECT_EQ(*a.frontiers_to_vv(v1), VersionVector({{1, 5}}));
  EXPECT_EQ(a.vv_to_frontiers(VersionVector({{1, 5}})), v1);
  EXPECT_EQ(*a.compare(v1, v2), VersionOrder::kLess);

  ASSERT_TRUE(a.checkout(v1).ok());
  EXPECT_TRUE(a.is_detached());
  EXPECT_EQ(t.to_string(), "hello");
  EXPECT_EQ(a.version(), VersionVector({{1, 5}}));
  EXPECT_EQ(a.oplog_version(), VersionVector({{1, 11}}));
  EXPECT_EQ(t.insert(0, "x").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(a.checkout_to_latest().ok());
  EXPECT_FALSE(a.is_detached());
  EXPECT_EQ(t.to_string(), "hello world");

  auto f = a.fork_at(v1);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->get_text("t").to_string(), "hello");
  EXPECT_NE(f->peer_id(), a.peer_id());
  Doc g = a.fork();
  EXPECT_EQ(g.to_json_string(), a.to_json_string());

  auto d = a.diff(v1, v2);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  auto& delta = std::get<TextDelta>((*d)[0].diff);
  ASSERT_EQ(delta.size(), 2u);
  EXPECT_EQ(delta[1].text, " world");

  ASSERT_TRUE(a.revert_to(v1).ok());
  EXPECT_EQ(t.to_string(), "hello");
  EXPECT_EQ(a.oplog_version().get(1), 17);  // history kept, new delete ops
  EXPECT_EQ(a.checkout(Frontiers({ID{9, 9}})).code(), StatusCode::kNotFound);
}

TEST(DocTest, RevertRestoresNestedContainers) {
  Doc a(1);
  MapRef m = a.get_map("m");
  auto kid = m.set_container("kid", ContainerType::kList);
  ASSERT_TRUE(a.list(*kid)->push(Value(1)).ok());
  ASSERT_TRUE(a.commit().ok());
  Frontiers v1 = a.frontiers();
  std::string want = a.to_json_string();
  ASSERT_TRUE(m.erase("kid").ok());
  ASSERT_TRUE(m.set("x", Value("y")).ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(a.revert_to(v1).ok());
  EXPECT_EQ(a.to_json_string(), want);
}

TEST(DocTest, PendingChangesWaitForDeps) {
  Doc a(1), b(2), c(3);
  ASSERT_TRUE(a.get_text("t").insert(0, "ab").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_EQ(sync_json(a, b), "");
  ASSERT_TRUE(b.get_text("t").insert(2, "c").ok());
  ASSERT_TRUE(b.commit().ok());
  // c gets b's change first: it waits.
  auto st = c.import(b.export_json_updates(VersionVector({{1, 2}})));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->pending.size(), 1u);
  EXPECT_EQ(c.to_json_string(), "{}");
  st = c.import(a.export_json_updates());
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(c.get_text("t").to_string(), "abc");
  // Idempotent re-import.
  st = c.import(b.export_json_updates());
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->success.empty());
  EXPECT_EQ(c.get_text("t").to_string(), "abc");
}

TEST(DocTest, BadInputLeavesDocUnchanged) {
  Doc a(1);
  ASSERT_TRUE(a.get_text("t").insert(0, "abc").ok());
  ASSERT_TRUE(a.commit().ok());
  std::string before = a.to_json_string();
  VersionVector vv = a.oplog_version();
  const char* bad[] = {
      "",
      "{",
      "[]",
      "{\"schema_version\":2,\"changes\":[]}",
      "{\"schema_version\":1,\"peers\":[\"5\"],\"changes\":[{\"id\":\"0@0\",\"deps\":[],\"ops\":[]}"
      "]}",
      "{\"schema_version\":1,\"peers\":[\"5\"],\"changes\":[{\"id\":\"0@3\",\"deps\":[],\"ops\":[]}"
      "]}",
      // valid change followed by an out-of-range one: the whole import fails
      "{\"schema_version\":1,\"peers\":[\"5\"],\"changes\":[{\"id\":\"0@0\",\"timestamp\":0,"
      "\"deps\":[],\"lamport\":0,\"msg\":null,\"ops\":[{\"container\":\"cid:root-t:Text\","
      "\"content\":{\"type\":\"insert\",\"pos\":0,\"text\":\"x\"},\"counter\":0},"
      "{\"container\":\"cid:root-t:Text\",\"content\":{\"type\":\"insert\",\"pos\":99,"
      "\"text\":\"y\"},\"counter\":1}]}]}",
      "{\"schema_version\":1,\"peers\":[\"5\"],\"changes\":[{\"id\":\"0@0\",\"timestamp\":0,"
      "\"deps\":[],\"lamport\":0,\"msg\":null,\"ops\":[{\"container\":\"cid:root-m:MovableList\","
      "\"content\":{\"type\":\"insert\",\"pos\":0,\"value\":[1]},\"counter\":0}]}]}",
      "WFTC\x01\x01\x00\x00garbage",
  };
  for (const char* b : bad) {
    auto st = a.import(b);
    EXPECT_FALSE(st.ok()) << b;
    EXPECT_EQ(a.to_json_string(), before);
    EXPECT_EQ(a.oplog_version(), vv);
  }
  auto mv = a.import(bad[7]);
  EXPECT_EQ(mv.status().code(), StatusCode::kUnimplemented);
  // A bit-flipped binary export is rejected.
  std::string bin = a.export_snapshot();
  for (size_t i = 0; i < bin.size(); ++i) {
    std::string c = bin;
    c[i] ^= 0x10;
    Doc fresh(9);
    auto st = fresh.import(c);
    if (st.ok()) ADD_FAILURE() << "bit flip at " << i << " accepted";
    EXPECT_EQ(fresh.to_json_string(), "{}");
  }
}

TEST(DocTest, EventsAndSubscriptions) {
  Doc a(1), b(2);
  std::vector<DocEvent> root_events, text_events;
  std::vector<std::string> updates;
  auto s1 = a.subscribe_root([&](const DocEvent& e) {
    root_events.push_back(e);
    (void)a.to_json_string();  // re-entrant read
  });
  auto s2 = a.subscribe(ContainerId::root("t", ContainerType::kText),
                        [&](const DocEvent& e) { text_events.push_back(e); });
  auto s3 = a.subscribe_local_update([&](const std::string& bytes) { updates.push_back(bytes); });
  ASSERT_TRUE(a.get_text("t").insert(0, "hi").ok());
  ASSERT_TRUE(a.get_map("m").set("k", Value(1)).ok());
  ASSERT_TRUE(a.commit({.message = "first"}).ok());
  ASSERT_EQ(root_events.size(), 1u);
  EXPECT_EQ(root_events[0].by, EventTrigger::kLocal);
  EXPECT_EQ(root_events[0].message, std::optional<std::string>("first"));
  EXPECT_EQ(root_events[0].diffs.size(), 2u);
  ASSERT_EQ(text_events.size(), 1u);
  ASSERT_EQ(updates.size(), 1u);
  ASSERT_TRUE(b.import(updates[0]).ok());
  EXPECT_EQ(b.to_json_string(), a.to_json_string());
  ASSERT_TRUE(b.get_counter("c").increment(2).ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_TRUE(a.import(b.export_updates(a.oplog_version())).ok());
  ASSERT_EQ(root_events.size(), 2u);
  EXPECT_EQ(root_events[1].by, EventTrigger::kImport);
  EXPECT_EQ(std::get<CounterDelta>(root_events[1].diffs[0].diff).delta, 2);
  s1.unsubscribe();
  ASSERT_TRUE(a.checkout(Frontiers({ID{1, 0}})).ok());
  EXPECT_EQ(root_events.size(), 2u);
  EXPECT_EQ(text_events.size(), 2u);
  EXPECT_EQ(text_events.back().by, EventTrigger::kCheckout);
}

TEST(DocTest, UndoRedoOwnChangesOnly) {
  Doc a(1), b(2);
  UndoManager undo(a);
  TextRef t = a.get_text("t");
  ASSERT_TRUE(t.insert(0, "hello").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_EQ(sync_json(a, b), "");
  ASSERT_TRUE(t.insert(5, " world").ok());
  ASSERT_TRUE(a.get_map("m").set("k", Value(1)).ok());
  ASSERT_TRUE(a.commit().ok());
  // A concurrent remote edit.
  ASSERT_TRUE(b.get_text("t").insert(0, ">> ").ok());
  ASSERT_TRUE(b.commit().ok());
  ASSERT_EQ(sync_json(b, a), "");
  EXPECT_EQ(t.to_string(), ">> hello world");
  EXPECT_EQ(undo.undo_count(), 2u);
  ASSERT_TRUE(*undo.undo());
  EXPECT_EQ(t.to_string(), ">> hello");
  EXPECT_EQ(a.to_json_string(), "{\"m\":{},\"t\":\">> hello\"}");
  ASSERT_TRUE(*undo.redo());
  EXPECT_EQ(t.to_string(), ">> hello world");
  EXPECT_EQ(a.to_json_string(), "{\"m\":{\"k\":1},\"t\":\">> hello world\"}");
  ASSERT_TRUE(*undo.undo());
  ASSERT_TRUE(*undo.undo());
  EXPECT_EQ(t.to_string(), ">> ");
  EXPECT_FALSE(*undo.undo());
  ASSERT_TRUE(t.erase(0, 1).ok());  // excluded? no: recorded, clears redo
  ASSERT_TRUE(a.commit().ok());
  EXPECT_FALSE(undo.can_redo());
  ASSERT_TRUE(*undo.undo());
  EXPECT_EQ(t.to_string(), ">> ");
}

TEST(DocTest, UndoGroupsAndExcludedOrigins) {
  Doc a(1);
  UndoManager undo(a);
  undo.add_exclude_origin_prefix("sys");
  TextRef t = a.get_text("t");
  ASSERT_TRUE(undo.group_start().ok());
  ASSERT_TRUE(t.insert(0, "a").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(t.insert(1, "b").ok());
  ASSERT_TRUE(a.commit().ok());
  undo.group_end();
  ASSERT_TRUE(t.insert(2, "c").ok());
  ASSERT_TRUE(a.commit({.origin = "sys:load"}).ok());
  EXPECT_EQ(undo.undo_count(), 1u);
  ASSERT_TRUE(*undo.undo());
  EXPECT_EQ(t.to_string(), "c");
}

}  // namespace
}  // namespace weft::crdt

namespace weft::crdt {
namespace {

TEST(DocTest, DeeplyNestedValueIsRefused) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  std::string json =
      "{\"schema_version\":1,\"peers\":[\"5\"],\"changes\":[{\"id\":\"0@0\",\"timestamp\":0,"
      "\"deps\":[],\"lamport\":0,\"msg\":null,\"ops\":[{\"container\":\"cid:root-m:Map\","
      "\"content\":{\"type\":\"insert\",\"key\":\"k\",\"value\":" +
      deep + "},\"counter\":0}]}]}";
  Doc d(1);
  EXPECT_FALSE(d.import(json).ok());
  EXPECT_EQ(d.to_json_string(), "{}");
}

// `levels` lists, one inside the other, around the number 1.
Value nested_lists(size_t levels) {
  Value v(1);
  for (size_t i = 0; i < levels; ++i) v = Value(ValueList{std::move(v)});
  return v;
}

std::string map_insert_update(const std::string& value_json) {
  return "{\"schema_version\":1,\"peers\":[\"5\"],\"changes\":[{\"id\":\"0@0\",\"timestamp\":0,"
         "\"deps\":[],\"lamport\":0,\"msg\":null,\"ops\":[{\"container\":\"cid:root-m:Map\","
         "\"content\":{\"type\":\"insert\",\"key\":\"k\",\"value\":" +
         value_json + "},\"counter\":0}]}]}";
}

// Every way in takes values up to kMaxValueDepth levels and refuses deeper
// ones, so a doc never holds a value its own snapshot cannot give back.
TEST(DocTest, ValuesNestUpToTheLimitAndRoundTripThroughEveryFormat) {
  const std::string deepest = nested_lists(kMaxValueDepth).to_json_string();
  const std::string too_deep = nested_lists(kMaxValueDepth + 1).to_json_string();
  Doc from_json(1);
  ASSERT_TRUE(from_json.import(map_insert_update(deepest)).ok());
  Doc from_handle(2);
  ASSERT_TRUE(from_handle.get_map("m").set("k", nested_lists(kMaxValueDepth)).ok());
  ASSERT_TRUE(from_handle.commit().ok());
  for (Doc* d : {&from_json, &from_handle}) {
    for (const std::string& data : {d->export_snapshot(), d->export_updates()}) {
      Doc again(3);
      ASSERT_TRUE(again.import(data).ok());
      EXPECT_EQ(again.to_json_string(), d->to_json_string());
    }
  }
  EXPECT_EQ(from_json.to_json_string(), "{\"m\":{\"k\":" + deepest + "}}");

  Doc refused(4);
  auto imported = refused.import(map_insert_update(too_deep));
  EXPECT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("nested deeper than 256 levels"),
            std::string_view::npos)
      << imported.status();
  Status set = refused.get_map("m").set("k", nested_lists(kMaxValueDepth + 1));
  EXPECT_EQ(set.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(refused.get_list("l").push(nested_lists(kMaxValueDepth + 1)).ok());
  EXPECT_EQ(refused.to_json_string(), "{\"l\":[],\"m\":{}}");  // nothing stored

  EXPECT_TRUE(Value::from_json_string(deepest).ok());
  EXPECT_FALSE(Value::from_json_string(too_deep).ok());
  EXPECT_FALSE(Value::from_json_string(std::string(150'000, '[')).ok());
}

TEST(DocTest, ContainerIdsAndValues) {
  auto c = ContainerId::parse("cid:root-a:b:Text");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->name(), "a:b");
  EXPECT_EQ(c->to_string(), "cid:root-a:b:Text");
  auto k = ContainerId::parse("cid:26@18446744073709551000:Map");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->id(), (ID{18446744073709551000ull, 26}));
  EXPECT_FALSE(ContainerId::parse("cid:root-:Text").ok());
  EXPECT_FALSE(ContainerId::parse("cid:x@y:Text").ok());
  EXPECT_FALSE(ContainerId::parse("root-a:Text").ok());
  auto v = Value::from_json_string("{\"b\":[1,2.5,null,true],\"a\":\"x\"}");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->to_json_string(), "{\"a\":\"x\",\"b\":[1,2.5,null,true]}");
  EXPECT_EQ(Value(3.0).to_json_string(), "3");
  EXPECT_EQ(Value(0.1).to_json_string(), "0.1");
  VersionVector a({{1, 3}, {2, 1}}), b({{1, 2}});
  EXPECT_EQ(a.compare(b), VersionOrder::kGreater);
  EXPECT_EQ(b.compare(a), VersionOrder::kLess);
  EXPECT_EQ(a.diff_spans(b), (std::vector<IdSpan>{{1, 2, 3}, {2, 0, 1}}));
  EXPECT_EQ(VersionVector({{1, 1}}).compare(VersionVector({{2, 1}})), VersionOrder::kConcurrent);
}

}  // namespace
}  // namespace weft::crdt

namespace weft::crdt {
namespace {

TEST(DocTest, ForkKeepsAuthorsAndSyncs) {
  Doc a(10), b(20);
  ASSERT_TRUE(a.get_text("t").insert(0, "ab").ok());
  ASSERT_TRUE(a.commit().ok());
  ASSERT_TRUE(b.import(a.export_json_updates()).ok());
  ASSERT_TRUE(b.get_text("t").insert(2, "c").ok());
  ASSERT_TRUE(b.commit().ok());
  Doc f = b.fork();
  EXPECT_EQ(f.oplog_version(), b.oplog_version());
  EXPECT_EQ(f.oplog_frontiers(), b.oplog_frontiers());
  auto g = b.fork_at(Frontiers({ID{10, 1}}));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->oplog_version(), VersionVector({{10, 2}}));
  ASSERT_TRUE(f.get_text("t").insert(0, "F").ok());
  ASSERT_TRUE(f.commit().ok());
  EXPECT_EQ(f.oplog_version().get(f.peer_id()), 1);
  ASSERT_TRUE(a.import(f.export_json_updates(a.oplog_version())).ok());
  EXPECT_EQ(a.get_text("t").to_string(), "Fabc");
  ASSERT_TRUE(g->get_text("t").insert(2, "G").ok());
  ASSERT_TRUE(g->commit().ok());
  ASSERT_TRUE(a.import(g->export_updates(a.oplog_version())).ok());
  ASSERT_TRUE(b.import(a.export_updates(b.oplog_version())).ok());
  EXPECT_EQ(a.to_json_string(), b.to_json_string());
}

}  // namespace
}  // namespace weft::crdt

namespace weft::crdt {
namespace {

TEST(DocTest, UpdateOnLargeTextWritesFewOps) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + " of a large file\n";
  Doc d(1);
  TextRef t = d.get_text("f");
  ASSERT_TRUE(t.insert(0, big).ok());
  ASSERT_TRUE(d.commit().ok());
  std::string edited = big;
  edited.replace(edited.find("line 100 "), 8, "LINE 100");
  edited += "tail\n";
  size_t before = d.op_count();
  ASSERT_TRUE(t.update(edited).ok());
  ASSERT_TRUE(d.commit().ok());
  EXPECT_EQ(t.to_string(), edited);
  EXPECT_LT(d.op_count() - before, 40u);
}

TEST(DocTest, ImportOriginReachesEvents) {
  Doc a(1), b(2);
  ASSERT_TRUE(a.get_text("t").insert(0, "x").ok());
  ASSERT_TRUE(a.commit().ok());
  std::string origin;
  auto sub = b.subscribe_root([&](const DocEvent& e) { origin = e.origin; });
  ASSERT_TRUE(b.import(a.export_updates(), "sync").ok());
  EXPECT_EQ(origin, "sync");
}

}  // namespace
}  // namespace weft::crdt
