// A file block's history as the tools show it: the changes, diffs between
// versions, rollback, each author's undo and redo, and fs_status.
#include <algorithm>

#include "kernel/kernel_impl.h"

namespace weft::kernel {

namespace {

// The entry of a file that has a block, loaded and reconciled; a clear error
// for a path that is not a text file.
Result<std::shared_ptr<FileEntry>> block_entry(Kernel::Impl& k, const std::string& path,
                                               std::unique_lock<std::mutex>& lock) {
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(path));
  lock = std::unique_lock(e->mu);
  WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
  Status synced = k.sync_from_disk(*e);
  if (!synced.ok() && synced.code() != StatusCode::kFailedPrecondition) return synced;
  if (!e->block) {
    if (!synced.ok()) return synced;
    WEFT_ASSIGN_OR_RETURN(Kernel::Impl::FileText file, k.read_file(path));
    if (file.not_text == "missing") return not_found("'" + path + "' does not exist");
    return failed_precondition("'" + path + "' is not a text file (" + file.not_text +
                               "): it has no block and no history");
  }
  return e;
}

}  // namespace

void Kernel::Impl::record_undo(FileEntry& e, const std::string& author,
                               const source::ChangeResult& change, bool from_undo_or_redo) {
  UndoStacks& stacks = e.undo[author];
  stacks.undo.push_back({change.before, change.after});
  if (stacks.undo.size() > kMaxUndoEntries) stacks.undo.erase(stacks.undo.begin());
  if (!from_undo_or_redo) stacks.redo.clear();
}

Result<std::vector<source::FileHistoryEntry>> Kernel::history(std::string_view path,
                                                              size_t limit) {
  std::unique_lock<std::mutex> lock;
  WEFT_ASSIGN_OR_RETURN(auto e, block_entry(*impl_, std::string(path), lock));
  return e->block->history(limit);
}

Result<std::string> Kernel::diff(std::string_view path, std::optional<std::string> from,
                                 std::optional<std::string> to) {
  std::unique_lock<std::mutex> lock;
  WEFT_ASSIGN_OR_RETURN(auto e, block_entry(*impl_, std::string(path), lock));
  std::string to_version = to.value_or(e->block->version());
  std::string from_version;
  if (from) {
    from_version = *from;
  } else {
    WEFT_ASSIGN_OR_RETURN(from_version, e->block->previous_version(to_version));
  }
  return e->block->diff(from_version, to_version, path);
}

Result<ChangeOutcome> Kernel::rollback(std::string_view path_view, std::string_view version,
                                       const source::Attribution& who) {
  Impl& k = *impl_;
  std::string path(path_view);
  std::string target;
  {
    std::unique_lock<std::mutex> lock;
    WEFT_ASSIGN_OR_RETURN(auto e, block_entry(k, path, lock));
    WEFT_ASSIGN_OR_RETURN(target, e->block->text_at(version));
  }
  // Through change_text: the rules and the approval queue apply as to any change.
  return change_text(path, who, source::FileOp::kOverwrite,
                     [&](const std::optional<std::string>&) -> Result<std::string> {
                       return target;
                     });
}

