#include "weft/store/memory_cache.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "support/test_support.h"
#include "weft/doc/schema_json.h"

namespace weft::store {
namespace {

using doc::Json;

class MemoryCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { reopen(); }

  void reopen(CacheOptions options = {}) {
    cache_.reset();
    store_.reset();
    auto s = BlockStore::open(path());
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::shared_ptr<BlockStore>(std::move(*s));
    cache_ = std::make_unique<MemoryCache>(store_, options);
  }

  std::string path() const { return (dir_.path() / "cache.db").string(); }

  std::shared_ptr<doc::StructuredDocument> create(
      const std::string& agent, const std::string& label, const std::string& schema = R"("text")",
      doc::MemoryPermission perm = doc::MemoryPermission::kReadWrite,
      BlockType type = BlockType::kWorking) {
    CreateBlockRequest r;
    r.agent_id = agent;
    r.label = label;
    r.schema = *doc::schema_from_json(schema);
    r.permission = perm;
    r.block_type = type;
    auto d = cache_->create_block(r);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *d : nullptr;
  }

  weft::testing::TempDir dir_;
  std::shared_ptr<BlockStore> store_;
  std::unique_ptr<MemoryCache> cache_;
};

TEST_F(MemoryCacheTest, CreateGetPersistReload) {
  auto d = create("ada", "notes");
  ASSERT_TRUE(d->append_text("hello").ok());
  EXPECT_TRUE(cache_->is_dirty("ada", "notes"));
  ASSERT_TRUE(cache_->persist_block("ada", "notes").ok());
  EXPECT_FALSE(cache_->is_dirty("ada", "notes"));
  EXPECT_EQ(cache_->get("ada", "notes")->get(), d.get()) << "one shared document per block";
  reopen();
  auto again = cache_->get("ada", "notes");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->text_content(), "hello");
  EXPECT_EQ((*again)->label(), "notes");
  EXPECT_EQ((*again)->accessor_agent_id(), std::optional<std::string>("ada"));
  EXPECT_EQ(cache_->stats().misses, 1u);
  ASSERT_TRUE(cache_->get("ada", "notes").ok());
  EXPECT_EQ(cache_->stats().hits, 1u);
}

TEST_F(MemoryCacheTest, GetWithSubscriptionSeesEdits) {
  create("ada", "watched");
  std::vector<std::string> messages;
  auto got = cache_->get_with_subscription("ada", "watched", [&](const crdt::DocEvent& e) {
    messages.push_back(e.message.value_or(""));
  });
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->first->append_text("x").ok());
  got->second.unsubscribe();
  ASSERT_TRUE(got->first->append_text("y").ok());
  EXPECT_EQ(messages, std::vector<std::string>{"agent:ada:append_text"});
}

TEST_F(MemoryCacheTest, InitialTextAndSchemaSurviveReload) {
  CreateBlockRequest r;
  r.agent_id = "ada";
  r.label = "file:a.txt";
  r.initial_text = "line1\n";
  r.char_limit = 100;
  ASSERT_TRUE(cache_->create_block(r).ok());
  auto m = create("ada", "cfg",
                  R"({"type":"map","fields":[{"name":"n","type":"counter","default":4}]})");
  reopen();
  EXPECT_EQ(*(*cache_->get("ada", "file:a.txt"))->text_content(), "line1\n");
  EXPECT_EQ((*cache_->get("ada", "file:a.txt"))->char_limit(), 100u);
  EXPECT_EQ(*(*cache_->get("ada", "cfg"))->get_field("n"), Json(4));
  r.schema = *doc::schema_from_json(R"("list")");
  r.label = "bad";
  EXPECT_EQ(cache_->create_block(r).status().code(), StatusCode::kInvalidArgument);
  r.label = "file:a.txt";
  r.schema = doc::BlockSchema::text();
  EXPECT_EQ(cache_->create_block(r).status().code(), StatusCode::kAlreadyExists);
}

TEST_F(MemoryCacheTest, PersistWritesOnlyTheChange) {
  auto d = create("ada", "notes");
  ASSERT_TRUE(d->set_text(std::string(5000, 'x')).ok());
  ASSERT_TRUE(cache_->save_document(*d).ok());
  ASSERT_TRUE(d->append_text("y").ok());
  ASSERT_TRUE(cache_->persist_block("ada", "notes").ok());
  auto id = store_->get_block("ada", "notes")->id;
  auto h = *store_->history(id);
  ASSERT_GE(h.size(), 2u);
  EXPECT_LT(h.back().bytes, 200u) << "a one-character edit must not re-write the block";
  size_t rows = h.size();
  ASSERT_TRUE(cache_->persist_block("ada", "notes").ok());  // nothing changed: no row
  EXPECT_EQ(store_->history(id)->size(), rows);
  EXPECT_EQ(cache_->persist_block("ada", "other").code(), StatusCode::kNotFound);
}

