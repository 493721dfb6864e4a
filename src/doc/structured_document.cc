// StructuredDocument: construction, identity, attribution and commits,
// subscriptions, versions/sync and the shared write checks (DocOps).
#include "weft/doc/structured_document.h"

#include <cmath>

#include "doc/doc_ops.h"
#include "doc/json_value.h"
#include "weft/doc/schema_json.h"

namespace weft::doc {

std::string default_key(const BlockSchema& schema) {
  switch (schema.kind()) {
    case SchemaKind::kText:
      return "content";
    case SchemaKind::kMap:
      return "root";
    case SchemaKind::kList:
      return "items";
    case SchemaKind::kLog:
      return "entries";
    case SchemaKind::kComposite:
      return "";
  }
  return "";
}

namespace {

std::string section_names(const BlockSchema& schema) {
  std::string out;
  if (const auto* c = schema.as_composite()) {
    for (const auto& s : c->sections) out += (out.empty() ? "" : ", ") + s.name;
  }
  return out;
}

std::string op_needs(SchemaKind want) {
  switch (want) {
    case SchemaKind::kText:
      return "a text block or section";
    case SchemaKind::kMap:
      return "a map block or section";
    case SchemaKind::kList:
      return "a list block or section";
    case SchemaKind::kLog:
      return "a log block or section";
    case SchemaKind::kComposite:
      return "a composite block";
  }
  return "another kind of block";
}

}  // namespace

// ---------------------------------------------------------------- DocOps

Result<Target> DocOps::resolve(const StructuredDocument& d, Section section, SchemaKind want,
                               std::string_view op) {
  const DocumentOptions& o = d.options_;
  Target t;
  t.where = "block '" + o.label + "'";
  if (o.schema.kind() == SchemaKind::kComposite) {
    if (!section) {
      return missing_section_error("block '" + o.label + "' is composite: " + std::string(op) +
                                   " needs a section (one of: " + section_names(o.schema) + ")");
    }
    const BlockSchema* sub = o.schema.get_section_schema(*section);
    if (!sub) {
      return missing_section_error("block '" + o.label + "' has no section '" +
                                   std::string(*section) +
                                   "'; its sections: " + section_names(o.schema));
    }
    t.key = std::string(*section);
    t.schema = sub;
    t.section = std::string(*section);
    t.section_read_only = o.schema.is_section_read_only(*section).value_or(false);
    t.where = "section '" + t.key + "' of block '" + o.label + "'";
  } else {
    if (section) {
      return missing_section_error(
          "block '" + o.label + "' is a " + std::string(schema_kind_name(o.schema.kind())) +
          " block, not composite: it has no section '" + std::string(*section) + "'");
    }
    t.key = default_key(o.schema);
    t.schema = &o.schema;
  }
  if (t.schema->kind() != want) {
    return schema_mismatch_error(t.where + " is " +
                                 std::string(schema_kind_name(t.schema->kind())) + "; " +
                                 std::string(op) + " needs " + op_needs(want));
  }
  return t;
}

Status DocOps::check_write(const StructuredDocument& d, const Target& t, MemoryOp op,
                           bool is_system) {
  if (is_system) return Status();
  if (t.section_read_only) return read_only_section_error(d.options_.label, *t.section);
  return check_permission(d.state_->permission, op, d.options_.label);
}

Status DocOps::check_limit(const StructuredDocument& d, size_t removed, size_t added) {
  uint64_t limit = d.state_->char_limit;
  if (limit == 0 || added <= removed) return Status();
  size_t now = d.content_chars();
  size_t would_be = now - std::min(now, removed) + added;
  if (would_be > limit) return char_limit_error(d.options_.label, would_be, limit);
  return Status();
}

Status DocOps::finish(const StructuredDocument& d, std::string_view op, bool is_system) {
  StructuredDocument::State& s = *d.state_;
  crdt::CommitOptions c;
  if (s.pending_attribution) {
    c.message = std::move(*s.pending_attribution);
    s.pending_attribution.reset();
  } else if (is_system) {
    c.message = StructuredDocument::system_attribution(op);
  } else {
    c.message =
        StructuredDocument::agent_attribution(d.options_.accessor_agent_id.value_or("unknown"), op);
  }
  // The origin (the attribution) lets AgentUndo keep to one agent's writes
  // and skip system and source writes.
  c.origin = *c.message;
  return s.doc.commit(c);
}

// ------------------------------------------------------- StructuredDocument

StructuredDocument::StructuredDocument(DocumentOptions options, crdt::Doc doc)
    : options_(std::move(options)), state_(std::make_shared<State>()) {
  state_->doc = std::move(doc);
  state_->doc.set_record_timestamp(true);
  state_->permission = options_.permission;
  state_->char_limit = options_.char_limit;
}

StructuredDocument::~StructuredDocument() = default;

Result<std::unique_ptr<StructuredDocument>> StructuredDocument::wrap(DocumentOptions options,
                                                                     crdt::Doc doc) {
  WEFT_RETURN_IF_ERROR(check_schema(options.schema).with_context("block '" + options.label + "'"));
  return std::unique_ptr<StructuredDocument>(
      new StructuredDocument(std::move(options), std::move(doc)));
}

Result<std::unique_ptr<StructuredDocument>> StructuredDocument::create(DocumentOptions options) {
  WEFT_ASSIGN_OR_RETURN(auto d, wrap(std::move(options), crdt::Doc()));
  DocOps::Lock lock(d->state_->mu);
  bool wrote = false;
  const BlockSchema& schema = d->options_.schema;
  if (schema.kind() == SchemaKind::kMap) {
    WEFT_RETURN_IF_ERROR(DocOps::write_defaults(*d, "root", schema, wrote));
  } else if (const auto* c = schema.as_composite()) {
    for (const auto& s : c->sections) {
      if (s.schema->kind() == SchemaKind::kMap) {
        WEFT_RETURN_IF_ERROR(DocOps::write_defaults(*d, s.name, *s.schema, wrote));
      }
    }
  }
  if (wrote) WEFT_RETURN_IF_ERROR(DocOps::finish(*d, "init", true));
  return d;
}

MemoryPermission StructuredDocument::permission() const {
  DocOps::Lock lock(state_->mu);
  return state_->permission;
}

void StructuredDocument::set_permission(MemoryPermission permission) {
  DocOps::Lock lock(state_->mu);
  state_->permission = permission;
}

uint64_t StructuredDocument::char_limit() const {
  DocOps::Lock lock(state_->mu);
  return state_->char_limit;
}

void StructuredDocument::set_char_limit(uint64_t limit) {
  DocOps::Lock lock(state_->mu);
  state_->char_limit = limit;
}

void StructuredDocument::set_attribution(std::string message) {
  DocOps::Lock lock(state_->mu);
  state_->pending_attribution = std::move(message);
}

void StructuredDocument::auto_attribution(std::string_view operation) {
  if (options_.accessor_agent_id) {
    set_attribution(agent_attribution(*options_.accessor_agent_id, operation));
  }
}

Status StructuredDocument::commit() {
  DocOps::Lock lock(state_->mu);
  crdt::CommitOptions c;
  if (state_->pending_attribution) {
    c.message = std::move(*state_->pending_attribution);
    state_->pending_attribution.reset();
  }
  // An explicit agent attribution is that agent's write (undoable by it);
  // anything else committed raw counts as a system write.
  c.origin = c.message && c.message->rfind("agent:", 0) == 0 ? *c.message : "system";
  return state_->doc.commit(c);
}

Status StructuredDocument::commit_with_attribution(std::string message) {
  DocOps::Lock lock(state_->mu);
  state_->pending_attribution = std::move(message);
  return commit();
}

std::string StructuredDocument::agent_attribution(std::string_view agent_id,
                                                  std::string_view operation) {
  return "agent:" + std::string(agent_id) + ":" + std::string(operation);
}

std::string StructuredDocument::source_attribution(std::string_view source_id) {
  return "source:" + std::string(source_id) + ":update";
}

std::string StructuredDocument::system_attribution(std::string_view what) {
  return "system:" + std::string(what);
}

// Subscriptions: the unsubscribe runs under the document's lock, because
// crdt::Doc is not thread-safe and a handle may die on another thread.
namespace {

crdt::Subscription locked(std::shared_ptr<StructuredDocument::State> state,
                          crdt::Subscription inner) {
  auto shared = std::make_shared<crdt::Subscription>(std::move(inner));
  return crdt::Subscription([state = std::move(state), shared] {
    std::lock_guard lock(state->mu);
    shared->unsubscribe();
  });
}

}  // namespace

crdt::Subscription StructuredDocument::subscribe_root(crdt::EventCallback callback) {
  DocOps::Lock lock(state_->mu);
  return locked(state_, state_->doc.subscribe_root(std::move(callback)));
}

crdt::Subscription StructuredDocument::subscribe(const crdt::ContainerId& container,
                                                 crdt::EventCallback callback) {
  DocOps::Lock lock(state_->mu);
  return locked(state_, state_->doc.subscribe(container, std::move(callback)));
}

Result<crdt::ContainerId> StructuredDocument::content_container_id(Section section) const {
  const BlockSchema* schema = &options_.schema;
  std::string key;
  if (schema->kind() == SchemaKind::kComposite) {
    if (!section) return missing_section_error("block '" + options_.label + "' is composite");
    schema = schema->get_section_schema(*section);
    if (!schema) {
      return missing_section_error("block '" + options_.label + "' has no section '" +
                                   std::string(*section) + "'");
    }
    key = std::string(*section);
  } else {
    key = default_key(*schema);
  }
  crdt::ContainerType type = crdt::ContainerType::kText;
  switch (schema->kind()) {
    case SchemaKind::kText:
      type = crdt::ContainerType::kText;
      break;
    case SchemaKind::kMap:
      type = crdt::ContainerType::kMap;
      break;
    case SchemaKind::kList:
    case SchemaKind::kLog:
      type = crdt::ContainerType::kList;
      break;
    case SchemaKind::kComposite:
      return schema_mismatch_error("nested composite");
  }
  return crdt::ContainerId::root(key, type);
}

crdt::Subscription StructuredDocument::subscribe_content(crdt::EventCallback callback) {
  if (options_.schema.kind() == SchemaKind::kComposite) return subscribe_root(std::move(callback));
  auto id = content_container_id();
  if (!id.ok()) return subscribe_root(std::move(callback));
  return subscribe(*id, std::move(callback));
}

crdt::VersionVector StructuredDocument::version() const {
  DocOps::Lock lock(state_->mu);
  return state_->doc.oplog_version();
}

std::string StructuredDocument::export_updates(const crdt::VersionVector& from) const {
  DocOps::Lock lock(state_->mu);
  return state_->doc.export_updates(from);
}

std::string StructuredDocument::export_snapshot(crdt::SnapshotCompression compression) const {
  DocOps::Lock lock(state_->mu);
  return state_->doc.export_snapshot(compression);
}

Result<crdt::ImportStatus> StructuredDocument::import(std::string_view data,
                                                      std::string_view origin) {
  DocOps::Lock lock(state_->mu);
  return state_->doc.import(data, origin);
}

std::unique_ptr<StructuredDocument> StructuredDocument::fork(
    std::optional<std::string> accessor_agent_id) const {
  DocOps::Lock lock(state_->mu);
  DocumentOptions o = options_;
  o.accessor_agent_id = std::move(accessor_agent_id);
  o.permission = state_->permission;
  o.char_limit = state_->char_limit;
  // Snapshot + import rather than Doc::fork(): the same history under a new
  // peer id, through the path persistence uses anyway.
  crdt::Doc copy;
  auto imported =
      copy.import(state_->doc.export_snapshot(crdt::SnapshotCompression::kFast), "fork");
  if (!imported.ok()) copy = state_->doc.fork();
  return std::unique_ptr<StructuredDocument>(new StructuredDocument(o, std::move(copy)));
}

// ---------------------------------------------------------------- undo

std::unique_ptr<AgentUndo> StructuredDocument::undo_manager(std::optional<std::string> agent_id) {
  if (!agent_id) agent_id = options_.accessor_agent_id;
  return std::make_unique<AgentUndo>(state_, std::move(agent_id));
}

AgentUndo::AgentUndo(std::shared_ptr<StructuredDocument::State> state,
                     std::optional<std::string> agent_id)
    : state_(std::move(state)) {
  std::lock_guard lock(state_->mu);
  manager_ = std::make_unique<crdt::UndoManager>(state_->doc);
  manager_->add_exclude_origin_prefix("system");
  manager_->add_exclude_origin_prefix("source:");
  if (agent_id)
    manager_->add_include_origin_prefix(StructuredDocument::agent_attribution(*agent_id, ""));
}

AgentUndo::~AgentUndo() {
  std::lock_guard lock(state_->mu);
  manager_.reset();
}

Result<bool> AgentUndo::undo() {
  std::lock_guard lock(state_->mu);
  return manager_->undo();
}

Result<bool> AgentUndo::redo() {
  std::lock_guard lock(state_->mu);
  return manager_->redo();
}

bool AgentUndo::can_undo() const {
  std::lock_guard lock(state_->mu);
  return manager_->can_undo();
}

bool AgentUndo::can_redo() const {
  std::lock_guard lock(state_->mu);
  return manager_->can_redo();
}

}  // namespace weft::doc
