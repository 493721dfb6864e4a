// Live sync of blocks (kernel.h / blocks.h "live sync"): a block's doc
// exchanged with editors as Loro binary updates. An editor's update is
// imported as a change attributed to the person, stored and (file blocks)
// written to the file like any other change, and the change listener fires.
#include <algorithm>
#include <functional>

#include "kernel/blocks_impl.h"
#include "kernel/kernel_impl.h"
#include "weft/crdt/doc.h"
#include "weft/source/rules.h"

namespace weft::kernel {
namespace {

Result<crdt::VersionVector> client_version(std::string_view bytes) {
  if (bytes.empty()) return crdt::VersionVector{};
  return crdt::decode_loro_version_vector(bytes);
}

SyncDelta delta_of(const crdt::Doc& doc, const crdt::VersionVector& since) {
  SyncDelta out;
  if (!(doc.oplog_version() == since)) out.updates = doc.export_loro_updates(since);
  out.version = crdt::encode_loro_version_vector(doc.oplog_version());
  return out;
}

Result<SyncJoin> join_of(const crdt::Doc& doc, std::string_view client_vv) {
  WEFT_ASSIGN_OR_RETURN(crdt::VersionVector from, client_version(client_vv));
  SyncDelta d = delta_of(doc, from);
  SyncJoin out;
  out.updates = std::move(d.updates);
  out.version = std::move(d.version);
  return out;
}

// The error of an update that depends on changes the block lacks.
Status missing_dependencies() {
  return invalid_argument(
      "the update depends on changes this block does not have; rejoin to catch up");
}

// What the text of a block may become through live sync.
struct TextRules {
  size_t limit = 0;                    // bytes of the content text
  std::function<Status()> too_large;   // the error over the limit
  std::string nul;                     // the message for a NUL character
};

size_t content_bytes(crdt::Doc& doc) {
  return doc.get_text(source::kContentContainer).len(PosUnit::kBytes);
}

// Imports `update` into `doc` as changes by `who`: every new change's commit
// message is "<origin>\n<what>", so that history names the person. All or
// nothing: nothing reaches `doc` unless all of it applies at once (no change
// waiting for another) and the text it leads to keeps `rules` (the content's
// size; no NUL anywhere; decoding already refuses invalid UTF-8). The work
// is proportional to the update: inserted text is checked as it is decoded,
// and only an update that may cross the size limit is first read on a fork
// of the doc to learn the exact size. Returns whether anything was new.
// `waiting` (optional) is set when the update depends on changes the doc
// lacks (the error is then missing_dependencies()).
Result<bool> import_attributed(crdt::Doc& doc, std::string_view update,
                               const source::Attribution& who, const TextRules& rules,
                               bool* waiting = nullptr) {
  if (update.empty()) return invalid_argument("an empty update");
  const size_t room = rules.limit - std::min(rules.limit, content_bytes(doc));
  Status refused;         // a text insert the rules refuse
  bool may_grow = false;  // the inserts add up past `room`
  size_t inserted = 0;
  crdt::ImportOptions options;
  options.message = who.origin + "\n" + who.what;
  options.require_complete = true;
  options.check_text_insert = [&](std::string_view text) -> Status {
    if (text.find('\0') != std::string_view::npos) refused = invalid_argument(rules.nul);
    inserted += text.size();
    if (refused.ok() && inserted > room && !may_grow) {
      may_grow = true;
      refused = resource_exhausted("the update may cross the size limit");
    }
    return refused;
  };
  auto explain = [&](const Status& s) -> Status {
    if (s.code() == StatusCode::kFailedPrecondition) {
      if (waiting) *waiting = true;
      return missing_dependencies();
    }
    return invalid_argument("not a Loro update of this block: " + std::string(s.message()));
  };
  auto imported = doc.import(update, options);
  if (!imported.ok() && may_grow) {
    // Deletes may make room: the exact size after the import, on a fork.
    refused = Status();
    options.check_text_insert = [&](std::string_view text) -> Status {
      if (text.find('\0') != std::string_view::npos) refused = invalid_argument(rules.nul);
      return refused;
    };
    crdt::Doc scratch = doc.fork();
    auto tried = scratch.import(update, options);
    if (!tried.ok()) return refused.ok() ? explain(tried.status()) : refused;
    if (content_bytes(scratch) > rules.limit) return rules.too_large();
    imported = doc.import(update, options);
  }
  if (!imported.ok()) {
    if (!refused.ok()) return refused;
    return explain(imported.status());
  }
  return !imported->success.empty();
}

Status check_origin(const source::Attribution& who) {
  if (who.origin.find('\n') != std::string::npos) {
    return invalid_argument("a change's origin cannot hold a line break");
  }
  return Status();
}

}  // namespace

// ---------------------------------------------------------------- file blocks

Result<SyncJoin> Kernel::sync_join(std::string_view block_id, std::string_view person,
                                   std::string_view client_vv) {
  auto path = path_of_block_id(block_id);
  if (!path) return blocks().sync_join(block_id, person, client_vv);
  Impl& k = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  auto rules = k.current_rules();
  SyncJoin out;
  if (source::is_configuration_path(id.path)) {
    out.rule = "weft's own configuration is read-only over live sync";
  } else if (rules->permission_for(id.path) == doc::MemoryPermission::kReadOnly) {
    out.rule = "'" + id.path + "' is read_only in weft.toml";
  }
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(id.path));
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));
    if (!e->block) return not_found("no text file '" + id.path + "' in the workspace");
    if (!e->frozen.empty()) {
      return failed_precondition("'" + id.path + "' takes no changes: " + e->frozen);
    }
    WEFT_ASSIGN_OR_RETURN(SyncJoin joined, join_of(e->block->doc(), client_vv));
    joined.rule = out.rule;
    joined.writable = out.rule.empty();
    out = std::move(joined);
  }
  k.evict_if_needed();
  return out;
}

