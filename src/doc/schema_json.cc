#include "weft/doc/schema_json.h"

#include <set>
#include <string>

#include "weft/base/json_depth.h"

namespace weft::doc {
namespace {

using nlohmann::json;

// Collects every problem with a path ("schema.fields[1] ('count')") so a
// person fixing a hand-written schema sees them all at once.
class Parser {
 public:
  std::optional<BlockSchema> parse(const json& v, const std::string& path, int depth) {
    if (depth > 8) return fail(path, "schemas nest at most 8 deep");
    if (v.is_string()) return parse_type_only(v.get<std::string>(), path);
    if (!v.is_object()) return fail(path, "must be an object such as {\"type\": \"text\"}");
    auto type_it = v.find("type");
    if (type_it == v.end() || !type_it->is_string()) {
      return fail(path, "needs \"type\": one of text, map, list, log, composite");
    }
    std::string type = type_it->get<std::string>();
    if (type == "text") return parse_text(v, path);
    if (type == "map") return parse_map(v, path);
    if (type == "list") return parse_list(v, path, depth);
    if (type == "log") return parse_log(v, path);
    if (type == "composite") return parse_composite(v, path, depth);
    return fail(path, "unknown schema type '" + type +
                          "'; expected one of text, map, list, log, composite");
  }

  std::vector<std::string> errors;

 private:
  std::nullopt_t fail(const std::string& path, const std::string& message) {
    errors.push_back(path + ": " + message);
    return std::nullopt;
  }

