// Internal: conversion between Value and nlohmann::json, and JS-like number
// printing (an integral f64 prints without ".0", like JSON.stringify).
#ifndef WEFT_SRC_CRDT_JSON_VALUE_H_
#define WEFT_SRC_CRDT_JSON_VALUE_H_

#include <nlohmann/json.hpp>

#include "weft/crdt/value.h"

namespace weft::crdt::detail {

inline constexpr std::string_view kCidPrefix = "\xF0\x9F\xA6\x9C:";  // "🦜:"

// JSON -> Value. `peer_table` (may be null) maps compressed peer indexes in
// "🦜:cid:C@I:Type" references. Errors: kInvalidArgument.
Result<Value> value_from_json(const nlohmann::json& j, const std::vector<PeerId>* peer_table);
// Value -> JSON (containers as "🦜:cid:..."; `peer_index` compresses child ids when set).
nlohmann::json value_to_json(
    const Value& v, const std::function<std::string(const ContainerId&)>* cid_writer = nullptr);
// Appends compact JSON with sorted keys and JS-style numbers.
void write_json(const nlohmann::json& j, std::string& out);
void append_number(double d, std::string& out);

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_JSON_VALUE_H_
