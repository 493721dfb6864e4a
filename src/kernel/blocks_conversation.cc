// Conversation blocks: the in-memory index loaded at open, their rows and
// history in the store, the append batches and their flusher thread, and
// each author's undo log.
#include <algorithm>
#include <chrono>

#include "kernel/blocks_impl.h"

namespace weft::kernel {

namespace {

// Snapshot a conversation block after this many stored updates.
constexpr uint64_t kCompactAfterUpdates = 256;
// The `before` of an undo step that is a delete (its `after`: the version).
constexpr std::string_view kDeleteStep = "#delete";
constexpr std::string_view kDeleteTreeStep = "#delete-tree";
// Ids a refusal lists at most.
constexpr size_t kMaxListedIds = 5;

bool is_delete_step(const UndoStep& step) {
  return step.before == kDeleteStep || step.before == kDeleteTreeStep;
}

int64_t unix_seconds(const source::Attribution& who) {
  return who.timestamp ? *who.timestamp
                       : std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
}

void clear_tombstone(ConvEntry& e) {
  e.deleted = false;
  e.deleted_by.clear();
  e.deleted_at = 0;
  e.deleted_with.clear();
}

std::vector<UndoStep> undo_from_json(const Json& j) {
  std::vector<UndoStep> out;
  if (!j.is_array()) return out;
  for (const auto& s : j) {
    if (s.is_array() && s.size() == 2 && s[0].is_string() && s[1].is_string()) {
      out.push_back({s[0].get<std::string>(), s[1].get<std::string>()});
    }
  }
  return out;
}

void push_undo(ConvEntry& e, const std::string& author, const std::string& before,
               const std::string& after, bool from_undo_or_redo) {
  UndoStacks& stacks = e.undo[author];
  stacks.undo.push_back({before, after});
  if (stacks.undo.size() > kMaxUndoEntries) stacks.undo.erase(stacks.undo.begin());
  if (!from_undo_or_redo) stacks.redo.clear();
}

}  // namespace

crdt::CommitOptions commit_options_of(const source::Attribution& who) {
  crdt::CommitOptions options;
  options.message = who.origin + "\n" + who.what;
  options.timestamp = unix_seconds(who);
  options.origin = who.origin;
  return options;
}

// ---------------------------------------------------------------- the index

Blocks::Impl::~Impl() { stop_flusher(); }

Status Blocks::Impl::load_index() {
  store::BlockFilter filter;
  filter.agent_id = std::string(kConversationOwner);
  WEFT_ASSIGN_OR_RETURN(store::BlockList listed, k->store->list_blocks(filter));
  for (const auto& p : listed.problems) k->log("blocks: " + p);
  std::vector<std::shared_ptr<ConvEntry>> all;
  all.reserve(listed.blocks.size());
  for (const store::BlockInfo& info : listed.blocks) {
    auto id = parse_block_id(info.label);
    Json m = Json::parse(info.metadata_json, nullptr, false);
    if (!id.ok() || id->type != BlockId::Type::kConversation || !m.is_object()) {
      k->log("blocks: skipping stored row '" + info.label + "': not a conversation block");
      continue;
    }
    auto e = std::make_shared<ConvEntry>();
    e->id = info.label;
    e->cell = id->cell;
    e->agent = id->agent;
    e->seq = id->seq;
    e->store_id = info.id;
    e->permission = info.permission;
    e->version = info.persisted_version.empty() ? "v0" : info.persisted_version;
    auto str = [&](const char* key) {
      auto it = m.find(key);
      return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (m.contains("parent") && m["parent"].is_string()) e->parent = m["parent"].get<std::string>();
    e->role = parse_block_role(str("role")).value_or(BlockRole::kUser);
    e->kind = parse_block_kind(str("kind")).value_or(BlockKind::kText);
    e->status = parse_block_status(str("status")).value_or(BlockStatus::kPending);
    if (m.contains("meta") && m["meta"].is_object()) e->meta = m["meta"];
    e->summary = str("summary");
    e->order = m.value("order", uint64_t{0});
    e->line_count = m.value("lines", size_t{0});
    e->wrote_since_create = m.value("written", false);
    if (auto d = m.find("deleted"); d != m.end() && d->is_object()) {
      e->deleted = true;
      e->deleted_by = d->value("by", std::string());
      e->deleted_at = d->value("at", int64_t{0});
      e->deleted_with = d->value("with", info.label);
    }
    if (m.contains("undo") && m["undo"].is_object()) {
      for (auto& [author, stacks] : m["undo"].items()) {
        UndoStacks s;
        if (stacks.is_object()) {
          s.undo = undo_from_json(stacks.value("u", Json::array()));
          s.redo = undo_from_json(stacks.value("r", Json::array()));
        }
        e->undo[author] = std::move(s);
      }
    }
    all.push_back(std::move(e));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a->order != b->order ? a->order < b->order : a->id < b->id;
  });
  std::lock_guard lock(index_mu);
  for (auto& e : all) {
    next_order = std::max(next_order, e->order + 1);
    uint64_t& seq = last_seq[{e->cell, e->agent}];
    seq = std::max(seq, e->seq);
    if (e->parent) {
      children[*e->parent].push_back(e);
    } else {
      roots.push_back(e);
    }
    by_id[e->id] = std::move(e);
  }
  return Status();
}

std::shared_ptr<ConvEntry> Blocks::Impl::find(const std::string& id) {
  std::lock_guard lock(index_mu);
  auto it = by_id.find(id);
  return it == by_id.end() ? nullptr : it->second;
}

Result<std::shared_ptr<ConvEntry>> Blocks::Impl::conv(const std::string& id) {
  auto e = find(id);
  if (!e) {
    return not_found("no block '" + id + "': list the blocks with block_list to find an id");
  }
  return e;
}

// ---------------------------------------------------------------- the flusher

void Blocks::Impl::start_flusher() {
  flusher = std::thread([this] {
    std::unique_lock lock(flush_mu);
    while (!stopping) {
      if (pending_set.empty()) {
        flush_cv.wait(lock);
        continue;
      }
      // Sleep one silence period, then commit the batches that stayed silent.
      flush_cv.wait_for(lock, std::chrono::milliseconds(kAppendSilenceMs / 4));
      if (stopping) break;
      std::vector<std::shared_ptr<ConvEntry>> due(pending_set.begin(), pending_set.end());
      lock.unlock();
      auto now = Clock::now();
      for (auto& e : due) {
        std::lock_guard el(e->mu);
        if (e->pending.empty()) continue;
        if (now - e->last_append < std::chrono::milliseconds(kAppendSilenceMs)) continue;
        Status s = flush_locked(*e);
        if (!s.ok()) k->log("blocks: '" + e->id + "': append batch: " + std::string(s.message()));
      }
      lock.lock();
    }
  });
}

void Blocks::Impl::stop_flusher() {
  {
    std::lock_guard lock(flush_mu);
    if (stopping) return;
    stopping = true;
  }
  flush_cv.notify_all();
  if (flusher.joinable()) flusher.join();
}

// ---------------------------------------------------------------- persistence

namespace {

// `text` as a JSON string: printable ASCII is copied as is; anything else
// goes through nlohmann (escapes, and invalid UTF-8 replaced as before).
void append_json_string(std::string& out, std::string_view text) {
  bool plain = true;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (!plain) {
    out += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out += '"';
  out.append(text);
  out += '"';
}

void append_undo_steps(std::string& out, const std::vector<UndoStep>& steps) {
  out += '[';
  size_t from = steps.size() > kMaxStoredUndoSteps ? steps.size() - kMaxStoredUndoSteps : 0;
  for (size_t i = from; i < steps.size(); ++i) {
    if (i > from) out += ',';
    out += '[';
    append_json_string(out, steps[i].before);
    out += ',';
    append_json_string(out, steps[i].after);
    out += ']';
  }
  out += ']';
}

}  // namespace

// Written by hand (it is stored with every commit): the object load_index reads.
std::string Blocks::Impl::metadata_json(const ConvEntry& e) const {
  std::string out;
  out.reserve(256 + e.summary.size());
  out += "{\"role\":";
  append_json_string(out, block_role_name(e.role));
  out += ",\"kind\":";
  append_json_string(out, block_kind_name(e.kind));
  out += ",\"status\":";
  append_json_string(out, block_status_name(e.status));
  out += ",\"meta\":";
  out += e.meta.dump(-1, ' ', false, Json::error_handler_t::replace);
  out += ",\"order\":" + std::to_string(e.order);
  out += ",\"summary\":";
  append_json_string(out, e.summary);
  out += ",\"lines\":" + std::to_string(e.line_count);
  out += std::string(",\"written\":") + (e.wrote_since_create ? "true" : "false");
  if (e.parent) {
    out += ",\"parent\":";
    append_json_string(out, *e.parent);
  }
  if (e.deleted) {
    out += ",\"deleted\":{\"by\":";
    append_json_string(out, e.deleted_by);
    out += ",\"at\":" + std::to_string(e.deleted_at) + ",\"with\":";
    append_json_string(out, e.deleted_with);
    out += '}';
  }
  bool any = false;
  for (const auto& [author, stacks] : e.undo) {
    if (stacks.undo.empty() && stacks.redo.empty()) continue;
    out += any ? "," : ",\"undo\":{";
    any = true;
    append_json_string(out, author);
    out += ":{\"u\":";
    append_undo_steps(out, stacks.undo);
    out += ",\"r\":";
    append_undo_steps(out, stacks.redo);
    out += '}';
  }
  if (any) out += '}';
  out += '}';
  return out;
}

void Blocks::Impl::reset_mirror(ConvEntry& e) {
  e.text = e.block->text();
  e.starts = line_starts(e.text);
  e.ascii = all_ascii(e.text);
  e.line_count = e.starts.size();
  e.summary = summarize(e.text, e.line_count);
  e.version = e.block->version();
}

Status Blocks::Impl::ensure_loaded(ConvEntry& e) {
  if (e.block) return Status();
  WEFT_ASSIGN_OR_RETURN(store::LoadedBlock loaded, k->store->load(e.store_id));
  for (const auto& p : loaded.problems) k->log("blocks: '" + e.id + "': " + p);
  std::vector<std::string_view> blobs;
  if (loaded.snapshot) blobs.push_back(loaded.snapshot->data);
  for (const auto& u : loaded.updates) blobs.push_back(u.data);
  std::string synced = loaded.info.persisted_version.empty() ? "v0" : loaded.info.persisted_version;
  auto block = source::FileBlock::load(blobs, synced, source::DiskState{});
  if (!block.ok()) {
    return Status(block.status().code(),
                  "block '" + e.id + "': " + std::string(block.status().message()));
  }
  e.block.emplace(std::move(*block));
  e.persisted = e.block->doc().oplog_version();
  e.updates_since_snapshot = loaded.updates.size();
  reset_mirror(e);
  return Status();
}

Status Blocks::Impl::persist(ConvEntry& e) {
  std::string updates = e.block->export_updates(e.persisted);
  WEFT_ASSIGN_OR_RETURN(uint64_t seq,
                        k->store->append_update(e.store_id, updates, e.version, metadata_json(e)));
  e.persisted = e.block->doc().oplog_version();
  if (++e.updates_since_snapshot >= kCompactAfterUpdates) {
    std::string snap = e.block->doc().export_snapshot(crdt::SnapshotCompression::kFast);
    Status s = k->store->write_snapshot(e.store_id, seq, snap, e.version);
    if (s.ok()) {
      e.updates_since_snapshot = 0;
    } else {
      k->log("blocks: '" + e.id + "': snapshot: " + std::string(s.message()));
    }
  }
  return Status();
}

void Blocks::Impl::notify(const std::string& id, const std::string& version,
                          const std::string& origin) {
  k->notify_listeners(id, version, origin);
}

BlockWrite Blocks::Impl::write_of(const ConvEntry& e) const {
  BlockWrite w;
  w.block_id = e.id;
  w.version = e.version;
  w.buffered_bytes = e.pending.size();
  w.status = e.status;
  return w;
}

Status Blocks::Impl::check_write(const ConvEntry& e, doc::MemoryOp op,
                                 const source::Attribution* who) const {
  if (e.deleted) {
    return failed_precondition("'" + e.id + "' was deleted by " + e.deleted_by +
                               ": it can be read but not changed; " + e.deleted_by +
                               "'s block_undo on it restores it");
  }
  if (who && decision_for(*who, doc::permission_decision(e.permission, op)) ==
                 doc::PermissionDecision::kAllowed) {
    return Status();
  }
  return doc::check_permission(e.permission, op, e.id);
}

Status Blocks::Impl::check_remove(const ConvEntry& e, const source::Attribution& who) const {
  // The creator and persons delete what they may rewrite; others need admin.
  const bool own = agent_name_of(who.origin) == e.agent || is_person(who.origin);
  const doc::MemoryOp op = own ? doc::MemoryOp::kOverwrite : doc::MemoryOp::kDelete;
  const std::string perm(doc::memory_permission_name(e.permission));
  switch (decision_for(who, doc::permission_decision(e.permission, op))) {
    case doc::PermissionDecision::kAllowed:
      return Status();
    case doc::PermissionDecision::kNeedsApproval:
      return failed_precondition("needs approval: delete of block '" + e.id + "' (permission " +
                                 perm + ") must be approved by " +
                                 (e.permission == doc::MemoryPermission::kPartner
                                      ? "the block's partner (owner)"
                                      : "a human"));
    case doc::PermissionDecision::kDenied:
      break;
  }
  return permission_denied(
      "'" + e.id + "' (permission " + perm + ") may not be deleted by " +
      who.origin +
      (own ? std::string(": its permission forbids rewriting it")
           : ": only its creator (" + e.agent + "), a person, or anyone when it is admin may"));
}

Status Blocks::Impl::store_meta(ConvEntry& e) {
  store::BlockPatch patch;
  patch.metadata_json = metadata_json(e);
  return k->store->update_block(e.store_id, patch).status();
}

std::vector<std::shared_ptr<ConvEntry>> Blocks::Impl::descendants_of(const std::string& id) {
  std::vector<std::shared_ptr<ConvEntry>> out;
  std::lock_guard lock(index_mu);
  auto add_children = [&](const std::string& parent) {
    auto it = children.find(parent);
    if (it != children.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  };
  add_children(id);
  for (size_t i = 0; i < out.size(); ++i) add_children(out[i]->id);
  return out;
}

// ---------------------------------------------------------------- writes

Result<BlockWrite> Blocks::Impl::conv_create(const source::Attribution& who,
                                             const CreateBlock& request) {
  WEFT_RETURN_IF_ERROR(check_cell(request.cell));
  WEFT_RETURN_IF_ERROR(check_block_text(request.content, "the content", kMaxContentBytes));
  if (!request.metadata.is_object()) {
    return invalid_argument("metadata must be a JSON object (keys path, language, tool_name, ...)");
  }
  std::string meta_text = request.metadata.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (meta_text.size() > kMaxMetadataBytes) {
    return invalid_argument("metadata is " + std::to_string(meta_text.size()) +
                            " bytes as JSON; the limit is " + std::to_string(kMaxMetadataBytes));
  }
  // Held from the parent's check to the index insertion, so that a delete
  // (which takes it too) never leaves a new child under a deleted parent.
  std::unique_lock<std::mutex> tree_lock;
  if (request.parent_id) {
    WEFT_ASSIGN_OR_RETURN(BlockId parent, parse_block_id(*request.parent_id));
    if (parent.type == BlockId::Type::kConversation) {
      tree_lock = std::unique_lock(tree_mu);
      auto p = find(*request.parent_id);
      if (!p) return not_found("the parent block '" + *request.parent_id + "' does not exist");
      if (p->deleted) {
        return failed_precondition("the parent block '" + *request.parent_id +
                                   "' is deleted: restore it (block_undo by whoever deleted "
                                   "it) or choose another parent");
      }
    }
  }
  auto e = std::make_shared<ConvEntry>();
  e->cell = request.cell;
  e->agent = agent_name_of(who.origin);
  e->parent = request.parent_id;
  e->role = request.role;
  e->kind = request.kind;
  e->meta = request.metadata;
  e->permission = request.permission;
  WEFT_ASSIGN_OR_RETURN(source::FileBlock block,
                        source::FileBlock::create(request.content, source::DiskState{}, who));
  e->block.emplace(std::move(block));
  reset_mirror(*e);
  if (!request.content.empty()) push_undo(*e, who.origin, "v0", e->version, false);
  // The id: the next seq of (cell, agent), reserved under the index lock.
  {
    std::lock_guard lock(index_mu);
    e->seq = ++last_seq[{e->cell, e->agent}];
    e->order = next_order++;
  }
  e->id = conversation_block_id(e->cell, e->agent, e->seq);
  store::NewBlock row;
  row.agent_id = std::string(kConversationOwner);
  row.label = e->id;
  row.block_type = store::BlockType::kLog;
  row.permission = e->permission;
  row.metadata_json = metadata_json(*e);
  if (!request.content.empty()) {
    row.initial_update = e->block->export_updates();
    row.initial_version = e->version;
  }
  WEFT_ASSIGN_OR_RETURN(store::BlockInfo info, k->store->create_block(row));
  e->store_id = info.id;
  e->persisted = e->block->doc().oplog_version();
  {
    std::lock_guard lock(index_mu);
    by_id[e->id] = e;
    if (e->parent) {
      children[*e->parent].push_back(e);
    } else {
      roots.push_back(e);
    }
  }
  BlockWrite w = write_of(*e);
  w.changed = true;
  notify(e->id, e->version, who.origin);
  return w;
}

Result<BlockWrite> Blocks::Impl::commit_splices(ConvEntry& e,
                                                const std::vector<TextSplice>& splices,
                                                const source::Attribution& who,
                                                bool append_unit) {
  WEFT_RETURN_IF_ERROR(ensure_loaded(e));
  size_t grown = e.text.size();
  for (const TextSplice& s : splices) grown = grown - s.erase + s.insert.size();
  if (grown > kMaxBlockTextBytes) {
    return resource_exhausted("'" + e.id + "' would hold " + std::to_string(grown) +
                              " bytes; a block holds at most " +
                              std::to_string(kMaxBlockTextBytes) + ": start a new block");
  }
  if (splices.empty()) return write_of(e);
  crdt::TextRef t = e.block->doc().get_text(source::kContentContainer);
  // In an all-ASCII text byte offsets are character offsets, which the doc
  // takes without converting positions.
  const PosUnit unit = e.ascii ? PosUnit::kUnicode : PosUnit::kBytes;
  bool ascii_after = e.ascii;
  for (const TextSplice& s : splices) {
    ascii_after = ascii_after && all_ascii(s.insert);
    Status st = s.erase == 0 ? t.insert(s.offset, s.insert, unit)
                             : t.splice(s.offset, s.erase, s.insert, unit);
    if (!st.ok()) {
      // Validated before; should a splice still fail, drop the doc so the
      // next use reloads it from the store without the partial change.
      e.block.reset();
      return internal_error("block '" + e.id + "': " + std::string(st.message()));
    }
  }
  WEFT_RETURN_IF_ERROR(e.block->doc().commit(commit_options_of(who)));
  std::string before = e.version;
  // The mirror: the text and the line starts from the first changed line on.
  size_t low = splices.back().offset;  // descending order: the last is the lowest
  bool pure_append = splices.size() == 1 && splices[0].erase == 0 && low == e.text.size();
  if (splices.size() == 1) {
    e.text.replace(splices[0].offset, splices[0].erase, splices[0].insert);
  } else {
    e.text = apply_splices(e.text, splices);
  }
  if (pure_append) {
    extend_line_starts(e.text, low, e.starts);
  } else {
    splice_line_starts(e.text, splices, e.starts);
  }
  e.ascii = ascii_after;
  e.line_count = e.starts.size();
  e.summary = summarize(e.text, e.line_count);
  e.version = e.block->version();
  UndoStacks& stacks = e.undo[who.origin];
  if (append_unit && e.open_unit_author == who.origin && !stacks.undo.empty() &&
      stacks.undo.back().after == before) {
    stacks.undo.back().after = e.version;
  } else {
    push_undo(e, who.origin, before, e.version, false);
  }
  e.open_unit_author = append_unit ? who.origin : std::string();
  if (e.status == BlockStatus::kPending && !e.wrote_since_create) e.status = BlockStatus::kRunning;
  e.wrote_since_create = true;
  WEFT_RETURN_IF_ERROR(persist(e));
  notify(e.id, e.version, who.origin);
  BlockWrite w = write_of(e);
  w.changed = true;
  return w;
}

Status Blocks::Impl::flush_locked(ConvEntry& e) {
  if (e.pending.empty()) return Status();
  std::string text = std::move(e.pending);
  e.pending.clear();
  {
    std::lock_guard lock(flush_mu);
    for (auto it = pending_set.begin(); it != pending_set.end(); ++it) {
      if (it->get() == &e) {
        pending_set.erase(it);
        break;
      }
    }
  }
  WEFT_RETURN_IF_ERROR(ensure_loaded(e));
  std::vector<TextSplice> splices{TextSplice{e.text.size(), 0, std::move(text)}};
  return commit_splices(e, splices, e.pending_who, true).status();
}

Result<BlockWrite> Blocks::Impl::conv_append(const source::Attribution& who, ConvEntry& e,
                                             std::string_view text) {
  WEFT_RETURN_IF_ERROR(check_write(e, doc::MemoryOp::kAppend, &who));
  WEFT_RETURN_IF_ERROR(check_block_text(text, "the appended text", kMaxAppendBytes));
  if (text.empty()) return write_of(e);
  if (!e.pending.empty() && e.pending_who.origin != who.origin) {
    WEFT_RETURN_IF_ERROR(flush_locked(e));
  }
  WEFT_RETURN_IF_ERROR(ensure_loaded(e));
  if (e.text.size() + e.pending.size() + text.size() > kMaxBlockTextBytes) {
    return resource_exhausted("'" + e.id + "' would exceed " + std::to_string(kMaxBlockTextBytes) +
                              " bytes; a block holds at most that: start a new block");
  }
  bool was_empty = e.pending.empty();
  e.pending.append(text);
  if (was_empty) e.pending_who = who;
  e.last_append = Clock::now();
  if (text.find('\n') != std::string_view::npos || e.pending.size() >= kAppendBatchBytes) {
    WEFT_RETURN_IF_ERROR(flush_locked(e));
    BlockWrite w = write_of(e);
    w.changed = true;
    return w;
  }
  if (was_empty) {
    std::shared_ptr<ConvEntry> self = find(e.id);
    {
      std::lock_guard lock(flush_mu);
      pending_set.insert(self);
    }
    flush_cv.notify_all();
  }
  return write_of(e);
}

Status Blocks::Impl::after_change(ConvEntry& e, const source::ChangeResult& change,
                                  const source::Attribution& who, bool undo_step,
                                  bool from_undo_or_redo) {
  e.open_unit_author.clear();
  if (!change.changed) return Status();
  reset_mirror(e);
  if (undo_step) push_undo(e, who.origin, change.before, change.after, from_undo_or_redo);
  if (e.status == BlockStatus::kPending && !e.wrote_since_create) e.status = BlockStatus::kRunning;
  e.wrote_since_create = true;
  WEFT_RETURN_IF_ERROR(persist(e));
  notify(e.id, e.version, who.origin);
  return Status();
}

Result<BlockWrite> Blocks::Impl::conv_undo(const source::Attribution& who, ConvEntry& e,
                                           bool redo) {
  WEFT_RETURN_IF_ERROR(ensure_loaded(e));
  UndoStacks& stacks = e.undo[who.origin];
  auto& from = redo ? stacks.redo : stacks.undo;
  if (from.empty()) {
    return failed_precondition(std::string("nothing to ") + (redo ? "redo" : "undo") + ": " +
                               who.origin + " has no " + (redo ? "undone change" : "change") +
                               " to '" + e.id + "' left in the log");
  }
  UndoStep step = from.back();
  auto& to = redo ? stacks.undo : stacks.redo;
  if (is_delete_step(step)) {
    // The unit is a delete: undo restores the block, redo deletes it again.
    from.pop_back();
    to.push_back(step);
    Status done;
    if (redo) {
      auto removed = conv_remove(who, e, step.before == kDeleteTreeStep, false);
      done = !removed.ok() ? removed.status() : removed->changed ? Status() : store_meta(e);
    } else {
      done = conv_restore(who, e);
    }
    if (!done.ok()) {
      to.pop_back();
      from.push_back(step);
      return done;
    }
    BlockWrite w = write_of(e);
    w.changed = true;
    return w;
  }
  WEFT_RETURN_IF_ERROR(check_write(e, doc::MemoryOp::kOverwrite, &who));
  WEFT_ASSIGN_OR_RETURN(source::ChangeResult change,
                        e.block->revert_change(step.before, step.after, who));
  from.pop_back();
  if (change.changed) to.push_back({change.before, change.after});
  if (!change.changed) {
    // Still store the popped stack, so a restart agrees.
    e.open_unit_author.clear();
    WEFT_RETURN_IF_ERROR(persist(e));
  } else {
    WEFT_RETURN_IF_ERROR(after_change(e, change, who, false, true));
  }
  BlockWrite w = write_of(e);
  w.changed = change.changed;
  return w;
}

Result<BlockWrite> Blocks::Impl::conv_rollback(const source::Attribution& who, ConvEntry& e,
                                               std::string_view version) {
  WEFT_RETURN_IF_ERROR(ensure_loaded(e));
  WEFT_RETURN_IF_ERROR(check_write(e, doc::MemoryOp::kOverwrite, &who));
  WEFT_ASSIGN_OR_RETURN(std::string target, e.block->text_at(version));
  WEFT_ASSIGN_OR_RETURN(source::ChangeResult change, e.block->change(target, who));
  WEFT_RETURN_IF_ERROR(after_change(e, change, who, true, false));
  BlockWrite w = write_of(e);
  w.changed = change.changed;
  return w;
}

// ---------------------------------------------------------------- delete and restore

Result<BlockRemoval> Blocks::Impl::conv_remove(const source::Attribution& who, ConvEntry& e,
                                               bool recursive, bool undo_step) {
  BlockRemoval out;
  out.block_id = e.id;
  out.version = e.version;
  if (e.deleted) return out;
  WEFT_RETURN_IF_ERROR(flush_locked(e));
  WEFT_RETURN_IF_ERROR(check_remove(e, who));
  // Live descendants (a deleted block has none: see Deleting in blocks.h).
  std::vector<std::shared_ptr<ConvEntry>> live;
  for (auto& d : descendants_of(e.id)) {
    if (!d->deleted) live.push_back(std::move(d));
  }
  if (!live.empty() && !recursive) {
    std::string ids;
    for (size_t i = 0; i < live.size() && i < kMaxListedIds; ++i) {
      ids += (i ? ", " : "") + live[i]->id;
    }
    if (live.size() > kMaxListedIds) ids += ", ...";
    return failed_precondition("'" + e.id + "' has " + std::to_string(live.size()) +
                               " block(s) under it that are not deleted (" + ids +
                               "): delete those first, or pass recursive to delete them all");
  }
  for (auto& d : live) {
    std::lock_guard lock(d->mu);
    WEFT_RETURN_IF_ERROR(flush_locked(*d));
    WEFT_RETURN_IF_ERROR(check_remove(*d, who));
  }
  const int64_t at = unix_seconds(who);
  auto mark = [&](ConvEntry& x) -> Status {
    x.deleted = true;
    x.deleted_by = who.origin;
    x.deleted_at = at;
    x.deleted_with = e.id;
    x.open_unit_author.clear();
    Status s = store_meta(x);
    if (!s.ok()) clear_tombstone(x);
    return s;
  };
  // Children before parents, the block last: a failure leaves no live
  // block under a deleted one, and what was marked is taken back.
  std::vector<ConvEntry*> marked;
  auto unmark_all = [&] {
    for (ConvEntry* x : marked) {
      std::lock_guard lock(x->mu);
      clear_tombstone(*x);
      Status s = store_meta(*x);
      if (!s.ok()) k->log("blocks: '" + x->id + "': restoring after a failed delete: " +
                          std::string(s.message()));
    }
  };
  for (auto it = live.rbegin(); it != live.rend(); ++it) {
    Status s;
    {
      std::lock_guard lock((*it)->mu);
      s = mark(**it);
    }
    if (!s.ok()) {
      unmark_all();
      return s;
    }
    marked.push_back(it->get());
  }
  if (undo_step) {
    push_undo(e, who.origin, std::string(recursive ? kDeleteTreeStep : kDeleteStep), e.version,
              false);
  }
  if (Status s = mark(e); !s.ok()) {
    if (undo_step) e.undo[who.origin].undo.pop_back();
    unmark_all();
    return s;
  }
  out.removed.push_back(e.id);
  for (const auto& d : live) out.removed.push_back(d->id);
  out.changed = true;
  notify(e.id, e.version, who.origin);
  for (const auto& d : live) notify(d->id, d->version, who.origin);
  return out;
}

Status Blocks::Impl::conv_restore(const source::Attribution& who, ConvEntry& e) {
  if (!e.deleted) return store_meta(e);
  if (e.parent) {
    auto p = find(*e.parent);
    if (p && p->deleted) {
      return failed_precondition("'" + e.id + "' is under '" + *e.parent +
                                 "', which is deleted: restore that block first");
    }
  }
  std::vector<std::shared_ptr<ConvEntry>> with;
  for (auto& d : descendants_of(e.id)) {
    std::lock_guard lock(d->mu);
    if (d->deleted && d->deleted_with == e.id) with.push_back(d);
  }
  const std::string by = e.deleted_by, with_id = e.deleted_with;
  const int64_t at = e.deleted_at;
  clear_tombstone(e);
  if (Status s = store_meta(e); !s.ok()) {
    e.deleted = true;
    e.deleted_by = by;
    e.deleted_at = at;
    e.deleted_with = with_id;
    return s;
  }
  notify(e.id, e.version, who.origin);
  // Parents before children, as descendants_of lists them.
  for (auto& d : with) {
    std::lock_guard lock(d->mu);
    clear_tombstone(*d);
    Status s = store_meta(*d);
    if (!s.ok()) return s.with_context("restoring '" + d->id + "'");
    notify(d->id, d->version, who.origin);
  }
  return Status();
}

}  // namespace weft::kernel
