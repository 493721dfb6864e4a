// The stdio transport of `weft mcp`: one JSON-RPC message per line in, one
// per line out. Requests run concurrently on a small worker pool; lifecycle
// messages, notifications (including notifications/cancelled) and responses
// are handled on the reader thread in arrival order, so a cancel reaches a
// call that is still running. Replies are written whole, one at a time.
//
// The output descriptor carries only protocol messages. A line longer than the
// message limit is discarded as it streams in (memory stays bounded) and
// answered with -32600. At most max_queued requests wait for a worker; then
// the reader stops reading until one starts. Once stdout fails (the client is
// gone), queued requests are dropped unrun.
//
// Thread safety: serve_stdio() owns its threads and returns after they end.
#ifndef WEFT_SERVER_STDIO_TRANSPORT_H_
#define WEFT_SERVER_STDIO_TRANSPORT_H_

#include <cstddef>

#include "weft/base/status.h"
#include "weft/server/mcp_server.h"

namespace weft::server {

struct StdioOptions {
  size_t workers = 4;  // concurrent requests
  // Requests read but not yet started; past it, stdin is not read until a
  // worker frees a slot (the client's writes block: memory stays bounded).
  size_t max_queued = 64;
};

// Serves `server` over `in_fd`/`out_fd` until end of input; waits for the
// requests already read to finish (their replies are written), then returns
// OK. kUnavailable when reading or writing fails (e.g. the client went away).
Status serve_stdio(McpServer& server, int in_fd, int out_fd, StdioOptions options = {});

}  // namespace weft::server

#endif  // WEFT_SERVER_STDIO_TRANSPORT_H_
