// JSON-RPC 2.0 parsing and reply building (see include/weft/server/jsonrpc.h).
#include "weft/server/jsonrpc.h"

#include <utility>

namespace weft::server {
namespace {

Incoming error_item(const Json& id, int code, std::string message) {
  Incoming item;
  item.error_response = make_error(id, code, std::move(message));
  return item;
}

// The id to echo in an error for a malformed message: its id when readable.
Json salvage_id(const Json& value) {
  auto it = value.find("id");
  if (it != value.end() && is_valid_id(*it)) return *it;
  return nullptr;
}

Incoming classify_response(const Json& value, Message message) {
  message.kind = MessageKind::kResponse;
  auto err = value.find("error");
  if (err != value.end()) {
    RpcError e;
    if (err->is_object()) {
      auto code = err->find("code");
      auto msg = err->find("message");
      if (code != err->end() && code->is_number_integer()) e.code = code->get<int>();
      if (msg != err->end() && msg->is_string()) e.message = msg->get<std::string>();
      if (err->contains("data")) e.data = (*err)["data"];
    }
    message.error = std::move(e);
  } else {
    message.result = value["result"];
  }
  Incoming item;
  item.message = std::move(message);
  return item;
}

}  // namespace

Json RpcError::to_json() const {
  Json out = {{"code", code}, {"message", message}};
  if (!data.is_null()) out["data"] = data;
  return out;
}

bool is_valid_id(const Json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

Incoming classify_message(const Json& value) {
  if (!value.is_object()) {
    return error_item(nullptr, rpc::kInvalidRequest,
                      "Invalid Request: a JSON-RPC message must be a JSON object");
  }
  Json id = salvage_id(value);
  auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") {
    return error_item(id, rpc::kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  }
  Message message;
  auto id_it = value.find("id");
  bool has_id = id_it != value.end();
  if (has_id && !is_valid_id(*id_it)) {
    return error_item(nullptr, rpc::kInvalidRequest,
                      "Invalid Request: \"id\" must be a string or an integer (never null, "
                      "never fractional)");
  }
  auto method = value.find("method");
  if (method == value.end()) {
    if (has_id && (value.contains("result") != value.contains("error"))) {
      message.id = *id_it;
      return classify_response(value, std::move(message));
    }
    return error_item(id, rpc::kInvalidRequest,
                      "Invalid Request: a message needs \"method\" (request or notification) or "
                      "exactly one of \"result\"/\"error\" (response)");
  }
  if (!method->is_string() || method->get_ref<const std::string&>().empty()) {
    return error_item(id, rpc::kInvalidRequest,
                      "Invalid Request: \"method\" must be a non-empty string");
  }
  auto params = value.find("params");
  if (params != value.end() && !params->is_object() && !params->is_array()) {
    return error_item(id, rpc::kInvalidRequest,
                      "Invalid Request: \"params\" must be an object or an array when present");
  }
  message.kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
  if (has_id) message.id = *id_it;
  message.method = method->get<std::string>();
  if (params != value.end()) message.params = *params;
  Incoming item;
  item.message = std::move(message);
  return item;
}

Json make_oversize_error(size_t bytes, size_t max_bytes) {
  return make_error(nullptr, rpc::kInvalidRequest,
                    "Invalid Request: message of " + std::to_string(bytes) +
                        " bytes exceeds the limit of " + std::to_string(max_bytes) + " bytes");
}

ParsedInput parse_input(std::string_view text, size_t max_bytes, size_t max_depth,
                        size_t max_values) {
  ParsedInput out;
  if (text.size() > max_bytes) {
    Incoming item;
    item.error_response = make_oversize_error(text.size(), max_bytes);
    out.items.push_back(std::move(item));
    return out;
  }
  // Before parsing: a value deeper than this would overflow the stack when
  // copied or dumped, and millions of tiny values would take gigabytes.
  if (Status depth = check_json_shape(text, max_depth, max_values); !depth.ok()) {
    out.items.push_back(error_item(nullptr, rpc::kInvalidRequest,
                                   "Invalid Request: " + std::string(depth.message())));
    return out;
  }
  Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    out.items.push_back(error_item(nullptr, rpc::kParseError,
                                   "Parse error: the message is not valid JSON (one JSON-RPC "
                                   "message per line, UTF-8)"));
    return out;
  }
  if (!value.is_array()) {
    out.items.push_back(classify_message(value));
    return out;
  }
  if (value.empty()) {
    out.items.push_back(error_item(nullptr, rpc::kInvalidRequest, "Invalid Request: empty batch"));
    return out;
  }
  out.is_batch = true;
  for (const Json& element : value) out.items.push_back(classify_message(element));
  return out;
}

Json make_result(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json make_error(const Json& id, const RpcError& error) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", error.to_json()}};
}

Json make_error(const Json& id, int code, std::string message, Json data) {
  return make_error(id, RpcError{code, std::move(message), std::move(data)});
}

Json make_notification(std::string method, Json params) {
  Json out = {{"jsonrpc", "2.0"}, {"method", std::move(method)}};
  if (!params.is_null()) out["params"] = std::move(params);
  return out;
}

Json make_request(const Json& id, std::string method, Json params) {
  Json out = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}};
  if (!params.is_null()) out["params"] = std::move(params);
  return out;
}

std::string id_key(const Json& id) {
  if (id.is_string()) return "s:" + id.get<std::string>();
  return "n:" + id.dump();
}

}  // namespace weft::server
