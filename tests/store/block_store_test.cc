#include "weft/store/block_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "support/test_support.h"

namespace weft::store {
namespace {

class BlockStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (dir_.path() / "blocks.db").string();
    auto s = BlockStore::open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  BlockInfo make(const std::string& agent, const std::string& label,
                 BlockType type = BlockType::kWorking) {
    NewBlock b;
    b.agent_id = agent;
    b.label = label;
    b.block_type = type;
    b.description = "about " + label;
    auto r = store_->create_block(b);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : BlockInfo{};
  }

  // Runs raw SQL on the database file behind the store's back (to corrupt it).
  void raw_sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  weft::testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<BlockStore> store_;
};

TEST_F(BlockStoreTest, CreateGetAndFields) {
  NewBlock b;
  b.agent_id = "ada";
  b.label = "persona";
  b.description = "who I am";
  b.block_type = BlockType::kCore;
  b.schema_json = R"({"type":"map","fields":[]})";
  b.permission = doc::MemoryPermission::kAppend;
  b.char_limit = 2000;
  b.metadata_json = R"({"source":"test"})";
  b.initial_update = std::string("\x00\x01init", 6);
  b.initial_version = "v1";
  auto created = store_->create_block(b);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->id.substr(0, 4), "blk_");
  EXPECT_EQ(created->last_seq, 1u);
  auto got = store_->get_block("ada", "persona");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->id, created->id);
  EXPECT_EQ(got->description, "who I am");
  EXPECT_EQ(got->block_type, BlockType::kCore);
  EXPECT_EQ(got->schema_json, b.schema_json);
  EXPECT_EQ(got->permission, doc::MemoryPermission::kAppend);
  EXPECT_EQ(got->char_limit, 2000u);
  EXPECT_EQ(got->metadata_json, b.metadata_json);
  EXPECT_EQ(got->persisted_version, "v1");
  EXPECT_GT(got->created_at_ms, 0);
  auto loaded = store_->load(created->id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->updates.size(), 1u);
  EXPECT_EQ(loaded->updates[0].data, b.initial_update);
}

TEST_F(BlockStoreTest, DuplicateLabelRefusedButOtherAgentMayUseIt) {
  make("ada", "notes");
  NewBlock b;
  b.agent_id = "ada";
  b.label = "notes";
  EXPECT_EQ(store_->create_block(b).status().code(), StatusCode::kAlreadyExists);
  b.agent_id = "bob";
  EXPECT_TRUE(store_->create_block(b).ok());
}

TEST_F(BlockStoreTest, BadInputRejected) {
  NewBlock b;
  b.agent_id = "ada";
  EXPECT_EQ(store_->create_block(b).status().code(), StatusCode::kInvalidArgument);
  b.label = "x";
  b.metadata_json = "[1,2]";
  EXPECT_EQ(store_->create_block(b).status().code(), StatusCode::kInvalidArgument);
  b.metadata_json = "{not json";
  EXPECT_EQ(store_->create_block(b).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(BlockStoreTest, DeepMetadataIsRefusedAndADeepStoredRowIsCorrupt) {
  NewBlock b;
  b.agent_id = "ada";
  b.label = "x";
  b.metadata_json = R"({"a":)" + std::string(64, '[') + std::string(64, ']') + "}";
  auto refused = store_->create_block(b);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("block metadata: JSON nested deeper than 64 levels"),
            std::string_view::npos)
      << refused.status();
  b.metadata_json = R"({"a":)" + std::string(63, '[') + std::string(63, ']') + "}";
  auto created = store_->create_block(b);
  ASSERT_TRUE(created.ok()) << created.status();
  BlockPatch deeper;
  deeper.metadata_json = "{\"b\":" + std::string(150'000, '[') + std::string(150'000, ']') + "}";
  EXPECT_EQ(store_->update_block(created->id, deeper).status().code(),
            StatusCode::kInvalidArgument);

  // Written behind weft's back: reading the row reports it, listing skips it.
  make("ada", "fine");
  std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  raw_sql("UPDATE blocks SET metadata_json = '" + deep + "' WHERE label = 'x'");
  auto got = store_->get_block("ada", "x");
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("corrupt row: metadata_json: JSON nested deeper"),
            std::string_view::npos)
      << got.status();
  auto list = store_->list_blocks();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->blocks.size(), 1u);
  EXPECT_EQ(list->blocks[0].label, "fine");
  ASSERT_EQ(list->problems.size(), 1u);
  raw_sql("UPDATE blocks SET metadata_json = '{}', schema_json = '" + deep + "' WHERE label = 'x'");
  EXPECT_EQ(store_->get_block("ada", "x").status().code(), StatusCode::kDataLoss);
}

TEST_F(BlockStoreTest, NotFoundListsKnownLabels) {
  make("ada", "alpha");
  make("ada", "beta");
  auto r = store_->get_block("ada", "gamma");
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("'alpha', 'beta'"), std::string_view::npos) << r.status();
  EXPECT_EQ(store_->get_block_by_id("blk_nope").status().code(), StatusCode::kNotFound);
}

