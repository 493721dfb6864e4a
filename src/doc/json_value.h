// Private: conversions between nlohmann::json (the doc API's value type) and
// crdt::Value (what the CRDT stores), and small text helpers.
#ifndef WEFT_SRC_DOC_JSON_VALUE_H_
#define WEFT_SRC_DOC_JSON_VALUE_H_

#include <nlohmann/json.hpp>
#include <string>

#include "weft/crdt/doc.h"

namespace weft::doc {

// Integers become i64 (unsigned above INT64_MAX: f64), other numbers f64,
// arrays/objects plain lists/maps (never child containers).
crdt::Value json_to_value(const nlohmann::json& j);
// Child containers are resolved through `doc` (their current value).
nlohmann::json value_to_json(const crdt::Value& v, const crdt::Doc& doc);
// How a value reads to an agent: strings as they are, null as "", others as
// compact JSON.
std::string json_display(const nlohmann::json& j);
// Characters a value counts against a char limit (Unicode scalar values of
// json_display).
size_t json_chars(const nlohmann::json& j);
// Compact JSON that never throws on invalid UTF-8 (replaces it).
std::string json_dump(const nlohmann::json& j);

}  // namespace weft::doc

#endif  // WEFT_SRC_DOC_JSON_VALUE_H_
