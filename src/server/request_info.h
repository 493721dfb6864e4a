// Per-request facts the engine derives from a request's `_meta` (private to
// src/server/).
#ifndef WEFT_SRC_SERVER_REQUEST_INFO_H_
#define WEFT_SRC_SERVER_REQUEST_INFO_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "weft/server/mcp_server.h"

namespace weft::server {

// The error answering a request whose params are wrong.
inline RpcError invalid_params(std::string message) {
  return RpcError{rpc::kInvalidParams, std::move(message), nullptr};
}

struct RequestInfoFields {
  bool modern = false;                // carried the 2026-07-28 _meta
  Json progress_token;                // null when absent
  std::optional<LogLevel> log_level;  // modern era: per-request level
};

struct McpServer::RequestInfo : RequestInfoFields {
  std::shared_ptr<std::atomic<bool>> cancel;
};

}  // namespace weft::server

#endif  // WEFT_SRC_SERVER_REQUEST_INFO_H_