TEST_F(BlockStoreTest, AppendLoadAndPersistedVersion) {
  BlockInfo info = make("ada", "log");
  for (int i = 1; i <= 5; ++i) {
    auto seq = store_->append_update(info.id, "u" + std::to_string(i), "v" + std::to_string(i));
    ASSERT_TRUE(seq.ok()) << seq.status();
    EXPECT_EQ(*seq, static_cast<uint64_t>(i));
  }
  auto loaded = store_->load(info.id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->updates.size(), 5u);
  EXPECT_EQ(loaded->updates[4].data, "u5");
  EXPECT_EQ(loaded->info.persisted_version, "v5");
  EXPECT_EQ(loaded->info.last_seq, 5u);
  auto after = store_->load_updates_after(info.id, 3);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->updates.size(), 2u);
  EXPECT_EQ(after->updates[0].seq, 4u);
  // Empty and binary blobs survive.
  std::string bin("\0\xff\x00z", 4);
  ASSERT_TRUE(store_->append_update(info.id, bin, "v6").ok());
  ASSERT_TRUE(store_->append_update(info.id, "", "v7").ok());
  loaded = store_->load(info.id);
  EXPECT_EQ(loaded->updates[5].data, bin);
  EXPECT_EQ(loaded->updates[6].data, "");
}

TEST_F(BlockStoreTest, SnapshotCompactsUpdates) {
  BlockInfo info = make("ada", "doc");
  for (int i = 1; i <= 4; ++i) ASSERT_TRUE(store_->append_update(info.id, "u", "v").ok());
  ASSERT_TRUE(store_->write_snapshot(info.id, 3, "SNAP", "v3").ok());
  auto loaded = store_->load(info.id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(loaded->snapshot.has_value());
  EXPECT_EQ(loaded->snapshot->data, "SNAP");
  EXPECT_EQ(loaded->snapshot->upto_seq, 3u);
  EXPECT_EQ(loaded->snapshot->version, "v3");
  ASSERT_EQ(loaded->updates.size(), 1u);
  EXPECT_EQ(loaded->updates[0].seq, 4u);
  auto h = store_->history(info.id);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].kind, HistoryEntry::Kind::kSnapshot);
  EXPECT_EQ((*h)[1].seq, 4u);
  EXPECT_EQ(store_->write_snapshot(info.id, 99, "x", "v").code(), StatusCode::kInvalidArgument);
  // Seqs keep counting after compaction.
  EXPECT_EQ(*store_->append_update(info.id, "u5", "v5"), 5u);
}

TEST_F(BlockStoreTest, ListFiltersByAgentPrefixAndType) {
  make("ada", "file:src/a.cc");
  make("ada", "file:src/b.cc");
  make("ada", "file:tests/t.cc");
  make("ada", "persona", BlockType::kCore);
  make("bob", "file:src/a.cc");
  BlockFilter f;
  f.agent_id = "ada";
  EXPECT_EQ(store_->list_blocks(f)->blocks.size(), 4u);
  f.label_prefix = "file:src/";
  auto l = store_->list_blocks(f);
  ASSERT_EQ(l->blocks.size(), 2u);
  EXPECT_EQ(l->blocks[0].label, "file:src/a.cc");
  EXPECT_EQ(l->blocks[1].label, "file:src/b.cc");
  f = {};
  f.block_type = BlockType::kCore;
  EXPECT_EQ(store_->list_blocks(f)->blocks.size(), 1u);
  f = {};
  f.label_prefix = "file:";
  EXPECT_EQ(store_->list_blocks(f)->blocks.size(), 4u);
  f.limit = 2;
  EXPECT_EQ(store_->list_blocks(f)->blocks.size(), 2u);
  f = {};
  f.label_prefix = std::string("\xff\xff", 2);
  EXPECT_TRUE(store_->list_blocks(f)->blocks.empty());
}

