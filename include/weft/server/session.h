// One MCP conversation: a stdio process or one Streamable HTTP session (the
// 2026-07-28 era uses a throwaway Session per request). It holds the
// negotiated version, the client's capabilities, the logging level, the roots
// the client narrowed the workspace to, the calls in flight (so that
// notifications/cancelled can stop them), and the server's own requests to
// the client (roots/list) awaiting their response.
//
// Thread safety: every method may be called from any thread; state is guarded
// by an internal mutex. The sender is called without the lock held, possibly
// from several threads at once: the transport serialises writes.
#ifndef WEFT_SERVER_SESSION_H_
#define WEFT_SERVER_SESSION_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "weft/server/jsonrpc.h"
#include "weft/server/tool.h"

namespace weft::server {

// The cancellation flags of the requests that arrived on one channel (an
// HTTP request's connection), so that they all stop when the client goes
// away: cancel() sets every member's flag, and a flag added later is set at
// once. Thread-safe.
class CancelGroup {
 public:
  void add(const std::shared_ptr<std::atomic<bool>>& flag);
  void remove(const std::shared_ptr<std::atomic<bool>>& flag);
  void cancel();
  bool cancelled() const;

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::vector<std::shared_ptr<std::atomic<bool>>> flags_;
};

class Session {
 public:
  // Sends one message to the client (notifications and server requests).
  using Sender = std::function<void(const Json&)>;
  using ResponseHandler = std::function<void(const Message& response)>;

  explicit Session(Sender to_client);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Records the legacy handshake's outcome.
  void set_initialized(std::string protocol_version, Json client_capabilities);
  void mark_client_ready();  // notifications/initialized arrived
  // The negotiated version, empty before initialize.
  std::string protocol_version() const;
  // initialize's clientInfo.name, made safe for attribution ("unknown" when absent):
  // changes the client makes are attributed to "agent:<client_name>".
  void set_client_name(std::string name);
  std::string client_name() const;
  Json client_capabilities() const;
  bool client_ready() const;

  // logging/setLevel; nullopt = the client never asked for logs.
  void set_log_level(LogLevel level);
  std::optional<LogLevel> log_level() const;

  // Workspace-relative prefixes the client's roots allow; empty = all.
  void set_roots(std::vector<std::string> prefixes);
  std::vector<std::string> roots() const;

  // Registers an in-flight request; the flag turns true if it is cancelled.
  // The flag starts true when a cancel for this id arrived before the request
  // began (a transport may queue a request behind a cancel it already read).
  // Returns null when a request with the same id is already in flight.
  std::shared_ptr<std::atomic<bool>> begin_request(const Json& id);
  void end_request(const Json& id);
  // Cancels an in-flight request and returns true. An id not in flight is
  // remembered (the last kEarlyCancelsKept of them) in case its request has
  // not begun yet, and false is returned; ids are never reused within a
  // session, so a cancel for a finished request only takes a slot.
  bool cancel_request(const Json& id);
  static constexpr size_t kEarlyCancelsKept = 64;
  size_t in_flight() const;

  // Sends a request to the client; `on_response` runs when its response arrives.
  void send_request(const std::string& method, Json params, ResponseHandler on_response);
  // Routes a response from the client; false when it answers nothing we asked.
  bool take_response(const Message& response);

  void send(const Json& message) const;

 private:
  Sender to_client_;
  mutable std::mutex mu_;
  std::string protocol_version_;
  std::string client_name_ = "unknown";
  Json client_capabilities_ = Json::object();
  bool client_ready_ = false;
  std::optional<LogLevel> log_level_;
  std::vector<std::string> roots_;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> in_flight_;
  std::deque<std::string> early_cancels_;  // oldest first, at most kEarlyCancelsKept
  std::map<std::string, ResponseHandler> pending_;
  uint64_t next_request_ = 1;
};

}  // namespace weft::server

#endif  // WEFT_SERVER_SESSION_H_
