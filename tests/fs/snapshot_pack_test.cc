// The git snapshot store's pack files: each snapshot's objects go into one
// pack (no loose objects), packs stay few after many snapshots, old
// snapshots restore from a new instance, and a damaged pack gives a clear
// kDataLoss without touching the workspace.
#include <git2.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "backends.h"

namespace weft::fs::testing {
namespace {

namespace stdfs = std::filesystem;

class SnapshotPacks : public ::testing::Test {
 protected:
  weft::testing::TempDir root_, state_;
  std::string git_dir() const { return (state_.path() / "store.git").string(); }
  std::unique_ptr<Filesystem> open() {
    HostOptions o;
    o.git_dir = git_dir();
    auto fs = make_host_filesystem(root_.path().string(), o);
    EXPECT_TRUE(fs.ok()) << fs.status();
    return fs.ok() ? std::move(*fs) : nullptr;
  }
  // Files under objects/ by kind: "pack" (.pack files) and "loose".
  std::map<std::string, int> object_files() const {
    std::map<std::string, int> n;
    for (const auto& e : stdfs::recursive_directory_iterator(git_dir() + "/objects")) {
      if (!e.is_regular_file()) continue;
      std::string parent = e.path().parent_path().filename().string();
      if (parent == "pack") {
        n[e.path().extension().string()]++;
      } else if (parent.size() == 2) {
        n["loose"]++;
      }
    }
    return n;
  }
};

TEST_F(SnapshotPacks, OneSnapshotWritesOnePackAndNoLooseObject) {
  auto fs = open();
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(fs->write("d" + std::to_string(i % 6) + "/f" + std::to_string(i) + ".txt",
                          "content " + std::to_string(i))
                    .ok());
  }
  auto s = fs->snapshot();
  ASSERT_TRUE(s.ok()) << s.status();
  auto files = object_files();
  EXPECT_EQ(files[".pack"], 1);
  EXPECT_EQ(files[".idx"], 1);
  EXPECT_EQ(files["loose"], 0);
  // No temporary file is left behind.
  EXPECT_EQ(files.size(), 2u + (files.count("loose") ? 1u : 0u));
  // git itself accepts the pack, its index and every object in it.
  if (stdfs::exists("/usr/bin/git")) {
    std::string fsck = "git --git-dir='" + git_dir() + "' fsck --full --strict >/dev/null 2>&1";
    EXPECT_EQ(std::system(fsck.c_str()), 0);
  }
  ASSERT_TRUE(fs->write("d1/f1.txt", "changed").ok());
  ASSERT_TRUE(fs->restore(*s).ok());
  EXPECT_EQ(fs->read("d1/f1.txt")->content, "content 1");
}

TEST_F(SnapshotPacks, ManySnapshotsKeepFewPacksAndOldOnesRestoreInANewInstance) {
  std::vector<FilesystemSnapshot> snaps;
  {
    auto fs = open();
    ASSERT_TRUE(fs->write("same.txt", "unchanged").ok());
    for (int i = 0; i < 45; ++i) {
      ASSERT_TRUE(fs->write("n.txt", "version " + std::to_string(i)).ok());
      if (i % 2) {
        ASSERT_TRUE(fs->write("odd/" + std::to_string(i), "o").ok());
      }
      auto s = fs->snapshot("s" + std::to_string(i));
      ASSERT_TRUE(s.ok()) << i << ": " << s.status();
      snaps.push_back(*s);
    }
  }
  EXPECT_LE(object_files()[".pack"], 33);
  auto fs = open();
  auto listed = fs->snapshots();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), snaps.size());
  for (size_t i = 0; i < snaps.size(); ++i) {
    EXPECT_EQ((*listed)[i].commit_ref, snaps[i].commit_ref) << i;
    EXPECT_EQ((*listed)[i].tag, snaps[i].tag) << i;
  }
  for (int i : {0, 7, 30, 44}) {
    ASSERT_TRUE(fs->restore(snaps[static_cast<size_t>(i)]).ok()) << i;
    EXPECT_EQ(fs->read("n.txt")->content, "version " + std::to_string(i));
    EXPECT_EQ(fs->read("same.txt")->content, "unchanged");
    EXPECT_EQ(fs->exists("odd/43"), i == 44);
    EXPECT_EQ(fs->exists("odd/1"), i >= 1);
  }
  // Snapshots go on after a restore; the chain keeps every one listed.
  ASSERT_TRUE(fs->restore(snaps[3]).ok());
  ASSERT_TRUE(fs->snapshot("after-restore").ok());
  EXPECT_EQ(fs->snapshots()->size(), snaps.size() + 1);
}