TEST_F(BlockStoreTest, DeleteKeepsHistoryUntilPurged) {
  BlockInfo info = make("ada", "scratch");
  ASSERT_TRUE(store_->append_update(info.id, "u1", "v1").ok());
  ASSERT_TRUE(store_->delete_block(info.id).ok());
  EXPECT_EQ(store_->get_block("ada", "scratch").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->append_update(info.id, "u2", "v2").status().code(),
            StatusCode::kFailedPrecondition);
  auto byid = store_->get_block_by_id(info.id);
  ASSERT_TRUE(byid.ok());
  EXPECT_TRUE(byid->deleted);
  EXPECT_EQ(store_->load(info.id)->updates.size(), 1u);  // history kept
  BlockFilter f;
  EXPECT_TRUE(store_->list_blocks(f)->blocks.empty());
  f.include_deleted = true;
  EXPECT_EQ(store_->list_blocks(f)->blocks.size(), 1u);
  // The label is free again.
  BlockInfo again = make("ada", "scratch");
  EXPECT_NE(again.id, info.id);
  EXPECT_EQ(*store_->purge_deleted(now_ms() + 1), 1u);
  EXPECT_EQ(store_->get_block_by_id(info.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->stats()->updates, 0u);  // purge removed the old block's update
}

TEST_F(BlockStoreTest, UpdateBlockPatchesMetadata) {
  BlockInfo info = make("ada", "cfg");
  BlockPatch p;
  p.permission = doc::MemoryPermission::kReadOnly;
  p.metadata_json = R"({"k":1})";
  p.char_limit = 10;
  auto u = store_->update_block(info.id, p);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->permission, doc::MemoryPermission::kReadOnly);
  EXPECT_EQ(u->metadata_json, R"({"k":1})");
  EXPECT_EQ(u->description, info.description);
  EXPECT_EQ(u->char_limit, 10u);
  p = {};
  p.metadata_json = "3";
  EXPECT_EQ(store_->update_block(info.id, p).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(BlockStoreTest, CorruptUpdateSkippedAndNamedByLabel) {
  BlockInfo info = make("ada", "diary");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store_->append_update(info.id, "good", "v").ok());
  store_.reset();
  raw_sql("UPDATE block_updates SET data = x'0badbeef' WHERE seq = 2");
  store_ = std::move(*BlockStore::open(path_));
  auto loaded = store_->load(info.id);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->updates.size(), 2u);
  ASSERT_EQ(loaded->problems.size(), 1u);
  EXPECT_NE(loaded->problems[0].find("'diary'"), std::string::npos);
  EXPECT_NE(loaded->problems[0].find("update 2"), std::string::npos);
  // Text stored where a blob belongs is also caught.
  store_.reset();
  raw_sql("UPDATE block_updates SET data = 'text' WHERE seq = 3");
  store_ = std::move(*BlockStore::open(path_));
  EXPECT_EQ(store_->load(info.id)->problems.size(), 2u);
}

TEST_F(BlockStoreTest, CorruptSnapshotRefusedWithLabel) {
  BlockInfo info = make("ada", "memo");
  ASSERT_TRUE(store_->append_update(info.id, "u", "v").ok());
  ASSERT_TRUE(store_->write_snapshot(info.id, 1, "SNAP", "v").ok());
  store_.reset();
  raw_sql("UPDATE block_snapshots SET checksum = checksum + 1");
  store_ = std::move(*BlockStore::open(path_));
  auto loaded = store_->load(info.id);
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("'memo'"), std::string_view::npos);
}

TEST_F(BlockStoreTest, CorruptBlockRowSkippedInListRefusedInGet) {
  make("ada", "good");
  BlockInfo bad = make("ada", "bad");
  store_.reset();
  raw_sql("UPDATE blocks SET permission = 'root', block_type = 'zzz' WHERE label = 'bad'");
  store_ = std::move(*BlockStore::open(path_));
  auto l = store_->list_blocks();
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->blocks.size(), 1u);
  EXPECT_EQ(l->blocks[0].label, "good");
  ASSERT_EQ(l->problems.size(), 1u);
  EXPECT_NE(l->problems[0].find("'bad'"), std::string::npos);
  auto g = store_->get_block("ada", "bad");
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(g.status().message().find("'bad'"), std::string_view::npos);
}

TEST_F(BlockStoreTest, SchemaVersionAndMigrations) {
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), BlockStore::schema_version());
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
  // A database from a newer weft is refused, not damaged.
  raw_sql("PRAGMA user_version = 999");
  auto r = BlockStore::open(path_);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("newer weft"), std::string_view::npos);
}

TEST_F(BlockStoreTest, NotADatabaseIsDataLoss) {
  std::string p = (dir_.path() / "junk.db").string();
  FILE* f = fopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string junk(4096, 'x');
  fwrite(junk.data(), 1, junk.size(), f);
  fclose(f);
  auto r = BlockStore::open(p);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status();
}

TEST_F(BlockStoreTest, IntegrityCheckOkAndStats) {
  BlockInfo info = make("ada", "x");
  ASSERT_TRUE(store_->append_update(info.id, "12345", "v").ok());
  EXPECT_TRUE(store_->check_integrity().ok());
  auto s = store_->stats();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->blocks, 1u);
  EXPECT_EQ(s->updates, 1u);
  EXPECT_EQ(s->update_bytes, 5u);
  EXPECT_TRUE(store_->checkpoint().ok());
}

TEST_F(BlockStoreTest, ReadOnlyOpenSeesDataAndRefusesWrites) {
  BlockInfo info = make("ada", "x");
  StoreOptions o;
  o.read_only = true;
  auto ro = BlockStore::open(path_, o);
  ASSERT_TRUE(ro.ok()) << ro.status();
  EXPECT_TRUE((*ro)->get_block("ada", "x").ok());
  EXPECT_FALSE((*ro)->append_update(info.id, "u", "v").ok());
}

}  // namespace
}  // namespace weft::store
