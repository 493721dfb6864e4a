// The JSON Schema subset validator (see include/weft/server/json_schema.h).
#include "weft/server/json_schema.h"

#include <cmath>

namespace weft::server {
namespace {

struct Walker {
  size_t max_errors;
  std::vector<std::string> errors;

  bool full() const { return errors.size() >= max_errors; }
  void report(const std::string& where, std::string problem) {
    if (!full()) errors.push_back(where + ": " + std::move(problem));
  }
  void walk(const Json& schema, const Json& value, const std::string& where);
  void check_object(const Json& schema, const Json& value, const std::string& where);
  void check_array(const Json& schema, const Json& value, const std::string& where);
  void check_scalars(const Json& schema, const Json& value, const std::string& where);
};

std::string describe(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  const char* kind = value.is_string()                                         ? "string "
                     : value.is_boolean()                                      ? "boolean "
                     : value.is_number_integer() || value.is_number_unsigned() ? "integer "
                     : value.is_number()                                       ? "number "
                     : value.is_array()                                        ? "array "
                     : value.is_object()                                       ? "object "
                                                                               : "";
  return kind + text;
}

bool has_type(const Json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") {
    if (value.is_number_integer() || value.is_number_unsigned()) return true;
    if (!value.is_number_float()) return false;
    double d = value.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return true;  // an unknown type name constrains nothing
}

// "a string" / "an integer" / "one of string, null"
std::string type_phrase(const Json& types) {
  if (types.is_string()) {
    std::string t = types.get<std::string>();
    bool vowel = !t.empty() && std::string("aeiou").find(t[0]) != std::string::npos;
    return std::string(vowel ? "an " : "a ") + t;
  }
  std::string out = "one of ";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) out += ", ";
    out += types[i].is_string() ? types[i].get<std::string>() : "?";
  }
  return out;
}

bool matches_type(const Json& types, const Json& value) {
  if (types.is_string()) return has_type(value, types.get<std::string>());
  if (!types.is_array()) return true;
  for (const Json& t : types) {
    if (t.is_string() && has_type(value, t.get<std::string>())) return true;
  }
  return false;
}

void Walker::walk(const Json& schema, const Json& value, const std::string& where) {
  if (full() || !schema.is_object()) return;
  auto type = schema.find("type");
  if (type != schema.end() && !matches_type(*type, value)) {
    report(where, "expected " + type_phrase(*type) + ", got " + describe(value));
    return;
  }
  auto en = schema.find("enum");
  if (en != schema.end() && en->is_array()) {
    bool found = false;
    for (const Json& option : *en) found = found || option == value;
    if (!found) report(where, "must be one of " + en->dump() + ", got " + describe(value));
  }
  auto cn = schema.find("const");
  if (cn != schema.end() && *cn != value) report(where, "must be " + cn->dump());
  if (value.is_object()) check_object(schema, value, where);
  if (value.is_array()) check_array(schema, value, where);
  check_scalars(schema, value, where);
}

void Walker::check_object(const Json& schema, const Json& value, const std::string& where) {
  auto required = schema.find("required");
  if (required != schema.end() && required->is_array()) {
    for (const Json& name : *required) {
      if (name.is_string() && !value.contains(name.get<std::string>())) {
        report(where, "missing required property \"" + name.get<std::string>() + "\"");
      }
    }
  }
  auto props = schema.find("properties");
  auto extra = schema.find("additionalProperties");
  for (auto it = value.begin(); it != value.end(); ++it) {
    std::string child = where + "." + it.key();
    if (props != schema.end() && props->is_object() && props->contains(it.key())) {
      walk((*props)[it.key()], it.value(), child);
    } else if (extra != schema.end() && extra->is_boolean() && !extra->get<bool>()) {
      std::string known;
      if (props != schema.end() && props->is_object()) {
        for (auto p = props->begin(); p != props->end(); ++p)
          known += (known.empty() ? "" : ", ") + p.key();
      }
      report(where, "unknown property \"" + it.key() + "\"" +
                        (known.empty() ? "" : " (allowed: " + known + ")"));
    } else if (extra != schema.end() && extra->is_object()) {
      walk(*extra, it.value(), child);
    }
  }
}

void Walker::check_array(const Json& schema, const Json& value, const std::string& where) {
  auto min_items = schema.find("minItems");
  if (min_items != schema.end() && min_items->is_number() &&
      value.size() < min_items->get<double>()) {
    report(where,
           "needs at least " + min_items->dump() + " item(s), got " + std::to_string(value.size()));
  }
  auto max_items = schema.find("maxItems");
  if (max_items != schema.end() && max_items->is_number() &&
      value.size() > max_items->get<double>()) {
    report(where,
           "allows at most " + max_items->dump() + " item(s), got " + std::to_string(value.size()));
  }
  auto items = schema.find("items");
  if (items == schema.end() || !items->is_object()) return;
  for (size_t i = 0; i < value.size() && !full(); ++i) {
    walk(*items, value[i], where + "[" + std::to_string(i) + "]");
  }
}

void Walker::check_scalars(const Json& schema, const Json& value, const std::string& where) {
  if (value.is_number()) {
    double d = value.get<double>();
    auto min = schema.find("minimum");
    if (min != schema.end() && min->is_number() && d < min->get<double>()) {
      report(where, "must be >= " + min->dump() + ", got " + value.dump());
    }
    auto max = schema.find("maximum");
    if (max != schema.end() && max->is_number() && d > max->get<double>()) {
      report(where, "must be <= " + max->dump() + ", got " + value.dump());
    }
  }
  if (value.is_string()) {
    // Lengths count bytes; the schemas only bound them loosely.
    size_t n = value.get_ref<const std::string&>().size();
    auto min_len = schema.find("minLength");
    if (min_len != schema.end() && min_len->is_number() && n < min_len->get<double>()) {
      report(where, n == 0 ? std::string("must not be empty")
                           : "must be at least " + min_len->dump() + " characters long");
    }
    auto max_len = schema.find("maxLength");
    if (max_len != schema.end() && max_len->is_number() && n > max_len->get<double>()) {
      report(where, "must be at most " + max_len->dump() + " characters long");
    }
  }
}

}  // namespace

std::vector<std::string> schema_violations(const Json& schema, const Json& value,
                                           std::string_view root_name, size_t max_errors) {
  Walker walker{max_errors == 0 ? 1 : max_errors, {}};
  walker.walk(schema, value, std::string(root_name));
  return walker.errors;
}

Status validate_json(const Json& schema, const Json& value, std::string_view root_name,
                     size_t max_errors) {
  auto errors = schema_violations(schema, value, root_name, max_errors);
  if (errors.empty()) return Status();
  std::string message = "invalid arguments:";
  for (const auto& e : errors) message += "\n- " + e;
  return invalid_argument(message);
}

}  // namespace weft::server
