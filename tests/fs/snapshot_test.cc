// Snapshot / restore compliance (every backend) and the git store's
// disk-only guarantees: store outside the root, restore from a new instance
// given only the record, strictness about ignored files.
#include <fstream>

#include "backends.h"

namespace weft::fs::testing {
namespace {

template <typename B>
using Snapshots = FsTest<B>;
TYPED_TEST_SUITE(Snapshots, AllBackends, BackendNames);

TYPED_TEST(Snapshots, SeedExampleRoundTrip) {
  auto& fs = this->fs();
  ASSERT_TRUE(fs.write("config.py", "DEBUG = True").ok());
  auto v1 = fs.snapshot("initial");
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(v1->tag, "initial");
  EXPECT_EQ(v1->root_path, fs.root());
  EXPECT_EQ(v1->git_dir.has_value(), TypeParam::kOnDisk);
  EXPECT_EQ(v1->snapshot_id.size(), 36u);
  ASSERT_TRUE(fs.write("config.py", "DEBUG = False").ok());
  ASSERT_TRUE(fs.write("tests.py", "import pytest").ok());
  auto v2 = fs.snapshot("with-tests");
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v1->commit_ref, v2->commit_ref);
  ASSERT_TRUE(fs.restore(*v1).ok());
  EXPECT_EQ(fs.read("config.py")->content, "DEBUG = True");
  EXPECT_FALSE(fs.exists("tests.py"));
  ASSERT_TRUE(fs.restore(*v2).ok());
  EXPECT_EQ(fs.read("config.py")->content, "DEBUG = False");
  EXPECT_TRUE(fs.exists("tests.py"));
  auto all = fs.snapshots();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].snapshot_id, v1->snapshot_id);
  EXPECT_EQ((*all)[0].commit_ref, v1->commit_ref);
  EXPECT_EQ((*all)[1].tag, "with-tests");
}

TYPED_TEST(Snapshots, DeletionsNestedBinaryAndCrlf) {
  auto& fs = this->fs();
  std::string bin("\0\x01\xFF\r\n", 5);
  this->put("a/b/c.bin", bin);
  this->put("a/crlf.txt", "x\r\ny\r\n");
  this->put("top.txt", "top");
  auto s = fs.snapshot();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(fs.remove("a", true).ok());
  this->put("top.txt", "changed, and longer");
  this->put("later/new.txt", "new");
  ASSERT_TRUE(fs.restore(*s).ok());
  EXPECT_EQ(this->get("a/b/c.bin"), bin);
  EXPECT_EQ(this->get("a/crlf.txt"), "x\r\ny\r\n");
  EXPECT_EQ(this->get("top.txt"), "top");
  EXPECT_FALSE(fs.exists("later/new.txt"));
}

TYPED_TEST(Snapshots, IgnoredFilesAreCapturedAndRemoved) {
  auto& fs = this->fs();
  this->put(".gitignore", "*.log\nbuild/\n");
  this->put("kept.log", "captured although ignored");
  auto s = fs.snapshot();
  ASSERT_TRUE(s.ok());
  this->put("new.log", "created after");
  this->put("build/out.o", "artifact");
  ASSERT_TRUE(fs.remove("kept.log").ok());
  ASSERT_TRUE(fs.restore(*s).ok());
  EXPECT_EQ(this->get("kept.log"), "captured although ignored");
  EXPECT_FALSE(fs.exists("new.log"));
  EXPECT_FALSE(fs.exists("build/out.o"));
}

TYPED_TEST(Snapshots, RapidSameSizeChangesAreSeen) {
  auto& fs = this->fs();
  this->put("f.txt", "aaaa");
  auto s1 = fs.snapshot();
  this->put("f.txt", "bbbb");  // same size, likely the same clock tick
  auto s2 = fs.snapshot();
  ASSERT_TRUE(s1.ok() && s2.ok());
  ASSERT_TRUE(fs.restore(*s1).ok());
  EXPECT_EQ(this->get("f.txt"), "aaaa");
  ASSERT_TRUE(fs.restore(*s2).ok());
  EXPECT_EQ(this->get("f.txt"), "bbbb");
}

