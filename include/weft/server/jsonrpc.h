// JSON-RPC 2.0 framing for the MCP server: parsing one incoming message text
// into requests, notifications and responses, and building the replies.
//
// Nothing here throws: garbage, oversize input, bad ids and wrong member types
// all come back as the JSON-RPC error the sender should get (-32700 parse
// error, -32600 invalid request). Batches (JSON arrays) are recognised; whether
// they are allowed depends on the negotiated MCP version, so the caller decides.
//
// Thread safety: free functions on values; safe from any thread.
#ifndef WEFT_SERVER_JSONRPC_H_
#define WEFT_SERVER_JSONRPC_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/json_depth.h"

namespace weft::server {

using Json = nlohmann::json;

// Standard JSON-RPC codes and the MCP ones weft answers with.
namespace rpc {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;            // legacy era
inline constexpr int kHeaderMismatch = -32020;              // 2026-07-28
inline constexpr int kMissingClientCapability = -32021;     // 2026-07-28
inline constexpr int kUnsupportedProtocolVersion = -32022;  // 2026-07-28
}  // namespace rpc

// Default upper bound for one message (one stdio line or one HTTP body).
inline constexpr size_t kDefaultMaxMessageBytes = 16u << 20;

// A protocol error, sent back as {"code","message","data"?}.
struct RpcError {
  int code = rpc::kInternalError;
  std::string message;
  Json data;  // null when absent

  Json to_json() const;
};

enum class MessageKind { kRequest, kNotification, kResponse };

// One well-formed JSON-RPC message.
struct Message {
  MessageKind kind = MessageKind::kRequest;
  Json id;             // string or integer for requests/responses; null for notifications
  std::string method;  // requests and notifications
  Json params;         // object, array or null (absent)
  Json result;         // responses
  std::optional<RpcError> error;  // error responses
};

// One element of a parsed input: either a message or the error response the
// sender must receive for it (id null when the id could not be read).
struct Incoming {
  std::optional<Message> message;
  std::optional<Json> error_response;
};

// What one message text contained.
struct ParsedInput {
  bool is_batch = false;
  std::vector<Incoming> items;  // one item unless is_batch
};

// Parses `text` (one stdio line or one HTTP body). Never fails: bad input is
// reported through Incoming::error_response. Texts longer than `max_bytes`,
// nesting deeper than `max_depth` levels or holding more than `max_values`
// values, get -32600 without being parsed ("Invalid Request: JSON nested
// deeper than 64 levels (at byte N)"; see check_json_shape). An
// empty batch is one -32600 item with is_batch false (JSON-RPC answers it
// with a single error).
ParsedInput parse_input(std::string_view text, size_t max_bytes = kDefaultMaxMessageBytes,
                        size_t max_depth = kMaxJsonDepth,
                        size_t max_values = kMaxJsonValues);

// The -32600 error (id null) for a message of `bytes` over `max_bytes`.
Json make_oversize_error(size_t bytes, size_t max_bytes);

// Validates one already-decoded JSON value as a message.
Incoming classify_message(const Json& value);

// True when `id` is usable as a request id: a string or an integer.
bool is_valid_id(const Json& id);

// {"jsonrpc":"2.0","id":id,"result":result}
Json make_result(const Json& id, Json result);
// {"jsonrpc":"2.0","id":id,"error":{...}}
Json make_error(const Json& id, const RpcError& error);
Json make_error(const Json& id, int code, std::string message, Json data = nullptr);
// {"jsonrpc":"2.0","method":method,"params":params}
Json make_notification(std::string method, Json params);
// {"jsonrpc":"2.0","id":id,"method":method,"params":params}
Json make_request(const Json& id, std::string method, Json params);

// Serialises for the wire: one line, no embedded newline, invalid UTF-8
// replaced (never throws).
std::string serialize(const Json& message);

// A stable map key for an id (ids 1 and "1" differ).
std::string id_key(const Json& id);

}  // namespace weft::server

#endif  // WEFT_SERVER_JSONRPC_H_
