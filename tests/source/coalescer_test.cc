#include "source/coalescer.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "source/change_text.h"

namespace weft::source::internal {
namespace {

using Kind = FileChange::Kind;
using std::chrono::milliseconds;
using TimePoint = Coalescer::TimePoint;

const TimePoint kT0 = TimePoint() + std::chrono::hours(1);
TimePoint at(int ms) { return kT0 + milliseconds(ms); }

using weft::source::testing::show;

Coalescer make() {
  return Coalescer(milliseconds(5), milliseconds(50), milliseconds(1000), 100000);
}

TEST(CoalescerTest, HoldsUntilQuietThenDelivers) {
  Coalescer c = make();
  c.created("a", false, at(0));
  c.changed("a", false, at(1));
  EXPECT_TRUE(c.take_due(at(5)).changes.empty());  // quiet since 1 ms: due at 6
  ASSERT_TRUE(c.next_deadline().has_value());
  EXPECT_EQ(*c.next_deadline(), at(6));
  EXPECT_EQ(show(c.take_due(at(6)).changes), "created a; ");
  EXPECT_EQ(c.pending(), 0u);
  EXPECT_FALSE(c.next_deadline().has_value());
}

TEST(CoalescerTest, BurstOfWritesIsOneChangeAndMaxDelayBoundsIt) {
  Coalescer c = make();
  int t = 0;
  for (; t < 45; t += 3) c.changed("log", false, at(t));
  EXPECT_TRUE(c.take_due(at(t)).changes.empty());
  c.changed("log", false, at(48));
  // Still written every 3 ms, but 50 ms after the first event it goes out.
  EXPECT_EQ(show(c.take_due(at(50)).changes), "changed log; ");
}

TEST(CoalescerTest, EditorSaveIsOneChangeOfTheTarget) {
  Coalescer c = make();
  c.created("x.tmp", false, at(0));
  c.changed("x.tmp", false, at(0));
  c.moved_from("x.tmp", false, 7, at(1));
  EXPECT_TRUE(c.moved_to("x", false, 7, at(1)));
  EXPECT_EQ(show(c.take_due(at(100)).changes), "changed x; ");
}

TEST(CoalescerTest, RenameOfAnExistingFile) {
  Coalescer c = make();
  c.moved_from("a", false, 3, at(0));
  EXPECT_TRUE(c.moved_to("b", false, 3, at(0)));
  EXPECT_EQ(show(c.take_due(at(100)).changes), "renamed b <- a; ");
}

TEST(CoalescerTest, ModifiedThenRenamedGivesRenameThenChange) {
  Coalescer c = make();
  c.changed("a", false, at(0));
  c.moved_from("a", false, 3, at(1));
  c.moved_to("b", false, 3, at(1));
  EXPECT_EQ(show(c.take_due(at(100)).changes), "renamed b <- a; changed b; ");
}

TEST(CoalescerTest, UnpairedMovesAreDeletedAndCreated) {
  Coalescer c = make();
  c.moved_from("out", false, 9, at(0));
  EXPECT_FALSE(c.moved_to("in", false, 10, at(0)));
  auto due = c.take_due(at(100));
  EXPECT_EQ(show(due.changes), "deleted out; created in; ");
  EXPECT_EQ(due.moved_out, std::vector<uint32_t>{9});
}

TEST(CoalescerTest, TempFileCreatedAndDeletedSaysNothing) {
  Coalescer c = make();
  c.created("t", false, at(0));
  c.deleted("t", false, at(1));
  c.created("u", false, at(1));
  c.moved_from("u", false, 4, at(2));  // moved out before anyone heard of it
  auto due = c.take_due(at(100));
  EXPECT_TRUE(due.changes.empty()) << show(due.changes);
  EXPECT_EQ(due.moved_out, std::vector<uint32_t>{4});
}

TEST(CoalescerTest, DeletedAndRecreatedIsAChange) {
  Coalescer c = make();
  c.deleted("f", false, at(0));
  c.created("f", false, at(1));
  EXPECT_EQ(show(c.take_due(at(100)).changes), "changed f; ");
}

TEST(CoalescerTest, DirectoryRenameMovesPendingChildrenAfterIt) {
  Coalescer c = make();
  c.changed("d/f", false, at(0));
  c.deleted("d/g", false, at(0));
  c.moved_from("d", true, 5, at(1));
  c.moved_to("e", true, 5, at(1));
  c.changed("e/h", false, at(2));
  EXPECT_EQ(show(c.take_due(at(100)).changes),
            "renamed e <- d/; changed e/f; deleted e/g; changed e/h; ");
}

TEST(CoalescerTest, NewDirectoryRenamedIsCreatedUnderTheNewName) {
  Coalescer c = make();
  c.created("d", true, at(0));
  c.created("d/f", false, at(0));
  c.moved_from("d", true, 5, at(1));
  c.moved_to("e", true, 5, at(1));
  // The rename is kept (a receiver may know paths under "d" by renames into
  // it), then "e" and its file are new.
  EXPECT_EQ(show(c.take_due(at(100)).changes), "renamed e <- d/; created e/; created e/f; ");
}

TEST(CoalescerTest, ReusedNameComesAfterTheRenameThatFreedIt) {
  // vim-style: rename x to x~, write a new x, delete x~.
  Coalescer c = make();
  c.moved_from("x", false, 1, at(0));
  c.moved_to("x~", false, 1, at(0));
  c.created("x", false, at(1));
  c.deleted("x~", false, at(2));
  EXPECT_EQ(show(c.take_due(at(100)).changes), "renamed x~ <- x; deleted x~; created x; ");
}

TEST(CoalescerTest, DueEntryTakesOlderOnesAlongInOrder) {
  Coalescer c = make();
  c.changed("slow", false, at(0));
  c.changed("quick", false, at(1));
  for (int t = 2; t < 8; ++t) c.changed("slow", false, at(t));
  // "quick" is due at 6; "slow" (older) is not quiet but goes first with it.
  EXPECT_EQ(show(c.take_due(at(6)).changes), "changed slow; changed quick; ");
}

TEST(CoalescerTest, PendingBoundDropsEverythingForOneRescan) {
  Coalescer c(milliseconds(5), milliseconds(50), milliseconds(1000), 10);
  c.moved_from("gone", false, 2, at(0));
  for (int i = 0; i < 25; ++i) c.created(std::string("f").append(std::to_string(i)), false, at(0));
  EXPECT_LE(c.pending(), 11u);
  auto due = c.take_due(at(0));
  ASSERT_FALSE(due.changes.empty());
  EXPECT_EQ(due.changes[0].kind, Kind::kRescan);
  EXPECT_EQ(due.moved_out, std::vector<uint32_t>{2});
  for (size_t i = 1; i < due.changes.size(); ++i) EXPECT_NE(due.changes[i].kind, Kind::kRescan);
}

TEST(CoalescerTest, RescanComesFirstAndOnce) {
  Coalescer c = make();
  c.changed("a", false, at(0));
  c.rescan(at(1));
  c.rescan(at(2));
  c.changed("b", false, at(3));
  auto due = c.take_due(at(100));
  EXPECT_EQ(show(due.changes), "rescan ; changed b; ");
}

TEST(CoalescerTest, WriteAndCloseIsDueAQuietPeriodAfterTheClose) {
  Coalescer c = make();
  c.written("f", at(0));
  c.closed("f", at(1));
  ASSERT_TRUE(c.next_deadline().has_value());
  EXPECT_EQ(*c.next_deadline(), at(6));
  EXPECT_TRUE(c.take_due(at(5)).changes.empty());
  EXPECT_EQ(show(c.take_due(at(6)).changes), "changed f; ");
}

TEST(CoalescerTest, SlowRewriteIsHeldUntilClosed) {
  Coalescer c = make();
  c.written("f", at(0));  // open with O_TRUNC: the file is empty now
  ASSERT_TRUE(c.next_deadline().has_value());
  EXPECT_EQ(*c.next_deadline(), at(1000));
  EXPECT_TRUE(c.take_due(at(5)).changes.empty());
  EXPECT_TRUE(c.take_due(at(60)).changes.empty());  // past max_delay too
  c.written("f", at(200));
  EXPECT_TRUE(c.take_due(at(300)).changes.empty());
  c.closed("f", at(300));
  EXPECT_EQ(*c.next_deadline(), at(305));
  EXPECT_TRUE(c.take_due(at(304)).changes.empty());
  EXPECT_EQ(show(c.take_due(at(305)).changes), "changed f; ");
  EXPECT_EQ(c.pending(), 0u);
}

TEST(CoalescerTest, NewFileWrittenSlowlyIsOneCreated) {
  Coalescer c = make();
  c.created("n", false, at(0));
  c.written("n", at(0));
  EXPECT_TRUE(c.take_due(at(100)).changes.empty());
  c.written("n", at(150));
  c.closed("n", at(150));
  EXPECT_EQ(show(c.take_due(at(155)).changes), "created n; ");
}

TEST(CoalescerTest, FileKeptOpenIsReportedOncePerMaxOpenDelay) {
  Coalescer c = make();
  std::vector<int> delivered;
  for (int t = 0; t <= 2000; t += 50) {
    c.written("log", at(t));
    if (!c.take_due(at(t)).changes.empty()) delivered.push_back(t);
  }
  for (int t = 2001; t <= 3100; ++t) {
    if (!c.take_due(at(t)).changes.empty()) delivered.push_back(t);
  }
  // First event at 0: out at 1000; the next window starts at 1050.
  EXPECT_EQ(delivered, (std::vector<int>{1000, 2050}));
  EXPECT_EQ(c.pending(), 0u);
}

TEST(CoalescerTest, CloseAfterMaxOpenDelayIsDueAtOnce) {
  Coalescer c = make();
  c.written("f", at(0));
  c.closed("f", at(998));
  EXPECT_EQ(*c.next_deadline(), at(1000));  // not 1003
  EXPECT_EQ(show(c.take_due(at(1000)).changes), "changed f; ");
}

TEST(CoalescerTest, AttribOnlyKeepsMaxDelay) {
  Coalescer c = make();
  for (int t = 0; t < 49; t += 3) c.changed("a", false, at(t));
  EXPECT_EQ(*c.next_deadline(), at(50));
  EXPECT_EQ(show(c.take_due(at(50)).changes), "changed a; ");
}

TEST(CoalescerTest, FileBeingWrittenIsNotTakenAlongByNewerOnes) {
  Coalescer c = make();
  c.written("slow", at(0));
  c.written("quick", at(1));
  c.closed("quick", at(1));
  c.deleted("gone", false, at(2));
  EXPECT_EQ(show(c.take_due(at(7)).changes), "changed quick; deleted gone; ");
  EXPECT_EQ(c.pending(), 1u);
  c.closed("slow", at(100));
  EXPECT_EQ(show(c.take_due(at(105)).changes), "changed slow; ");
}

TEST(CoalescerTest, FileRenamedWhileWrittenIsHeldUntilClosed) {
  Coalescer c = make();
  c.created("x.tmp", false, at(0));
  c.written("x.tmp", at(0));
  c.moved_from("x.tmp", false, 7, at(10));
  EXPECT_TRUE(c.moved_to("x", false, 7, at(10)));
  EXPECT_TRUE(c.take_due(at(100)).changes.empty());
  c.closed("x", at(120));
  EXPECT_EQ(show(c.take_due(at(125)).changes), "changed x; ");
}

TEST(CoalescerTest, FileDeletedWhileWrittenIsNotHeld) {
  Coalescer c = make();
  c.written("f", at(0));
  c.deleted("f", false, at(10));
  EXPECT_EQ(show(c.take_due(at(15)).changes), "deleted f; ");
}

TEST(CoalescerTest, DirectoryMovedOutAboveAFileBeingWritten) {
  Coalescer c = make();
  c.written("d/f", at(0));
  c.moved_from("d", true, 5, at(1));
  // The directory's loss is told when due; the file's entry (fixed where it
  // was) follows, and says only "read d/f", which is gone.
  auto due = c.take_due(at(6));
  EXPECT_EQ(due.moved_out, std::vector<uint32_t>{5});
  std::string all = show(due.changes) + show(c.take_due(at(1000)).changes);
  EXPECT_EQ(all, "deleted d/; changed d/f; ");
  EXPECT_EQ(c.pending(), 0u);
}

// ---- Property: a receiver applying every batch in order ends up knowing
// exactly what is on the disk, whatever the events and their timing.

struct Model {
  std::map<std::string, int> files;  // path -> content version
  std::set<std::string> dirs{"A", "B", "C"};
  std::set<std::string> open;  // files a writer has open (written, not closed)
  int version = 0;
};

// Moves the open files under directory `from`/ to `to`/ (or forgets them).
void move_open(std::set<std::string>* open, const std::string& from, const std::string* to) {
  std::set<std::string> moved;
  for (auto it = open->begin(); it != open->end();) {
    if (it->rfind(from + "/", 0) == 0) {
      if (to) moved.insert(*to + it->substr(from.size()));
      it = open->erase(it);
    } else {
      ++it;
    }
  }
  open->insert(moved.begin(), moved.end());
}

// What a receiver knows: file path -> version read from the disk.
void apply(const std::vector<FileChange>& changes, const Model& disk,
           std::map<std::string, int>* known) {
  for (const auto& c : changes) {
    switch (c.kind) {
      case Kind::kCreated:
      case Kind::kChanged:
        // A new directory's paths come as their own changes: not listed.
        if (c.is_dir) {
        } else if (auto it = disk.files.find(c.path); it != disk.files.end()) {
          (*known)[c.path] = it->second;
        } else {
          known->erase(c.path);
        }
        break;
      case Kind::kDeleted:
        known->erase(c.path);
        if (c.is_dir) std::erase_if(*known, [&](const auto& kv) { return kv.first.rfind(c.path + "/", 0) == 0; });
        break;
      case Kind::kRenamed: {
        if (!c.is_dir) {
          RC_ASSERT(known->count(c.from) == 1u);
          (*known)[c.path] = (*known)[c.from];
          known->erase(c.from);
          break;
        }
        std::map<std::string, int> moved;
        std::erase_if(*known, [&](const auto& kv) { return kv.first.rfind(c.path + "/", 0) == 0; });
        for (auto it = known->begin(); it != known->end();) {
          if (it->first.rfind(c.from + "/", 0) == 0) {
            moved[c.path + it->first.substr(c.from.size())] = it->second;
            it = known->erase(it);
          } else {
            ++it;
          }
        }
        known->insert(moved.begin(), moved.end());
        break;
      }
      case Kind::kRescan:
        *known = disk.files;
        break;
    }
  }
}

RC_GTEST_PROP(CoalescerProperty, ReceiverConvergesToTheDisk, ()) {
  Model disk;
  const std::vector<std::string> names = {"x", "y", "z", "x.tmp"};
  // Start with a few files, known to the receiver.
  for (const auto& d : std::vector<std::string>{"", "A/", "B/"}) {
    for (const auto& n : {"x", "y"}) disk.files[d + n] = ++disk.version;
  }
  std::map<std::string, int> known = disk.files;
  Coalescer c(milliseconds(5), milliseconds(50), milliseconds(1000), 100000);
  int now = 0;
  uint32_t cookie = 100;
  const int steps = *rc::gen::inRange(1, 60);
  for (int step = 0; step < steps; ++step) {
    now += *rc::gen::inRange(0, 8);
    std::vector<std::string> dir_list(disk.dirs.begin(), disk.dirs.end());
    dir_list.push_back("");
    auto pick_path = [&] {
      std::string d = *rc::gen::elementOf(dir_list);
      return (d.empty() ? "" : d + "/") + *rc::gen::elementOf(names);
    };
    const int op = *rc::gen::inRange(0, 12);
    std::string p = pick_path();
    bool is_file = disk.files.count(p) == 1;
    switch (op) {
      case 0:  // create or write, and close
        RC_LOG() << now << " write+close " << p << "\n";
        if (!is_file) c.created(p, false, at(now));
        disk.files[p] = ++disk.version;
        c.written(p, at(now));
        c.closed(p, at(now));
        break;
      case 1:  // content changed without a write (mmap) or metadata
        RC_LOG() << now << " touch " << p << "\n";
        if (!is_file) c.created(p, false, at(now));
        disk.files[p] = ++disk.version;
        c.changed(p, false, at(now));
        break;
      case 10:  // create or write, left open
        RC_LOG() << now << " write-open " << p << "\n";
        if (!is_file) c.created(p, false, at(now));
        disk.files[p] = ++disk.version;
        c.written(p, at(now));
        disk.open.insert(p);
        break;
      case 11:  // a writer closes its file
        if (disk.open.empty()) break;
        p = *rc::gen::elementOf(std::vector<std::string>(disk.open.begin(), disk.open.end()));
        RC_LOG() << now << " close " << p << "\n";
        disk.open.erase(p);
        c.closed(p, at(now));
        break;
      case 2:  // delete
        if (is_file) {
          RC_LOG() << now << " rm " << p << "\n";
          disk.files.erase(p);
          disk.open.erase(p);  // the writer's later events are not reported (IN_EXCL_UNLINK)
          c.deleted(p, false, at(now));
        }
        break;
      case 3: {  // rename a file over anything
        std::string q = pick_path();
        if (!is_file || q == p) break;
        disk.files[q] = disk.files[p];
        disk.files.erase(p);
        disk.open.erase(q);
        if (disk.open.erase(p)) disk.open.insert(q);
        RC_LOG() << now << " mv " << p << " " << q << "\n";
        c.moved_from(p, false, ++cookie, at(now));
        c.moved_to(q, false, cookie, at(now));
        break;
      }
      case 4:  // move out of the root
        if (!is_file) break;
        RC_LOG() << now << " mv-out " << p << "\n";
        disk.files.erase(p);
        disk.open.erase(p);
        c.moved_from(p, false, ++cookie, at(now));
        break;
      case 5: {  // rename a directory to a fresh name
        std::string from = *rc::gen::elementOf(std::vector<std::string>(disk.dirs.begin(), disk.dirs.end()));
        std::string to = *rc::gen::elementOf(std::vector<std::string>{"A", "B", "C", "D", "E"});
        if (disk.dirs.count(to)) break;
        RC_LOG() << now << " mv-dir " << from << " " << to << "\n";
        std::map<std::string, int> moved;
        for (auto it = disk.files.begin(); it != disk.files.end();) {
          if (it->first.rfind(from + "/", 0) == 0) {
            moved[to + it->first.substr(from.size())] = it->second;
            it = disk.files.erase(it);
          } else {
            ++it;
          }
        }
        disk.files.insert(moved.begin(), moved.end());
        disk.dirs.erase(from);
        disk.dirs.insert(to);
        move_open(&disk.open, from, &to);
        c.moved_from(from, true, ++cookie, at(now));
        c.moved_to(to, true, cookie, at(now));
        break;
      }
      case 6: {  // create a directory with a file in it
        std::string d = *rc::gen::elementOf(std::vector<std::string>{"D", "E", "F"});
        if (disk.dirs.count(d)) break;
        RC_LOG() << now << " mkdir+write " << d << "/x\n";
        disk.dirs.insert(d);
        c.created(d, true, at(now));
        disk.files[d + "/x"] = ++disk.version;
        c.created(d + "/x", false, at(now));
        break;
      }
      case 8:    // move a directory out of the root
      case 9: {  // or remove it with everything in it
        if (disk.dirs.empty()) break;
        std::string d = *rc::gen::elementOf(std::vector<std::string>(disk.dirs.begin(), disk.dirs.end()));
        RC_LOG() << now << (op == 8 ? " mv-dir-out " : " rm-r ") << d << "\n";
        for (auto it = disk.files.begin(); it != disk.files.end();) {
          if (it->first.rfind(d + "/", 0) == 0) {
            if (op == 9) c.deleted(it->first, false, at(now));
            it = disk.files.erase(it);
          } else {
            ++it;
          }
        }
        disk.dirs.erase(d);
        move_open(&disk.open, d, nullptr);
        if (op == 8) {
          c.moved_from(d, true, ++cookie, at(now));
        } else {
          c.deleted(d, true, at(now));
        }
        break;
      }
      case 7: {  // deliver what is due, reading the disk as it is now
        auto changes = c.take_due(at(now)).changes;
        RC_LOG() << now << " batch: " << show(changes) << "\n";
        apply(changes, disk, &known);
        break;
      }
    }
  }
  auto last = c.take_due(at(now + 2000)).changes;
  RC_LOG() << "last batch: " << show(last) << "\n";
  apply(last, disk, &known);
  RC_ASSERT(c.pending() == 0u);
  RC_ASSERT(known == disk.files);
}

// ---- Property: a file written since it was last told is not told again
// before its writer closes it (unless max_open_delay has passed since its
// first event), and nothing stays pending past its time.
RC_GTEST_PROP(CoalescerProperty, FileBeingWrittenIsHeldButNotForever, ()) {
  constexpr int kQuiet = 5, kMaxOpen = 1000;
  Coalescer c(milliseconds(kQuiet), milliseconds(50), milliseconds(kMaxOpen), 100000);
  struct PathState {
    bool open = false;         // a writer has it open
    bool held = false;         // written since last told, not closed since
    std::optional<int> since;  // first event not yet told
    int last = 0;
  };
  std::map<std::string, PathState> paths;
  int now = 0;
  auto touch = [&](PathState& s) {
    if (!s.since) s.since = now;
    s.last = now;
  };
  const int steps = *rc::gen::inRange(1, 80);
  for (int step = 0; step < steps; ++step) {
    now += *rc::gen::elementOf(std::vector<int>{0, 1, 3, 6, 40, 200, 700});
    const std::string p = *rc::gen::elementOf(std::vector<std::string>{"a", "b", "c"});
    PathState& s = paths[p];
    const int op = *rc::gen::inRange(0, 5);
    switch (op) {
      case 0:
        RC_LOG() << now << " write-open " << p << "\n";
        c.written(p, at(now));
        s.open = s.held = true;
        touch(s);
        break;
      case 1:  // the writer closes it
      case 2:  // or writes once more and closes it
        if (!s.open && op == 1) break;
        RC_LOG() << now << (op == 1 ? " close " : " write+close ") << p << "\n";
        if (op == 2) c.written(p, at(now));
        c.closed(p, at(now));
        s.open = s.held = false;
        touch(s);
        break;
      case 3:
        RC_LOG() << now << " attrib " << p << "\n";
        c.changed(p, false, at(now));
        touch(s);
        break;
      case 4: {
        auto changes = c.take_due(at(now)).changes;
        RC_LOG() << now << " batch: " << show(changes) << "\n";
        for (const auto& change : changes) {
          PathState& told = paths[change.path];
          RC_ASSERT(told.since.has_value());
          RC_ASSERT(!told.held || now >= *told.since + kMaxOpen);
          told.since.reset();
          told.held = false;
        }
        for (const auto& [path, state] : paths) {
          if (!state.since) continue;
          if (state.held) {
            RC_ASSERT(now < *state.since + kMaxOpen);
          } else {
            RC_ASSERT(now < state.last + kQuiet);
          }
        }
        break;
      }
    }
  }
}

}  // namespace
}  // namespace weft::source::internal
