// The kernel: opening it, its index of file blocks, their persistence, and
// the changes agents make to files.
#include "weft/kernel/kernel.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kernel/kernel_impl.h"
#include "weft/base/utf.h"
#include "weft/fs/state_dir.h"

namespace weft::kernel {

using Json = nlohmann::json;

std::string file_block_id(std::string_view path) {
  return std::string(kFileBlockPrefix) + std::string(path);
}

std::optional<std::string> path_of_block_id(std::string_view block_id) {
  if (block_id.substr(0, kFileBlockPrefix.size()) != kFileBlockPrefix) return std::nullopt;
  return std::string(block_id.substr(kFileBlockPrefix.size()));
}

namespace {

// Snapshot the block after this many updates.
constexpr uint64_t kCompactAfterUpdates = 256;

bool is_under(std::string_view path, std::string_view dir) {
  if (dir == "." || dir.empty()) return true;
  return path == dir ||
         (path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/');
}

}  // namespace

// ---------------------------------------------------------------- the index

std::shared_ptr<FileEntry> Kernel::Impl::find_entry(const std::string& path) {
  std::lock_guard lock(index_mu);
  auto it = files.find(path);
  return it == files.end() ? nullptr : it->second;
}

Result<std::shared_ptr<FileEntry>> Kernel::Impl::entry(const std::string& path) {
  std::shared_ptr<FileEntry> e;
  {
    std::lock_guard lock(index_mu);
    auto& slot = files[path];
    if (!slot) {
      slot = std::make_shared<FileEntry>();
      slot->path = path;
    }
    e = slot;
  }
  e->last_used = ++clock;
  std::lock_guard lock(e->mu);
  if (!e->known_in_store) {
    auto info = store->get_block(kWorkspaceOwner, file_block_id(path));
    if (info.ok()) {
      e->store_id = info->id;
      WEFT_RETURN_IF_ERROR(read_metadata(*e, info->metadata_json));
    } else if (info.status().code() != StatusCode::kNotFound) {
      return info.status();
    }
    e->known_in_store = true;
  }
  return e;
}

std::vector<std::shared_ptr<FileEntry>> Kernel::Impl::entries_under(const std::string& dir) {
  std::vector<std::shared_ptr<FileEntry>> out;
  // Blocks in the store that are not in the index yet.
  store::BlockFilter filter;
  filter.agent_id = std::string(kWorkspaceOwner);
  filter.label_prefix =
      file_block_id(dir == "." ? std::string() : dir);  // "file:dir" also catches "file:dir2"
  auto listed = store->list_blocks(filter);
  if (listed.ok()) {
    for (const auto& info : listed->blocks) {
      auto path = path_of_block_id(info.label);
      if (path && is_under(*path, dir)) {
        auto e = entry(*path);
        if (e.ok()) out.push_back(*e);
      }
    }
  }
  std::lock_guard lock(index_mu);
  for (auto& [path, e] : files) {
    if (is_under(path, dir) &&
        std::find(out.begin(), out.end(), e) == out.end()) {
      out.push_back(e);
    }
  }
  return out;
}

void Kernel::Impl::forget_entry(const std::string& path) {
  std::lock_guard lock(index_mu);
  files.erase(path);
}

void Kernel::Impl::rekey_entry(const std::string& from, const std::string& to) {
  std::lock_guard lock(index_mu);
  auto it = files.find(from);
  if (it == files.end()) return;
  auto e = it->second;
  files.erase(it);
  e->path = to;
  files[to] = std::move(e);
}

void Kernel::Impl::notify(const FileEntry& e, const std::string& origin) {
  ChangeListener copy;
  {
    std::lock_guard lock(listener_mu);
    copy = listener;
  }
  if (copy && e.block) copy(file_block_id(e.path), e.block->version(), origin);
}

void Kernel::Impl::evict_if_needed() {
  std::vector<std::shared_ptr<FileEntry>> loaded;
  size_t bytes = 0;
  {
    std::lock_guard lock(index_mu);
    for (auto& [path, e] : files) loaded.push_back(e);
  }
  std::vector<std::pair<uint64_t, std::shared_ptr<FileEntry>>> candidates;
  for (auto& e : loaded) {
    std::unique_lock lock(e->mu, std::try_to_lock);
    if (!lock.owns_lock() || !e->block) continue;
    // The CRDT doc costs several times its text (ids, history).
    bytes += e->block->text_bytes() * 6 + 4096;
    if (!e->block->ahead_of_disk() && e->persisted == e->block->doc().oplog_version()) {
      candidates.emplace_back(e->last_used.load(), e);
    }
  }
  if (bytes <= options.memory_budget_bytes) return;
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [used, e] : candidates) {
    if (bytes <= options.memory_budget_bytes * 3 / 4) break;
    std::unique_lock lock(e->mu, std::try_to_lock);
    if (!lock.owns_lock() || !e->block) continue;
    if (e->block->ahead_of_disk() || e->persisted != e->block->doc().oplog_version()) continue;
    if (e->meta_stale && !persist(*e).ok()) continue;
    bytes -= std::min(bytes, e->block->text_bytes() * 6 + 4096);
    e->synced_version = e->block->synced_version();
    e->disk = e->block->disk();
    e->block.reset();
    e->persisted = {};
  }
}

// ---------------------------------------------------------------- persistence

std::string Kernel::Impl::metadata_of(const FileEntry& e) const {
  const source::DiskState& disk = e.block ? e.block->disk() : e.disk;
  Json undo = Json::object();
  auto newest = [](const std::vector<UndoStep>& steps) {
    Json out = Json::array();
    size_t from = steps.size() > kMaxStoredUndoEntries ? steps.size() - kMaxStoredUndoEntries : 0;
    for (size_t i = from; i < steps.size(); ++i) out.push_back({steps[i].before, steps[i].after});
    return out;
  };
  for (const auto& [author, stacks] : e.undo) {
    undo[author] = {{"undo", newest(stacks.undo)}, {"redo", newest(stacks.redo)}};
  }
  Json meta = {{"kind", "file"},
               {"path", e.path},
               {"synced", e.block ? e.block->synced_version() : e.synced_version},
               {"disk",
                {{"hash", disk.hash},
                 {"size", disk.size},
                 {"mtime_ns", disk.mtime_ns},
                 {"inode", disk.inode}}},
               {"frozen", e.frozen},
               {"deleted", e.deleted},
               {"undo", undo}};
  if (e.writing) meta["writing"] = {{"version", e.writing->version}, {"hash", e.writing->hash}};
  return meta.dump();
}

Status Kernel::Impl::read_metadata(FileEntry& e, const std::string& metadata_json) {
  Json meta = Json::parse(metadata_json, nullptr, false);
  auto corrupt = [&](const std::string& what) {
    return data_loss("the kernel's record of '" + e.path + "' is damaged (" + what +
                     "); remove the block with `weft block` tools or the state directory");
  };
  if (!meta.is_object()) return corrupt("metadata is not a JSON object");
  try {
    e.synced_version = meta.value("synced", std::string("v0"));
    const Json& d = meta.at("disk");
    e.disk.hash = d.value("hash", std::string());
    e.disk.size = d.value("size", int64_t{-1});
    e.disk.mtime_ns = d.value("mtime_ns", int64_t{0});
    e.disk.inode = d.value("inode", uint64_t{0});
    e.frozen = meta.value("frozen", std::string());
    e.writing.reset();
    if (meta.contains("writing") && meta["writing"].is_object()) {
      e.writing = FileEntry::Writing{meta["writing"].value("version", std::string()),
                                     meta["writing"].value("hash", std::string())};
    }
    e.deleted = meta.value("deleted", false);
    e.undo.clear();
    if (meta.contains("undo") && meta["undo"].is_object()) {
      for (const auto& [author, stacks] : meta["undo"].items()) {
        UndoStacks s;
        for (const auto& step : stacks.value("undo", Json::array())) {
          s.undo.push_back({step.at(0).get<std::string>(), step.at(1).get<std::string>()});
        }
        for (const auto& step : stacks.value("redo", Json::array())) {
          s.redo.push_back({step.at(0).get<std::string>(), step.at(1).get<std::string>()});
        }
        e.undo[author] = std::move(s);
      }
    }
  } catch (const Json::exception& ex) {
    return corrupt(ex.what());
  }
  return Status();
}

Status Kernel::Impl::ensure_loaded(FileEntry& e) {
  if (e.block || e.store_id.empty()) return Status();
  WEFT_ASSIGN_OR_RETURN(store::LoadedBlock loaded, store->load(e.store_id));
  for (const auto& p : loaded.problems) log("kernel: " + p);
  std::vector<std::string_view> blobs;
  if (loaded.snapshot) blobs.push_back(loaded.snapshot->data);
  for (const auto& u : loaded.updates) blobs.push_back(u.data);
  WEFT_RETURN_IF_ERROR(read_metadata(e, loaded.info.metadata_json));
  auto block = source::FileBlock::load(blobs, e.synced_version, e.disk);
  if (!block.ok()) {
    return Status(block.status().code(), "the block of '" + e.path +
                                             "' cannot be loaded: " +
                                             std::string(block.status().message()));
  }
  e.block.emplace(std::move(*block));
  e.persisted = e.block->doc().oplog_version();
  e.updates_since_snapshot = loaded.updates.size();
  return Status();
}

Status Kernel::Impl::persist(FileEntry& e) {
  WEFT_RETURN_IF_ERROR(persist_now(e));
  e.meta_stale = false;
  return Status();
}

Status Kernel::Impl::persist_now(FileEntry& e) {
  std::string meta = metadata_of(e);
  if (!e.block) {
    if (e.store_id.empty()) return Status();
    store::BlockPatch patch;
    patch.metadata_json = meta;
    return store->update_block(e.store_id, patch).status();
  }
  std::string version = e.block->version();
  if (e.store_id.empty()) {
    store::NewBlock nb;
    nb.agent_id = std::string(kWorkspaceOwner);
    nb.label = file_block_id(e.path);
    nb.description = "the file " + e.path;
    nb.metadata_json = meta;
    nb.initial_update = e.block->export_snapshot();
    nb.initial_version = version;
    WEFT_ASSIGN_OR_RETURN(store::BlockInfo info, store->create_block(nb));
    e.store_id = info.id;
    e.known_in_store = true;
    e.persisted = e.block->doc().oplog_version();
    e.updates_since_snapshot = 1;
    return Status();
  }
  crdt::VersionVector now = e.block->doc().oplog_version();
  if (now == e.persisted) {
    store::BlockPatch patch;
    patch.metadata_json = meta;
    return store->update_block(e.store_id, patch).status();
  }
  std::string update = e.block->export_updates(e.persisted);
  WEFT_ASSIGN_OR_RETURN(uint64_t seq, store->append_update(e.store_id, update, version, meta));
  e.persisted = std::move(now);
  if (++e.updates_since_snapshot >= kCompactAfterUpdates) {
    Status s = store->write_snapshot(e.store_id, seq, e.block->export_snapshot(), version);
    if (s.ok()) {
      e.updates_since_snapshot = 0;
    } else {
      log("kernel: could not compact the block of '" + e.path + "': " + std::string(s.message()));
    }
  }
  return Status();
}

// ---------------------------------------------------------------- opening

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Kernel::~Kernel() {
  if (impl_->watcher) impl_->watcher->stop();
  // What the files hold now, for the next start.
  std::lock_guard index(impl_->index_mu);
  for (auto& [path, e] : impl_->files) {
    std::lock_guard lock(e->mu);
    if (!e->meta_stale) continue;
    Status s = impl_->persist(*e);
    if (!s.ok()) impl_->log("kernel: '" + path + "': " + std::string(s.message()));
  }
}

Result<std::unique_ptr<Kernel>> Kernel::open(std::shared_ptr<fs::Filesystem> fs,
                                             KernelOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->root = fs->root();
  while (impl->root.size() > 1 && impl->root.back() == '/') impl->root.pop_back();
  impl->fs = std::move(fs);
  impl->options = std::move(options);
  if (impl->options.state_dir.empty()) {
    return invalid_argument("the kernel needs a state directory (KernelOptions::state_dir)");
  }
  WEFT_RETURN_IF_ERROR(fs::ensure_private_dir(impl->options.state_dir));
  WEFT_ASSIGN_OR_RETURN(source::WorkspaceRules rules, source::WorkspaceRules::load(impl->root));
  impl->rules = std::make_shared<const source::WorkspaceRules>(std::move(rules));
  impl->ignore = std::make_shared<const source::IgnoreRules>(source::IgnoreRules::load(impl->root));
  for (const auto& p : impl->ignore->problems()) impl->log("kernel: " + p);
  store::StoreOptions store_options;
  store_options.durability = impl->options.durability;
  std::string db = impl->options.state_dir + "/" + std::string(kKernelDbName);
  auto store = store::BlockStore::open(db, store_options);
  if (!store.ok()) {
    return Status(store.status().code(),
                  "the kernel's database " + db + ": " + std::string(store.status().message()));
  }
  impl->store = std::move(*store);
  WEFT_RETURN_IF_ERROR(impl->load_approvals());
  std::unique_ptr<Kernel> kernel(new Kernel(std::move(impl)));
  Impl& k = *kernel->impl_;
  if (k.options.watch) WEFT_RETURN_IF_ERROR(k.start_watcher());
  // After the watcher starts, so that nothing changed in between goes unseen.
  WEFT_RETURN_IF_ERROR(k.recover_and_reconcile_all());
  return kernel;
}

fs::Filesystem& Kernel::fs() const { return *impl_->fs; }

std::shared_ptr<const source::WorkspaceRules> Kernel::rules() const {
  return impl_->current_rules();
}

void Kernel::set_change_listener(ChangeListener listener) {
  std::lock_guard lock(impl_->listener_mu);
  impl_->listener = std::move(listener);
}

// ---------------------------------------------------------------- agents' changes

std::string describe_decision(const source::RuleDecision& decision, std::string_view path,
                              source::FileOp op) {
  std::string what = std::string(source::file_op_name(op)) + " of '" + std::string(path) + "'";
  if (decision.reason == "weft's own configuration") {
    return what + " is not allowed: it is weft's own configuration, which only a person edits";
  }
  std::string rule = decision.reason == "default" ? "the default level" : decision.reason;
  std::string why = rule + " in weft.toml, level " +
                    std::string(doc::memory_permission_name(decision.level));
  if (decision.decision == doc::PermissionDecision::kNeedsApproval) {
    return what + " needs a person's approval (" + why + ")";
  }
  return what + " is not allowed (" + why + "); only a person can change the rule";
}

namespace {

// An agent's operation is an append when the new text only adds to the end.
source::FileOp refine_op(source::FileOp op, const std::optional<std::string>& old_text,
                         const std::string& new_text) {
  if (!old_text) return source::FileOp::kCreate;
  if (op == source::FileOp::kOverwrite && new_text.size() >= old_text->size() &&
      std::string_view(new_text).substr(0, old_text->size()) == *old_text) {
    return source::FileOp::kAppend;
  }
  return op;
}

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

bool is_text(std::string_view bytes) {
  return bytes.find('\0') == std::string_view::npos && is_valid_utf8(bytes);
}

}  // namespace

Result<ChangeOutcome> Kernel::change_text(std::string_view path_view,
                                          const source::Attribution& who, source::FileOp op,
                                          const TextTransform& transform) {
  Impl& k = *impl_;
  std::string path(path_view);
  auto rules = k.current_rules();
  if (source::is_configuration_path(path)) {
    auto d = rules->decide(path, op);
    return permission_denied(describe_decision(d, path, op));
  }
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(path));
  ChangeOutcome out;
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));
    std::optional<std::string> old_text;
    bool as_block = e->block && e->frozen.empty() && !e->deleted;
    if (as_block) {
      old_text = e->block->text();
    } else {
      WEFT_ASSIGN_OR_RETURN(Impl::FileText file, k.read_file(path));
      if (file.text) {
        old_text = std::move(file.text);
      } else if (file.not_text != "missing") {
        // A plain file is rewritten whole: read all of it, within the write limit.
        WEFT_ASSIGN_OR_RETURN(old_text, k.read_whole(path, who.what));
      }
    }
    out.created = !old_text.has_value();
    WEFT_ASSIGN_OR_RETURN(std::string new_text, transform(old_text));
    source::FileOp effective = refine_op(op, old_text, new_text);
    source::RuleDecision d = rules->decide(path, effective);
    out.old_text = old_text.value_or("");
    if (d.decision == doc::PermissionDecision::kDenied) {
      return permission_denied(describe_decision(d, path, effective));
    }
    if (d.decision == doc::PermissionDecision::kNeedsApproval) {
      Approval a;
      a.path = path;
      a.author = who.origin;
      a.what = who.what;
      a.op = std::string(source::file_op_name(effective));
      a.rule = describe_decision(d, path, effective);
      a.base_version = as_block ? e->block->version() : "v0";
      a.proposed_text = new_text;
      a.diff = path_diff(out.old_text, new_text, path);
      WEFT_ASSIGN_OR_RETURN(Approval added, k.add_approval(std::move(a)));
      out.pending_approval = added.id;
      out.rule = added.rule;
      out.version = as_block ? e->block->version() : "";
      out.new_text = std::move(new_text);
      return out;
    }
    bool text_ok = is_text(new_text) && new_text.size() <= k.options.max_block_bytes;
    if (!text_ok) {
      // A plain file: written as bytes, its block (if any) frozen.
      auto written = k.fs->write_bytes(path, new_text, fs::WriteMode::kOverwrite, true);
      if (!written.ok()) return written.status();
      if (e->block || !e->store_id.empty()) {
        e->frozen = new_text.size() > k.options.max_block_bytes ? "too large" : "binary";
        WEFT_RETURN_IF_ERROR(k.persist(*e));
      }
      out.applied = true;
      out.new_text = std::move(new_text);
      return out;
    }
    source::ChangeResult change;
    if (!e->block) {
      WEFT_ASSIGN_OR_RETURN(source::FileBlock block,
                            source::FileBlock::create(new_text, source::DiskState{}, who));
      e->block.emplace(std::move(block));
      change.changed = true;
      change.before = "v0";
      change.after = e->block->version();
    } else {
      WEFT_ASSIGN_OR_RETURN(change, e->block->change(new_text, who));
    }
    e->frozen.clear();
    e->deleted = false;
    if (change.changed) k.record_undo(*e, who.origin, change, false);
    // Committed, stored (with what the file is about to hold), and only then
    // written to the file: one store transaction per change.
    bool write = change.changed || e->block->ahead_of_disk() || out.created;
    if (write) e->writing = FileEntry::Writing{e->block->version(), source::content_hash(new_text)};
    WEFT_RETURN_IF_ERROR(k.persist(*e));
    if (write) WEFT_RETURN_IF_ERROR(k.write_text(*e, new_text));
    out.applied = true;
    out.version = e->block->version();
    out.new_text = std::move(new_text);
    if (change.changed) k.notify(*e, who.origin);
  }
  k.evict_if_needed();
  return out;
}

