// JSON form of BlockSchema, written so a person can write one by hand:
//   {"type": "text"}                       (or just the string "text")
//   {"type": "map", "fields": [
//      {"name": "severity", "type": "text", "description": "...",
//       "required": true, "default": "warning", "read_only": true}]}
//   {"type": "list", "item_schema": {"type": "text"}, "max_items": 50}
//   {"type": "log", "display_limit": 20}
//   {"type": "composite", "sections": [
//      {"name": "diagnostics", "schema": {...}, "description": "...", "read_only": true}]}
// A field's type may also be spelt "field_type". Unknown keys are errors (they
// are usually typos). Validation reports every problem at once, each message
// naming the field or section by its path.
//
// Thread safety: stateless free functions; safe from any thread.
#ifndef WEFT_DOC_SCHEMA_JSON_H_
#define WEFT_DOC_SCHEMA_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/doc/schema.h"

namespace weft::doc {

// The canonical JSON value (keys in a fixed order; defaults omitted).
nlohmann::json schema_to_json_value(const BlockSchema& schema);
// Compact canonical JSON text; schema_from_json(schema_to_json(s)) == s.
std::string schema_to_json(const BlockSchema& schema);

// Parses and validates. Errors: kInvalidArgument with one line per problem,
// e.g. "schema.fields[1] ('count'): default \"x\" is not a number". Text
// nesting deeper than kMaxJsonDepth is refused before it is parsed.
Result<BlockSchema> schema_from_json(std::string_view json_text);
Result<BlockSchema> schema_from_json_value(const nlohmann::json& value);

// Validates a schema built in code: the problems (each naming the field or
// section), empty when valid. Checks: empty / duplicate field and section
// names, defaults of the wrong type, display_limit and max_items >= 1,
// composite sections nested in composites, list items that are not Text/Map,
// null section schemas.
std::vector<std::string> validate_schema(const BlockSchema& schema);
// validate_schema as a Status (kInvalidArgument listing the problems).
Status check_schema(const BlockSchema& schema);

}  // namespace weft::doc

#endif  // WEFT_DOC_SCHEMA_JSON_H_
