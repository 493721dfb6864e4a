// The MCP protocol engine: parsing, era detection, lifecycle and dispatch.
// Tools and resources methods live in mcp_methods.cc.
#include "weft/server/mcp_server.h"

#include <exception>
#include <utility>

#include "server/request_info.h"

namespace weft::server {
namespace {

// The modern-era fields of a request's _meta, validated.
std::variant<RequestInfoFields, RpcError> read_meta(const Message& message) {
  RequestInfoFields info;
  if (!message.params.is_object()) return info;
  auto meta = message.params.find("_meta");
  if (meta == message.params.end()) return info;
  if (!meta->is_object()) return invalid_params("params._meta must be an object");
  auto token = meta->find("progressToken");
  if (token != meta->end() && (token->is_string() || token->is_number_integer())) {
    info.progress_token = *token;
  }
  auto version = meta->find(kMetaProtocolVersion);
  if (version == meta->end()) return info;
  if (!version->is_string() || version->get<std::string>() != kModernVersion) {
    return RpcError{rpc::kUnsupportedProtocolVersion,
                    "Unsupported protocol version " + version->dump() + "; this server supports " +
                        std::string(kModernVersion) +
                        " statelessly, or the legacy versions through initialize",
                    Json{{"supported", Json::array({kModernVersion})}, {"requested", *version}}};
  }
  info.modern = true;
  auto caps = meta->find(kMetaClientCapabilities);
  if (caps == meta->end() || !caps->is_object()) {
    return invalid_params("params._meta[\"" + std::string(kMetaClientCapabilities) +
                          "\"] (an object) is required in protocol version " +
                          std::string(kModernVersion));
  }
  auto level = meta->find(kMetaLogLevel);
  LogLevel parsed;
  if (level != meta->end() && level->is_string() &&
      parse_log_level(level->get<std::string>(), &parsed)) {
    info.log_level = parsed;
  }
  return info;
}

}  // namespace

const std::vector<std::string>& legacy_versions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                    "2024-11-05"};
  return versions;
}

bool version_allows_batches(std::string_view version) {
  return version == "2025-03-26" || version == "2024-11-05";
}

McpServer::McpServer(ServerOptions options, std::shared_ptr<const ToolRegistry> tools,
                     std::shared_ptr<ResourceProvider> resources, Workspace* workspace)
    : options_(std::move(options)),
      tools_(std::move(tools)),
      resources_(std::move(resources)),
      workspace_(workspace) {
  if (!tools_) tools_ = std::make_shared<ToolRegistry>();
}

bool McpServer::must_run_inline(const Message& message) {
  return message.kind != MessageKind::kRequest || message.method == "initialize" ||
         message.method == "logging/setLevel";
}

bool McpServer::is_quick_call(const Message& message) const {
  if (message.kind != MessageKind::kRequest || message.method != "tools/call") return false;
  if (!message.params.is_object()) return false;
  auto name = message.params.find("name");
  if (name == message.params.end() || !name->is_string()) return false;
  const ToolSpec* tool = tools_->find(name->get_ref<const std::string&>());
  return tool && tool->quick;
}

void McpServer::diag(const std::string& line) const {
  if (options_.diagnostics) options_.diagnostics(line);
}

std::optional<Json> McpServer::handle_text(std::string_view text, Session& session,
                                           const Session::Sender& related, CancelGroup* group) {
  return handle_input(parse_input(text, options_.max_message_bytes), session, related, group);
}

