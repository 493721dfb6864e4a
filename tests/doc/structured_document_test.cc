#include "weft/doc/structured_document.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <thread>

#include "weft/doc/schema_json.h"

namespace weft::doc {
namespace {

using Kind = DocErrorKind;

std::unique_ptr<StructuredDocument> make(const std::string& schema_json,
                                         MemoryPermission perm = MemoryPermission::kReadWrite,
                                         uint64_t char_limit = 0) {
  auto schema = schema_from_json(schema_json);
  EXPECT_TRUE(schema.ok()) << schema.status();
  DocumentOptions o;
  o.label = "blk";
  o.schema = *schema;
  o.permission = perm;
  o.accessor_agent_id = "ada";
  o.char_limit = char_limit;
  auto d = StructuredDocument::create(o);
  EXPECT_TRUE(d.ok()) << d.status();
  return std::move(*d);
}

const char* kMap = R"({"type":"map","fields":[
  {"name":"filter","type":"text","default":"warning"},
  {"name":"errors","type":"list","read_only":true},
  {"name":"tags","type":"list","default":["a"]},
  {"name":"hits","type":"counter","default":2},
  {"name":"ratio","type":"number"},
  {"name":"on","type":"boolean"},
  {"name":"severity","type":"text","read_only":true}]})";

const char* kComposite = R"({"type":"composite","sections":[
  {"name":"diagnostics","read_only":true,"description":"from the LSP",
   "schema":{"type":"map","fields":[{"name":"count","type":"counter"}]}},
  {"name":"config","schema":{"type":"map","fields":[
     {"name":"filter","type":"text"},{"name":"level","type":"number","read_only":true}]}},
  {"name":"notes","schema":"text"},
  {"name":"todo","schema":{"type":"list","item_schema":"text","max_items":3}},
  {"name":"activity","schema":{"type":"log","display_limit":2}}]})";

// ------------------------------------------------------------------ text

TEST(DocTextTest, SetAppendContent) {
  auto d = make(R"("text")");
  ASSERT_TRUE(d->set_text("hello").ok());
  ASSERT_TRUE(d->append_text(" world").ok());
  EXPECT_EQ(*d->text_content(), "hello world");
  ASSERT_TRUE(d->set_text("hello there world").ok());
  EXPECT_EQ(*d->text_content(), "hello there world");
  EXPECT_EQ(d->append_text(std::string("\xff", 1)).code(), StatusCode::kInvalidArgument);
}

TEST(DocTextTest, ReplaceFirstAllNth) {
  auto d = make(R"("text")");
  ASSERT_TRUE(d->set_text("a-b-a-b-a").ok());
  EXPECT_EQ(*d->replace_text("a", "X"), 1u);
  EXPECT_EQ(*d->text_content(), "X-b-a-b-a");
  ReplaceOptions nth{ReplaceMode::kNth, 2, false};
  EXPECT_EQ(*d->replace_text("a", "Y", nth), 1u);
  EXPECT_EQ(*d->text_content(), "X-b-a-b-Y");
  EXPECT_EQ(*d->replace_text("b", "", {ReplaceMode::kAll}), 2u);
  EXPECT_EQ(*d->text_content(), "X--a--Y");
  EXPECT_EQ(doc_error_kind(d->replace_text("a", "Z", {ReplaceMode::kNth, 5}).status()),
            Kind::kOutOfRange);
  EXPECT_EQ(doc_error_kind(d->replace_text("q", "Z").status()), Kind::kNotFound);
  EXPECT_EQ(d->replace_text("", "Z").status().code(), StatusCode::kInvalidArgument);
}

TEST(DocTextTest, ReplaceIsUnicodeCorrect) {
  auto d = make(R"("text")");
  ASSERT_TRUE(d->set_text("café 👩‍💻 naïve café").ok());
  EXPECT_EQ(*d->replace_text("café", "tea", {ReplaceMode::kAll}), 2u);
  EXPECT_EQ(*d->text_content(), "tea 👩‍💻 naïve tea");
  EXPECT_EQ(*d->replace_text("👩‍💻", "🐈"), 1u);
  EXPECT_EQ(*d->text_content(), "tea 🐈 naïve tea");
}

