// BlockSchema: the shape of a block's content. A block is Text (one text),
// Map (named, typed fields), List (items), Log (system-written entries, only
// the last display_limit shown) or Composite (named sections, each with its
// own schema and an optional read-only flag). FieldDef and CompositeSection
// carry the per-field / per-section read_only flag of seed 002: agents may
// not write there, system/source code may.
//
// Schemas are immutable values once built (nested schemas are shared through
// shared_ptr<const>), so copies are cheap and sharing across threads is safe.
// JSON (de)serialisation and validation: schema_json.h.
#ifndef WEFT_DOC_SCHEMA_H_
#define WEFT_DOC_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "weft/base/status.h"

namespace weft::doc {

// The type of one Map field. Persisted by name (field_type_name).
enum class FieldType : uint8_t {
  kText,       // a string
  kNumber,     // an integer or a float
  kBoolean,    // true / false
  kList,       // a list of JSON values (CRDT list: append/remove merge)
  kTimestamp,  // an ISO-8601 / RFC 3339 string or integer milliseconds since 1970
  kCounter,    // an integer counter (CRDT counter: concurrent increments add up)
};

struct FieldDef {
  std::string name;
  std::string description;
  FieldType field_type = FieldType::kText;
  bool required = false;
  std::optional<nlohmann::json> default_value;  // "default" in JSON
  bool read_only = false;                       // only system/source code may write it

  friend bool operator==(const FieldDef&, const FieldDef&) = default;
};

class BlockSchema;

struct CompositeSection {
  std::string name;
  std::shared_ptr<const BlockSchema> schema;  // never null in a valid schema
  std::optional<std::string> description;
  bool read_only = false;  // only system/source code may write the section

  friend bool operator==(const CompositeSection& a, const CompositeSection& b);
};

enum class SchemaKind : uint8_t { kText, kMap, kList, kLog, kComposite };

class BlockSchema {
 public:
  struct Text {
    friend bool operator==(const Text&, const Text&) = default;
  };
  struct Map {
    std::vector<FieldDef> fields;
    friend bool operator==(const Map&, const Map&) = default;
  };
  struct List {
    std::shared_ptr<const BlockSchema> item_schema;  // null: any JSON value
    std::optional<size_t> max_items;                 // null: unbounded
    friend bool operator==(const List& a, const List& b);
  };
  struct Log {
    size_t display_limit = 10;  // entries shown by render(); all are kept
    friend bool operator==(const Log&, const Log&) = default;
  };
  struct Composite {
    std::vector<CompositeSection> sections;
    friend bool operator==(const Composite&, const Composite&) = default;
  };
  using Variant = std::variant<Text, Map, List, Log, Composite>;

  BlockSchema() : v_(Text{}) {}                 // Text
  BlockSchema(Variant v) : v_(std::move(v)) {}  // NOLINT: implicit from a variant member

  static BlockSchema text() { return BlockSchema(Text{}); }
  static BlockSchema map(std::vector<FieldDef> fields) {
    return BlockSchema(Map{std::move(fields)});
  }
  static BlockSchema list(std::optional<BlockSchema> item_schema = std::nullopt,
                          std::optional<size_t> max_items = std::nullopt);
  static BlockSchema log(size_t display_limit) { return BlockSchema(Log{display_limit}); }
  static BlockSchema composite(std::vector<CompositeSection> sections) {
    return BlockSchema(Composite{std::move(sections)});
  }

  SchemaKind kind() const { return static_cast<SchemaKind>(v_.index()); }
  const Variant& variant() const { return v_; }
  // The alternative, or nullptr when the schema is of another kind.
  const Map* as_map() const { return std::get_if<Map>(&v_); }
  const List* as_list() const { return std::get_if<List>(&v_); }
  const Log* as_log() const { return std::get_if<Log>(&v_); }
  const Composite* as_composite() const { return std::get_if<Composite>(&v_); }

  // Map: the field's read_only flag. Composite: the section's read_only flag
  // when `field_name` names a section. nullopt when there is no such field
  // or the schema has no named fields (Text, List, Log).
  std::optional<bool> is_field_read_only(std::string_view field_name) const;
  // Names of the read-only fields of a Map (empty for other kinds).
  std::vector<std::string> read_only_fields() const;
  // Composite: the section's read_only flag; nullopt for no such section or
  // a schema that is not Composite.
  std::optional<bool> is_section_read_only(std::string_view section_name) const;
  // Composite: the section's schema; nullptr for no such section or a schema
  // that is not Composite.
  const BlockSchema* get_section_schema(std::string_view section_name) const;
  // Map: the field definition, or nullptr.
  const FieldDef* find_field(std::string_view field_name) const;

  friend bool operator==(const BlockSchema& a, const BlockSchema& b) { return a.v_ == b.v_; }

 private:
  Variant v_;
};

// Stable lower-case names: "text", "map", "list", "log", "composite".
std::string_view schema_kind_name(SchemaKind kind);
// "text", "number", "boolean", "list", "timestamp", "counter".
std::string_view field_type_name(FieldType type);
// Errors: kInvalidArgument naming the unknown type and listing the valid ones.
Result<FieldType> parse_field_type(std::string_view name);

// OK when `value` is a valid value of `type` (e.g. a default, or a value an
// agent sets). Errors: kInvalidArgument saying what was expected and got.
Status check_field_value(FieldType type, const nlohmann::json& value);

}  // namespace weft::doc

#endif  // WEFT_DOC_SCHEMA_H_