std::optional<Json> McpServer::handle_input(ParsedInput input, Session& session,
                                            const Session::Sender& related, CancelGroup* group) {
  if (input.is_batch && !version_allows_batches(session.protocol_version())) {
    std::string version = session.protocol_version();
    return make_error(nullptr, rpc::kInvalidRequest,
                      "Invalid Request: JSON-RPC batches are not supported in protocol version " +
                          (version.empty() ? std::string(kLatestLegacyVersion) : version) +
                          " (removed in 2025-06-18); send one message per line");
  }
  if (input.is_batch && input.items.size() > options_.max_batch_items) {
    return make_error(nullptr, rpc::kInvalidRequest,
                      "Invalid Request: a batch of " + std::to_string(input.items.size()) +
                          " messages exceeds the limit of " +
                          std::to_string(options_.max_batch_items) + "; split it");
  }
  Json replies = Json::array();
  size_t reply_bytes = 2;  // the brackets
  bool full = false;       // the replies reached max_batch_reply_bytes
  for (Incoming& item : input.items) {
    if (group && group->cancelled()) return std::nullopt;  // nobody is left to answer
    std::optional<Json> reply;
    const Json id = item.message ? item.message->id : Json();
    if (item.error_response) {
      reply = std::move(item.error_response);
    } else if (input.is_batch && item.message->method == "initialize") {
      reply = make_error(id, rpc::kInvalidRequest,
                         "Invalid Request: initialize must not be part of a batch");
    } else if (full && item.message->kind == MessageKind::kRequest) {
      reply = batch_reply_limit_error(id);
    } else {
      reply = handle_message(*item.message, session, related, group);
    }
    if (!reply) continue;
    if (input.is_batch) {
      size_t size = serialize(*reply).size() + 1;  // and its comma
      if (!full && reply_bytes + size > options_.max_batch_reply_bytes) {
        full = true;
        reply = batch_reply_limit_error(id);
        size = serialize(*reply).size() + 1;
      }
      reply_bytes += size;
    }
    replies.push_back(std::move(*reply));
  }
  if (!input.is_batch) {
    if (replies.empty()) return std::nullopt;
    return std::move(replies[0]);
  }
  if (replies.empty()) return std::nullopt;
  return replies;
}

Json McpServer::batch_reply_limit_error(const Json& id) const {
  return make_error(id, rpc::kInvalidRequest,
                    "Invalid Request: the replies to this batch reached the limit of " +
                        std::to_string(options_.max_batch_reply_bytes) +
                        " bytes, so this request was not run; send it again in a smaller batch");
}

std::optional<Json> McpServer::handle_message(const Message& message, Session& session,
                                              const Session::Sender& related, CancelGroup* group) {
  switch (message.kind) {
    case MessageKind::kResponse:
      if (!session.take_response(message)) diag("ignoring a response to an unknown request");
      return std::nullopt;
    case MessageKind::kNotification:
      handle_notification(message, session);
      return std::nullopt;
    case MessageKind::kRequest:
      return handle_request(message, session, related, group);
  }
  return std::nullopt;
}

void McpServer::handle_notification(const Message& message, Session& session) {
  const Json& params = message.params;
  if (message.method == "notifications/initialized") {
    session.mark_client_ready();
    Json caps = session.client_capabilities();
    if (caps.contains("roots") && options_.map_roots) request_roots(session);
  } else if (message.method == "notifications/cancelled") {
    if (params.is_object() && params.contains("requestId") && is_valid_id(params["requestId"])) {
      session.cancel_request(params["requestId"]);  // may precede its request; see Session
    }
  } else if (message.method == "notifications/roots/list_changed") {
    if (options_.map_roots) request_roots(session);
  }
  // Other notifications need nothing from us.
}

void McpServer::request_roots(Session& session) {
  auto map = options_.map_roots;
  auto diagnostics = options_.diagnostics;
  session.send_request(
      "roots/list", Json::object(), [map, diagnostics, &session](const Message& r) {
        if (r.error || !r.result.is_object() || !r.result.contains("roots") ||
            !r.result["roots"].is_array()) {
          if (diagnostics) diagnostics("roots/list failed; keeping the whole workspace");
          return;
        }
        std::vector<std::string> uris;
        for (const Json& root : r.result["roots"]) {
          if (root.is_object() && root.contains("uri") && root["uri"].is_string()) {
            uris.push_back(root["uri"].get<std::string>());
          }
        }
        std::vector<std::string> prefixes = map(uris);
        if (!uris.empty() && prefixes.empty()) {
          if (diagnostics)
            diagnostics("no client root lies inside the workspace; keeping all of it");
        }
        session.set_roots(std::move(prefixes));
      });
}