TEST(DocTextTest, RegexReplaceWithGroups) {
  auto d = make(R"("text")");
  ASSERT_TRUE(d->set_text("x=1, y=22, z=333").ok());
  ReplaceOptions all{ReplaceMode::kAll, 1, true};
  EXPECT_EQ(*d->replace_text(R"((\w)=(\d+))", R"(\2:\1)", all), 3u);
  EXPECT_EQ(*d->text_content(), "1:x, 22:y, 333:z");
  EXPECT_EQ(d->replace_text("(", "x", all).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d->replace_text("x", R"(\5)", all).status().code(), StatusCode::kInvalidArgument);
  // Empty matches step over whole characters.
  ASSERT_TRUE(d->set_text("é😀").ok());
  EXPECT_EQ(*d->replace_text("x*", "-", all), 3u);
  EXPECT_EQ(*d->text_content(), "-é-😀-");
}

TEST(DocTextTest, TextEditsAreSplicesNotRewrites) {
  auto d = make(R"("text")");
  ASSERT_TRUE(d->set_text(std::string(1000, 'a')).ok());
  size_t before = d->with_doc([](crdt::Doc& doc) { return doc.op_count(); });
  ASSERT_TRUE(d->replace_text("aaa", "b").ok());
  size_t after = d->with_doc([](crdt::Doc& doc) { return doc.op_count(); });
  EXPECT_LE(after - before, 8u) << "a 3-char replace should be a small splice";
}

// ------------------------------------------------------------------ fields

TEST(DocFieldTest, DefaultsTypesAndReadOnly) {
  auto d = make(kMap);
  EXPECT_EQ(*d->get_field("filter"), Json("warning"));
  EXPECT_EQ(*d->get_field("tags"), Json::array({"a"}));
  EXPECT_EQ(*d->get_field("hits"), Json(2));
  EXPECT_EQ(*d->get_field("ratio"), Json(nullptr));
  ASSERT_TRUE(d->set_field("ratio", 0.5).ok());
  ASSERT_TRUE(d->set_field("on", true).ok());
  ASSERT_TRUE(d->set_text_field("filter", "error").ok());
  EXPECT_EQ(*d->get_field("ratio"), Json(0.5));
  EXPECT_EQ(*d->get_field("filter"), Json("error"));
  EXPECT_EQ(doc_error_kind(d->set_field("ratio", "high")), Kind::kSchemaMismatch);
  EXPECT_EQ(doc_error_kind(d->set_field("nope", 1)), Kind::kSchemaMismatch);
  EXPECT_EQ(doc_error_kind(d->get_field("nope").status()), Kind::kSchemaMismatch);
  EXPECT_EQ(doc_error_kind(d->set_text_field("ratio", "x")), Kind::kSchemaMismatch);
  Status ro = d->set_field("severity", "high");
  EXPECT_EQ(doc_error_kind(ro), Kind::kReadOnlyField);
  EXPECT_NE(ro.message().find("'severity'"), std::string_view::npos);
  ASSERT_TRUE(d->set_field("severity", "high", std::nullopt, /*is_system=*/true).ok());
  EXPECT_EQ(*d->get_field("severity"), Json("high"));
}

TEST(DocFieldTest, ListAndCounterFields) {
  auto d = make(kMap);
  ASSERT_TRUE(d->append_to_list_field("tags", "b").ok());
  ASSERT_TRUE(d->append_to_list_field("tags", 3).ok());
  EXPECT_EQ(*d->get_field("tags"), Json::array({"a", "b", 3}));
  ASSERT_TRUE(d->remove_from_list_field("tags", 0).ok());
  EXPECT_EQ(*d->get_field("tags"), Json::array({"b", 3}));
  EXPECT_EQ(doc_error_kind(d->remove_from_list_field("tags", 7)), Kind::kOutOfRange);
  EXPECT_EQ(doc_error_kind(d->append_to_list_field("errors", "E1")), Kind::kReadOnlyField);
  EXPECT_EQ(doc_error_kind(d->remove_from_list_field("errors", 0)), Kind::kReadOnlyField);
  ASSERT_TRUE(d->append_to_list_field("errors", "E1", std::nullopt, true).ok());
  EXPECT_EQ(doc_error_kind(d->append_to_list_field("filter", "x")), Kind::kSchemaMismatch);
  EXPECT_EQ(*d->increment_counter("hits", 5), 7);
  EXPECT_EQ(*d->increment_counter("hits", -10), -3);
  EXPECT_EQ(doc_error_kind(d->increment_counter("ratio", 1).status()), Kind::kSchemaMismatch);
  ASSERT_TRUE(d->set_field("hits", 40).ok());
  EXPECT_EQ(*d->get_field("hits"), Json(40));
  ASSERT_TRUE(d->set_field("tags", Json::array({"x", "y"})).ok());
  EXPECT_EQ(*d->get_field("tags"), Json::array({"x", "y"}));
  Json all = *d->fields();
  EXPECT_EQ(all["errors"], Json::array({"E1"}));
}

