// The kernel's changes to the tree: deleting, moving and copying files and
// directories, with their blocks (a block moves with its file and keeps its
// history; a deleted file's block keeps it too).
#include "kernel/kernel_impl.h"

namespace weft::kernel {

namespace {

// The outcome of a change queued for approval.
ChangeOutcome pending_outcome(const Approval& queued) {
  ChangeOutcome out;
  out.pending_approval = queued.id;
  out.rule = queued.rule;
  return out;
}

// A move or copy a person must approve first, queued.
Result<ChangeOutcome> queue_transfer(Kernel::Impl& k, const source::Attribution& who,
                                     std::string op, const std::string& from,
                                     const std::string& to, bool overwrite, std::string rule) {
  Approval a;
  a.path = from;
  a.target_path = to;
  a.author = who.origin;
  a.what = who.what;
  a.overwrite = overwrite;
  a.rule = std::move(rule);
  a.diff = op + " '" + from + "' to '" + to + "'" + (overwrite ? " (replacing it)" : "") + "\n";
  a.op = std::move(op);
  WEFT_ASSIGN_OR_RETURN(Approval added, k.add_approval(std::move(a)));
  return pending_outcome(added);
}

}  // namespace

Result<ChangeOutcome> Kernel::remove(std::string_view path_view, const source::Attribution& who,
                                     bool recursive) {
  Impl& k = *impl_;
  std::string path(path_view);
  auto rules = k.current_rules();
  bool is_dir = false;
  WEFT_ASSIGN_OR_RETURN(source::DiskState st, k.stat_file(path, &is_dir));
  if (st.size < 0 && !is_dir) return not_found("'" + path + "' does not exist");
  // Every file that would go, checked against the rules first.
  std::vector<std::string> victims;
  if (is_dir) {
    auto listed = k.fs->glob(path == "." ? "**" : path + "/**");
    if (listed.ok()) {
      for (const auto& m : *listed) {
        if (m.is_file) victims.push_back(m.path);
      }
    }
  } else {
    victims.push_back(path);
  }
  ChangeOutcome out;
  source::RuleDecision worst;
  std::string worst_path;
  for (const auto& v : victims) {
    if (source::is_configuration_path(v)) {
      return permission_denied("delete of '" + v + "' is not allowed (weft's own configuration)");
    }
    auto d = decision_for(who, rules->decide(v, source::FileOp::kDelete));
    if (d.decision == doc::PermissionDecision::kDenied) {
      return permission_denied(describe_decision(d, v, source::FileOp::kDelete));
    }
    if (d.decision == doc::PermissionDecision::kNeedsApproval &&
        worst.decision != doc::PermissionDecision::kNeedsApproval) {
      worst = d;
      worst_path = v;
    }
  }
  if (worst.decision == doc::PermissionDecision::kNeedsApproval) {
    Approval a;
    a.path = path;
    a.author = who.origin;
    a.what = who.what;
    a.op = "delete";
    a.rule = describe_decision(worst, worst_path, source::FileOp::kDelete);
    a.diff = is_dir ? "delete the directory '" + path + "' and its " +
                          std::to_string(victims.size()) + " files\n"
                    : "delete '" + path + "'\n";
    if (!is_dir) {
      auto e = k.entry(path);
      if (e.ok()) {
        std::lock_guard lock((*e)->mu);
        if (k.ensure_loaded(**e).ok() && (*e)->block) {
          a.base_version = (*e)->block->version();
          a.diff = path_diff((*e)->block->text(), "", path);
        }
      }
    }
    WEFT_ASSIGN_OR_RETURN(Approval added, k.add_approval(std::move(a)));
    return pending_outcome(added);
  }
  if (is_dir && !recursive) {
    auto listed = k.fs->list(path);
    if (listed.ok() && !listed->empty()) {
      return failed_precondition("'" + path + "' is a directory that is not empty; set recursive");
    }
  }
  WEFT_RETURN_IF_ERROR(k.apply_remove(path, recursive, who.origin));
  out.applied = true;
  out.removed = true;
  return out;
}

Status Kernel::Impl::apply_remove(const std::string& path, bool recursive,
                                  const std::string& undo_author) {
  // Every text file that goes gets its block first (a file no tool touched
  // yet has none): the block keeps its text and history, so undo and
  // rollback can write it back.
  bool is_dir = false;
  WEFT_ASSIGN_OR_RETURN(source::DiskState st, stat_file(path, &is_dir));
  std::vector<std::string> files;
  if (is_dir) {
    auto listed = fs->glob(path == "." ? "**" : path + "/**");
    if (listed.ok()) {
      for (const auto& m : *listed) {
        if (m.is_file) files.push_back(m.path);
      }
    }
  } else if (st.size >= 0) {
    files.push_back(path);
  }
  for (const auto& f : files) {
    if (ignored(f, false)) continue;
    auto e = entry(f);
    if (!e.ok()) continue;
    std::lock_guard lock((*e)->mu);
    Status s = ensure_loaded(**e);
    if (s.ok()) s = sync_from_disk(**e);
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
      log("kernel: '" + f + "' before its delete: " + std::string(s.message()));
    }
  }
  WEFT_RETURN_IF_ERROR(fs->remove(path, recursive));
  for (auto& e : entries_under(path)) {
    std::lock_guard lock(e->mu);
    mark_removed(*e, undo_author);
  }
  return Status();
}