Result<bool> Kernel::sync_apply(std::string_view block_id, std::string_view update,
                                const source::Attribution& who) {
  WEFT_ASSIGN_OR_RETURN(SyncApplied applied, sync_apply_tracked(block_id, update, who));
  if (applied.waiting) return missing_dependencies();
  return applied.changed;
}

Result<SyncApplied> Kernel::sync_apply_tracked(std::string_view block_id, std::string_view update,
                                               const source::Attribution& who) {
  SyncApplied out;
  auto path = path_of_block_id(block_id);
  if (!path) {
    WEFT_ASSIGN_OR_RETURN(out.changed, blocks().sync_apply(block_id, update, who));
    return out;
  }
  WEFT_RETURN_IF_ERROR(check_origin(who));
  Impl& k = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  auto rules = k.current_rules();
  if (source::is_configuration_path(id.path) ||
      rules->permission_for(id.path) == doc::MemoryPermission::kReadOnly) {
    return permission_denied("'" + id.path + "' is read-only for live sync");
  }
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(id.path));
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));
    if (!e->block) return not_found("no text file '" + id.path + "' in the workspace");
    if (!e->frozen.empty()) {
      return failed_precondition("'" + id.path + "' takes no changes: " + e->frozen);
    }
    const uint64_t limit = k.options.max_block_bytes;
    TextRules text_rules;
    text_rules.limit = limit;
    text_rules.too_large = [limit] {
      return invalid_argument("the update makes the file larger than the block limit of " +
                              std::to_string(limit) + " bytes");
    };
    text_rules.nul = "the update puts a NUL character in the file, which makes it binary";
    crdt::Doc& doc = e->block->doc();
    out.version_before = crdt::encode_loro_version_vector(doc.oplog_version());
    auto imported = import_attributed(doc, update, who, text_rules, &out.waiting);
    if (out.waiting) return out;
    WEFT_ASSIGN_OR_RETURN(out.changed, std::move(imported));
    out.version_after = out.changed ? crdt::encode_loro_version_vector(doc.oplog_version())
                                    : out.version_before;
    if (out.changed) {
      const std::string text = e->block->text();
      e->deleted = false;
      e->writing = FileEntry::Writing{e->block->version(), source::content_hash(text)};
      WEFT_RETURN_IF_ERROR(k.persist(*e));
      WEFT_RETURN_IF_ERROR(k.write_text(*e, text));
      k.notify(*e, who.origin);
    }
  }
  k.evict_if_needed();
  return out;
}