TEST(DocFieldTest, FreeFormMapTakesAnyKey) {
  auto d = make(R"({"type":"map"})");
  ASSERT_TRUE(d->set_field("anything", Json{{"nested", 1}}).ok());
  EXPECT_EQ(*d->get_field("anything"), (Json{{"nested", 1}}));
  EXPECT_EQ(*d->get_field("missing"), Json(nullptr));
}

// -------------------------------------------------------------- lists, logs

TEST(DocListTest, PushInsertDeleteAndLimits) {
  auto d = make(R"({"type":"list","item_schema":"text","max_items":3})");
  ASSERT_TRUE(d->push_item("b").ok());
  ASSERT_TRUE(d->insert_item(0, "a").ok());
  ASSERT_TRUE(d->push_item("c").ok());
  EXPECT_EQ(*d->list_items(), (std::vector<Json>{"a", "b", "c"}));
  EXPECT_EQ(doc_error_kind(d->push_item("d")), Kind::kOutOfRange);
  EXPECT_EQ(doc_error_kind(d->insert_item(9, "d")), Kind::kOutOfRange);
  EXPECT_EQ(doc_error_kind(d->delete_item(3)), Kind::kOutOfRange);
  ASSERT_TRUE(d->delete_item(1).ok());
  EXPECT_EQ(*d->list_items(), (std::vector<Json>{"a", "c"}));
  EXPECT_EQ(doc_error_kind(d->push_item(42)), Kind::kSchemaMismatch);
}

TEST(DocListTest, MapItemsAreChecked) {
  auto d = make(R"({"type":"list","item_schema":{"type":"map","fields":[
      {"name":"title","type":"text","required":true},{"name":"done","type":"boolean"}]}})");
  ASSERT_TRUE(d->push_item(Json{{"title", "x"}, {"done", false}}).ok());
  EXPECT_EQ(doc_error_kind(d->push_item(Json{{"done", true}})), Kind::kSchemaMismatch);
  EXPECT_EQ(doc_error_kind(d->push_item(Json{{"title", 1}})), Kind::kSchemaMismatch);
  EXPECT_EQ(doc_error_kind(d->push_item(Json{{"title", "y"}, {"extra", 1}})),
            Kind::kSchemaMismatch);
}

TEST(DocLogTest, AppendKeepsAllRendersLastN) {
  auto d = make(R"({"type":"log","display_limit":2})");
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(d->append_log_entry(
                     Json{{"at", "t" + std::to_string(i)}, {"text", "e" + std::to_string(i)}})
                    .ok());
  }
  EXPECT_EQ(d->log_entries()->size(), 4u);
  EXPECT_EQ(d->log_entries(std::nullopt, 1)->at(0)["text"], "e4");
  EXPECT_EQ(d->render(), "(last 2 of 4 entries)\n[t3] e3\n[t4] e4\n");
  ASSERT_TRUE(d->append_log_entry("plain").ok());
  EXPECT_EQ(d->log_entries()->back()["text"], "plain");
  EXPECT_TRUE(d->log_entries()->back().contains("at"));
}

// ------------------------------------------------------------- composite

