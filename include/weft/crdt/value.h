// Value: what a map slot or list element holds, and what to_json() returns.
// One of null, bool, i64, f64, string, binary, list, map, or a reference to a
// child container (resolved to the container's own value by Doc::to_json()).
//
// Thread safety: a plain value; safe to copy and read from any thread.
#ifndef WEFT_CRDT_VALUE_H_
#define WEFT_CRDT_VALUE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "weft/crdt/container_id.h"

namespace weft::crdt {

class Value;

// Lists and maps in a value nest at most this many levels (a list at the top
// is level 1). Every way in refuses deeper values (the JSON and binary
// importers, and the handles' set/insert/mark), so whatever a doc holds
// exports and imports again, and code walking a value recurses boundedly.
inline constexpr size_t kMaxValueDepth = 256;

using ValueList = std::vector<Value>;
using ValueMap = std::map<std::string, Value>;  // sorted by key (byte order)
struct Binary {
  std::vector<uint8_t> bytes;
  friend bool operator==(const Binary&, const Binary&) = default;
};

class Value {
 public:
  enum class Kind : uint8_t { kNull, kBool, kI64, kF64, kString, kBinary, kList, kMap, kContainer };

  Value() = default;                                 // null
  Value(std::nullptr_t) {}                           // NOLINT
  Value(bool b) : v_(b) {}                           // NOLINT
  Value(int v) : v_(int64_t{v}) {}                   // NOLINT
  Value(int64_t v) : v_(v) {}                        // NOLINT
  Value(double v) : v_(v) {}                         // NOLINT
  Value(const char* s) : v_(std::string(s)) {}       // NOLINT
  Value(std::string s) : v_(std::move(s)) {}         // NOLINT
  Value(std::string_view s) : v_(std::string(s)) {}  // NOLINT
  Value(Binary b) : v_(std::move(b)) {}              // NOLINT
  Value(ValueList l) : v_(std::move(l)) {}           // NOLINT
  Value(ValueMap m) : v_(std::move(m)) {}            // NOLINT
  Value(ContainerId c) : v_(std::move(c)) {}         // NOLINT

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_container() const { return kind() == Kind::kContainer; }

  // Accessors; REQUIRE the matching kind().
  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_i64() const { return std::get<int64_t>(v_); }
  double as_f64() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Binary& as_binary() const { return std::get<Binary>(v_); }
  const ValueList& as_list() const { return std::get<ValueList>(v_); }
  ValueList& as_list() { return std::get<ValueList>(v_); }
  const ValueMap& as_map() const { return std::get<ValueMap>(v_); }
  ValueMap& as_map() { return std::get<ValueMap>(v_); }
  const ContainerId& as_container() const { return std::get<ContainerId>(v_); }

  // Compact JSON with map keys sorted. Binary prints as an array of bytes,
  // NaN/Inf as null, a container as "🦜:cid:..." (the Loro convention).
  std::string to_json_string() const;
  // Parses JSON: integer literals become i64, others f64; "🦜:cid:..." strings
  // become container references. Errors: kInvalidArgument for malformed JSON
  // or lists and maps nested deeper than kMaxValueDepth.
  static Result<Value> from_json_string(std::string_view json);

  friend bool operator==(const Value&, const Value&) = default;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, Binary, ValueList, ValueMap,
               ContainerId>
      v_;
};

}  // namespace weft::crdt

#endif  // WEFT_CRDT_VALUE_H_