TYPED_TEST(Snapshots, ForeignAndBogusRecords) {
  auto& fs = this->fs();
  auto s = fs.snapshot();
  ASSERT_TRUE(s.ok());
  FilesystemSnapshot bogus = *s;
  bogus.commit_ref = TypeParam::kOnDisk ? std::string(40, 'a') : "mem-999";
  bogus.snapshot_id = "00000000-0000-4000-8000-000000000000";
  EXPECT_EQ(fs.restore(bogus).code(), StatusCode::kNotFound);
  FilesystemSnapshot other_root = *s;
  other_root.root_path = "/somewhere/else";
  if (TypeParam::kOnDisk) EXPECT_EQ(fs.restore(other_root).code(), StatusCode::kInvalidArgument);
  auto mem = make_in_memory_filesystem();
  auto mem_snap = mem->snapshot();
  ASSERT_TRUE(mem_snap.ok());
  if (TypeParam::kOnDisk) {
    EXPECT_EQ(fs.restore(*mem_snap).code(), StatusCode::kInvalidArgument);
  } else {
    EXPECT_EQ(fs.restore(*mem_snap).code(), StatusCode::kNotFound);  // another instance's
  }
}

TYPED_TEST(Snapshots, RestoreRemovesDirectoriesEmptiedSinceALaterSnapshot) {
  auto& fs = this->fs();
  auto before = fs.snapshot();
  ASSERT_TRUE(before.ok());
  this->put("d/f.txt", "x");
  ASSERT_TRUE(fs.snapshot().ok());
  ASSERT_TRUE(fs.remove("d/f.txt").ok());
  ASSERT_TRUE(fs.restore(*before).ok());
  EXPECT_FALSE(fs.exists("d"));
  EXPECT_TRUE(fs.list()->empty());
}