TEST(DocCompositeTest, SectionsRouteAndGate) {
  auto d = make(kComposite);
  EXPECT_EQ(doc_error_kind(d->set_text("x")), Kind::kMissingSection);
  EXPECT_EQ(doc_error_kind(d->set_text("x", "nope")), Kind::kMissingSection);
  EXPECT_EQ(doc_error_kind(d->set_text("x", "config")), Kind::kSchemaMismatch);
  ASSERT_TRUE(d->set_text("remember", "notes").ok());
  EXPECT_EQ(*d->text_content("notes"), "remember");
  ASSERT_TRUE(d->set_field("filter", "warning", "config").ok());
  EXPECT_EQ(doc_error_kind(d->set_field("level", 3, "config")), Kind::kReadOnlyField);
  Status sec = d->increment_counter("count", 1, "diagnostics").status();
  EXPECT_EQ(doc_error_kind(sec), Kind::kReadOnlySection);
  EXPECT_NE(sec.message().find("'diagnostics'"), std::string_view::npos);
  EXPECT_EQ(*d->increment_counter("count", 3, "diagnostics", true), 3);
  ASSERT_TRUE(d->push_item("one", "todo").ok());
  ASSERT_TRUE(d->append_log_entry("started", "activity").ok());
  auto plain = make(R"("text")");
  EXPECT_EQ(doc_error_kind(plain->set_text("x", "notes")), Kind::kMissingSection);
}

TEST(DocCompositeTest, RenderHasHeadingsAndMarkers) {
  auto d = make(kComposite);
  ASSERT_TRUE(d->set_text("remember", "notes").ok());
  ASSERT_TRUE(d->set_field("filter", "warning", "config").ok());
  ASSERT_TRUE(d->increment_counter("count", 2, "diagnostics", true).ok());
  ASSERT_TRUE(d->push_item("one", "todo").ok());
  ASSERT_TRUE(d->push_item("two", "todo").ok());
  for (const char* e : {"a", "b", "c"}) {
    ASSERT_TRUE(d->append_log_entry(Json{{"text", e}}, "activity").ok());
  }
  EXPECT_EQ(d->render(),
            "## diagnostics [read-only]\n(from the LSP)\ncount: 2\n"
            "\n## config\nfilter: warning\nlevel [read-only]: \n"
            "\n## notes\nremember\n"
            "\n## todo\n1. one\n2. two\n"
            "\n## activity\n(last 2 of 3 entries)\nb\nc\n");
  EXPECT_EQ(d->render(), d->render());
}

TEST(DocRenderTest, MapRenderMarksReadOnly) {
  auto d = make(kMap);
  ASSERT_TRUE(d->set_field("severity", "high", std::nullopt, true).ok());
  EXPECT_EQ(d->render(),
            "filter: warning\nerrors [read-only]: []\ntags: [\"a\"]\nhits: 2\nratio: \non: \n"
            "severity [read-only]: high\n");
}

// --------------------------------------------------- permissions, limits

TEST(DocPermissionTest, EveryWriteObeysBlockPermission) {
  struct Case {
    MemoryPermission perm;
    Kind append, overwrite;
  };
  for (Case c :
       {Case{MemoryPermission::kReadOnly, Kind::kPermissionDenied, Kind::kPermissionDenied},
        Case{MemoryPermission::kHuman, Kind::kNeedsApproval, Kind::kNeedsApproval},
        Case{MemoryPermission::kPartner, Kind::kNeedsApproval, Kind::kNeedsApproval},
        Case{MemoryPermission::kAppend, Kind::kNone, Kind::kPermissionDenied},
        Case{MemoryPermission::kReadWrite, Kind::kNone, Kind::kNone},
        Case{MemoryPermission::kAdmin, Kind::kNone, Kind::kNone}}) {
    SCOPED_TRACE(std::string(memory_permission_name(c.perm)));
    auto t = make(R"("text")", c.perm);
    EXPECT_EQ(doc_error_kind(t->append_text("x")), c.append);
    EXPECT_EQ(doc_error_kind(t->set_text("y")), c.overwrite);
    ASSERT_TRUE(t->set_text("z", std::nullopt, true).ok());  // system writes always go
    EXPECT_EQ(doc_error_kind(t->replace_text("z", "w").status()), c.overwrite);
    auto l = make(R"("list")", c.perm);
    EXPECT_EQ(doc_error_kind(l->push_item(1)), c.append);
    ASSERT_TRUE(l->push_item(1, std::nullopt, true).ok());
    EXPECT_EQ(doc_error_kind(l->delete_item(0)), c.overwrite);
    auto m = make(kMap, c.perm);
    EXPECT_EQ(doc_error_kind(m->set_field("ratio", 1)), c.overwrite);
    EXPECT_EQ(doc_error_kind(m->append_to_list_field("tags", 1)), c.append);
    EXPECT_EQ(doc_error_kind(m->increment_counter("hits", 1).status()), c.overwrite);
    auto g = make(R"("log")", c.perm);
    EXPECT_EQ(doc_error_kind(g->append_log_entry("x", std::nullopt, false)), c.append);
    EXPECT_TRUE(t->text_content().ok());  // reads are always allowed
  }
}

