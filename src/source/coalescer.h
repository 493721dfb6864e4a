// Coalescer: turns the Watcher's stream of per-path events (created, changed,
// deleted, moved from/to by cookie) into batches of FileChange, holding each
// path until it has been quiet for `quiet` (at most `max_delay` after its
// first event). A file being written (written() without a later closed())
// is held longer: until `quiet` after its close, at most `max_open_delay`
// after its first event, so a slow rewrite (truncate ... write ... close) is
// one change of the finished file, and a file kept open (a log) is still
// told about now and then. One entry per path tells the net effect since the
// path's window began, so a write burst is one kChanged, and a file created
// in the window (a temp file) then renamed over "x" is one kChanged of "x"
// with nothing about the temp file.
//
// A rename of a path that existed before its window is kept as a kRenamed
// at the place it happened in the stream; the destination's later changes
// come after it, and so do pending changes under a renamed directory (moved
// to the new name). So a receiver that applies a batch in order (kRenamed
// moves what it knows of `from` to `path`, replacing what `path` held;
// kChanged/kCreated read the disk; kDeleted forgets) stays right.
//
// Order: a batch is always a prefix, in order of first appearance, of what is
// pending: a path that is due takes every older one with it, except a file
// still being written, which stays pending in its place. That is safe
// because such an entry only says "read this file": every later event on
// its path, or a rename or loss of a directory above it, goes through the
// entry itself (moves it, fixes it in place, or drops it).
//
// Memory: at most `max_pending` pending paths and renames; past that they are
// all dropped for one kRescan.
//
// Thread safety: none; owned by the watcher thread. Pure logic (no I/O), so
// it is tested with made-up times.
#ifndef WEFT_SRC_SOURCE_COALESCER_H_
#define WEFT_SRC_SOURCE_COALESCER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/source/watcher.h"

namespace weft::source::internal {

class Coalescer {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  Coalescer(Clock::duration quiet, Clock::duration max_delay, Clock::duration max_open_delay,
            size_t max_pending);

  void created(const std::string& path, bool is_dir, TimePoint now);
  // Content or metadata changed (IN_ATTRIB): held only for the quiet period.
  void changed(const std::string& path, bool is_dir, TimePoint now);
  // A file's content was written or truncated (IN_MODIFY): it is held until
  // closed() (or max_open_delay).
  void written(const std::string& path, TimePoint now);
  // A writer closed the file (IN_CLOSE_WRITE): due `quiet` from now.
  void closed(const std::string& path, TimePoint now);
  void deleted(const std::string& path, bool is_dir, TimePoint now);
  // `path` left by a rename; moved_to with the same cookie completes it.
  void moved_from(const std::string& path, bool is_dir, uint32_t cookie, TimePoint now);
  // True when it completes a rename begun by moved_from (for a directory,
  // pending entries under the old name move under the new one); false when
  // the cookie is unknown: `path` was moved in from outside (kCreated).
  bool moved_to(const std::string& path, bool is_dir, uint32_t cookie, TimePoint now);
  // Drops everything pending for one kRescan, due at once.
  void rescan(TimePoint now);

  struct Due {
    std::vector<FileChange> changes;
    // Cookies of moved_from calls that will never be paired (moved out of the
    // root, or dropped by a rescan).
    std::vector<uint32_t> moved_out;
  };
  // The batch whose time has come (empty when none), removed from pending.
  // A moved_from still unpaired in it counts as moved out (kDeleted).
  Due take_due(TimePoint now);

  // When take_due will next have something; nullopt when nothing is pending.
  std::optional<TimePoint> next_deadline() const;
  // Pending paths and renames.
  size_t pending() const { return order_.size() + (rescan_ ? 1 : 0); }

 private:
  enum class Before : uint8_t { kNo, kYes, kUnknown };  // did the path exist when its window began
  struct Entry {
    uint64_t id = 0;   // stable while pending (cookies refer to it)
    uint64_t seq = 0;  // place in order_
    TimePoint first, last;
    Before before = Before::kYes;
    bool exists = true;
    bool is_dir = false;
    bool fresh_content = false;  // what is there now was made in the window
    bool modified = false;       // content changed (own, or carried by a rename)
    bool awaiting = false;       // moved_from seen, moved_to not yet
    bool open = false;           // written, not closed since
    bool was_open = false;       // a write was closed in the window, at `closed_at`
    TimePoint closed_at;
    uint32_t cookie = 0;
  };
  struct Carry {  // what a moved_from took away, until its moved_to
    uint64_t source_id = 0;
    bool original = false;  // the source's content from before its window
    bool modified = false;
    bool is_dir = false;
    bool fresh = false;  // a directory made in the window
    bool open = false;   // a file still being written
  };
  struct Slot {  // one place in the order: an entry, or renames already fixed
    bool is_sealed = false;
    std::string path;                // the entry's key
    std::vector<FileChange> sealed;  // is_sealed
    TimePoint due;                   // is_sealed
  };

  // The entry for `path`; a new one says the path existed as `before` tells.
  Entry& touch(const std::string& path, Before before, TimePoint now);
  // touch() for a path that gets content; first settles a pending moved_from
  // and fixes the loss of a directory that was there.
  Entry& touch_for_content(const std::string& path, Before before, TimePoint now);
  void seal(std::vector<FileChange> changes, TimePoint now);
  // Moves `e` to the end of the order: what it says now happened last.
  void resequence(const std::string& path, Entry& e);
  // An awaiting moved_from of `e` is never going to be paired.
  void expire(Entry& e);
  // Fixes an entry's changes at its place in the order and forgets the entry.
  void freeze(const std::string& path);
  void drop(const std::string& path);
  // Freezes every pending entry under directory `path` (which went away).
  void freeze_children(const std::string& path);
  // Moves pending entries under `from`/ to `to`/, after everything so far.
  void rekey_children(const std::string& from, const std::string& to);
  void check_bound(TimePoint now);
  TimePoint deadline(const Entry& e) const;
  // An entry for a file still being written, not yet at max_open_delay.
  bool held(const Entry& e, TimePoint now) const { return e.open && deadline(e) > now; }
  void emit(const std::string& path, const Entry& e, std::vector<FileChange>* out) const;

  Clock::duration quiet_, max_delay_, max_open_delay_;
  size_t max_pending_;
  uint64_t next_id_ = 1, next_seq_ = 1;
  std::map<std::string, Entry> entries_;  // by path (prefix ranges for re-keying)
  std::map<uint64_t, Slot> order_;        // by seq
  std::unordered_map<uint64_t, std::string> by_id_;
  std::unordered_map<uint32_t, Carry> cookies_;
  std::vector<uint32_t> moved_out_;
  bool rescan_ = false;
  TimePoint rescan_at_;
};

}  // namespace weft::source::internal

#endif  // WEFT_SRC_SOURCE_COALESCER_H_
