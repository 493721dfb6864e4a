// The kernel and the disk: reading files into blocks, reconcile, writing
// blocks back, the watcher, and the pass at start that recovers from a crash.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel/kernel_impl.h"
#include "weft/base/input_file.h"
#include "weft/base/utf.h"
#include "weft/text/unified_diff.h"

namespace weft::kernel {

bool is_text(std::string_view bytes) {
  return bytes.find('\0') == std::string_view::npos && is_valid_utf8(bytes);
}

std::string path_diff(std::string_view old_text, std::string_view new_text, std::string_view path) {
  text::MakeDiffOptions options;
  options.old_label = "a/" + std::string(path);
  options.new_label = "b/" + std::string(path);
  return text::make_unified_diff(old_text, new_text, options);
}


Result<source::DiskState> Kernel::Impl::stat_file(const std::string& path, bool* is_dir) const {
  std::string full = path == "." ? root : root + "/" + path;
  struct stat st{};
  source::DiskState out;
  *is_dir = false;
  if (::lstat(full.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return out;  // size -1: no file
    return unavailable("cannot stat '" + path + "': " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    *is_dir = true;
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    return failed_precondition("'" + path + "' is " + std::string(file_kind_name(st.st_mode)) +
                               "; only regular files are blocks");
  }
  out.size = st.st_size;
  out.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  out.inode = st.st_ino;
  return out;
}

Result<Kernel::Impl::FileText> Kernel::Impl::read_file(const std::string& path) const {
  FileText out;
  bool is_dir = false;
  auto st = stat_file(path, &is_dir);
  if (st.ok() && st->size > static_cast<int64_t>(options.max_block_bytes)) {
    out.not_text = "too large: " + std::to_string(st->size) + " bytes, over the " +
                   std::to_string(options.max_block_bytes) + "-byte block limit";
    return out;
  }
  auto read = fs->read_bytes(path, 0, static_cast<int64_t>(options.max_block_bytes) + 1);
  if (!read.ok()) {
    if (read.status().code() == StatusCode::kNotFound) {
      out.not_text = "missing";
      return out;
    }
    if (read.status().code() == StatusCode::kResourceExhausted) {
      out.not_text = "too large";
      return out;
    }
    return read.status();
  }
  out.bytes = std::move(read->content);
  if (read->truncated || out.bytes.size() > options.max_block_bytes) {
    out.not_text = "too large: " + std::to_string(read->size_bytes) + " bytes, over the " +
                   std::to_string(options.max_block_bytes) + "-byte block limit";
  } else if (!is_text(out.bytes)) {
    out.not_text = "binary: not UTF-8 text";
  } else {
    out.text = out.bytes;
  }
  return out;
}

Status Kernel::Impl::write_text(FileEntry& e, std::string_view text) {
  auto written = fs->write_bytes(e.path, text, fs::WriteMode::kOverwrite, true);
  if (!written.ok()) {
    return Status(written.status().code(),
                  "the change to '" + e.path + "' is committed (version " + e.block->version() +
                      ") but the file could not be written: " +
                      std::string(written.status().message()));
  }
  bool is_dir = false;
  WEFT_ASSIGN_OR_RETURN(source::DiskState disk, stat_file(e.path, &is_dir));
  disk.hash = source::content_hash(text);
  e.block->mark_synced(disk);
  e.deleted = false;
  e.writing.reset();
  e.meta_stale = true;
  return Status();
}

Status Kernel::Impl::write_block_to_disk(FileEntry& e) {
  WEFT_RETURN_IF_ERROR(write_text(e, e.block->text()));
  return persist(e);
}

Status Kernel::Impl::sync_from_disk(FileEntry& e) {
  bool is_dir = false;
  WEFT_ASSIGN_OR_RETURN(source::DiskState now, stat_file(e.path, &is_dir));
  if (is_dir) return failed_precondition("'" + e.path + "' is a directory");
  const source::DiskState& known = e.block ? e.block->disk() : e.disk;
  bool have_block = e.block.has_value();
  if (now.size < 0) {
    // The file is gone: the block keeps its history and waits for the file.
    if (have_block && !e.deleted && known.size >= 0) {
      e.deleted = true;
      e.block->mark_synced(source::DiskState{});
      return persist(e);
    }
    return Status();
  }
  if (have_block && known.same_stat(now) && !e.deleted) {
    // Unchanged on disk; a block ahead of its file (a crash between commit
    // and write) is written now.
    if (e.block->ahead_of_disk() && e.frozen.empty()) return write_block_to_disk(e);
    return Status();
  }
  WEFT_ASSIGN_OR_RETURN(FileText file, read_file(e.path));
  if (!file.text) {
    if (file.not_text == "missing") return Status();
    if (have_block && e.frozen != file.not_text) {
      e.frozen = file.not_text;
      log("kernel: the block of '" + e.path + "' is frozen: " + file.not_text);
      WEFT_RETURN_IF_ERROR(persist(e));
    }
    return Status();
  }
  now.hash = source::content_hash(*file.text);
  if (have_block && e.writing && now.hash == e.writing->hash &&
      e.block->version() == e.writing->version) {
    // The change stored last reached the file (before a crash, or before the
    // store heard of the write): synced at it.
    e.block->mark_synced(now);
    e.writing.reset();
    e.deleted = false;
    e.frozen.clear();
    return persist(e);
  }
  ShellRun author = disk_author("changed on disk");
  source::Attribution& disk_origin = author.who;
  if (!have_block) {
    if (author.undo_author.empty()) disk_origin.what = "initial content";
    WEFT_ASSIGN_OR_RETURN(source::FileBlock block,
                          source::FileBlock::create(*file.text, now, disk_origin));
    e.block.emplace(std::move(block));
    e.frozen.clear();
    e.deleted = false;
    WEFT_RETURN_IF_ERROR(persist(e));
    notify(e, disk_origin.origin);
    return Status();
  }
  bool was_frozen = !e.frozen.empty();
  e.frozen.clear();
  bool was_deleted = e.deleted;
  e.deleted = false;
  if (!was_deleted && !was_frozen && now.hash == known.hash) {
    // Same bytes (a touch, or weft's own write seen again): only the stat moved.
    if (e.block->ahead_of_disk()) return write_block_to_disk(e);
    e.block->mark_synced(now);
    return persist(e);
  }
  auto level = current_rules()->permission_for(e.path);
  std::string before_version = e.block->version();
  WEFT_ASSIGN_OR_RETURN(source::ReconcileResult r,
                        e.block->reconcile(*file.text, now, level, disk_origin));
  if (!author.undo_author.empty() && e.block->version() != before_version) {
    record_undo(e, author.undo_author, {true, before_version, e.block->version()}, false);
  }
  if (r.action == source::ReconcileResult::Action::kConflict) {
    Approval a;
    a.path = e.path;
    // The block's change that was set aside: its author is the last one
    // recorded in the history after the synced version.
    auto history = e.block->history(8);
    a.author = "agent:unknown";
    for (const auto& h : history) {
      if (h.author != source::kDiskOrigin) {
        a.author = h.author;
        break;
      }
    }
    a.what = "conflict";
    a.op = "overwrite";
    a.rule = "the file changed on disk while a change to it waited; level human decides";
    a.base_version = r.base_version;
    a.proposed_text = r.proposed_text;
    a.diff = r.block_diff;
    a.disk_diff = r.disk_diff;
    auto added = add_approval(std::move(a));
    if (!added.ok()) log("kernel: " + std::string(added.status().message()));
  }
  WEFT_RETURN_IF_ERROR(persist(e));
  if (r.write_file) WEFT_RETURN_IF_ERROR(write_block_to_disk(e));
  if (r.action != source::ReconcileResult::Action::kNone) notify(e, disk_origin.origin);
  return Status();
}

// ---------------------------------------------------------------- the watcher

bool Kernel::Impl::ignored(const std::string& path, bool is_dir) const {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string::npos ? std::string_view(path)
                                                     : std::string_view(path).substr(slash + 1);
  if (name.substr(0, fs::kTempFilePrefix.size()) == fs::kTempFilePrefix) return true;
  if (!is_dir) {
    // Editors' scratch files: vim's swap files and write probe, backups, emacs
    // locks, JetBrains' safe-write copies.
    auto ends_with = [&](std::string_view tail) {
      return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
    };
    if (ends_with("~") || ends_with(".swp") || ends_with(".swx") || name == "4913" ||
        ends_with("___jb_tmp___") || ends_with("___jb_old___") ||
        name.substr(0, 2) == ".#" || (name.size() > 1 && name.front() == '#' && ends_with("#"))) {
      return true;
    }
  }
  return current_ignore()->ignored(path, is_dir);
}

void Kernel::Impl::reload_configuration(const std::string& path) {
  if (path == source::kConfigFileName) {
    auto rules_now = source::WorkspaceRules::load(root);
    if (!rules_now.ok()) {
      log("kernel: weft.toml changed but is not valid; the previous rules stay: " +
          std::string(rules_now.status().message()));
      return;
    }
    std::lock_guard lock(rules_mu);
    rules = std::make_shared<const source::WorkspaceRules>(std::move(*rules_now));
    log("kernel: weft.toml reloaded");
  } else {
    auto ignore_now = std::make_shared<const source::IgnoreRules>(source::IgnoreRules::load(root));
    std::lock_guard lock(rules_mu);
    ignore = std::move(ignore_now);
  }
}

void Kernel::Impl::handle_changes(const std::vector<source::FileChange>& changes) {
  for (const auto& c : changes) {
    if (c.kind == source::FileChange::Kind::kRescan) {
      Status s = recover_and_reconcile_all();
      if (!s.ok()) log("kernel: rescan: " + std::string(s.message()));
      continue;
    }
    if (c.path == source::kConfigFileName || c.path == source::kIgnoreFileName ||
        c.path == ".gitignore") {
      reload_configuration(c.path);
    }
    if (c.kind == source::FileChange::Kind::kRenamed) {
      // A rename keeps the block and its history under the new path, unless
      // it is an editor's save: the file is moved aside (to a backup name, or
      // one weft leaves alone) and written anew at its path in the same batch.
      // Then the history stays with the path.
      bool aside = ignored(c.path, c.is_dir) ||
                   std::any_of(&c + 1, changes.data() + changes.size(),
                               [&](const source::FileChange& later) {
                                 return later.kind != source::FileChange::Kind::kDeleted &&
                                        later.kind != source::FileChange::Kind::kRescan &&
                                        later.path == c.from;
                               });
      if (aside) {
        for (auto& e : entries_under(c.from)) {
          std::lock_guard lock(e->mu);
          if (ensure_loaded(*e).ok()) (void)sync_from_disk(*e);
        }
      } else {
        for (auto& e : entries_under(c.from)) rename_block(e, c.from, c.path);
      }
      if (!c.is_dir && !ignored(c.path, false)) {
        auto e = entry(c.path);
        if (e.ok()) {
          std::lock_guard lock((*e)->mu);
          if (ensure_loaded(**e).ok()) (void)sync_from_disk(**e);
        }
      }
      continue;
    }
    if (c.is_dir) {
      if (c.kind == source::FileChange::Kind::kDeleted) {
        for (auto& e : entries_under(c.path)) {
          std::lock_guard lock(e->mu);
          if (ensure_loaded(*e).ok()) (void)sync_from_disk(*e);
        }
      }
      continue;
    }
    if (ignored(c.path, false)) continue;
    if (c.kind == source::FileChange::Kind::kDeleted) {
      auto e = find_entry(c.path);
      if (!e) {
        auto info = store->get_block(kWorkspaceOwner, file_block_id(c.path));
        if (!info.ok()) continue;
      }
    }
    auto e = entry(c.path);
    if (!e.ok()) {
      log("kernel: " + std::string(e.status().message()));
      continue;
    }
    std::lock_guard lock((*e)->mu);
    Status s = ensure_loaded(**e);
    if (s.ok()) s = sync_from_disk(**e);
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
      log("kernel: '" + c.path + "': " + std::string(s.message()));
    }
  }
  evict_if_needed();
}

Status Kernel::Impl::start_watcher() {
  source::WatcherOptions wo;
  wo.ignored = [this](const std::string& path, bool is_dir) { return ignored(path, is_dir); };
  auto w = source::Watcher::start(root, std::move(wo),
                                  [this](const std::vector<source::FileChange>& changes) {
                                    handle_changes(changes);
                                    publish_disk_changes(changes);
                                  });
  if (!w.ok()) {
    // Without inotify the kernel still works: tools reconcile on access.
    log("kernel: the watcher could not start (" + std::string(w.status().message()) +
        "); changes on disk are seen when a tool next touches the file");
    return Status();
  }
  watcher = std::move(*w);
  return Status();
}

Status Kernel::Impl::recover_and_reconcile_all() {
  store::BlockFilter filter;
  filter.agent_id = std::string(kWorkspaceOwner);
  filter.label_prefix = std::string(kFileBlockPrefix);
  WEFT_ASSIGN_OR_RETURN(store::BlockList listed, store->list_blocks(filter));
  for (const auto& p : listed.problems) log("kernel: " + p);
  for (const auto& info : listed.blocks) {
    auto path = path_of_block_id(info.label);
    if (!path) continue;
    auto e = entry(*path, &info);
    if (!e.ok()) {
      log("kernel: " + std::string(e.status().message()));
      continue;
    }
    std::lock_guard lock((*e)->mu);
    FileEntry& fe = **e;
    // A block whose stored history reaches past its synced version, or whose
    // file's stat moved, needs the disk compared; the others stay unloaded.
    bool is_dir = false;
    auto now = stat_file(fe.path, &is_dir);
    bool stat_moved = !now.ok() || !fe.disk.same_stat(*now) || (now->size < 0) != fe.deleted;
    bool ahead = info.persisted_version != fe.synced_version;
    if (!fe.block && !stat_moved && !ahead) continue;
    Status s = ensure_loaded(fe);
    if (s.ok()) s = sync_from_disk(fe);
    if (!s.ok()) log("kernel: '" + fe.path + "': " + std::string(s.message()));
  }
  evict_if_needed();
  return Status();
}

void Kernel::on_disk_changes(const std::vector<source::FileChange>& changes) {
  impl_->handle_changes(changes);
}

Status Kernel::rescan() { return impl_->recover_and_reconcile_all(); }

}  // namespace weft::kernel