TEST(DocLimitTest, CharLimitRefusesGrowthNotShrink) {
  auto d = make(R"("text")", MemoryPermission::kReadWrite, 10);
  ASSERT_TRUE(d->set_text("0123456789").ok());
  Status s = d->append_text("x");
  EXPECT_EQ(doc_error_kind(s), Kind::kCharLimitExceeded);
  EXPECT_NE(s.message().find("'blk'"), std::string_view::npos);
  EXPECT_EQ(*d->text_content(), "0123456789");  // nothing was written
  EXPECT_EQ(doc_error_kind(d->replace_text("0", "ab").status()), Kind::kCharLimitExceeded);
  EXPECT_TRUE(d->replace_text("01", "a").ok());
  EXPECT_TRUE(d->append_text("b").ok());  // 10 again
  auto u = make(R"("text")", MemoryPermission::kReadWrite, 3);
  EXPECT_TRUE(u->set_text("😀😀😀").ok()) << "limits count characters, not bytes";
  auto l = make(R"("list")", MemoryPermission::kReadWrite, 4);
  ASSERT_TRUE(l->push_item("abcd").ok());
  EXPECT_EQ(doc_error_kind(l->push_item("e")), Kind::kCharLimitExceeded);
}

// --------------------------------------------- attribution, events, undo

TEST(DocAttributionTest, EveryWriteCommitsWithStructuredMessage) {
  auto d = make(kMap);
  ASSERT_TRUE(d->set_field("ratio", 1).ok());
  ASSERT_TRUE(d->set_field("severity", "x", std::nullopt, true).ok());
  d->set_attribution(StructuredDocument::source_attribution("lsp"));
  ASSERT_TRUE(d->append_to_list_field("errors", "E", std::nullopt, true).ok());
  d->auto_attribution("set_field:filter");
  ASSERT_TRUE(d->set_field("filter", "all").ok());
  std::vector<std::string> messages;
  d->with_doc([&](crdt::Doc& doc) {
    for (const auto& c : doc.changes()) messages.push_back(c.message.value_or(""));
  });
  std::string joined;
  for (const auto& m : messages) joined += m + "|";
  EXPECT_NE(joined.find("system:init"), std::string::npos) << joined;
  EXPECT_NE(joined.find("agent:ada:set_field:ratio"), std::string::npos) << joined;
  EXPECT_NE(joined.find("system:set_field:severity"), std::string::npos) << joined;
  EXPECT_NE(joined.find("source:lsp:update"), std::string::npos) << joined;
  EXPECT_NE(joined.find("agent:ada:set_field:filter"), std::string::npos) << joined;
  EXPECT_EQ(d->label(), "blk");
  EXPECT_EQ(d->accessor_agent_id(), std::optional<std::string>("ada"));
}

TEST(DocEventTest, SubscriptionsFireWithMessages) {
  auto d = make(R"("text")");
  std::vector<std::string> root_msgs;
  int content_events = 0;
  {
    auto sub = d->subscribe_root([&](const crdt::DocEvent& e) {
      root_msgs.push_back(e.message.value_or(""));
      EXPECT_EQ(e.by, crdt::EventTrigger::kLocal);
    });
    auto sub2 = d->subscribe_content([&](const crdt::DocEvent&) { ++content_events; });
    ASSERT_TRUE(d->append_text("hi").ok());
    ASSERT_TRUE(d->append_text(" there").ok());
  }
  ASSERT_TRUE(d->append_text("!").ok());  // after unsubscribe: not seen
  ASSERT_EQ(root_msgs.size(), 2u);
  EXPECT_EQ(root_msgs[0], "agent:ada:append_text");
  EXPECT_EQ(content_events, 2);
}

