// The kernel and shell commands: the change logs that feed shell_exec's
// incremental snapshots, the watcher flush after a command, the attribution
// of what a command changed on disk (shell:<agent>, the command as the
// message) and the revert of a change the rules forbid.
#include <sys/stat.h>

#include <algorithm>

#include "kernel/kernel_impl.h"

namespace weft::kernel {

std::vector<source::FileChange> Kernel::DiskChangeLog::take() {
  std::lock_guard lock(mu_);
  std::vector<source::FileChange> out;
  out.swap(changes_);
  return out;
}

void Kernel::DiskChangeLog::append(const std::vector<source::FileChange>& changes) {
  std::lock_guard lock(mu_);
  if (!changes_.empty() && changes_.back().kind == source::FileChange::Kind::kRescan &&
      changes_.size() == 1) {
    return;  // already told to compare everything
  }
  if (changes_.size() + changes.size() > kMaxDiskLogChanges) {
    changes_.assign(1, source::FileChange{source::FileChange::Kind::kRescan, "", "", false});
    return;
  }
  changes_.insert(changes_.end(), changes.begin(), changes.end());
}

Kernel::Impl::ShellRun Kernel::Impl::disk_author(std::string what) const {
  std::lock_guard lock(shell_mu);
  if (!shell_runs.empty()) return shell_runs.front();
  ShellRun out;
  out.who = source::Attribution{std::string(source::kDiskOrigin), std::move(what), {}};
  return out;
}

void Kernel::Impl::publish_disk_changes(const std::vector<source::FileChange>& changes) {
  std::vector<std::shared_ptr<DiskChangeLog>> logs;
  {
    std::lock_guard lock(shell_mu);
    auto live = disk_logs.begin();
    for (auto& weak : disk_logs) {
      if (auto log = weak.lock()) {
        logs.push_back(std::move(log));
        *live++ = weak;
      }
    }
    disk_logs.erase(live, disk_logs.end());
  }
  for (auto& log : logs) log->append(changes);
}

std::shared_ptr<Kernel::DiskChangeLog> Kernel::subscribe_disk_changes() {
  auto log = std::make_shared<DiskChangeLog>();
  std::lock_guard lock(impl_->shell_mu);
  impl_->disk_logs.push_back(log);
  return log;
}

bool Kernel::flush_disk_changes(std::chrono::milliseconds timeout) {
  return impl_->watcher && impl_->watcher->flush(timeout);
}

uint64_t Kernel::begin_shell_command(source::Attribution who, std::string undo_author) {
  std::lock_guard lock(impl_->shell_mu);
  uint64_t id = impl_->next_shell_run++;
  impl_->shell_runs.push_back(Impl::ShellRun{id, std::move(who), std::move(undo_author)});
  return id;
}

void Kernel::end_shell_command(uint64_t id) {
  std::lock_guard lock(impl_->shell_mu);
  auto& runs = impl_->shell_runs;
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [&](const Impl::ShellRun& r) { return r.id == id; }),
             runs.end());
}

std::vector<std::string> Kernel::reconcile_paths(const std::vector<std::string>& paths,
                                                 const source::Attribution& who,
                                                 const std::string& undo_author) {
  Impl& k = *impl_;
  std::vector<std::string> problems;
  uint64_t run = begin_shell_command(who, undo_author);
  for (const std::string& path : paths) {
    if (k.ignored(path, false)) continue;
    bool is_dir = false;
    auto st = k.stat_file(path, &is_dir);
    if (st.ok() && is_dir) continue;
    // A path that is gone matters only when the kernel knows it.
    if (st.ok() && st->size < 0 && !k.find_entry(path) &&
        !k.store->get_block(kWorkspaceOwner, file_block_id(path)).ok()) {
      continue;
    }
    auto e = k.entry(path);
    if (!e.ok()) {
      problems.push_back(path + ": " + std::string(e.status().message()));
      continue;
    }
    std::lock_guard lock((*e)->mu);
    Status s = k.ensure_loaded(**e);
    if (s.ok()) s = k.sync_from_disk(**e);
    // Not a regular file (a link, a FIFO): not a block, nothing to reconcile.
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
      problems.push_back(path + ": " + std::string(s.message()));
    }
  }
  end_shell_command(run);
  k.evict_if_needed();
  return problems;
}