TEST_F(SnapshotPacks, DamagedPackIsDataLossAndWorkspaceIsUntouched) {
  std::string big;
  for (int i = 0; big.size() < 200'000; ++i) big += "line " + std::to_string(i * 7919) + "\n";
  FilesystemSnapshot snap;
  {
    auto fs = open();
    { std::ofstream(root_.path() / "big.txt", std::ios::binary) << big; }  // over the write limit
    auto s = fs->snapshot();
    ASSERT_TRUE(s.ok()) << s.status();
    snap = *s;
  }
  std::string pack;
  for (const auto& e : stdfs::directory_iterator(git_dir() + "/objects/pack")) {
    if (e.path().extension() == ".pack") pack = e.path().string();
  }
  ASSERT_FALSE(pack.empty());
  stdfs::permissions(pack, stdfs::perms::owner_read | stdfs::perms::owner_write);
  {
    std::fstream f(pack, std::ios::in | std::ios::out | std::ios::binary);
    auto size = stdfs::file_size(pack);
    for (uintmax_t at = size / 4; at < size / 2; at += 97) {
      f.seekp(static_cast<std::streamoff>(at));
      f.put('\x5a');
    }
  }
  auto fs = open();
  ASSERT_TRUE(fs->write("big.txt", "edited after the snapshot").ok());
  ASSERT_TRUE(fs->write("new.txt", "new").ok());
  Status st = fs->restore(snap);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st;
  EXPECT_EQ(fs->read("big.txt")->content, "edited after the snapshot");
  EXPECT_TRUE(fs->exists("new.txt"));
}

TEST_F(SnapshotPacks, TemporaryPacksOfACrashedSnapshotAreDeletedWhenStale) {
  auto fs = open();
  ASSERT_TRUE(fs->write("a.txt", "a").ok());
  ASSERT_TRUE(fs->snapshot().ok());
  std::string pack_dir = git_dir() + "/objects/pack/";
  { std::ofstream(pack_dir + "tmp_weft_pack_stale1") << "PACK half written"; }
  { std::ofstream(pack_dir + "tmp_weft_pack_fresh1") << "PACK in progress"; }
  stdfs::last_write_time(pack_dir + "tmp_weft_pack_stale1",
                         stdfs::file_time_type::clock::now() - std::chrono::hours(48));
  ASSERT_TRUE(fs->write("a.txt", "b").ok());
  ASSERT_TRUE(fs->snapshot().ok());
  EXPECT_FALSE(stdfs::exists(pack_dir + "tmp_weft_pack_stale1"));
  EXPECT_TRUE(stdfs::exists(pack_dir + "tmp_weft_pack_fresh1"));
}

// Each instance keeps its index (the stat cache) in memory between writes;
// two instances on one store must still capture every change.
TEST_F(SnapshotPacks, TwoInstancesOnOneStoreSeeEachOthersChanges) {
  auto a = open();
  auto b = open();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(a->write("d/f" + std::to_string(i), "x").ok());
  ASSERT_TRUE(a->write("f.txt", "v1").ok());
  auto s1 = a->snapshot();
  ASSERT_TRUE(s1.ok()) << s1.status();
  ASSERT_TRUE(b->write("f.txt", "v2 longer").ok());
  auto s2 = b->snapshot();
  ASSERT_TRUE(s2.ok()) << s2.status();
  ASSERT_TRUE(a->write("f.txt", "v3").ok());
  ASSERT_TRUE(a->remove("d/f3").ok());
  auto s3 = a->snapshot();
  ASSERT_TRUE(s3.ok()) << s3.status();
  EXPECT_EQ(b->snapshots()->size(), 3u);
  ASSERT_TRUE(b->restore(*s2).ok());
  EXPECT_EQ(b->read("f.txt")->content, "v2 longer");
  EXPECT_TRUE(b->exists("d/f3"));
  ASSERT_TRUE(a->restore(*s1).ok());
  EXPECT_EQ(a->read("f.txt")->content, "v1");
  ASSERT_TRUE(b->restore(*s3).ok());
  EXPECT_EQ(b->read("f.txt")->content, "v3");
  EXPECT_FALSE(b->exists("d/f3"));
}

TEST_F(SnapshotPacks, ConcurrentSnapshotsFromTwoInstancesAllJoinTheChain) {
  // Two instances stand for two processes: each snapshot takes the store's
  // file lock, so none is lost from the chain and pack merges (more than 32
  // packs here) never pull a pack from under the other instance.
  constexpr int kEach = 20;
  auto a = open();
  auto b = open();
  auto run = [](Filesystem* fs, const std::string& prefix, std::vector<std::string>* errors) {
    for (int i = 0; i < kEach; ++i) {
      Status w =
          fs->write(prefix + std::to_string(i) + ".txt", prefix + std::to_string(i)).status();
      auto snap = w.ok() ? fs->snapshot() : Result<FilesystemSnapshot>(w);
      if (!snap.ok()) errors->push_back(std::string(snap.status().message()));
    }
  };
  std::vector<std::string> errors_a, errors_b;
  std::thread ta(run, a.get(), "a", &errors_a);
  std::thread tb(run, b.get(), "b", &errors_b);
  ta.join();
  tb.join();
  EXPECT_TRUE(errors_a.empty()) << errors_a.front();
  EXPECT_TRUE(errors_b.empty()) << errors_b.front();
  auto fresh = open();
  auto list = fresh->snapshots();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 2u * kEach);
  ASSERT_TRUE(fresh->restore(list->back()).ok());
  for (int i = 0; i < kEach; ++i) {
    EXPECT_TRUE(fresh->exists("a" + std::to_string(i) + ".txt")) << i;
    EXPECT_TRUE(fresh->exists("b" + std::to_string(i) + ".txt")) << i;
  }
}