void Kernel::Impl::mark_removed(FileEntry& e, const std::string& undo_author) {
  if (e.store_id.empty() && !e.block) return;
  // Only a file that was there has its delete recorded (an entry under a
  // deleted directory may be deleted already).
  if (!e.deleted && !undo_author.empty() && e.frozen.empty()) {
    std::string version = e.block ? e.block->version() : e.synced_version;
    UndoStacks& stacks = e.undo[undo_author];
    stacks.undo.push_back({std::string(kFileDeleteStep), version});
    if (stacks.undo.size() > kMaxUndoEntries) stacks.undo.erase(stacks.undo.begin());
    stacks.redo.clear();
  }
  e.deleted = true;
  if (e.block) e.block->mark_synced(source::DiskState{});
  Status s = persist(e);
  if (!s.ok()) log("kernel: " + std::string(s.message()));
}

Result<ChangeOutcome> Kernel::move(std::string_view from_view, std::string_view to_view,
                                   const source::Attribution& who, bool overwrite) {
  Impl& k = *impl_;
  std::string from(from_view), to(to_view);
  auto rules = k.current_rules();
  for (const auto& p : {from, to}) {
    if (source::is_configuration_path(p)) {
      return permission_denied("moving '" + from + "' to '" + to + "' is not allowed: '" + p +
                               "' is weft's own configuration");
    }
  }
  source::RuleDecision d = decision_for(who, rules->decide_move(from, to));
  if (d.decision == doc::PermissionDecision::kDenied) {
    return permission_denied(describe_decision(d, from, source::FileOp::kMove) + " (to '" + to +
                             "')");
  }
  if (d.decision == doc::PermissionDecision::kNeedsApproval) {
    return queue_transfer(k, who, "move", from, to, overwrite,
                          describe_decision(d, from, source::FileOp::kMove) + " (to '" + to + "')");
  }
  WEFT_RETURN_IF_ERROR(k.apply_move(from, to, overwrite));
  ChangeOutcome out;
  out.applied = true;
  return out;
}

Status Kernel::Impl::apply_move(const std::string& from, const std::string& to, bool overwrite) {
  // Blocks of the source come up to date first, so nothing on disk is lost.
  auto moving = entries_under(from);
  for (auto& e : moving) {
    std::lock_guard lock(e->mu);
    if (ensure_loaded(*e).ok()) (void)sync_from_disk(*e);
  }
  WEFT_RETURN_IF_ERROR(fs->move(from, to, overwrite));
  for (auto& e : moving) rename_block(e, from, to);
  return Status();
}

