// The workspace kernel behind the MCP server: one kernel per root, reached by
// every weft process on the root through kernel::KernelLink. The process that
// runs the kernel answers requests with make_kernel_handler(); every process
// (the kernel's included) sends its via_kernel tool calls (the tools that
// change files, and the history tools) and the CLI's approval commands there.
//
// Requests and replies are JSON objects:
//   {"op":"tool","name":N,"arguments":{...},"client":NAME,"roots":[...],
//    "origin":"human:WHO"?}
//       -> the CallToolResult of tool N run in the kernel's process, the
//          change attributed to "agent:NAME" (or to the human origin)
//   {"op":"approvals","action":"list","all":BOOL}        -> {"approvals":[...]}
//   {"op":"approvals","action":"show","id":ID}           -> {"approval":{...}}
//   {"op":"approvals","action":"approve"|"reject","id":ID,"person":NAME}
//       -> {"approval":{...},"version":V}
//   {"op":"track","path":P} -> {"tracked":BOOL}   (a tool read P: give it its block)
//   {"op":"ping"} -> {"pid":PID,"root":ROOT}
// A request that is not one of these gets an error naming what is wrong.
//
// Thread safety: the handler is safe to call from many threads at once.
#ifndef WEFT_SERVER_KERNEL_SERVICE_H_
#define WEFT_SERVER_KERNEL_SERVICE_H_

#include <memory>
#include <string>

#include "weft/base/status.h"
#include "weft/kernel/kernel.h"
#include "weft/kernel/kernel_link.h"
#include "weft/server/jsonrpc.h"
#include "weft/server/tool.h"
#include "weft/server/workspace.h"

namespace weft::server {

// What the kernel's process runs for each request. `workspace` must have its
// kernel set.
kernel::RequestHandler make_kernel_handler(std::shared_ptr<Workspace> workspace,
                                           std::shared_ptr<ToolRegistry> tools);

// Opens the root's KernelLink for a server: this process becomes the kernel
// (opening a kernel::Kernel on `workspace` with `options`) or connects to the
// running one, and `tools` sends its via_kernel calls there from now on.
// Errors: the kernel's (a bad weft.toml names its line) or the link's.
Result<std::shared_ptr<kernel::KernelLink>> attach_kernel(std::shared_ptr<Workspace> workspace,
                                                          std::shared_ptr<ToolRegistry> tools,
                                                          const kernel::KernelOptions& options);

// One request to the kernel, its JSON reply parsed. Errors: the link's, or
// kInternal for a reply that is not JSON.
Result<Json> kernel_request(kernel::KernelLink& link, const Json& request);

// An Approval as the requests above show it.
Json approval_json(const kernel::Approval& approval);

}  // namespace weft::server

#endif  // WEFT_SERVER_KERNEL_SERVICE_H_