TEST_F(SnapshotPacks, StoresFromBeforeTheChainStillListAndRestore) {
  FilesystemSnapshot old_snap;
  {
    auto fs = open();
    ASSERT_TRUE(fs->write("a.txt", "old").ok());
    auto s = fs->snapshot("old");
    ASSERT_TRUE(s.ok()) << s.status();
    old_snap = *s;
  }
  // Make the store look like an earlier version's: one ref per snapshot and
  // refs/weft/head, no refs/weft/log.
  {
    git_repository* repo = nullptr;
    ASSERT_EQ(git_repository_open_bare(&repo, git_dir().c_str()), 0);
    git_oid id;
    ASSERT_EQ(git_oid_fromstr(&id, old_snap.commit_ref.c_str()), 0);
    git_reference* ref = nullptr;
    std::string name = "refs/weft/snapshots/" + old_snap.snapshot_id;
    ASSERT_EQ(git_reference_create(&ref, repo, name.c_str(), &id, 1, nullptr), 0);
    git_reference_free(ref);
    ASSERT_EQ(git_reference_create(&ref, repo, "refs/weft/head", &id, 1, nullptr), 0);
    git_reference_free(ref);
    ASSERT_EQ(git_reference_lookup(&ref, repo, "refs/weft/log"), 0);
    ASSERT_EQ(git_reference_delete(ref), 0);
    git_reference_free(ref);
    git_repository_free(repo);
  }
  auto fs = open();
  auto listed = fs->snapshots();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].commit_ref, old_snap.commit_ref);
  ASSERT_TRUE(fs->write("a.txt", "new").ok());
  auto fresh = fs->snapshot("new");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  listed = fs->snapshots();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);  // listed once, although both the chain and its ref name it
  EXPECT_EQ((*listed)[0].tag, "old");
  EXPECT_EQ((*listed)[1].tag, "new");
  ASSERT_TRUE(fs->restore(old_snap).ok());
  EXPECT_EQ(fs->read("a.txt")->content, "old");
}

}  // namespace
}  // namespace weft::fs::testing
