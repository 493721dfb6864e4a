// The MCP protocol engine, independent of transport: lifecycle for both eras
// (the legacy `initialize` handshake, versions 2025-11-25 / 2025-06-18 /
// 2025-03-26 / 2024-11-05, and the stateless 2026-07-28 era carried in
// `_meta`), tools, resources, logging, progress, cancellation and roots.
//
// A transport parses nothing itself: it hands each incoming message text to
// handle_text() together with the Session it belongs to and a sender for
// messages related to that request (progress, logs), and writes back the
// returned reply, if any.
//
// Thread safety: handle_text()/handle_message() may run concurrently for the
// same Session (the stdio worker pool does this); the server itself is
// immutable after construction.
#ifndef WEFT_SERVER_MCP_SERVER_H_
#define WEFT_SERVER_MCP_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "weft/base/status.h"
#include "weft/server/jsonrpc.h"
#include "weft/server/session.h"
#include "weft/server/tool.h"

namespace weft::server {

inline constexpr std::string_view kLatestLegacyVersion = "2025-11-25";
inline constexpr std::string_view kModernVersion = "2026-07-28";
inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaLogLevel = "io.modelcontextprotocol/logLevel";

// The legacy versions, newest first.
const std::vector<std::string>& legacy_versions();
// Whether JSON-RPC batches are allowed in `version` (only before 2025-06-18).
bool version_allows_batches(std::string_view version);

// Workspace files as MCP resources.
class ResourceProvider {
 public:
  virtual ~ResourceProvider() = default;
  // Up to `limit` Resource objects starting at `offset` in a stable order, under the
  // allowed `roots` (empty = all); *more is set when further entries exist.
  virtual Result<std::vector<Json>> list(size_t offset, size_t limit,
                                         const std::vector<std::string>& roots, bool* more) = 0;
  // The `contents` array of resources/read; kNotFound for an unknown uri,
  // kPermissionDenied/kInvalidArgument for one outside the workspace or roots.
  virtual Result<Json> read(const std::string& uri, const std::vector<std::string>& roots) = 0;
  // The resourceTemplates of resources/templates/list.
  virtual Json templates() const = 0;
};

struct ServerOptions {
  std::string name = "weft";
  std::string title = "weft workspace";
  std::string version = "0.1.0";
  std::string instructions;
  size_t max_message_bytes = kDefaultMaxMessageBytes;
  size_t tools_page_size = 100;
  size_t resources_page_size = 200;
  // A JSON-RPC batch (protocol 2025-03-26 and older) holds at most this many
  // messages; a longer one is refused whole with -32600.
  size_t max_batch_items = 100;
  // The replies to one batch stop growing past this many bytes (serialized):
  // the request whose reply would cross it, and every later one, is answered
  // with -32600 instead of running.
  size_t max_batch_reply_bytes = 16u << 20;
  // Maps the client's root URIs onto workspace-relative prefixes (roots that lie
  // outside the workspace are dropped). Unset: client roots are ignored.
  std::function<std::vector<std::string>(const std::vector<std::string>& uris)> map_roots;
  // Where diagnostic lines go (stderr for the CLI); unset = nowhere.
  std::function<void(const std::string&)> diagnostics;
};

class McpServer {
 public:
  McpServer(ServerOptions options, std::shared_ptr<const ToolRegistry> tools,
            std::shared_ptr<ResourceProvider> resources = nullptr, Workspace* workspace = nullptr);

  // Parses and handles one message text (a line or an HTTP body). Returns the
  // reply to write (a response, an error or a batch array), or nullopt when
  // nothing is owed (notifications, responses, cancelled calls).
  // `related` carries progress and log notifications of these requests.
  // When `group` is given, the requests join it while they run; once it is
  // cancelled (the client left), running requests stop, the rest of a batch
  // is skipped, and nothing is owed.
  std::optional<Json> handle_text(std::string_view text, Session& session,
                                  const Session::Sender& related, CancelGroup* group = nullptr);
  // handle_text() for a text the transport already parsed with parse_input()
  // (so that it is scanned and parsed once).
  std::optional<Json> handle_input(ParsedInput input, Session& session,
                                   const Session::Sender& related, CancelGroup* group = nullptr);
  // Handles one valid message; same contract as handle_text().
  std::optional<Json> handle_message(const Message& message, Session& session,
                                     const Session::Sender& related, CancelGroup* group = nullptr);

  // True for messages a transport must handle in arrival order on its reader
  // thread (lifecycle, cancellation, responses) rather than on a worker.
  static bool must_run_inline(const Message& message);
  // True for a tools/call of a quick tool (ToolSpec::quick), which a
  // transport may run inline when nothing else is in flight.
  bool is_quick_call(const Message& message) const;

  const ServerOptions& options() const { return options_; }
  const ToolRegistry& tools() const { return *tools_; }

 private:
  struct RequestInfo;
  // A result object, or the JSON-RPC error to answer with.
  using Outcome = std::variant<Json, RpcError>;

  std::optional<Json> handle_request(const Message& message, Session& session,
                                     const Session::Sender& related, CancelGroup* group);
  void handle_notification(const Message& message, Session& session);
  Outcome dispatch(const Message& message, const RequestInfo& info, Session& session,
                   const Session::Sender& related);
  Outcome initialize(const Json& params, Session& session);
  Json discover() const;
  Json capabilities() const;
  Outcome set_level(const Json& params, Session& session);
  Outcome list_tools(const Json& params) const;
  Outcome call_tool(const Message& message, const RequestInfo& info, Session& session,
                    const Session::Sender& related);
  Outcome list_resources(const Json& params, Session& session) const;
  Outcome read_resource(const Json& params, Session& session) const;
  void request_roots(Session& session);
  Json batch_reply_limit_error(const Json& id) const;
  void diag(const std::string& line) const;

  ServerOptions options_;
  std::shared_ptr<const ToolRegistry> tools_;
  std::shared_ptr<ResourceProvider> resources_;
  Workspace* workspace_;
};

}  // namespace weft::server

#endif  // WEFT_SERVER_MCP_SERVER_H_
