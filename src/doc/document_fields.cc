// StructuredDocument map operations: typed fields with read-only flags, list
// fields (CRDT lists) and counter fields (CRDT counters).
#include <cmath>

#include "doc/doc_ops.h"
#include "doc/json_value.h"

namespace weft::doc {
namespace {

std::string field_names(const BlockSchema& schema) {
  std::string out;
  if (const auto* m = schema.as_map()) {
    for (const auto& f : m->fields) out += (out.empty() ? "" : ", ") + f.name;
  }
  return out;
}

// The field's definition; nullptr for a free-form map (no declared fields).
// Errors: schema mismatch for an undeclared field of a declared map.
Result<const FieldDef*> lookup(const Target& t, std::string_view name) {
  const FieldDef* def = t.schema->find_field(name);
  if (def || t.schema->as_map()->fields.empty()) return def;
  return schema_mismatch_error(t.where + " has no field '" + std::string(name) +
                               "'; its fields: " + field_names(*t.schema));
}

Status check_field_read_only(const StructuredDocument& d, const FieldDef* def, bool is_system) {
  if (!is_system && def && def->read_only) return read_only_field_error(d.label(), def->name);
  return Status();
}

Status expect_type(const Target& t, const FieldDef* def, FieldType want, std::string_view op) {
  if (def && def->field_type == want) return Status();
  std::string has = def ? std::string(field_type_name(def->field_type)) : "undeclared";
  return schema_mismatch_error(std::string(op) + " needs a " + std::string(field_type_name(want)) +
                               " field, but field '" + (def ? def->name : std::string("?")) +
                               "' of " + t.where + " is " + has);
}

int64_t counter_int(double v) { return static_cast<int64_t>(std::llround(v)); }

}  // namespace

// ------------------------------------------------------------ DocOps reads

std::vector<Json> DocOps::read_list(const StructuredDocument& d, const std::string& list_name) {
  crdt::Doc& doc = state(d).doc;
  std::vector<Json> out;
  for (const crdt::Value& v : doc.get_list(list_name).values())
    out.push_back(value_to_json(v, doc));
  return out;
}

Json DocOps::read_field(const StructuredDocument& d, const std::string& key,
                        const BlockSchema& schema, std::string_view name) {
  crdt::Doc& doc = state(d).doc;
  const FieldDef* def = schema.find_field(name);
  if (def && def->field_type == FieldType::kList) {
    return Json(read_list(d, field_container(key, name)));
  }
  if (def && def->field_type == FieldType::kCounter) {
    return counter_int(doc.get_counter(field_container(key, name)).value());
  }
  if (auto v = doc.get_map(key).get(name)) return value_to_json(*v, doc);
  if (def && def->default_value) return *def->default_value;
  return nullptr;
}

Status DocOps::write_defaults(StructuredDocument& d, const std::string& key,
                              const BlockSchema& schema, bool& wrote) {
  crdt::Doc& doc = state(d).doc;
  for (const FieldDef& f : schema.as_map()->fields) {
    if (!f.default_value) continue;
    wrote = true;
    switch (f.field_type) {
      case FieldType::kList: {
        crdt::ListRef list = doc.get_list(field_container(key, f.name));
        for (const Json& item : *f.default_value)
          WEFT_RETURN_IF_ERROR(list.push(json_to_value(item)));
        break;
      }
      case FieldType::kCounter:
        WEFT_RETURN_IF_ERROR(doc.get_counter(field_container(key, f.name))
                                 .increment(static_cast<double>(f.default_value->get<int64_t>())));
        break;
      default:
        WEFT_RETURN_IF_ERROR(doc.get_map(key).set(f.name, json_to_value(*f.default_value)));
    }
  }
  return Status();
}

// ------------------------------------------------------------- public API

Result<Json> StructuredDocument::get_field(std::string_view name, Section section) const {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t, DocOps::resolve(*this, section, SchemaKind::kMap, "get_field"));
  WEFT_RETURN_IF_ERROR(lookup(t, name).status());
  return DocOps::read_field(*this, t.key, *t.schema, name);
}

Result<Json> StructuredDocument::fields(Section section) const {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t, DocOps::resolve(*this, section, SchemaKind::kMap, "fields"));
  Json out = Json::object();
  for (const FieldDef& f : t.schema->as_map()->fields) {
    out[f.name] = DocOps::read_field(*this, t.key, *t.schema, f.name);
  }
  for (const auto& [k, v] : state_->doc.get_map(t.key).values()) {
    if (!out.contains(k)) out[k] = value_to_json(v, state_->doc);
  }
  return out;
}