void Kernel::Impl::rename_block(const std::shared_ptr<FileEntry>& e, const std::string& from,
                                const std::string& to) {
  std::string old_path, new_path;
  {
    std::lock_guard lock(e->mu);
    old_path = e->path;
    new_path = to + old_path.substr(from.size());
  }
  // A file renamed over one that has a block (an editor's save through a
  // temporary file, `mv -f`) is a new content of that file: its history goes
  // on, and the renamed-away block stays behind, deleted, with its own.
  if (auto target = entry(new_path); target.ok() && target.value() != e) {
    FileEntry& t = **target;
    std::unique_lock target_lock(t.mu);
    if (!t.store_id.empty() || t.block) {
      Status s = ensure_loaded(t);
      if (s.ok()) s = sync_from_disk(t);
      if (!s.ok()) log("kernel: '" + new_path + "': " + std::string(s.message()));
      target_lock.unlock();
      std::unique_lock lock(e->mu);
      if (ensure_loaded(*e).ok()) {
        // A block that only ever held what the disk gave it (an editor's
        // temporary file seen on its own) leaves nothing worth keeping.
        if (e->block && !e->store_id.empty()) {
          auto history = e->block->history(2);
          if (history.size() <= 1 &&
              (history.empty() || history[0].author == source::kDiskOrigin)) {
            Status purged = store->purge_block(e->store_id);
            if (purged.ok()) {
              lock.unlock();
              forget_entry(old_path);
              return;
            }
          }
        }
        Status gone = sync_from_disk(*e);  // the old path is gone: marked deleted
        if (!gone.ok()) log("kernel: '" + old_path + "': " + std::string(gone.message()));
      }
      return;
    }
  }
  {
    std::lock_guard lock(e->mu);
    if (!e->store_id.empty()) {
      store::BlockPatch patch;
      patch.label = file_block_id(new_path);
      auto s = store->update_block(e->store_id, patch);
      if (!s.ok()) log("kernel: " + std::string(s.status().message()));
    }
  }
  forget_entry(new_path);
  rekey_entry(old_path, new_path);
  std::lock_guard lock(e->mu);
  if (ensure_loaded(*e).ok()) {
    Status s = sync_from_disk(*e);
    if (!s.ok()) log("kernel: '" + new_path + "': " + std::string(s.message()));
  }
  Status s = persist(*e);
  if (!s.ok()) log("kernel: " + std::string(s.message()));
}

Result<ChangeOutcome> Kernel::copy(std::string_view from_view, std::string_view to_view,
                                   const source::Attribution& who, bool overwrite) {
  Impl& k = *impl_;
  std::string from(from_view), to(to_view);
  auto rules = k.current_rules();
  if (source::is_configuration_path(to)) {
    return permission_denied("copying to '" + to + "' is not allowed (weft's own configuration)");
  }
  auto d = decision_for(
      who, rules->decide(to, overwrite ? source::FileOp::kOverwrite : source::FileOp::kCreate));
  if (d.decision == doc::PermissionDecision::kDenied) {
    return permission_denied(describe_decision(d, to, source::FileOp::kCreate));
  }
  if (d.decision == doc::PermissionDecision::kNeedsApproval) {
    return queue_transfer(k, who, "copy", from, to, overwrite,
                          describe_decision(d, to, source::FileOp::kCreate));
  }
  WEFT_RETURN_IF_ERROR(k.apply_copy(from, to, overwrite));
  ChangeOutcome out;
  out.applied = true;
  return out;
}

Status Kernel::Impl::apply_copy(const std::string& from, const std::string& to, bool overwrite) {
  WEFT_RETURN_IF_ERROR(fs->copy(from, to, overwrite));
  // The copies get blocks of their own when first touched; an overwritten
  // target's block takes the new content now.
  for (auto& e : entries_under(to)) {
    std::lock_guard lock(e->mu);
    if (ensure_loaded(*e).ok()) (void)sync_from_disk(*e);
  }
  return Status();
}

}  // namespace weft::kernel