TEST(DocUndoTest, UndoesOwnAgentWritesOnly) {
  auto d = make(kMap);
  auto undo = d->undo_manager();
  ASSERT_TRUE(d->set_field("filter", "v1").ok());
  ASSERT_TRUE(d->set_field("filter", "v2").ok());
  ASSERT_TRUE(d->set_field("severity", "sys", std::nullopt, true).ok());
  ASSERT_TRUE(*undo->undo());
  EXPECT_EQ(*d->get_field("filter"), Json("v1"));
  EXPECT_EQ(*d->get_field("severity"), Json("sys")) << "system write must survive agent undo";
  ASSERT_TRUE(*undo->redo());
  EXPECT_EQ(*d->get_field("filter"), Json("v2"));
}

TEST(DocUndoTest, UndoIsScopedToOneAgentOnASharedDocument) {
  auto d = make(kMap);
  auto ada = d->undo_manager();  // the accessor, "ada"
  auto bob = d->undo_manager("bob");
  auto before_ratio = d->get_field("ratio");
  ASSERT_TRUE(d->set_field("filter", "v1").ok());
  d->set_attribution(StructuredDocument::agent_attribution("bob", "set_field:ratio"));
  ASSERT_TRUE(d->set_field("ratio", 2).ok());
  d->set_attribution(StructuredDocument::source_attribution("lsp"));
  ASSERT_TRUE(d->set_field("severity", "src", std::nullopt, true).ok());
  ASSERT_TRUE(d->set_field("filter", "v2").ok());
  EXPECT_TRUE(ada->can_undo());
  EXPECT_TRUE(bob->can_undo());

  ASSERT_TRUE(*ada->undo());  // ada's latest write only
  EXPECT_EQ(*d->get_field("filter"), Json("v1"));
  EXPECT_EQ(*d->get_field("ratio"), Json(2)) << "bob's write is not ada's to undo";
  ASSERT_TRUE(*bob->undo());
  EXPECT_FALSE(bob->can_undo());
  EXPECT_EQ(d->get_field("ratio").ok(), before_ratio.ok());
  if (before_ratio.ok()) {
    EXPECT_EQ(*d->get_field("ratio"), *before_ratio);
  }
  EXPECT_EQ(*d->get_field("filter"), Json("v1")) << "ada's state is not bob's to undo";
  EXPECT_EQ(*d->get_field("severity"), Json("src")) << "source writes are never undone";
  ASSERT_TRUE(*ada->redo());
  EXPECT_EQ(*d->get_field("filter"), Json("v2"));
}

// ------------------------------------------------------------ concurrency

TEST(DocMergeTest, TwoAgentsEditConcurrentlyAndConverge) {
  auto a = make(R"("text")");
  ASSERT_TRUE(a->set_text("shared start").ok());
  auto b = a->fork("bob");
  ASSERT_TRUE(a->append_text(" +ada").ok());
  ASSERT_TRUE(b->replace_text("shared", "common").ok());
  ASSERT_TRUE(b->import(a->export_updates(b->version())).ok());
  ASSERT_TRUE(a->import(b->export_updates(a->version())).ok());
  EXPECT_EQ(*a->text_content(), *b->text_content());
  EXPECT_EQ(*a->text_content(), "common start +ada");
}

TEST(DocMergeTest, SourceWritesReadOnlyWhileAgentEditsWritable) {
  auto agent = make(kComposite);
  auto source = agent->fork(std::nullopt);
  for (int i = 0; i < 20; ++i) {
    source->set_attribution(StructuredDocument::source_attribution("lsp"));
    ASSERT_TRUE(source->increment_counter("count", 1, "diagnostics", true).ok());
    ASSERT_TRUE(agent->append_text("n" + std::to_string(i) + ";", "notes").ok());
    ASSERT_TRUE(agent->set_field("filter", "f" + std::to_string(i), "config").ok());
    EXPECT_EQ(doc_error_kind(agent->increment_counter("count", 1, "diagnostics").status()),
              Kind::kReadOnlySection);
    if (i % 5 == 4) {  // sync both ways now and then
      ASSERT_TRUE(agent->import(source->export_updates(agent->version())).ok());
      ASSERT_TRUE(source->import(agent->export_updates(source->version())).ok());
    }
  }
  EXPECT_EQ(*agent->get_field("count", "diagnostics"), Json(20));
  EXPECT_EQ(*agent->get_field("filter", "config"), Json("f19"));
  std::string notes = *agent->text_content("notes");
  for (int i = 0; i < 20; ++i) {
    EXPECT_NE(notes.find("n" + std::to_string(i) + ";"), std::string::npos);
  }
  EXPECT_EQ(agent->render(), source->render());
}

