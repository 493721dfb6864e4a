// Tools as the MCP server publishes them: a name, a JSON Schema for the
// arguments (checked before the handler runs), an optional output schema,
// annotations, and a handler. ToolRegistry holds them in a fixed order
// (tools/list is deterministic) and runs calls.
//
// Tool failures are values, not protocol errors: a handler returns a non-OK
// Status and the server turns it into an `isError` result whose text tells
// the agent what to change.
//
// Thread safety: a ToolRegistry is filled before serving and then only read,
// so call() may run from many threads at once. A ToolContext belongs to one
// call.
#ifndef WEFT_SERVER_TOOL_H_
#define WEFT_SERVER_TOOL_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/base/status.h"
#include "weft/server/jsonrpc.h"

namespace weft::server {

class Workspace;

// Syslog severities used by logging/setLevel and notifications/message.
enum class LogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };
// Parses "debug" ... "emergency"; false when unknown.
bool parse_log_level(std::string_view name, LogLevel* out);
std::string_view log_level_name(LogLevel level);

// Behaviour hints published in tools/list (clients treat them as untrusted).
struct ToolAnnotations {
  bool read_only = false;
  bool destructive = true;
  bool idempotent = false;
  bool open_world = false;
};

// What a handler returns on success.
struct ToolOutput {
  std::string text;  // the text block the model reads
  Json structured;   // structuredContent (an object matching the output schema), or null
  Json content;      // when an array: these content blocks replace the text block
  // The call failed, but with structured content to show (e.g. a refused
  // shell command): the result carries isError: true.
  bool is_error = false;
};

// Per-call facilities: the workspace, cancellation, progress and logging.
class ToolContext {
 public:
  using ProgressFn = std::function<void(double progress, double total, const std::string& msg)>;
  using LogFn = std::function<void(LogLevel level, const std::string& text)>;

  ToolContext(Workspace* workspace, std::vector<std::string> roots,
              std::shared_ptr<std::atomic<bool>> cancel, ProgressFn progress, LogFn log);

  // The workspace the tools act on (never null while serving; tests may pass null for
  // tools that do not touch it).
  Workspace* workspace() const { return workspace_; }
  // Workspace-relative prefixes the client's roots narrowed access to; empty = all.
  const std::vector<std::string>& roots() const { return roots_; }
  // True once the client cancelled the call; long loops check it and stop.
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
  // The cancellation flag itself (null when the call cannot be cancelled), for code below the
  // server that polls it, e.g. fs::GrepOptions::cancel. Lives as long as this context.
  const std::atomic<bool>* cancel_flag() const { return cancel_.get(); }
  // Reports progress when the client asked for it (a no-op otherwise). `progress` must grow.
  void progress(double progress, double total, const std::string& message = "") const;
  // Sends a log notification when the client's level admits it.
  void log(LogLevel level, const std::string& text) const;
  // The client's name (initialize's clientInfo.name; "unknown" when it gave none):
  // the kernel attributes the call's changes to "agent:<client_name>".
  const std::string& client_name() const { return client_name_; }
  void set_client_name(std::string name) { client_name_ = std::move(name); }
  // Who the call's changes are attributed to: "agent:<client_name>", unless a
  // person's tool (the CLI) set another origin such as "human:<name>".
  std::string origin() const { return origin_.empty() ? "agent:" + client_name_ : origin_; }
  void set_origin(std::string origin) { origin_ = std::move(origin); }

 private:
  Workspace* workspace_;
  std::vector<std::string> roots_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  ProgressFn progress_;
  LogFn log_;
  std::string client_name_ = "unknown";
  std::string origin_;
};

using ToolHandler = std::function<Result<ToolOutput>(const Json& args, ToolContext& ctx)>;

struct ToolSpec {
  std::string name;  // [A-Za-z0-9_.-]{1,128}
  std::string title;
  std::string description;
  Json input_schema;   // a JSON Schema object
  Json output_schema;  // null, or a JSON Schema of type object
  ToolAnnotations annotations;
  ToolHandler handler;
  // Runs where the root's workspace kernel runs: a front end process sends the
  // call there (ToolRegistry::set_forwarder) instead of running the handler.
  bool via_kernel = false;
  // Small, bounded work that never waits for a person or a long scan (e.g.
  // block_append's buffered chunk): a stdio server may run it on its reader
  // thread when no other request is in flight, saving a thread hand-off per
  // call on the streaming path.
  bool quick = false;

  // The Tool object of tools/list.
  Json to_json() const;
};

class ToolRegistry {
 public:
  // Adds a tool; kAlreadyExists for a duplicate name, kInvalidArgument for a bad name or schema.
  Status add(ToolSpec spec);
  // Drops every tool whose annotations are not read-only (for --read-only).
  void keep_read_only();

  const std::vector<ToolSpec>& tools() const { return tools_; }
  // The tool named `name`, or null.
  const ToolSpec* find(std::string_view name) const;

  // Validates `args` against the tool's schema, then runs the handler; returns the
  // CallToolResult ({content, structuredContent?, isError?}). Never throws. `tool`
  // must come from find().
  Json call(const ToolSpec& tool, const Json& args, ToolContext& ctx) const;

  // For via_kernel tools: once the arguments are valid, `forwarder` may answer
  // the call (a CallToolResult) instead of the handler; nullopt runs the
  // handler here. Set before serving.
  using Forwarder =
      std::function<std::optional<Json>(const ToolSpec& tool, const Json& args, ToolContext& ctx)>;
  void set_forwarder(Forwarder forwarder) { forwarder_ = std::move(forwarder); }

 private:
  std::vector<ToolSpec> tools_;
  std::map<std::string, size_t, std::less<>> index_;
  Forwarder forwarder_;
};

// A CallToolResult carrying one error text (isError: true).
Json tool_error_result(const std::string& text);

}  // namespace weft::server

#endif  // WEFT_SERVER_TOOL_H_