  void check_keys(const json& v, const std::string& path, std::set<std::string> allowed) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!allowed.count(it.key())) {
        std::string list;
        for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
        errors.push_back(path + ": unknown key '" + it.key() + "' (allowed: " + list + ")");
      }
    }
  }

  std::optional<BlockSchema> parse_type_only(const std::string& type, const std::string& path) {
    if (type == "text") return BlockSchema::text();
    if (type == "map") return BlockSchema::map({});
    if (type == "list") return BlockSchema::list();
    if (type == "log") return BlockSchema::log(10);
    return fail(path, "unknown schema type '" + type + "'; expected text, map, list or log");
  }

  std::optional<BlockSchema> parse_text(const json& v, const std::string& path) {
    check_keys(v, path, {"type"});
    return BlockSchema::text();
  }

  std::optional<size_t> positive(const json& v, const char* key, const std::string& path) {
    auto it = v.find(key);
    if (it == v.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 ||
        it->get<uint64_t>() > (uint64_t{1} << 40)) {
      errors.push_back(path + "." + key + ": must be a whole number >= 1, got " + it->dump());
      return std::nullopt;
    }
    return static_cast<size_t>(it->get<uint64_t>());
  }

  std::optional<BlockSchema> parse_log(const json& v, const std::string& path) {
    check_keys(v, path, {"type", "display_limit"});
    if (!v.contains("display_limit")) return BlockSchema::log(10);
    size_t before = errors.size();
    auto limit = positive(v, "display_limit", path);
    if (errors.size() != before) return std::nullopt;
    return BlockSchema::log(limit.value_or(10));
  }

  std::optional<BlockSchema> parse_list(const json& v, const std::string& path, int depth) {
    check_keys(v, path, {"type", "item_schema", "max_items"});
    size_t before = errors.size();
    std::optional<BlockSchema> items;
    if (auto it = v.find("item_schema"); it != v.end() && !it->is_null()) {
      items = parse(*it, path + ".item_schema", depth + 1);
    }
    auto max_items = positive(v, "max_items", path);
    if (errors.size() != before) return std::nullopt;
    return BlockSchema::list(std::move(items), max_items);
  }

  std::optional<std::string> string_key(const json& v, const char* key, const std::string& path) {
    auto it = v.find(key);
    if (it == v.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) {
      errors.push_back(path + "." + key + ": must be a string, got " + it->dump());
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  bool bool_key(const json& v, const char* key, const std::string& path) {
    auto it = v.find(key);
    if (it == v.end() || it->is_null()) return false;
    if (!it->is_boolean()) {
      errors.push_back(path + "." + key + ": must be true or false, got " + it->dump());
      return false;
    }
    return it->get<bool>();
  }

  std::optional<FieldDef> parse_field(const json& f, const std::string& path) {
    if (!f.is_object()) return fail(path, "must be an object with at least \"name\" and \"type\"");
    check_keys(f, path,
               {"name", "description", "type", "field_type", "required", "default", "read_only"});
    FieldDef def;
    def.name = string_key(f, "name", path).value_or("");
    def.description = string_key(f, "description", path).value_or("");
    auto type = string_key(f, "type", path);
    if (!type) type = string_key(f, "field_type", path);
    if (!type) {
      errors.push_back(path +
                       ": needs \"type\": one of text, number, boolean, list, timestamp, "
                       "counter");
    } else if (auto t = parse_field_type(*type); t.ok()) {
      def.field_type = *t;
    } else {
      errors.push_back(path + ": " + std::string(t.status().message()));
      type.reset();
    }
    def.required = bool_key(f, "required", path);
    def.read_only = bool_key(f, "read_only", path);
    if (auto it = f.find("default"); it != f.end() && !it->is_null()) def.default_value = *it;
    if (!type) return std::nullopt;
    return def;
  }

  std::optional<BlockSchema> parse_map(const json& v, const std::string& path) {
    check_keys(v, path, {"type", "fields"});
    auto it = v.find("fields");
    if (it == v.end()) return BlockSchema::map({});
    if (!it->is_array()) return fail(path + ".fields", "must be a list of field objects");
    size_t before = errors.size();
    std::vector<FieldDef> fields;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& f = (*it)[i];
      std::string fpath = path + ".fields[" + std::to_string(i) + "]";
      if (f.is_object() && f.contains("name") && f["name"].is_string()) {
        fpath += " ('" + f["name"].get<std::string>() + "')";
      }
      if (auto def = parse_field(f, fpath)) fields.push_back(std::move(*def));
    }
    if (errors.size() != before) return std::nullopt;
    return BlockSchema::map(std::move(fields));
  }

  std::optional<BlockSchema> parse_composite(const json& v, const std::string& path, int depth) {
    check_keys(v, path, {"type", "sections"});
    auto it = v.find("sections");
    if (it == v.end() || !it->is_array()) {
      return fail(path + ".sections", "must be a list of section objects");
    }
    size_t before = errors.size();
    std::vector<CompositeSection> sections;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& s = (*it)[i];
      std::string spath = path + ".sections[" + std::to_string(i) + "]";
      if (!s.is_object()) {
        fail(spath, "must be an object with \"name\" and \"schema\"");
        continue;
      }
      if (s.contains("name") && s["name"].is_string()) {
        spath += " ('" + s["name"].get<std::string>() + "')";
      }
      check_keys(s, spath, {"name", "schema", "description", "read_only"});
      CompositeSection sec;
      sec.name = string_key(s, "name", spath).value_or("");
      sec.description = string_key(s, "description", spath);
      sec.read_only = bool_key(s, "read_only", spath);
      auto sit = s.find("schema");
      if (sit == s.end()) {
        fail(spath, "needs \"schema\"");
        continue;
      }
      auto sub = parse(*sit, spath + ".schema", depth + 1);
      if (sub) sec.schema = std::make_shared<const BlockSchema>(std::move(*sub));
      sections.push_back(std::move(sec));
    }
    if (errors.size() != before) return std::nullopt;
    return BlockSchema::composite(std::move(sections));
  }
};

std::string field_path(const std::string& path, size_t i, const std::string& name) {
  return path + ".fields[" + std::to_string(i) + "] ('" + name + "')";
}

