// A small JSON Schema validator for the subset weft's tool schemas use:
// type (one name or a list), required, properties, additionalProperties
// (bool or schema), enum, const, minimum/maximum, minLength/maxLength, items,
// minItems/maxItems. Keywords outside the subset are ignored (annotations such
// as description, default, $schema, title).
//
// Messages name the failing location the way an agent would fix it:
// `arguments.edits[1].old_string: expected a string, got number 3`.
//
// Thread safety: pure functions; safe from any thread.
#ifndef WEFT_SERVER_JSON_SCHEMA_H_
#define WEFT_SERVER_JSON_SCHEMA_H_

#include <string>
#include <vector>

#include "weft/base/status.h"
#include "weft/server/jsonrpc.h"

namespace weft::server {

// Checks `value` against `schema`. Returns OK, or kInvalidArgument whose
// message lists every violation found (at most `max_errors`), one per line,
// each prefixed with its location under `root_name`.
Status validate_json(const Json& schema, const Json& value,
                     std::string_view root_name = "arguments", size_t max_errors = 8);

// Every violation, each "location: problem" (empty when valid).
std::vector<std::string> schema_violations(const Json& schema, const Json& value,
                                           std::string_view root_name, size_t max_errors);

}  // namespace weft::server

#endif  // WEFT_SERVER_JSON_SCHEMA_H_
