// Live sync of blocks (kernel.h / blocks.h "live sync"): a block's doc
// exchanged with editors as Loro binary updates. An editor's update is
// imported as a change attributed to the person, stored and (file blocks)
// written to the file like any other change, and the change listener fires.
#include <nlohmann/json.hpp>

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

// Imports `update` into `doc` with every new change's commit message set to
// who's "<origin>\n<what>", so that history names the person. The update is
// read on a fork first: nothing reaches `doc` unless all of it applies and
// `check` accepts the text it leads to. Returns whether anything was new.
Result<bool> import_attributed(crdt::Doc& doc, std::string_view update,
                               const source::Attribution& who,
                               const std::function<Status(const std::string&)>& check) {
  if (update.empty()) return invalid_argument("an empty update");
  const crdt::VersionVector before = doc.oplog_version();
  crdt::Doc scratch = doc.fork();
  auto imported = scratch.import(update);
  if (!imported.ok()) {
    return invalid_argument("not a Loro update of this block: " +
                            std::string(imported.status().message()));
  }
  if (!imported->pending.empty()) {
    return invalid_argument(
        "the update depends on changes this block does not have; rejoin to catch up");
  }
  if (scratch.oplog_version() == before) return false;
  WEFT_RETURN_IF_ERROR(check(scratch.get_text(source::kContentContainer).to_string()));
  nlohmann::json changes =
      nlohmann::json::parse(scratch.export_json_updates(before, false), nullptr, false);
  if (changes.is_discarded() || !changes.contains("changes")) {
    return internal_error("live sync: the update's changes could not be re-encoded");
  }
  const std::string message = who.origin + "\n" + who.what;
  for (auto& change : changes["changes"]) change["msg"] = message;
  auto applied = doc.import(changes.dump());
  if (!applied.ok()) {
    return internal_error("live sync: re-attributed update did not apply: " +
                    std::string(applied.status().message()));
  }
  return true;
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
  auto path = path_of_block_id(block_id);
  if (!path) return blocks().sync_apply(block_id, update, who);
  WEFT_RETURN_IF_ERROR(check_origin(who));
  Impl& k = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  auto rules = k.current_rules();
  if (source::is_configuration_path(id.path) ||
      rules->permission_for(id.path) == doc::MemoryPermission::kReadOnly) {
    return permission_denied("'" + id.path + "' is read-only for live sync");
  }
  WEFT_ASSIGN_OR_RETURN(auto e, k.entry(id.path));
  bool changed = false;
  {
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(k.sync_from_disk(*e));
    if (!e->block) return not_found("no text file '" + id.path + "' in the workspace");
    if (!e->frozen.empty()) {
      return failed_precondition("'" + id.path + "' takes no changes: " + e->frozen);
    }
    const uint64_t limit = k.options.max_block_bytes;
    auto check = [&](const std::string& text) -> Status {
      if (!is_text(text)) return invalid_argument("the update makes the file text invalid UTF-8");
      if (text.size() > limit) {
        return invalid_argument("the update makes the file larger than the block limit of " +
                                std::to_string(limit) + " bytes");
      }
      return Status();
    };
    WEFT_ASSIGN_OR_RETURN(changed, import_attributed(e->block->doc(), update, who, check));
    if (changed) {
      const std::string text = e->block->text();
      e->deleted = false;
      e->writing = FileEntry::Writing{e->block->version(), source::content_hash(text)};
      WEFT_RETURN_IF_ERROR(k.persist(*e));
      WEFT_RETURN_IF_ERROR(k.write_text(*e, text));
      k.notify(*e, who.origin);
    }
  }
  k.evict_if_needed();
  return changed;
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

Result<SyncJoin> Blocks::sync_join(std::string_view block_id, std::string_view /*person*/,
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
  Status writable = impl_->check_write(*e, doc::MemoryOp::kOverwrite);
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
    WEFT_RETURN_IF_ERROR(impl_->check_write(*e, doc::MemoryOp::kOverwrite));
    WEFT_RETURN_IF_ERROR(impl_->flush_locked(*e));
    WEFT_RETURN_IF_ERROR(impl_->ensure_loaded(*e));
    auto check = [](const std::string& text) {
      return check_block_text(text, "the block's text", kMaxBlockTextBytes);
    };
    WEFT_ASSIGN_OR_RETURN(changed, import_attributed(e->block->doc(), update, who, check));
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