TEST(SnapshotRecord, JsonRoundTrip) {
  FilesystemSnapshot s;
  s.snapshot_id = "0d7c1c2e-1b7a-4a52-9d33-2a4c1f0b5e61";
  s.created_at = TimePoint(std::chrono::microseconds(1'764'118'800'123'456));
  s.commit_ref = "abc";
  s.root_path = "/r";
  s.git_dir = "/g";
  std::string json = snapshot_to_json(s);
  auto back = snapshot_from_json(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->snapshot_id, s.snapshot_id);
  EXPECT_EQ(back->created_at, s.created_at);
  EXPECT_EQ(back->git_dir, s.git_dir);
  EXPECT_FALSE(back->tag.has_value());
  EXPECT_EQ(format_time(s.created_at), "2025-11-26T01:00:00.123456Z");
  EXPECT_EQ(snapshot_from_json("[]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(snapshot_from_json("{\"snapshot_id\":1}").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(snapshot_from_json("not json").status().code(), StatusCode::kInvalidArgument);
  auto deep =
      snapshot_from_json("{\"tag\":" + std::string(100'000, '[') + std::string(100'000, ']') + "}");
  EXPECT_EQ(deep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(deep.status().message().find("snapshot record: JSON nested deeper than 64 levels"),
            std::string_view::npos)
      << deep.status();
  EXPECT_EQ(parse_time("4052-01-01T00:15:00Z").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parse_time("2026-13-01T00:00:00Z").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parse_time("2026-11-26T01:02:03+02:00").status().code(), StatusCode::kInvalidArgument);
}

// --- git store guarantees (Host) -----------------------------------------------

class HostSnapshots : public ::testing::Test {
 protected:
  weft::testing::TempDir root_, state_;
  std::string git_dir() const { return (state_.path() / "store.git").string(); }
  std::unique_ptr<Filesystem> open(std::optional<std::string> git_dir = std::nullopt) {
    HostOptions o;
    o.git_dir = git_dir ? git_dir : this->git_dir();
    auto fs = make_host_filesystem(root_.path().string(), o);
    EXPECT_TRUE(fs.ok()) << fs.status();
    return fs.ok() ? std::move(*fs) : nullptr;
  }
};

TEST_F(HostSnapshots, StoreMustBeOutsideRoot) {
  HostOptions o;
  o.git_dir = (root_.path() / "inside.git").string();
  auto fs = make_host_filesystem(root_.path().string(), o);
  EXPECT_EQ(fs.status().code(), StatusCode::kInvalidArgument);
  o.git_dir = (root_.path() / "a" / ".." / "x.git").string();
  EXPECT_EQ(make_host_filesystem(root_.path().string(), o).status().code(),
            StatusCode::kInvalidArgument);
  std::string def = default_snapshot_git_dir("/some/root");
  EXPECT_NE(def.find("/weft/snapshots/"), std::string::npos);
}

TEST_F(HostSnapshots, StoreLivesOutsideAndRootHasNoGitDir) {
  auto fs = open();
  ASSERT_TRUE(fs->write("a.txt", "a").ok());
  ASSERT_TRUE(fs->snapshot().ok());
  EXPECT_FALSE(std::filesystem::exists(root_.path() / ".git"));
  EXPECT_TRUE(std::filesystem::exists(git_dir() + "/HEAD"));
  auto listing = fs->list();
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(listing->size(), 1u);
}

TEST_F(HostSnapshots, RestoreFromNewInstanceGivenOnlyTheRecord) {
  std::string json;
  {
    auto fs = open();
    ASSERT_TRUE(fs->write("keep.txt", "v1").ok());
    auto s = fs->snapshot("before");
    ASSERT_TRUE(s.ok());
    json = snapshot_to_json(*s);
    ASSERT_TRUE(fs->write("keep.txt", "v2").ok());
    ASSERT_TRUE(fs->write("extra.txt", "x").ok());
  }
  // A new process: different configured store, but the record names its own.
  auto fs = open((state_.path() / "other.git").string());
  auto rec = snapshot_from_json(json);
  ASSERT_TRUE(rec.ok());
  ASSERT_TRUE(fs->restore(*rec).ok());
  EXPECT_EQ(fs->read("keep.txt")->content, "v1");
  EXPECT_FALSE(fs->exists("extra.txt"));
}

TEST_F(HostSnapshots, UserGitDirectoryIsLeftAlone) {
  std::filesystem::create_directories(root_.path() / ".git");
  { std::ofstream(root_.path() / ".git" / "config") << "[core]\n"; }
  auto fs = open();
  ASSERT_TRUE(fs->write("a.txt", "a").ok());
  auto s = fs->snapshot();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(fs->write("b.txt", "b").ok());
  ASSERT_TRUE(fs->restore(*s).ok());
  EXPECT_TRUE(std::filesystem::exists(root_.path() / ".git" / "config"));
  EXPECT_FALSE(fs->exists("b.txt"));
  EXPECT_EQ(fs->write(".git/hooks/post-commit", "#!/bin/sh\n").status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(HostSnapshots, ModeAndSymlinksSurvive) {
  auto fs = open();
  ASSERT_TRUE(fs->write("run.sh", "#!/bin/sh\n").ok());
  std::filesystem::permissions(root_.path() / "run.sh", std::filesystem::perms(0755));
  std::filesystem::create_symlink("run.sh", root_.path() / "link");
  auto s = fs->snapshot();
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(fs->remove("run.sh").ok());
  ASSERT_TRUE(fs->remove("link").ok());
  ASSERT_TRUE(fs->restore(*s).ok());
  auto perms = std::filesystem::status(root_.path() / "run.sh").permissions();
  EXPECT_NE(perms & std::filesystem::perms::owner_exec, std::filesystem::perms::none);
  EXPECT_TRUE(std::filesystem::is_symlink(root_.path() / "link"));
}

TEST_F(HostSnapshots, IncrementalSnapshotsReuseTheStatCache) {
  auto fs = open();
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(fs->write("d" + std::to_string(i % 10) + "/f" + std::to_string(i), "x").ok());
  }
  ASSERT_TRUE(fs->snapshot().ok());
  ASSERT_TRUE(fs->write("d3/f3", "changed").ok());
  auto s = fs->snapshot();
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(fs->write("d3/f3", "again").ok());
  ASSERT_TRUE(fs->restore(*s).ok());
  EXPECT_EQ(fs->read("d3/f3")->content, "changed");
  EXPECT_EQ(fs->read("d4/f4")->content, "x");
}

}  // namespace
}  // namespace weft::fs::testing
