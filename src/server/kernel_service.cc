// The kernel's side and the front end's side of the requests in
// kernel_service.h.
#include "weft/server/kernel_service.h"

#include <unistd.h>

#include <mutex>
#include <unordered_set>
#include <utility>

#include "weft/base/json_depth.h"

namespace weft::server {

namespace {
// Paths a front end remembers having announced to the kernel (then it starts over).
constexpr size_t kMaxTrackedReads = 100'000;
}  // namespace

Json approval_json(const kernel::Approval& approval) {
  Json j = Json::parse(kernel::approval_to_json(approval));
  j.erase("kind");
  j.erase("proposed_text");  // "show" adds it back
  return j;
}

namespace {

std::string string_field(const Json& request, const char* key) {
  auto it = request.find(key);
  return it != request.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<Json> run_tool(Workspace& workspace, const ToolRegistry& tools, const Json& request) {
  std::string name = string_field(request, "name");
  const ToolSpec* tool = tools.find(name);
  if (!tool) return not_found("the kernel has no tool '" + name + "'");
  std::vector<std::string> roots;
  if (auto r = request.find("roots"); r != request.end() && r->is_array()) {
    for (const auto& root : *r) {
      if (root.is_string()) roots.push_back(root.get<std::string>());
    }
  }
  ToolContext ctx(&workspace, std::move(roots), nullptr, nullptr, nullptr);
  std::string client = string_field(request, "client");
  ctx.set_client_name(client.empty() ? "unknown" : client);
  // A person's command (weft rollback) names its origin; only "human:" ones are taken.
  if (std::string origin = string_field(request, "origin"); origin.rfind("human:", 0) == 0) {
    ctx.set_origin(std::move(origin));
  }
  Json args = request.contains("arguments") ? request["arguments"] : Json::object();
  return tools.call(*tool, args, ctx);
}

Result<Json> run_approvals(kernel::Kernel& k, const Json& request) {
  std::string action = string_field(request, "action");
  std::string id = string_field(request, "id");
  if (action == "list") {
    bool all = request.value("all", false);
    Json list = Json::array();
    for (const auto& a : k.approvals(all)) list.push_back(approval_json(a));
    return Json{{"approvals", std::move(list)}};
  }
  if (action == "show") {
    WEFT_ASSIGN_OR_RETURN(kernel::Approval a, k.approval(id));
    Json j = approval_json(a);
    if (a.proposed_text) j["proposed_text"] = *a.proposed_text;
    return Json{{"approval", std::move(j)}};
  }
  std::string person = string_field(request, "person");
  if (action == "approve") {
    WEFT_ASSIGN_OR_RETURN(kernel::ChangeOutcome outcome, k.approve(id, person));
    WEFT_ASSIGN_OR_RETURN(kernel::Approval a, k.approval(id));
    return Json{{"approval", approval_json(a)}, {"version", outcome.version}};
  }
  if (action == "reject") {
    WEFT_RETURN_IF_ERROR(k.reject(id, person));
    WEFT_ASSIGN_OR_RETURN(kernel::Approval a, k.approval(id));
    return Json{{"approval", approval_json(a)}};
  }
  return invalid_argument("approvals action '" + action +
                          "' is not one of list, show, approve, reject");
}

}  // namespace

kernel::RequestHandler make_kernel_handler(std::shared_ptr<Workspace> workspace,
                                           std::shared_ptr<ToolRegistry> tools) {
  return [workspace, tools](std::string_view text) -> Result<std::string> {
    WEFT_RETURN_IF_ERROR(check_json_shape(text, kMaxJsonDepth, kMaxJsonValues));
    Json request = Json::parse(text, nullptr, false);
    if (!request.is_object()) return invalid_argument("a kernel request must be a JSON object");
    kernel::Kernel* k = workspace->kernel();
    if (!k) return failed_precondition("this process does not run the kernel");
    std::string op = string_field(request, "op");
    Result<Json> reply = invalid_argument("unknown kernel request op '" + op +
                                          "' (tool, approvals, ping)");
    if (op == "tool") {
      reply = run_tool(*workspace, *tools, request);
    } else if (op == "approvals") {
      reply = run_approvals(*k, request);
    } else if (op == "track") {
      // A front end's tool read the file: give it its block. Answers at once
      // whatever the file is (the read already told the agent).
      Status tracked = k->track(string_field(request, "path"));
      reply = Json{{"tracked", tracked.ok()}};
    } else if (op == "ping") {
      reply = Json{{"pid", static_cast<int64_t>(::getpid())}, {"root", workspace->root()}};
    }
    if (!reply.ok()) return reply.status();
    return reply->dump(-1, ' ', false, Json::error_handler_t::replace);
  };
}

Result<Json> kernel_request(kernel::KernelLink& link, const Json& request) {
  WEFT_ASSIGN_OR_RETURN(std::string reply,
                        link.call(request.dump(-1, ' ', false, Json::error_handler_t::replace)));
  Json parsed = Json::parse(reply, nullptr, false);
  if (parsed.is_discarded()) return internal_error("the kernel's reply is not JSON");
  return parsed;
}

Result<std::shared_ptr<kernel::KernelLink>> attach_kernel(std::shared_ptr<Workspace> workspace,
                                                          std::shared_ptr<ToolRegistry> tools,
                                                          const kernel::KernelOptions& options) {
  kernel::KernelFactory factory = [workspace, tools,
                                   options]() -> Result<kernel::RequestHandler> {
    if (!workspace->kernel()) {
      WEFT_ASSIGN_OR_RETURN(auto k, kernel::Kernel::open(workspace->shared_fs(), options));
      workspace->set_kernel(std::move(k));
    }
    return make_kernel_handler(workspace, tools);
  };
  kernel::LinkOptions link_options;
  link_options.log = options.log;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<kernel::KernelLink> opened,
                        kernel::KernelLink::open(options.state_dir, factory, link_options));
  std::shared_ptr<kernel::KernelLink> link(std::move(opened));
  std::weak_ptr<kernel::KernelLink> weak = link;
  tools->set_forwarder([weak](const ToolSpec& tool, const Json& args,
                              ToolContext& ctx) -> std::optional<Json> {
    auto l = weak.lock();
    if (!l || l->is_kernel()) return std::nullopt;  // run here
    Json request = {{"op", "tool"},
                    {"name", tool.name},
                    {"arguments", args},
                    {"client", ctx.client_name()},
                    {"roots", ctx.roots()}};
    if (ctx.origin().rfind("human:", 0) == 0) request["origin"] = ctx.origin();
    auto reply = kernel_request(*l, request);
    if (!reply.ok()) return tool_error_result(std::string(reply.status().message()));
    // Failed over: this process may have become the kernel during the call.
    return std::move(*reply);
  });
  // Reads reach the kernel too, once per path and process while it is a
  // front end (the kernel's own watcher keeps the block up to date after that).
  auto seen = std::make_shared<std::pair<std::mutex, std::unordered_set<std::string>>>();
  Workspace* ws = workspace.get();  // the observer lives inside it
  workspace->set_read_observer([weak, ws, seen](const std::string& path) {
    if (kernel::Kernel* k = ws->kernel()) {
      k->track(path).ignore_error();
      return;
    }
    {
      std::lock_guard lock(seen->first);
      if (seen->second.size() >= kMaxTrackedReads) seen->second.clear();
      if (!seen->second.insert(path).second) return;
    }
    if (auto l = weak.lock()) {
      kernel_request(*l, Json{{"op", "track"}, {"path", path}}).status().ignore_error();
    }
  });
  return link;
}

}  // namespace weft::server