TEST_F(MemoryCacheTest, CompactsIntoSnapshot) {
  CacheOptions o;
  o.compact_after_updates = 5;
  reopen(o);
  auto d = create("ada", "notes");
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(d->append_text(std::to_string(i) + ",").ok());
    ASSERT_TRUE(cache_->persist_block("ada", "notes").ok());
  }
  EXPECT_EQ(cache_->stats().compactions, 2u);
  auto loaded = store_->load(store_->get_block("ada", "notes")->id);
  ASSERT_TRUE(loaded->snapshot.has_value());
  EXPECT_LT(loaded->updates.size(), 5u);
  reopen();
  EXPECT_EQ(*(*cache_->get("ada", "notes"))->text_content(), "0,1,2,3,4,5,6,7,8,9,10,11,");
}

TEST_F(MemoryCacheTest, EvictsOnlyPersistedUnheldBlocks) {
  CacheOptions o;
  o.memory_budget_bytes = 8 * 1024;  // a handful of small blocks
  reopen(o);
  auto held = create("ada", "held");
  auto unsaved = create("ada", "unsaved");
  ASSERT_TRUE(unsaved->append_text("not persisted").ok());
  unsaved.reset();  // nobody holds it, but it has changes
  for (int i = 0; i < 30; ++i) create("ada", "b" + std::to_string(i)).reset();
  CacheStats s = cache_->stats();
  EXPECT_GT(s.evictions, 0u);
  EXPECT_TRUE(cache_->is_cached("ada", "held"));
  EXPECT_TRUE(cache_->is_cached("ada", "unsaved")) << "an unpersisted block was evicted";
  ASSERT_TRUE(cache_->persist_all().ok());
  // Evicted blocks load again from the store.
  auto b0 = cache_->get("ada", "b0");
  ASSERT_TRUE(b0.ok());
  EXPECT_EQ(*(*b0)->text_content(), "");
  reopen();
  EXPECT_EQ(*(*cache_->get("ada", "unsaved"))->text_content(), "not persisted");
}

TEST_F(MemoryCacheTest, ListAndSearch) {
  create("ada", "file:src/a.cc")->append_text("int main() {}").ok();
  create("ada", "file:src/b.cc")->append_text("// TODO fix").ok();
  create("ada", "persona", R"("text")", doc::MemoryPermission::kReadWrite, BlockType::kCore);
  create("bob", "file:src/a.cc");
  ASSERT_TRUE(cache_->persist_all().ok());
  BlockFilter f;
  f.agent_id = "ada";
  f.label_prefix = "file:";
  EXPECT_EQ(cache_->list(f)->blocks.size(), 2u);
  f = {};
  f.block_type = BlockType::kCore;
  EXPECT_EQ(cache_->list(f)->blocks.size(), 1u);
  auto hits = cache_->search("TODO");
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].info.label, "file:src/b.cc");
  EXPECT_EQ((*hits)[0].line, "// TODO fix");
}

TEST_F(MemoryCacheTest, DeleteObeysPermissionAndKeepsHistory) {
  create("ada", "rw");
  create("ada", "admin", R"("text")", doc::MemoryPermission::kAdmin);
  create("ada", "human", R"("text")", doc::MemoryPermission::kHuman);
  EXPECT_EQ(doc::doc_error_kind(cache_->delete_block("ada", "rw")),
            doc::DocErrorKind::kPermissionDenied);
  EXPECT_TRUE(doc::is_needs_approval(cache_->delete_block("ada", "human")));
  ASSERT_TRUE(cache_->delete_block("ada", "admin").ok());
  ASSERT_TRUE(cache_->delete_block("ada", "rw", /*is_system=*/true).ok());
  EXPECT_FALSE(cache_->is_cached("ada", "admin"));
  EXPECT_EQ(cache_->get("ada", "admin").status().code(), StatusCode::kNotFound);
  BlockFilter f;
  f.include_deleted = true;
  EXPECT_EQ(cache_->list(f)->blocks.size(), 3u);
}

TEST_F(MemoryCacheTest, CorruptUpdateSkippedAndReported) {
  auto d = create("ada", "diary");
  ASSERT_TRUE(d->append_text("one;").ok());
  ASSERT_TRUE(cache_->persist_block("ada", "diary").ok());
  ASSERT_TRUE(d->append_text("two;").ok());
  ASSERT_TRUE(cache_->persist_block("ada", "diary").ok());
  cache_.reset();
  store_.reset();
  // Garbage with a valid checksum: the store accepts it, the CRDT refuses it.
  {
    auto s = std::move(*BlockStore::open(path()));
    auto id = s->get_block("ada", "diary")->id;
    ASSERT_TRUE(s->append_update(id, "garbage that is not an update", "v").ok());
  }
  reopen();
  auto again = cache_->get("ada", "diary");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->text_content(), "one;two;");
  auto problems = cache_->problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("'diary'"), std::string::npos) << problems[0];
}

TEST_F(MemoryCacheTest, CorruptSchemaRefusedWithLabel) {
  create("ada", "cfg");
  cache_.reset();
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE blocks SET schema_json = '{\"type\":\"tree\"}'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  reopen();
  auto r = cache_->get("ada", "cfg");
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("'cfg'"), std::string_view::npos);
}

}  // namespace
}  // namespace weft::store