std::optional<Json> McpServer::handle_request(const Message& message, Session& session,
                                              const Session::Sender& related, CancelGroup* group) {
  if (!message.params.is_null() && !message.params.is_object()) {
    return make_error(message.id, rpc::kInvalidParams, "params must be an object in MCP");
  }
  auto meta = read_meta(message);
  if (auto* error = std::get_if<RpcError>(&meta)) return make_error(message.id, *error);
  RequestInfo info{std::get<RequestInfoFields>(std::move(meta)), nullptr};
  auto cancel = session.begin_request(message.id);
  if (!cancel) {
    return make_error(message.id, rpc::kInvalidRequest,
                      "Invalid Request: id " + message.id.dump() + " is already in flight");
  }
  info.cancel = cancel;
  if (group) group->add(cancel);
  Outcome outcome;
  if (!cancel->load()) {  // cancelled before it began: nothing to run
    try {
      outcome = dispatch(message, info, session, related);
    } catch (const std::exception& e) {
      outcome = RpcError{rpc::kInternalError, std::string("Internal error: ") + e.what(), nullptr};
    }
  }
  if (group) group->remove(cancel);
  session.end_request(message.id);
  if (cancel->load()) return std::nullopt;  // a cancelled request gets no response
  if (auto* error = std::get_if<RpcError>(&outcome)) return make_error(message.id, *error);
  Json result = std::get<Json>(std::move(outcome));
  if (info.modern && result.is_object()) result["resultType"] = "complete";
  return make_result(message.id, std::move(result));
}

McpServer::Outcome McpServer::dispatch(const Message& message, const RequestInfo& info,
                                       Session& session, const Session::Sender& related) {
  const std::string& method = message.method;
  const Json params = message.params.is_object() ? message.params : Json::object();
  if (method == "initialize") return initialize(params, session);
  if (method == "server/discover") return discover();
  if (method == "tools/list") return list_tools(params);
  if (method == "tools/call") return call_tool(message, info, session, related);
  if (method == "resources/list") return list_resources(params, session);
  if (method == "resources/read") return read_resource(params, session);
  if (method == "resources/templates/list") {
    return Json{{"resourceTemplates", resources_ ? resources_->templates() : Json::array()}};
  }
  if (!info.modern) {
    if (method == "ping") return Json::object();
    if (method == "logging/setLevel") return set_level(params, session);
  }
  return RpcError{rpc::kMethodNotFound,
                  "Method not found: '" + method + "'" +
                      (info.modern && (method == "ping" || method == "logging/setLevel")
                           ? " (removed in protocol version 2026-07-28)"
                           : ""),
                  nullptr};
}

McpServer::Outcome McpServer::initialize(const Json& params, Session& session) {
  auto requested = params.find("protocolVersion");
  if (requested == params.end() || !requested->is_string()) {
    return invalid_params("initialize needs params.protocolVersion (a string such as \"" +
                          std::string(kLatestLegacyVersion) + "\")");
  }
  std::string version(kLatestLegacyVersion);
  for (const auto& known : legacy_versions()) {
    if (known == requested->get<std::string>()) version = known;
  }
  Json caps = params.contains("capabilities") ? params["capabilities"] : Json::object();
  session.set_initialized(version, caps);
  if (auto info = params.find("clientInfo"); info != params.end() && info->is_object()) {
    auto name = info->find("name");
    if (name != info->end() && name->is_string()) session.set_client_name(name->get<std::string>());
  }
  Json result = {
      {"protocolVersion", version},
      {"capabilities", capabilities()},
      {"serverInfo",
       {{"name", options_.name}, {"title", options_.title}, {"version", options_.version}}}};
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  return result;
}

Json McpServer::capabilities() const {
  Json caps = {{"tools", {{"listChanged", false}}}, {"logging", Json::object()}};
  if (resources_) caps["resources"] = {{"subscribe", false}, {"listChanged", false}};
  return caps;
}

Json McpServer::discover() const {
  Json versions = Json::array({kModernVersion});
  for (const auto& v : legacy_versions()) versions.push_back(v);
  Json result = {
      {"supportedVersions", versions},
      {"capabilities", capabilities()},
      {"serverInfo",
       {{"name", options_.name}, {"title", options_.title}, {"version", options_.version}}}};
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  return result;
}

McpServer::Outcome McpServer::set_level(const Json& params, Session& session) {
  auto level = params.find("level");
  LogLevel parsed;
  if (level == params.end() || !level->is_string() ||
      !parse_log_level(level->get<std::string>(), &parsed)) {
    return invalid_params(
        "logging/setLevel needs params.level, one of debug, info, notice, warning, error, "
        "critical, alert, emergency");
  }
  session.set_log_level(parsed);
  return Json::object();
}

}  // namespace weft::server
