// Memory blocks (seed 002): an agent's StructuredDocuments, kept by the
// kernel's MemoryCache in kernel.db (owner: the agent, label: the block's).
#include "kernel/blocks_impl.h"
#include "weft/doc/schema_json.h"

namespace weft::kernel {

namespace {

std::string version_of(doc::StructuredDocument& d) {
  return d.with_doc([](crdt::Doc& doc) { return source::encode_version(doc.frontiers()); });
}

// The schema an operation targets: the section's, or the block's.
Result<const doc::BlockSchema*> target_schema(const doc::StructuredDocument& d,
                                              const std::optional<std::string>& section) {
  if (!section) return &d.schema();
  const doc::BlockSchema* s = d.schema().get_section_schema(*section);
  if (!s) {
    return doc::missing_section_error("'" + d.label() + "' has no section '" + *section + "'");
  }
  return s;
}

doc::Section section_of(const std::optional<std::string>& section) {
  return section ? doc::Section(*section) : std::nullopt;
}

std::string field_names(const doc::BlockSchema& s) {
  std::string out;
  if (const auto* m = s.as_map()) {
    for (const auto& f : m->fields) out += (out.empty() ? "" : ", ") + f.name;
  }
  return out.empty() ? "none declared" : out;
}

}  // namespace

Result<std::shared_ptr<doc::StructuredDocument>> Blocks::Impl::memory_doc(const BlockId& id) {
  auto d = memory->get(id.agent, id.label);
  if (!d.ok() && d.status().code() == StatusCode::kNotFound) {
    return not_found("no memory block '" + id.label + "' of agent " + id.agent +
                     ": create it with memory_create");
  }
  return d;
}

Result<BlockWrite> Blocks::Impl::memory_saved(doc::StructuredDocument& d, const BlockId& id,
                                              const source::Attribution& who) {
  WEFT_RETURN_IF_ERROR(memory->save_document(d));
  BlockWrite w;
  w.block_id = memory_block_id(id.agent, id.label);
  w.version = version_of(d);
  w.changed = true;
  w.status = BlockStatus::kDone;
  notify(w.block_id, w.version, who.origin);
  return w;
}

Result<std::string> Blocks::Impl::memory_text(doc::StructuredDocument& d) const {
  if (d.schema().kind() == doc::SchemaKind::kText) return d.text_content();
  return d.render();
}

Result<BlockWrite> Blocks::Impl::memory_text_write(
    const BlockId& id, const source::Attribution& who,
    const std::function<Result<std::string>(std::string)>& f, bool is_append,
    std::string_view appended) {
  WEFT_ASSIGN_OR_RETURN(auto d, memory_doc(id));
  if (d->schema().kind() != doc::SchemaKind::kText) {
    return failed_precondition(
        "'" + memory_block_id(id.agent, id.label) + "' has a " +
        std::string(doc::schema_kind_name(d->schema().kind())) +
        " schema, not text: change it with memory_update or memory_append naming the field "
        "(fields: " + field_names(d->schema()) + ")");
  }
  d->auto_attribution(who.what.empty() ? "block_write" : who.what);
  // A person's write to a Human or Partner block is that person's decision
  // (the text has no read-only fields or sections a system write would pass).
  const bool person_decides =
      is_person(who.origin) &&
      doc::permission_decision(d->permission(), is_append ? doc::MemoryOp::kAppend
                                                          : doc::MemoryOp::kOverwrite) ==
          doc::PermissionDecision::kNeedsApproval;
  if (is_append) {
    WEFT_RETURN_IF_ERROR(d->append_text(appended, std::nullopt, person_decides));
  } else {
    WEFT_ASSIGN_OR_RETURN(std::string old, d->text_content());
    WEFT_ASSIGN_OR_RETURN(std::string next, f(old));
    WEFT_RETURN_IF_ERROR(check_block_text(next, "the new text", kMaxBlockTextBytes));
    if (next == old) {
      BlockWrite w;
      w.block_id = memory_block_id(id.agent, id.label);
      w.version = version_of(*d);
      w.status = BlockStatus::kDone;
      return w;
    }
    WEFT_RETURN_IF_ERROR(d->set_text(next, std::nullopt, person_decides));
  }
  return memory_saved(*d, id, who);
}

Result<BlockContent> Blocks::Impl::memory_read_block(const BlockId& id,
                                                     const ReadOptions& options) {
  WEFT_ASSIGN_OR_RETURN(auto d, memory_doc(id));
  WEFT_ASSIGN_OR_RETURN(std::string text, memory_text(*d));
  BlockContent c;
  c.block_id = memory_block_id(id.agent, id.label);
  c.role = BlockRole::kSystem;
  c.kind = BlockKind::kMemory;
  c.status = BlockStatus::kDone;
  c.metadata = {{"agent", id.agent},
                {"label", id.label},
                {"schema", Json::parse(doc::schema_to_json(d->schema()), nullptr, false)}};
  c.version = version_of(*d);
  c.permission = d->permission();
  c.dirty = memory->is_dirty(id.agent, id.label);
  WEFT_RETURN_IF_ERROR(render_lines(text, line_starts(text), options, c));
  return c;
}

Result<std::vector<source::FileHistoryEntry>> Blocks::Impl::memory_history(const BlockId& id,
                                                                           size_t limit) {
  WEFT_ASSIGN_OR_RETURN(auto d, memory_doc(id));
  auto changes = d->with_doc([](crdt::Doc& doc) { return doc.changes(); });
  std::vector<source::FileHistoryEntry> out;
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    if (limit && out.size() >= limit) break;
    source::FileHistoryEntry h;
    h.version = source::encode_version(
        crdt::Frontiers{crdt::ID{it->id.peer, it->id.counter + it->len - 1}});
    std::string m = it->message.value_or("");
    // "agent:<name>:<op>" or "system:<what>".
    size_t first = m.find(':');
    size_t cut = m.rfind("agent:", 0) == 0 ? m.find(':', 6) : first;
    h.author = cut == std::string::npos ? m : m.substr(0, cut);
    h.message = cut == std::string::npos ? "" : m.substr(cut + 1);
    h.timestamp = it->timestamp;
    out.push_back(std::move(h));
  }
  return out;
}