Status StructuredDocument::set_field(std::string_view name, const Json& value, Section section,
                                     bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t, DocOps::resolve(*this, section, SchemaKind::kMap, "set_field"));
  WEFT_ASSIGN_OR_RETURN(const FieldDef* def, lookup(t, name));
  if (!is_system && t.section_read_only) return read_only_section_error(label(), *t.section);
  WEFT_RETURN_IF_ERROR(check_field_read_only(*this, def, is_system));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kOverwrite, is_system));
  if (def) {
    Status type_ok = check_field_value(def->field_type, value);
    if (!type_ok.ok()) {
      return schema_mismatch_error("field '" + def->name + "' of " + t.where + ": " +
                                   std::string(type_ok.message()));
    }
  }
  if (name.empty()) return schema_mismatch_error("a field name cannot be empty");
  Json old = DocOps::read_field(*this, t.key, *t.schema, name);
  WEFT_RETURN_IF_ERROR(DocOps::check_limit(*this, json_chars(old), json_chars(value)));
  crdt::Doc& doc = state_->doc;
  std::string container = DocOps::field_container(t.key, name);
  if (def && def->field_type == FieldType::kList) {
    crdt::ListRef list = doc.get_list(container);
    if (list.len() > 0) WEFT_RETURN_IF_ERROR(list.erase(0, list.len()));
    for (const Json& item : value) WEFT_RETURN_IF_ERROR(list.push(json_to_value(item)));
  } else if (def && def->field_type == FieldType::kCounter) {
    crdt::CounterRef counter = doc.get_counter(container);
    int64_t delta = value.get<int64_t>() - counter_int(counter.value());
    if (delta != 0) WEFT_RETURN_IF_ERROR(counter.increment(static_cast<double>(delta)));
  } else {
    WEFT_RETURN_IF_ERROR(doc.get_map(t.key).set(name, json_to_value(value)));
  }
  return DocOps::finish(*this, "set_field:" + std::string(name), is_system);
}

Status StructuredDocument::set_text_field(std::string_view name, std::string_view value,
                                          Section section, bool is_system) {
  {
    DocOps::Lock lock(state_->mu);
    WEFT_ASSIGN_OR_RETURN(Target t,
                          DocOps::resolve(*this, section, SchemaKind::kMap, "set_text_field"));
    WEFT_ASSIGN_OR_RETURN(const FieldDef* def, lookup(t, name));
    if (def) WEFT_RETURN_IF_ERROR(expect_type(t, def, FieldType::kText, "set_text_field"));
  }
  return set_field(name, Json(std::string(value)), section, is_system);
}

Status StructuredDocument::append_to_list_field(std::string_view name, const Json& value,
                                                Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kMap, "append_to_list_field"));
  WEFT_ASSIGN_OR_RETURN(const FieldDef* def, lookup(t, name));
  WEFT_RETURN_IF_ERROR(expect_type(t, def, FieldType::kList, "append_to_list_field"));
  if (!is_system && t.section_read_only) return read_only_section_error(label(), *t.section);
  WEFT_RETURN_IF_ERROR(check_field_read_only(*this, def, is_system));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kAppend, is_system));
  WEFT_RETURN_IF_ERROR(DocOps::check_limit(*this, 0, json_chars(value)));
  WEFT_RETURN_IF_ERROR(
      state_->doc.get_list(DocOps::field_container(t.key, name)).push(json_to_value(value)));
  return DocOps::finish(*this, "append_to_list_field:" + std::string(name), is_system);
}

Status StructuredDocument::remove_from_list_field(std::string_view name, size_t index,
                                                  Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(
      Target t, DocOps::resolve(*this, section, SchemaKind::kMap, "remove_from_list_field"));
  WEFT_ASSIGN_OR_RETURN(const FieldDef* def, lookup(t, name));
  WEFT_RETURN_IF_ERROR(expect_type(t, def, FieldType::kList, "remove_from_list_field"));
  if (!is_system && t.section_read_only) return read_only_section_error(label(), *t.section);
  WEFT_RETURN_IF_ERROR(check_field_read_only(*this, def, is_system));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kOverwrite, is_system));
  crdt::ListRef list = state_->doc.get_list(DocOps::field_container(t.key, name));
  if (index >= list.len()) {
    return out_of_range("remove_from_list_field: index " + std::to_string(index) +
                        " but list field '" + std::string(name) + "' of " + t.where + " has " +
                        std::to_string(list.len()) + " items");
  }
  WEFT_RETURN_IF_ERROR(list.erase(index, 1));
  return DocOps::finish(*this, "remove_from_list_field:" + std::string(name), is_system);
}

Result<int64_t> StructuredDocument::increment_counter(std::string_view name, int64_t delta,
                                                      Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kMap, "increment_counter"));
  WEFT_ASSIGN_OR_RETURN(const FieldDef* def, lookup(t, name));
  WEFT_RETURN_IF_ERROR(expect_type(t, def, FieldType::kCounter, "increment_counter"));
  if (!is_system && t.section_read_only) return read_only_section_error(label(), *t.section);
  WEFT_RETURN_IF_ERROR(check_field_read_only(*this, def, is_system));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kOverwrite, is_system));
  crdt::CounterRef counter = state_->doc.get_counter(DocOps::field_container(t.key, name));
  int64_t before = counter_int(counter.value());
  WEFT_RETURN_IF_ERROR(
      DocOps::check_limit(*this, json_chars(Json(before)), json_chars(Json(before + delta))));
  WEFT_RETURN_IF_ERROR(counter.increment(static_cast<double>(delta)));
  WEFT_RETURN_IF_ERROR(DocOps::finish(*this, "increment_counter:" + std::string(name), is_system));
  return counter_int(counter.value());
}

}  // namespace weft::doc
