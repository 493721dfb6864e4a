// UndoManager: undo/redo of one Doc's own local changes, transformed over
// concurrent remote changes (remote edits are never undone).
//
// Thread safety: as the Doc it manages (one thread at a time).
#ifndef WEFT_CRDT_UNDO_H_
#define WEFT_CRDT_UNDO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weft/crdt/doc.h"

namespace weft::crdt {

class UndoManager {
 public:
  // Tracks local commits of `doc` made after construction. `doc` must outlive
  // the manager.
  explicit UndoManager(Doc& doc);
  ~UndoManager();
  UndoManager(const UndoManager&) = delete;
  UndoManager& operator=(const UndoManager&) = delete;

  // Undoes the latest undo step; returns false when there is none.
  // Errors: kFailedPrecondition while the doc is detached.
  Result<bool> undo();
  // Redoes the latest undone step; false when there is none.
  Result<bool> redo();
  bool can_undo() const;
  bool can_redo() const;
  size_t undo_count() const;
  size_t redo_count() const;

  // Commits closer than `ms` milliseconds merge into one undo step (default 0).
  void set_merge_interval(int64_t ms);
  // Keeps at most `steps` undo steps (default 100).
  void set_max_undo_steps(size_t steps);
  // Commits whose origin starts with `prefix` are not recorded.
  void add_exclude_origin_prefix(std::string_view prefix);
  // Once any include prefix is set, only commits whose origin starts with one
  // of them are recorded (exclusions still apply). Unrecorded local commits
  // are never undone; undo transforms over them like over remote changes.
  void add_include_origin_prefix(std::string_view prefix);
  // Everything committed between group_start and group_end is one step.
  // Errors: kFailedPrecondition when a group is already open.
  Status group_start();
  void group_end();
  // Forgets all steps.
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::crdt

#endif  // WEFT_CRDT_UNDO_H_