Result<std::string> Blocks::Impl::memory_text_at(const BlockId& id, std::string_view version) {
  WEFT_ASSIGN_OR_RETURN(auto d, memory_doc(id));
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers f, source::decode_version(version));
  auto forked = d->with_doc([&](crdt::Doc& doc) { return doc.fork_at(f); });
  if (!forked.ok()) {
    return not_found("'" + std::string(version) + "' is no version of '" +
                     memory_block_id(id.agent, id.label) + "': see block_history");
  }
  doc::DocumentOptions options;
  options.label = id.label;
  options.schema = d->schema();
  WEFT_ASSIGN_OR_RETURN(auto old, doc::StructuredDocument::wrap(options, std::move(*forked)));
  return memory_text(*old);
}

// ---------------------------------------------------------------- the facade's memory ops

Result<BlockWrite> Blocks::memory_create(const source::Attribution& who,
                                         const MemoryCreate& request) {
  Impl& b = *impl_;
  WEFT_RETURN_IF_ERROR(check_memory_label(request.label));
  if (request.schema_json.size() > kMaxMetadataBytes) {
    return invalid_argument("the schema is over " + std::to_string(kMaxMetadataBytes) + " bytes");
  }
  auto schema = doc::schema_from_json(request.schema_json);
  if (!schema.ok()) return schema.status().with_context("the memory block's schema");
  if (request.initial_text) {
    WEFT_RETURN_IF_ERROR(check_block_text(*request.initial_text, "the initial text",
                                          kMaxContentBytes));
  }
  if (request.description.size() > kMaxMetadataBytes) {
    return invalid_argument("the description is over " + std::to_string(kMaxMetadataBytes) +
                            " bytes");
  }
  BlockId id;
  id.type = BlockId::Type::kMemory;
  id.agent = agent_name_of(who.origin);
  id.label = request.label;
  store::CreateBlockRequest r;
  r.agent_id = id.agent;
  r.label = id.label;
  r.description = request.description;
  r.schema = std::move(*schema);
  r.permission = request.permission;
  r.char_limit = request.char_limit;
  r.initial_text = request.initial_text;
  auto created = b.memory->create_block(r);
  if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
    return already_exists("memory block '" + id.label + "' of agent " + id.agent +
                          " exists: read it with memory_read, change it with memory_update");
  }
  if (!created.ok()) return created.status();
  BlockWrite w;
  w.block_id = memory_block_id(id.agent, id.label);
  w.version = version_of(**created);
  w.changed = true;
  w.status = BlockStatus::kDone;
  b.notify(w.block_id, w.version, who.origin);
  return w;
}

Result<MemoryContent> Blocks::memory_read(const source::Attribution& who, std::string_view label) {
  Impl& b = *impl_;
  WEFT_RETURN_IF_ERROR(check_memory_label(label));
  BlockId id;
  id.type = BlockId::Type::kMemory;
  id.agent = agent_name_of(who.origin);
  id.label = std::string(label);
  WEFT_ASSIGN_OR_RETURN(auto d, b.memory_doc(id));
  MemoryContent c;
  c.block_id = memory_block_id(id.agent, id.label);
  c.label = id.label;
  c.rendered = d->render();
  c.schema_json = doc::schema_to_json(d->schema());
  c.permission = d->permission();
  c.version = version_of(*d);
  auto info = b.k->store->get_block(id.agent, id.label);
  if (info.ok()) c.description = info->description;
  return c;
}

