// weft._weft._KernelLink: a Python process's connection to a workspace
// root's kernel (kernel/kernel_link.h). The first weft process on a root runs
// the kernel; this one either becomes it or forwards to it, so a weft.Kernel
// works the same beside a running `weft mcp`. Each call runs one of the
// kernel's via_kernel tools ({"op":"tool"}, server/kernel_service.h) with the
// GIL released and hands back its text and structuredContent; weft/_kernel.py
// builds the typed results and the weft.Kernel API on top.
#include <pybind11/stl.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "py_convert.h"
#include "weft/server/kernel_service.h"
#include "weft/server/workspace_server.h"

namespace weft::python {
namespace {

using server::Json;

// The root's workspace server (its kernel link inside). Shared so that a call
// in flight keeps it alive while another thread closes the Python object.
struct KernelLinkPy {
  std::shared_ptr<server::WorkspaceServer> server;
  std::string agent;
  std::string root;

  std::shared_ptr<server::WorkspaceServer> get() const {
    if (!server) {
      PyErr_SetString(PyExc_RuntimeError, "the weft.Kernel is closed; open a new one");
      throw py::error_already_set();
    }
    return server;
  }
};

// A tool's error text, "Error (<code name>): message", back to a Status (the
// registry's argument check has no code: it is a bad argument).
Status tool_error_status(const std::string& text) {
  if (text.rfind("Invalid arguments for tool", 0) == 0) {
    return Status(StatusCode::kInvalidArgument, text);
  }
  for (StatusCode code :
       {StatusCode::kCancelled, StatusCode::kUnknown, StatusCode::kInvalidArgument,
        StatusCode::kDeadlineExceeded, StatusCode::kNotFound, StatusCode::kAlreadyExists,
        StatusCode::kPermissionDenied, StatusCode::kResourceExhausted,
        StatusCode::kFailedPrecondition, StatusCode::kAborted, StatusCode::kOutOfRange,
        StatusCode::kUnimplemented, StatusCode::kInternal, StatusCode::kUnavailable,
        StatusCode::kDataLoss, StatusCode::kIsADirectory, StatusCode::kNotADirectory}) {
    std::string prefix = "Error (" + std::string(status_code_name(code)) + "): ";
    if (text.rfind(prefix, 0) == 0) return Status(code, text.substr(prefix.size()));
  }
  return Status(StatusCode::kUnknown, text);
}

// Raises the Python exception for a tool's error. A missing block raises
// weft.BlockNotFoundError (a FileNotFoundError and a KeyError); the rest
// follow the filesystem table (py_convert.h).
[[noreturn]] void raise_tool_error(const Status& status) {
  if (status.code() == StatusCode::kNotFound) {
    py::object type = py::module_::import("weft._kernel").attr("BlockNotFoundError");
    py::object exc = type(ENOENT, py::str(std::string(status.message())));
    PyErr_SetObject(type.ptr(), exc.ptr());
    throw py::error_already_set();
  }
  raise_status(status);
}

KernelLinkPy open_link(const py::object& root, const py::object& state, const std::string& agent) {
  if (agent.empty()) raise_value_error("agent must be a non-empty name");
  server::WorkspaceServerOptions options;
  options.root = path_arg(root, "root");
  if (!state.is_none()) options.state_dir = path_arg(state, "state");
  // The kernel's routine log lines stay quiet; damage is worth a warning.
  options.diagnostics = [](const std::string& line) {
    if (line.find("frozen") != std::string::npos || line.find("damaged") != std::string::npos) {
      std::fprintf(stderr, "weft: %s\n", line.c_str());
    }
  };
  Result<server::WorkspaceServer> built = [&] {
    py::gil_scoped_release release;
    return server::make_workspace_server(options);
  }();
  server::WorkspaceServer value = unwrap(std::move(built));
  if (!value.kernel_link) {
    raise_status(unavailable("the workspace kernel is off for this root (read-only?)"));
  }
  KernelLinkPy out;
  out.server = std::make_shared<server::WorkspaceServer>(std::move(value));
  out.agent = agent;
  out.root = out.server->workspace ? out.server->workspace->root() : options.root;
  return out;
}

// Runs tool `name` with `arguments` (a JSON object's text). Returns (text,
// structuredContent as JSON text); raises the tool's error.
py::tuple call_tool(const KernelLinkPy& self, const std::string& name,
                    const std::string& arguments) {
  std::shared_ptr<server::WorkspaceServer> server = self.get();
  Json args = Json::parse(arguments, nullptr, false);
  if (!args.is_object()) raise_value_error("the arguments of a kernel call must be a JSON object");
  Json request = {{"op", "tool"},
                  {"name", name},
                  {"arguments", std::move(args)},
                  {"client", self.agent}};
  Result<Json> reply = [&] {
    py::gil_scoped_release release;
    return server::kernel_request(*server->kernel_link, request);
  }();
  if (!reply.ok()) {
    const Status& s = reply.status();
    if (s.code() == StatusCode::kInvalidArgument) raise_status(s);
    // The link's own failures (kernel gone, no such tool in this weft).
    raise_status(Status(StatusCode::kUnavailable, s.to_string()));
  }
  std::string text;
  if (auto c = reply->find("content"); c != reply->end() && c->is_array() && !c->empty()) {
    text = (*c)[0].value("text", "");
  }
  if (reply->value("isError", false)) raise_tool_error(tool_error_status(text));
  Json structured = reply->value("structuredContent", Json::object());
  std::string dumped = structured.dump(-1, ' ', false, Json::error_handler_t::replace);
  return py::make_tuple(py::str(text), py::str(dumped));
}

void close_link(KernelLinkPy& self) {
  std::shared_ptr<server::WorkspaceServer> server = std::move(self.server);
  self.server.reset();
  if (!server) return;
  // The kernel (when this process runs it) stores pending appends and stops
  // its threads; none of them touches Python.
  py::gil_scoped_release release;
  server.reset();
}

}  // namespace

void bind_kernel(py::module_& m) {
  py::class_<KernelLinkPy>(m, "_KernelLink",
                           "A connection to a workspace root's kernel; use weft.Kernel.")
      .def(py::init(&open_link), py::arg("root"), py::arg("state") = py::none(),
           py::arg("agent") = "python")
      .def("call", &call_tool, py::arg("name"), py::arg("arguments"),
           "Runs a kernel tool; returns (text, structuredContent JSON) or raises its error.")
      .def("close", &close_link)
      .def_property_readonly("closed", [](const KernelLinkPy& self) { return !self.server; })
      .def_property_readonly("is_kernel",
                             [](const KernelLinkPy& self) {
                               return self.get()->kernel_link->is_kernel();
                             })
      .def_property_readonly("root", [](const KernelLinkPy& self) { return path_str(self.root); })
      .def_property_readonly("agent", [](const KernelLinkPy& self) { return self.agent; });
}

}  // namespace weft::python