TEST(DocThreadTest, ThreadsShareOneDocument) {
  auto d = make(R"("list")");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(d->push_item(t * 100 + i).ok());
        (void)d->render();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(d->list_items()->size(), 200u);
}

// --------------------------------------------------------------- properties

// Literal replace-all equals the obvious string algorithm, for any text
// (including multi-byte characters).
RC_GTEST_PROP(DocTextProp, ReplaceAllMatchesStringAlgorithm, ()) {
  const auto pieces = *rc::gen::container<std::vector<std::string>>(
      rc::gen::element<std::string>("a", "b", "é", "😀", " ", "ab"));
  std::string text;
  for (const auto& p : pieces) text += p;
  const std::string find = *rc::gen::element<std::string>("a", "é", "ab", "😀 ", "b");
  const std::string repl = *rc::gen::element<std::string>("", "X", "ññ", "🐈🐈");
  std::string want;
  size_t pos = 0, hits = 0;
  while (true) {
    size_t at = text.find(find, pos);
    if (at == std::string::npos) break;
    want += text.substr(pos, at - pos) + repl;
    pos = at + find.size();
    ++hits;
  }
  want += text.substr(pos);
  auto d = make(R"("text")");
  RC_ASSERT(d->set_text(text).ok());
  auto n = d->replace_text(find, repl, {ReplaceMode::kAll});
  if (hits == 0) {
    RC_ASSERT(doc_error_kind(n.status()) == Kind::kNotFound);
  } else {
    RC_ASSERT(n.ok());
    RC_ASSERT(*n == hits);
  }
  RC_ASSERT(*d->text_content() == want);
}

// Random list ops mirror a std::vector.
RC_GTEST_PROP(DocListProp, ListOpsMirrorVector, ()) {
  auto d = make(R"("list")");
  std::vector<Json> model;
  const auto ops = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 1000));
  for (int op : ops) {
    size_t at = model.empty() ? 0 : static_cast<size_t>(op) % (model.size() + 1);
    if (op % 3 == 0 && !model.empty()) {
      size_t i = static_cast<size_t>(op) % model.size();
      RC_ASSERT(d->delete_item(i).ok());
      model.erase(model.begin() + static_cast<long>(i));
    } else {
      RC_ASSERT(d->insert_item(at, op).ok());
      model.insert(model.begin() + static_cast<long>(at), Json(op));
    }
  }
  RC_ASSERT(*d->list_items() == model);
}

// Two replicas of one block (agent and source) apply random writes, then
// exchange updates: they converge, counters add up and nothing is lost.
RC_GTEST_PROP(DocMergeProp, ReplicasConverge, ()) {
  auto a = make(kComposite);
  auto b = a->fork("bob");
  StructuredDocument* docs[2] = {a.get(), b.get()};
  int64_t increments = 0;
  int appended = 0;
  const auto ops = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, 2), rc::gen::inRange(0, 6)));
  for (auto [who, op] : ops) {
    StructuredDocument& d = *docs[who];
    switch (op) {
      case 0:
        RC_ASSERT(d.append_text("w" + std::to_string(appended++) + ";", "notes").ok());
        break;
      case 1:
        RC_ASSERT(d.increment_counter("count", 2, "diagnostics", true).ok());
        increments += 2;
        break;
      case 2:
        RC_ASSERT(d.set_field("filter", "f" + std::to_string(who), "config").ok());
        break;
      case 3:
        (void)d.push_item("t", "todo");  // may be full: out of range is fine
        break;
      case 4:
        if (!d.list_items("todo")->empty()) RC_ASSERT(d.delete_item(0, "todo").ok());
        break;
      case 5:
        RC_ASSERT(d.append_log_entry(Json{{"text", "x"}}, "activity").ok());
        break;
    }
  }
  RC_ASSERT(b->import(a->export_updates(b->version())).ok());
  RC_ASSERT(a->import(b->export_updates(a->version())).ok());
  RC_ASSERT(a->render() == b->render());
  RC_ASSERT(*a->get_field("count", "diagnostics") == Json(increments));
  std::string notes = *a->text_content("notes");
  for (int i = 0; i < appended; ++i) {
    RC_ASSERT(notes.find("w" + std::to_string(i) + ";") != std::string::npos);
  }
}

}  // namespace
}  // namespace weft::doc