Result<std::string> Kernel::Impl::read_whole(const std::string& path,
                                             std::string_view tool) const {
  int64_t max = fs->limits().max_write_chars;
  WEFT_ASSIGN_OR_RETURN(fs::ReadBytesResult bytes, fs->read_bytes(path, 0, max + 1));
  if (bytes.truncated || static_cast<int64_t>(bytes.content.size()) > max) {
    return resource_exhausted("'" + path + "' is " + std::to_string(bytes.size_bytes) + " bytes; " +
                              std::string(tool) + " rewrites files of at most " +
                              std::to_string(max) + " bytes (the workspace's write limit)");
  }
  return std::move(bytes.content);
}

Result<std::string> Kernel::read_text(std::string_view path_view) {
  Impl& k = *impl_;
  std::string path(path_view);
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(path));
  std::string text;
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));
    if (e->deleted || !e->block) {
      if (e->deleted) return not_found("'" + path + "' does not exist (it was deleted)");
      WEFT_ASSIGN_OR_RETURN(Impl::FileText file, k.read_file(path));
      if (file.not_text == "missing") return not_found("'" + path + "' does not exist");
      return failed_precondition("'" + path + "' is not a text file (" + file.not_text + ")");
    }
    if (!e->frozen.empty()) {
      return failed_precondition("'" + path + "' is not a text file (" + e->frozen + ")");
    }
    text = e->block->text();
  }
  k.evict_if_needed();
  return text;
}

Status Kernel::track(std::string_view path_view) {
  Impl& k = *impl_;
  std::string path(path_view);
  if (k.ignored(path, false)) return Status();
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(path));
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));
  }
  k.evict_if_needed();
  return Status();
}

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
    auto d = rules->decide(v, source::FileOp::kDelete);
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
  WEFT_RETURN_IF_ERROR(k.apply_remove(path, recursive));
  out.applied = true;
  return out;
}

Status Kernel::Impl::apply_remove(const std::string& path, bool recursive) {
  WEFT_RETURN_IF_ERROR(fs->remove(path, recursive));
  for (auto& e : entries_under(path)) {
    std::lock_guard lock(e->mu);
    if (e->store_id.empty() && !e->block) continue;
    e->deleted = true;
    if (e->block) e->block->mark_synced(source::DiskState{});
    Status s = persist(*e);
    if (!s.ok()) log("kernel: " + std::string(s.message()));
  }
  return Status();
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
  source::RuleDecision d = rules->decide_move(from, to);
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
  auto d = rules->decide(to, overwrite ? source::FileOp::kOverwrite : source::FileOp::kCreate);
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
