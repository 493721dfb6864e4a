// StructuredDocument list and log operations.
#include <chrono>
#include <ctime>

#include "doc/doc_ops.h"
#include "doc/json_value.h"

namespace weft::doc {
namespace {

// Checks an item against the list's item schema (Text: a string; Map: an
// object whose declared fields have the right types).
Status check_item(const Target& t, const Json& item) {
  const auto* list = t.schema->as_list();
  if (!list || !list->item_schema) return Status();
  const BlockSchema& items = *list->item_schema;
  if (items.kind() == SchemaKind::kText) {
    if (item.is_string()) return Status();
    return schema_mismatch_error("items of " + t.where + " are text; got " + json_dump(item));
  }
  if (const auto* m = items.as_map()) {
    if (!item.is_object()) {
      return schema_mismatch_error("items of " + t.where + " are objects; got " + json_dump(item));
    }
    for (auto it = item.begin(); it != item.end(); ++it) {
      const FieldDef* def = items.find_field(it.key());
      if (!def) {
        if (m->fields.empty()) continue;
        return schema_mismatch_error("items of " + t.where + " have no field '" + it.key() + "'");
      }
      Status s = check_field_value(def->field_type, it.value());
      if (!s.ok()) {
        return schema_mismatch_error("item field '" + it.key() + "' of " + t.where + ": " +
                                     std::string(s.message()));
      }
    }
    for (const FieldDef& f : m->fields) {
      if (f.required && !item.contains(f.name) && !f.default_value) {
        return schema_mismatch_error("items of " + t.where + " need field '" + f.name + "'");
      }
    }
  }
  return Status();
}

std::string utc_now_rfc3339() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Result<std::vector<Json>> StructuredDocument::list_items(Section section) const {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t, DocOps::resolve(*this, section, SchemaKind::kList, "list_items"));
  return DocOps::read_list(*this, t.key);
}

Status StructuredDocument::push_item(const Json& value, Section section, bool is_system) {
  size_t len = 0;
  {
    DocOps::Lock lock(state_->mu);
    WEFT_ASSIGN_OR_RETURN(Target t,
                          DocOps::resolve(*this, section, SchemaKind::kList, "push_item"));
    len = state_->doc.get_list(t.key).len();
  }
  return insert_item(len, value, section, is_system);
}

Status StructuredDocument::insert_item(size_t index, const Json& value, Section section,
                                       bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kList, "insert_item"));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kAppend, is_system));
  WEFT_RETURN_IF_ERROR(check_item(t, value));
  crdt::ListRef list = state_->doc.get_list(t.key);
  if (index > list.len()) {
    return out_of_range("insert_item: index " + std::to_string(index) + " but " + t.where +
                        " has " + std::to_string(list.len()) + " items");
  }
  const auto* ls = t.schema->as_list();
  if (ls->max_items && list.len() >= *ls->max_items) {
    return out_of_range(t.where + " is full: it holds at most " + std::to_string(*ls->max_items) +
                        " items");
  }
  WEFT_RETURN_IF_ERROR(DocOps::check_limit(*this, 0, json_chars(value)));
  WEFT_RETURN_IF_ERROR(list.insert(index, json_to_value(value)));
  return DocOps::finish(*this, index == list.len() - 1 ? "push_item" : "insert_item", is_system);
}

Status StructuredDocument::delete_item(size_t index, Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kList, "delete_item"));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kOverwrite, is_system));
  crdt::ListRef list = state_->doc.get_list(t.key);
  if (index >= list.len()) {
    return out_of_range("delete_item: index " + std::to_string(index) + " but " + t.where +
                        " has " + std::to_string(list.len()) + " items");
  }
  WEFT_RETURN_IF_ERROR(list.erase(index, 1));
  return DocOps::finish(*this, "delete_item", is_system);
}

Result<std::vector<Json>> StructuredDocument::log_entries(Section section,
                                                          std::optional<size_t> limit) const {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t, DocOps::resolve(*this, section, SchemaKind::kLog, "log_entries"));
  std::vector<Json> all = DocOps::read_list(*this, t.key);
  if (limit && all.size() > *limit) all.erase(all.begin(), all.end() - static_cast<long>(*limit));
  return all;
}

Status StructuredDocument::append_log_entry(const Json& entry, Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kLog, "append_log_entry"));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kAppend, is_system));
  // A bare string becomes {"at": <now>, "text": ...}; objects are kept as given.
  Json stored = entry;
  if (entry.is_string()) stored = Json{{"at", utc_now_rfc3339()}, {"text", entry}};
  // Logs are trimmed when rendered, so only the shown entries count: no
  // char-limit check here (an ever-growing log would otherwise lock up).
  WEFT_RETURN_IF_ERROR(state_->doc.get_list(t.key).push(json_to_value(stored)));
  return DocOps::finish(*this, "append_log_entry", is_system);
}

}  // namespace weft::doc