Result<ChangeOutcome> Kernel::revert_shell_change(std::string_view path_view,
                                                  ShellChangeKind kind,
                                                  std::string_view shell_origin,
                                                  const source::Attribution& who) {
  Impl& k = *impl_;
  std::string path(path_view);
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(path));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
  Status synced = k.sync_from_disk(*e);
  if (!synced.ok() && synced.code() != StatusCode::kFailedPrecondition) return synced;
  ChangeOutcome out;
  auto cannot = [&](const std::string& why) {
    return failed_precondition("cannot revert the shell's change to '" + path + "': " + why);
  };
  if (!e->block) {
    if (kind == ShellChangeKind::kCreated) {
      // A plain file (binary, too large) the command made: remove it.
      WEFT_RETURN_IF_ERROR(k.fs->remove(path, false));
      out.applied = true;
      return out;
    }
    return cannot("weft has no text of it (not a text file, or never read before)");
  }
  if (!e->frozen.empty()) return cannot("its block is frozen (" + e->frozen + ")");
  auto history = e->block->history(1);
  bool newest_is_shell = !history.empty() && history.front().author == shell_origin;
  switch (kind) {
    case ShellChangeKind::kDeleted: {
      if (!e->deleted) return cannot("the file exists again");
      out.old_text.clear();
      WEFT_RETURN_IF_ERROR(k.write_block_to_disk(*e));
      break;
    }
    case ShellChangeKind::kCreated: {
      out.old_text = e->block->text();
      WEFT_RETURN_IF_ERROR(k.fs->remove(path, false));
      WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));  // marks the block deleted
      break;
    }
    case ShellChangeKind::kModified: {
      if (!newest_is_shell) {
        return cannot("its newest change is not the shell command's (weft had no copy of the "
                      "text before it, or someone changed it since)");
      }
      WEFT_ASSIGN_OR_RETURN(std::string before,
                            e->block->previous_version(history.front().version));
      if (before == "v0") return cannot("weft had no copy of its text before the command");
      out.old_text = e->block->text();
      WEFT_ASSIGN_OR_RETURN(source::ChangeResult change,
                            e->block->revert_change(before, history.front().version, who));
      WEFT_RETURN_IF_ERROR(k.persist(*e));
      WEFT_RETURN_IF_ERROR(k.write_block_to_disk(*e));
      (void)change;
      break;
    }
  }
  out.applied = true;
  out.version = e->block->version();
  out.new_text = e->deleted ? std::string() : e->block->text();
  k.notify(*e, who.origin);
  return out;
}

Result<Approval> Kernel::request_shell_approval(std::string_view path, std::string_view command,
                                                std::string_view cwd,
                                                const source::Attribution& who, std::string rule) {
  Approval a;
  a.path = std::string(path);
  a.author = who.origin;
  a.what = who.what;
  a.op = "shell";
  a.rule = std::move(rule);
  a.proposed_text = std::string(command);
  a.target_path = std::string(cwd);
  a.diff = "$ " + std::string(command) + "\n";
  return impl_->add_approval(std::move(a));
}

void Kernel::set_shell_runner(ShellRunner runner) {
  std::lock_guard lock(impl_->shell_mu);
  impl_->shell_runner = std::move(runner);
}

Status Kernel::Impl::run_approved_shell(const Approval& approval) {
  ShellRunner runner;
  {
    std::lock_guard lock(shell_mu);
    runner = shell_runner;
  }
  if (!runner) {
    return failed_precondition("approval " + approval.id +
                               " is a shell command, and no server with shell_exec (--sandbox) "
                               "runs this kernel to run it; reject it, or approve it while one does");
  }
  if (!approval.proposed_text) return data_loss("approval " + approval.id + " has no command");
  return runner(approval);
}

}  // namespace weft::kernel
