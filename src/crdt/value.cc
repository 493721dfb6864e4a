// Value JSON conversion.
#include <cmath>
#include <cstdio>

#include "crdt/json_value.h"
#include "weft/base/json_depth.h"

namespace weft::crdt {
namespace detail {

Result<Value> value_from_json_at(const nlohmann::json& j, const std::vector<PeerId>* peer_table,
                                 size_t depth);

Result<Value> value_from_json(const nlohmann::json& j, const std::vector<PeerId>* peer_table) {
  return value_from_json_at(j, peer_table, 0);
}

// `depth`: the lists and maps around `j`. Deeper values are refused, not
// recursed into.
Result<Value> value_from_json_at(const nlohmann::json& j, const std::vector<PeerId>* peer_table,
                                 size_t depth) {
  if (j.is_structured() && depth >= kMaxValueDepth) {
    return invalid_argument("value nested deeper than " + std::to_string(kMaxValueDepth) +
                            " levels");
  }
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value();
    case nlohmann::json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      if (s.rfind(kCidPrefix, 0) == 0) {
        std::string cid = s.substr(kCidPrefix.size());
        WEFT_ASSIGN_OR_RETURN(ContainerId id, ContainerId::parse(cid));
        if (!id.is_root() && peer_table) {
          ID raw = id.id();
          if (raw.peer >= peer_table->size()) {
            return invalid_argument("container reference '" + cid + "' uses peer index " +
                                    std::to_string(raw.peer) + " outside the peer table");
          }
          id = ContainerId::child({(*peer_table)[raw.peer], raw.counter}, id.type());
        }
        return Value(id);
      }
      return Value(s);
    }
    case nlohmann::json::value_t::array: {
      ValueList l;
      l.reserve(j.size());
      for (const auto& e : j) {
        WEFT_ASSIGN_OR_RETURN(Value v, value_from_json_at(e, peer_table, depth + 1));
        if (v.is_container())
          return invalid_argument("a container reference nested inside a list value");
        l.push_back(std::move(v));
      }
      return Value(std::move(l));
    }
    case nlohmann::json::value_t::object: {
      ValueMap m;
      for (const auto& [k, e] : j.items()) {
        WEFT_ASSIGN_OR_RETURN(Value v, value_from_json_at(e, peer_table, depth + 1));
        if (v.is_container())
          return invalid_argument("a container reference nested inside a map value");
        m.emplace(k, std::move(v));
      }
      return Value(std::move(m));
    }
    default:
      return invalid_argument("unsupported JSON value (binary)");
  }
}

nlohmann::json value_to_json(const Value& v,
                             const std::function<std::string(const ContainerId&)>* cid_writer) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return nullptr;
    case Value::Kind::kBool:
      return v.as_bool();
    case Value::Kind::kI64:
      return v.as_i64();
    case Value::Kind::kF64: {
      double d = v.as_f64();
      if (!std::isfinite(d)) return nullptr;
      return d;
    }
    case Value::Kind::kString:
      return v.as_string();
    case Value::Kind::kBinary: {
      nlohmann::json a = nlohmann::json::array();
      for (uint8_t b : v.as_binary().bytes) a.push_back(int64_t{b});
      return a;
    }
    case Value::Kind::kList: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : v.as_list()) a.push_back(value_to_json(e, cid_writer));
      return a;
    }
    case Value::Kind::kMap: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& [k, e] : v.as_map()) o[k] = value_to_json(e, cid_writer);
      return o;
    }
    case Value::Kind::kContainer:
      return std::string(kCidPrefix) +
             (cid_writer ? (*cid_writer)(v.as_container()) : v.as_container().to_string());
  }
  return nullptr;
}

void append_number(double d, std::string& out) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  if (d == 0) {
    out += "0";
    return;
  }
  if (std::floor(d) == d && std::fabs(d) < 1e21) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", d);
    out += buf;
    return;
  }
  // Shortest representation that round-trips (as JSON.stringify prints).
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  out += buf;
}

void write_json(const nlohmann::json& j, std::string& out) {
  switch (j.type()) {
    case nlohmann::json::value_t::number_float:
      append_number(j.get<double>(), out);
      return;
    case nlohmann::json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : j) {
        if (!first) out += ',';
        first = false;
        write_json(e, out);
      }
      out += ']';
      return;
    }
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      // nlohmann's default object is a std::map: keys already sorted.
      for (const auto& [k, e] : j.items()) {
        if (!first) out += ',';
        first = false;
        out += nlohmann::json(k).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        out += ':';
        write_json(e, out);
      }
      out += '}';
      return;
    }
    default:
      out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace detail

std::string Value::to_json_string() const {
  std::string out;
  detail::write_json(detail::value_to_json(*this), out);
  return out;
}

Result<Value> Value::from_json_string(std::string_view json) {
  WEFT_RETURN_IF_ERROR(check_json_depth(json, kMaxValueDepth));
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded()) return invalid_argument("malformed JSON value");
  return detail::value_from_json(j, nullptr);
}

}  // namespace weft::crdt