Result<SyncDelta> Kernel::sync_export_since(std::string_view block_id, std::string_view since) {
  auto path = path_of_block_id(block_id);
  if (!path) return blocks().sync_export_since(block_id, since);
  Impl& k = *impl_;
  WEFT_ASSIGN_OR_RETURN(crdt::VersionVector from, client_version(since));
  auto e = k.find_entry(*path);
  if (!e) return not_found("no block '" + std::string(block_id) + "'");
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
  if (!e->block) return not_found("no block '" + std::string(block_id) + "'");
  return delta_of(e->block->doc(), from);
}

// ---------------------------------------------------------------- conversation blocks

Result<SyncJoin> Blocks::sync_join(std::string_view block_id, std::string_view person,
                                   std::string_view client_vv) {
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kMemory) {
    // Memory docs are structured (schema, read-only fields): editors see
    // them live but change them through the memory tools.
    WEFT_ASSIGN_OR_RETURN(auto d, impl_->memory_doc(id));
    Result<SyncJoin> out = invalid_argument("memory block not readable");
    d->with_doc([&](crdt::Doc& doc) { out = join_of(doc, client_vv); });
    if (out.ok()) {
      out->writable = false;
      out->rule = "memory blocks are read-only over live sync";
    }
    return out;
  }
  WEFT_ASSIGN_OR_RETURN(auto e, impl_->conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(impl_->flush_locked(*e));
  WEFT_RETURN_IF_ERROR(impl_->ensure_loaded(*e));
  WEFT_ASSIGN_OR_RETURN(SyncJoin out, join_of(e->block->doc(), client_vv));
  // The person's own rights: a person decides on a human or partner block.
  const source::Attribution who{"human:" + std::string(person), "live sync", std::nullopt};
  Status writable = impl_->check_write(*e, doc::MemoryOp::kOverwrite, &who);
  out.writable = writable.ok();
  if (!writable.ok()) out.rule = std::string(writable.message());
  return out;
}

Result<bool> Blocks::sync_apply(std::string_view block_id, std::string_view update,
                                const source::Attribution& who) {
  WEFT_RETURN_IF_ERROR(check_origin(who));
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kMemory) {
    return permission_denied("memory blocks are read-only over live sync");
  }
  WEFT_ASSIGN_OR_RETURN(auto e, impl_->conv(std::string(block_id)));
  bool changed = false;
  std::string version;
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(impl_->check_write(*e, doc::MemoryOp::kOverwrite, &who));
    WEFT_RETURN_IF_ERROR(impl_->flush_locked(*e));
    WEFT_RETURN_IF_ERROR(impl_->ensure_loaded(*e));
    TextRules text_rules;
    text_rules.limit = kMaxBlockTextBytes;
    text_rules.too_large = [] {
      return resource_exhausted("the update makes the block's text larger than its limit of " +
                                std::to_string(kMaxBlockTextBytes) + " bytes");
    };
    text_rules.nul = "the update puts a NUL character in the block's text";
    WEFT_ASSIGN_OR_RETURN(changed, import_attributed(e->block->doc(), update, who, text_rules));
    if (changed) {
      impl_->reset_mirror(*e);
      e->open_unit_author.clear();
      WEFT_RETURN_IF_ERROR(impl_->persist(*e));
      version = e->version;
    }
  }
  if (changed) impl_->notify(e->id, version, who.origin);
  return changed;
}

Result<SyncDelta> Blocks::sync_export_since(std::string_view block_id, std::string_view since) {
  WEFT_ASSIGN_OR_RETURN(crdt::VersionVector from, client_version(since));
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kMemory) {
    WEFT_ASSIGN_OR_RETURN(auto d, impl_->memory_doc(id));
    SyncDelta out;
    d->with_doc([&](crdt::Doc& doc) { out = delta_of(doc, from); });
    return out;
  }
  WEFT_ASSIGN_OR_RETURN(auto e, impl_->conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(impl_->ensure_loaded(*e));
  return delta_of(e->block->doc(), from);
}

}  // namespace weft::kernel
