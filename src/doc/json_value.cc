#include "doc/json_value.h"

#include <cmath>
#include <limits>

#include "weft/base/utf.h"

namespace weft::doc {

using nlohmann::json;

crdt::Value json_to_value(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return crdt::Value();
    case json::value_t::boolean:
      return crdt::Value(j.get<bool>());
    case json::value_t::number_integer:
      return crdt::Value(j.get<int64_t>());
    case json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return crdt::Value(static_cast<int64_t>(u));
      }
      return crdt::Value(static_cast<double>(u));
    }
    case json::value_t::number_float:
      return crdt::Value(j.get<double>());
    case json::value_t::string:
      return crdt::Value(j.get<std::string>());
    case json::value_t::array: {
      crdt::ValueList list;
      list.reserve(j.size());
      for (const auto& e : j) list.push_back(json_to_value(e));
      return crdt::Value(std::move(list));
    }
    case json::value_t::object: {
      crdt::ValueMap map;
      for (auto it = j.begin(); it != j.end(); ++it) map[it.key()] = json_to_value(it.value());
      return crdt::Value(std::move(map));
    }
    case json::value_t::binary: {
      crdt::Binary b;
      b.bytes.assign(j.get_binary().begin(), j.get_binary().end());
      return crdt::Value(std::move(b));
    }
    case json::value_t::discarded:
      break;
  }
  return crdt::Value();
}

json value_to_json(const crdt::Value& v, const crdt::Doc& doc) {
  using K = crdt::Value::Kind;
  switch (v.kind()) {
    case K::kNull:
      return nullptr;
    case K::kBool:
      return v.as_bool();
    case K::kI64:
      return v.as_i64();
    case K::kF64:
      return std::isfinite(v.as_f64()) ? json(v.as_f64()) : json(nullptr);
    case K::kString:
      return v.as_string();
    case K::kBinary: {
      json arr = json::array();
      for (uint8_t b : v.as_binary().bytes) arr.push_back(b);
      return arr;
    }
    case K::kList: {
      json arr = json::array();
      for (const auto& e : v.as_list()) arr.push_back(value_to_json(e, doc));
      return arr;
    }
    case K::kMap: {
      json obj = json::object();
      for (const auto& [k, e] : v.as_map()) obj[k] = value_to_json(e, doc);
      return obj;
    }
    case K::kContainer: {
      auto inner = doc.get_value(v.as_container());
      return inner.ok() ? value_to_json(*inner, doc) : json(nullptr);
    }
  }
  return nullptr;
}

std::string json_dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string json_display(const json& j) {
  if (j.is_null()) return "";
  if (j.is_string()) return j.get<std::string>();
  return json_dump(j);
}

size_t json_chars(const json& j) {
  std::string s = json_display(j);
  return is_valid_utf8(s) ? count_unicode_unchecked(s) : s.size();
}

}  // namespace weft::doc