void validate_into(const BlockSchema& schema, const std::string& path, bool inside_composite,
                   std::vector<std::string>& out) {
  if (const auto* m = schema.as_map()) {
    std::set<std::string> seen;
    for (size_t i = 0; i < m->fields.size(); ++i) {
      const FieldDef& f = m->fields[i];
      std::string fp = field_path(path, i, f.name);
      if (f.name.empty()) out.push_back(fp + ": field name is empty");
      if (!seen.insert(f.name).second) {
        out.push_back(fp + ": duplicate field name '" + f.name + "'");
      }
      if (f.default_value) {
        Status s = check_field_value(f.field_type, *f.default_value);
        if (!s.ok()) {
          out.push_back(fp + ": default " + std::string(s.message()) + " (field type " +
                        std::string(field_type_name(f.field_type)) + ")");
        }
      }
    }
  } else if (const auto* l = schema.as_list()) {
    if (l->max_items && *l->max_items == 0) out.push_back(path + ".max_items: must be >= 1");
    if (l->item_schema) {
      SchemaKind k = l->item_schema->kind();
      if (k != SchemaKind::kText && k != SchemaKind::kMap) {
        out.push_back(path + ".item_schema: list items must be text or map, not " +
                      std::string(schema_kind_name(k)));
      }
      validate_into(*l->item_schema, path + ".item_schema", inside_composite, out);
    }
  } else if (const auto* g = schema.as_log()) {
    if (g->display_limit == 0) out.push_back(path + ".display_limit: must be >= 1");
  } else if (const auto* c = schema.as_composite()) {
    if (inside_composite) {
      out.push_back(path + ": a composite section cannot itself be composite");
    }
    if (c->sections.empty()) out.push_back(path + ".sections: a composite needs a section");
    std::set<std::string> seen;
    for (size_t i = 0; i < c->sections.size(); ++i) {
      const CompositeSection& s = c->sections[i];
      std::string sp = path + ".sections[" + std::to_string(i) + "] ('" + s.name + "')";
      if (s.name.empty()) out.push_back(sp + ": section name is empty");
      if (!seen.insert(s.name).second) {
        out.push_back(sp + ": duplicate section name '" + s.name + "'");
      }
      if (!s.schema) {
        out.push_back(sp + ": section has no schema");
        continue;
      }
      validate_into(*s.schema, sp + ".schema", true, out);
    }
  }
}

Status problems_status(const std::vector<std::string>& problems) {
  std::string msg = "invalid block schema";
  for (const auto& p : problems) msg += "\n  " + p;
  return invalid_argument(msg);
}

}  // namespace

json schema_to_json_value(const BlockSchema& schema) {
  json out = json::object();
  out["type"] = std::string(schema_kind_name(schema.kind()));
  if (const auto* m = schema.as_map()) {
    json fields = json::array();
    for (const FieldDef& f : m->fields) {
      json j = json::object();
      j["name"] = f.name;
      j["type"] = std::string(field_type_name(f.field_type));
      if (!f.description.empty()) j["description"] = f.description;
      if (f.required) j["required"] = true;
      if (f.default_value) j["default"] = *f.default_value;
      if (f.read_only) j["read_only"] = true;
      fields.push_back(std::move(j));
    }
    out["fields"] = std::move(fields);
  } else if (const auto* l = schema.as_list()) {
    if (l->item_schema) out["item_schema"] = schema_to_json_value(*l->item_schema);
    if (l->max_items) out["max_items"] = *l->max_items;
  } else if (const auto* g = schema.as_log()) {
    out["display_limit"] = g->display_limit;
  } else if (const auto* c = schema.as_composite()) {
    json sections = json::array();
    for (const CompositeSection& s : c->sections) {
      json j = json::object();
      j["name"] = s.name;
      j["schema"] = s.schema ? schema_to_json_value(*s.schema) : json();
      if (s.description) j["description"] = *s.description;
      if (s.read_only) j["read_only"] = true;
      sections.push_back(std::move(j));
    }
    out["sections"] = std::move(sections);
  }
  return out;
}

std::string schema_to_json(const BlockSchema& schema) {
  return schema_to_json_value(schema).dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<BlockSchema> schema_from_json_value(const json& value) {
  Parser parser;
  std::optional<BlockSchema> schema = parser.parse(value, "schema", 0);
  if (!parser.errors.empty() || !schema) {
    if (parser.errors.empty()) parser.errors.push_back("schema: could not be read");
    return problems_status(parser.errors);
  }
  WEFT_RETURN_IF_ERROR(check_schema(*schema));
  return std::move(*schema);
}

Result<BlockSchema> schema_from_json(std::string_view json_text) {
  WEFT_RETURN_IF_ERROR(check_json_depth(json_text).with_context("block schema"));
  json value;
  try {
    value = json::parse(json_text);
  } catch (const json::exception& e) {
    return invalid_argument(std::string("block schema is not valid JSON: ") + e.what());
  }
  return schema_from_json_value(value);
}

std::vector<std::string> validate_schema(const BlockSchema& schema) {
  std::vector<std::string> out;
  validate_into(schema, "schema", false, out);
  return out;
}

Status check_schema(const BlockSchema& schema) {
  auto problems = validate_schema(schema);
  if (problems.empty()) return Status();
  return problems_status(problems);
}

}  // namespace weft::doc
