// The kernel: opening it, and the changes agents make to a file's text.
#include "weft/kernel/kernel.h"

#include <utility>

#include "kernel/blocks_impl.h"
#include "kernel/kernel_impl.h"
#include "weft/fs/state_dir.h"

namespace weft::kernel {

// ---------------------------------------------------------------- opening

namespace {

// The blocks facade: the index of conversation blocks and the append flusher.
Status open_blocks(Kernel& kernel, Kernel::Impl& k) {
  auto impl = std::make_unique<Blocks::Impl>();
  impl->kernel = &kernel;
  impl->k = &k;
  impl->memory = std::make_unique<store::MemoryCache>(k.store);
  WEFT_RETURN_IF_ERROR(impl->load_index());
  impl->start_flusher();
  k.blocks = std::make_unique<Blocks>(std::move(impl));
  return Status();
}

}  // namespace

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Kernel::~Kernel() {
  impl_->blocks.reset();  // commits pending append batches
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
  WEFT_RETURN_IF_ERROR(open_blocks(*kernel, k));
  if (k.options.watch) WEFT_RETURN_IF_ERROR(k.start_watcher());
  // After the watcher starts, so that nothing changed in between goes unseen.
  WEFT_RETURN_IF_ERROR(k.recover_and_reconcile_all());
  return kernel;
}

fs::Filesystem& Kernel::fs() const { return *impl_->fs; }

Blocks& Kernel::blocks() { return *impl_->blocks; }

std::shared_ptr<const source::WorkspaceRules> Kernel::rules() const {
  return impl_->current_rules();
}

uint64_t Kernel::add_change_listener(ChangeListener listener) {
  std::lock_guard lock(impl_->listener_mu);
  auto next = impl_->listeners
                  ? std::make_shared<std::vector<std::pair<uint64_t, ChangeListener>>>(
                        *impl_->listeners)
                  : std::make_shared<std::vector<std::pair<uint64_t, ChangeListener>>>();
  const uint64_t id = impl_->next_listener_id++;
  next->emplace_back(id, std::move(listener));
  impl_->listeners = std::move(next);
  return id;
}

void Kernel::remove_change_listener(uint64_t id) {
  std::lock_guard lock(impl_->listener_mu);
  if (!impl_->listeners) return;
  auto next = std::make_shared<std::vector<std::pair<uint64_t, ChangeListener>>>();
  for (const auto& entry : *impl_->listeners) {
    if (entry.first != id) next->push_back(entry);
  }
  impl_->listeners = std::move(next);
}

void Kernel::set_change_listener(ChangeListener listener) {
  uint64_t old;
  {
    std::lock_guard lock(impl_->listener_mu);
    old = std::exchange(impl_->set_listener_id, 0);
  }
  if (old != 0) remove_change_listener(old);
  if (!listener) return;
  const uint64_t id = add_change_listener(std::move(listener));
  std::lock_guard lock(impl_->listener_mu);
  impl_->set_listener_id = id;
}

void Kernel::Impl::notify_listeners(const std::string& block_id, const std::string& version,
                                    const std::string& origin) {
  std::shared_ptr<const std::vector<std::pair<uint64_t, ChangeListener>>> current;
  {
    std::lock_guard lock(listener_mu);
    current = listeners;
  }
  if (!current) return;
  for (const auto& entry : *current) entry.second(block_id, version, origin);
}

// ---------------------------------------------------------------- agents' changes

bool is_person(std::string_view origin) { return origin.rfind("human:", 0) == 0; }

doc::PermissionDecision decision_for(const source::Attribution& who,
                                     doc::PermissionDecision decision) {
  if (decision == doc::PermissionDecision::kNeedsApproval && is_person(who.origin)) {
    return doc::PermissionDecision::kAllowed;
  }
  return decision;
}

source::RuleDecision decision_for(const source::Attribution& who, source::RuleDecision d) {
  d.decision = decision_for(who, d.decision);
  return d;
}

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
        WEFT_ASSIGN_OR_RETURN(old_text, fs::read_for_rewrite(*k.fs, path, who.what));
      }
    }
    out.created = !old_text.has_value();
    WEFT_ASSIGN_OR_RETURN(std::string new_text, transform(old_text));
    source::FileOp effective = refine_op(op, old_text, new_text);
    source::RuleDecision d = decision_for(who, rules->decide(path, effective));
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

}  // namespace weft::kernel