namespace {

enum class UndoDirection { kUndo, kRedo };

// The newest step of who's undo (or redo) stack on `e` (locked) is a delete
// of the file: undo writes the file back with the block's text, redo
// deletes it again. The rules decide as for a create / a delete.
Result<ChangeOutcome> undo_or_redo_delete(Kernel::Impl& k, FileEntry& e,
                                          const source::Attribution& who, bool undo) {
  UndoStacks& stacks = e.undo[who.origin];
  auto& from = undo ? stacks.undo : stacks.redo;
  auto& to = undo ? stacks.redo : stacks.undo;
  const source::FileOp op = undo ? source::FileOp::kCreate : source::FileOp::kDelete;
  if (undo && !e.deleted) {
    // Someone wrote the file again since: there is nothing to bring back, and
    // a redo would delete their file.
    from.pop_back();
    WEFT_RETURN_IF_ERROR(k.persist(e));
    return failed_precondition("'" + e.path + "' exists again (written since " + who.origin +
                               " deleted it), so there is nothing to restore; that undo step "
                               "is dropped: undo again for your earlier changes, or "
                               "block_rollback to a version from block_history");
  }
  auto d = decision_for(who, k.current_rules()->decide(e.path, op));
  if (source::is_configuration_path(e.path)) d.decision = doc::PermissionDecision::kDenied;
  if (d.decision != doc::PermissionDecision::kAllowed) {
    return permission_denied(describe_decision(d, e.path, op) +
                             (d.decision == doc::PermissionDecision::kNeedsApproval
                                  ? undo ? "; ask for it with fs_rollback instead"
                                         : "; ask for it with fs_delete instead"
                                  : ""));
  }
  UndoStep step = from.back();
  ChangeOutcome out;
  out.applied = true;
  if (undo) {
    // The block kept the text the file had when it was deleted.
    out.created = true;
    out.new_text = e.block->text();
    from.pop_back();
    to.push_back(step);
    Status written = k.write_block_to_disk(e);
    if (!written.ok()) {
      to.pop_back();
      from.push_back(step);
      return written;
    }
  } else {
    out.old_text = e.block->text();
    out.removed = true;
    if (!e.deleted) WEFT_RETURN_IF_ERROR(k.fs->remove(e.path, false));
    from.pop_back();
    to.push_back({step.before, e.block->version()});
    e.deleted = true;
    e.block->mark_synced(source::DiskState{});
    WEFT_RETURN_IF_ERROR(k.persist(e));
  }
  out.version = e.block->version();
  k.notify(e, who.origin);
  return out;
}

Result<ChangeOutcome> undo_or_redo(Kernel::Impl& k, const std::string& path,
                                   const source::Attribution& who, UndoDirection direction) {
  std::unique_lock<std::mutex> lock;
  WEFT_ASSIGN_OR_RETURN(auto e, block_entry(k, path, lock));
  if (!e->frozen.empty()) {
    return failed_precondition("'" + path + "' is frozen (" + e->frozen + ")");
  }
  UndoStacks& stacks = e->undo[who.origin];
  auto& from = direction == UndoDirection::kUndo ? stacks.undo : stacks.redo;
  if (from.empty()) {
    return failed_precondition(std::string("nothing to ") +
                               (direction == UndoDirection::kUndo ? "undo" : "redo") + ": " +
                               who.origin + " has no " +
                               (direction == UndoDirection::kUndo ? "change" : "undone change") +
                               " to '" + path + "' left in this kernel's log");
  }
  UndoStep step = from.back();
  if (step.before == kFileDeleteStep) {
    return undo_or_redo_delete(k, *e, who, direction == UndoDirection::kUndo);
  }
  // Checked after "nothing to undo", so that answer does not hide behind a rule.
  auto d = decision_for(who, k.current_rules()->decide(path, source::FileOp::kOverwrite));
  if (d.decision != doc::PermissionDecision::kAllowed) {
    return permission_denied(describe_decision(d, path, source::FileOp::kOverwrite) +
                             (d.decision == doc::PermissionDecision::kNeedsApproval
                                  ? "; ask for the change with fs_rollback instead"
                                  : ""));
  }
  ChangeOutcome out;
  out.old_text = e->block->text();
  WEFT_ASSIGN_OR_RETURN(source::ChangeResult change,
                        e->block->revert_change(step.before, step.after, who));
  from.pop_back();
  // The inverse goes on the other stack, so redo undoes the undo.
  auto& to = direction == UndoDirection::kUndo ? stacks.redo : stacks.undo;
  if (change.changed) to.push_back({change.before, change.after});
  WEFT_RETURN_IF_ERROR(k.persist(*e));
  if (change.changed) WEFT_RETURN_IF_ERROR(k.write_block_to_disk(*e));
  out.applied = true;
  out.version = e->block->version();
  out.new_text = e->block->text();
  if (change.changed) k.notify(*e, who.origin);
  return out;
}

}  // namespace

Result<ChangeOutcome> Kernel::undo(std::string_view path, const source::Attribution& who) {
  return undo_or_redo(*impl_, std::string(path), who, UndoDirection::kUndo);
}

Result<ChangeOutcome> Kernel::redo(std::string_view path, const source::Attribution& who) {
  return undo_or_redo(*impl_, std::string(path), who, UndoDirection::kRedo);
}

Result<std::vector<FileStatus>> Kernel::status(std::optional<std::string> path) {
  Impl& k = *impl_;
  std::string dir = path.value_or(".");
  auto rules = k.current_rules();
  std::vector<FileStatus> out;
  for (auto& e : k.entries_under(dir)) {
    std::lock_guard lock(e->mu);
    if (e->store_id.empty() && !e->block) continue;
    FileStatus s;
    s.path = e->path;
    s.is_block = true;
    s.frozen = e->frozen;
    s.deleted = e->deleted;
    s.permission = rules->permission_for(e->path);
    const source::DiskState& known = e->block ? e->block->disk() : e->disk;
    bool is_dir = false;
    auto now = k.stat_file(e->path, &is_dir);
    s.disk_ahead = !now.ok() || (!known.same_stat(*now) && !(now->size < 0 && e->deleted));
    if (e->block) {
      s.dirty = e->block->ahead_of_disk();
      s.version = e->block->version();
    } else {
      s.version = e->synced_version;
    }
    s.pending_approvals = k.pending_for(e->path);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const FileStatus& a, const FileStatus& b) { return a.path < b.path; });
  if (path && out.empty()) {
    // A file without a block: say what it is.
    bool is_dir = false;
    WEFT_ASSIGN_OR_RETURN(source::DiskState st, k.stat_file(*path, &is_dir));
    if (st.size < 0 && !is_dir) return not_found("'" + *path + "' does not exist");
    if (!is_dir) {
      FileStatus s;
      s.path = *path;
      s.permission = rules->permission_for(*path);
      s.pending_approvals = k.pending_for(*path);
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace weft::kernel