namespace {

enum class MemoryWrite { kUpdate, kAppend };

Result<BlockWrite> memory_write(Blocks::Impl& b, const source::Attribution& who,
                                std::string_view label, const std::optional<std::string>& field,
                                const Json& value, const std::optional<std::string>& section,
                                MemoryWrite mode) {
  WEFT_RETURN_IF_ERROR(check_memory_label(label));
  std::string dumped = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (dumped.size() > kMaxContentBytes) {
    return resource_exhausted("the value is over " + std::to_string(kMaxContentBytes) + " bytes");
  }
  BlockId id;
  id.type = BlockId::Type::kMemory;
  id.agent = agent_name_of(who.origin);
  id.label = std::string(label);
  WEFT_ASSIGN_OR_RETURN(auto d, b.memory_doc(id));
  WEFT_ASSIGN_OR_RETURN(const doc::BlockSchema* target, target_schema(*d, section));
  doc::Section sec = section_of(section);
  const char* op = mode == MemoryWrite::kUpdate ? "memory_update" : "memory_append";
  d->auto_attribution(op);
  if (field) {
    if (target->kind() != doc::SchemaKind::kMap) {
      return doc::schema_mismatch_error(
          "'" + id.label + "'" + (section ? " section '" + *section + "'" : std::string()) +
          " is " + std::string(doc::schema_kind_name(target->kind())) +
          ", which has no fields: leave field out");
    }
    if (mode == MemoryWrite::kUpdate) {
      WEFT_RETURN_IF_ERROR(d->set_field(*field, value, sec));
    } else {
      const doc::FieldDef* def = target->find_field(*field);
      doc::FieldType type = def ? def->field_type : doc::FieldType::kList;
      if (type == doc::FieldType::kList) {
        WEFT_RETURN_IF_ERROR(d->append_to_list_field(*field, value, sec));
      } else if (type == doc::FieldType::kText) {
        if (!value.is_string()) {
          return doc::schema_mismatch_error("field '" + *field + "' is text: append a string");
        }
        WEFT_ASSIGN_OR_RETURN(Json old, d->get_field(*field, sec));
        std::string joined = (old.is_string() ? old.get<std::string>() : "") +
                             value.get<std::string>();
        WEFT_RETURN_IF_ERROR(d->set_text_field(*field, joined, sec));
      } else if (type == doc::FieldType::kCounter) {
        if (!value.is_number_integer()) {
          return doc::schema_mismatch_error("field '" + *field +
                                            "' is a counter: append an integer to add");
        }
        WEFT_RETURN_IF_ERROR(d->increment_counter(*field, value.get<int64_t>(), sec).status());
      } else {
        return doc::schema_mismatch_error("field '" + *field + "' is a " +
                                          std::string(doc::field_type_name(type)) +
                                          ": nothing to append to; use memory_update");
      }
    }
    return b.memory_saved(*d, id, who);
  }
  switch (target->kind()) {
    case doc::SchemaKind::kText:
      if (!value.is_string()) {
        return doc::schema_mismatch_error("'" + id.label + "' holds text: give a string value");
      }
      if (mode == MemoryWrite::kUpdate) {
        WEFT_RETURN_IF_ERROR(check_block_text(value.get<std::string>(), "the text",
                                              kMaxContentBytes));
        WEFT_RETURN_IF_ERROR(d->set_text(value.get<std::string>(), sec));
      } else {
        WEFT_RETURN_IF_ERROR(d->append_text(value.get<std::string>(), sec));
      }
      break;
    case doc::SchemaKind::kList:
      if (mode == MemoryWrite::kUpdate) {
        return doc::schema_mismatch_error("'" + id.label +
                                          "' is a list: add items with memory_append");
      }
      WEFT_RETURN_IF_ERROR(d->push_item(value, sec));
      break;
    case doc::SchemaKind::kLog:
      if (mode == MemoryWrite::kUpdate) {
        return doc::schema_mismatch_error("'" + id.label +
                                          "' is a log: add entries with memory_append");
      }
      WEFT_RETURN_IF_ERROR(d->append_log_entry(value, sec, false));
      break;
    case doc::SchemaKind::kMap:
      return doc::schema_mismatch_error("'" + id.label + "'" +
                                        (section ? " section '" + *section + "'" : std::string()) +
                                        " is a map: name the field (fields: " +
                                        field_names(*target) + ")");
    case doc::SchemaKind::kComposite:
      return doc::schema_mismatch_error("'" + id.label +
                                        "' is composite: name the section to write");
  }
  return b.memory_saved(*d, id, who);
}

}  // namespace

Result<BlockWrite> Blocks::memory_update(const source::Attribution& who, std::string_view label,
                                         std::optional<std::string> field, const Json& value,
                                         std::optional<std::string> section) {
  return memory_write(*impl_, who, label, field, value, section, MemoryWrite::kUpdate);
}

Result<BlockWrite> Blocks::memory_append(const source::Attribution& who, std::string_view label,
                                         std::optional<std::string> field, const Json& item,
                                         std::optional<std::string> section) {
  return memory_write(*impl_, who, label, field, item, section, MemoryWrite::kAppend);
}

}  // namespace weft::kernel
