// weft.SandboxWorkspace: the seed's container workspace (bubblewrap here).
// It is a Filesystem itself (all NativeFilesystem methods), plus exec().
#include <pybind11/stl.h>

#include <cmath>

#include "bindings.h"
#include "py_convert.h"

namespace weft::python {

std::shared_ptr<fs::SandboxWorkspace> SandboxFs::get_workspace() const {
  get();  // RuntimeError once closed
  return workspace;
}

namespace {

SandboxFs make_sandbox(const py::object& mounts, const py::object& allowed_host_roots,
                       const py::object& overlay_dir, bool keep_overlay, bool read_only,
                       const py::object& git_dir, const py::object& limits, bool allow_hard_links,
                       const std::string& bwrap_path, const py::object& extra_read_only_paths) {
  fs::SandboxOptions options;
  for (const auto& mount : mounts) options.mounts.push_back(mount_from_python(mount));
  options.allowed_host_roots = paths_from_python(allowed_host_roots, "allowed_host_roots");
  if (!overlay_dir.is_none()) options.overlay_dir = path_arg(overlay_dir, "overlay_dir");
  options.keep_overlay = keep_overlay;
  options.host.read_only = read_only;
  if (!git_dir.is_none()) options.host.git_dir = path_arg(git_dir, "git_dir");
  options.host.limits = limits_from_python(limits);
  options.host.allow_hard_links = allow_hard_links;
  options.bwrap_path = bwrap_path;
  options.extra_read_only_paths = paths_from_python(extra_read_only_paths, "extra_read_only_paths");
  Result<std::unique_ptr<fs::SandboxWorkspace>> made = [&] {
    py::gil_scoped_release release;  // hydration copies files
    return fs::make_sandbox_workspace(std::move(options));
  }();
  SandboxFs out;
  out.workspace = std::shared_ptr<fs::SandboxWorkspace>(unwrap(std::move(made)));
  out.impl = out.workspace;
  out.kind = "SandboxWorkspace";
  return out;
}

fs::ExecOptions exec_options(const py::object& cwd, const py::object& env,
                             const py::object& timeout, int64_t max_output_bytes) {
  fs::ExecOptions options;
  options.cwd = path_arg(cwd, "cwd");
  if (!env.is_none()) {
    py::dict mapping(env);  // dict(env): any mapping, or TypeError
    for (const auto& item : mapping) {
      options.env[path_arg(item.first, "env key")] = path_arg(item.second, "env value");
    }
  }
  if (!timeout.is_none()) {
    double seconds = py::cast<double>(timeout);
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > 86'400) {
      raise_value_error("timeout must be a number of seconds in (0, 86400]");
    }
    options.timeout = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1e3)));
  }
  if (max_output_bytes <= 0) raise_value_error("max_output_bytes must be positive");
  options.max_output_bytes = max_output_bytes;
  return options;
}

py::object exec(const SandboxFs& self, const py::object& argv, const py::object& cwd,
                const py::object& env, const py::object& timeout, int64_t max_output_bytes) {
  if (PyUnicode_Check(argv.ptr()) || PyBytes_Check(argv.ptr())) {
    raise_type_error("argv must be a sequence of arguments such as ['ls', '-l'], not a string");
  }
  std::vector<std::string> args;
  for (const auto& arg : argv) args.push_back(path_arg(arg, "argv item"));
  fs::ExecOptions options = exec_options(cwd, env, timeout, max_output_bytes);
  // Arguments become C strings: a NUL would silently cut them (subprocess refuses too).
  auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  for (const auto& arg : args) {
    if (has_nul(arg)) raise_value_error("embedded null byte in an argv item");
  }
  for (const auto& [key, value] : options.env) {
    if (has_nul(key) || has_nul(value)) raise_value_error("embedded null byte in env");
  }
  std::shared_ptr<fs::SandboxWorkspace> workspace = self.get_workspace();
  Result<fs::ExecResult> result = [&] {
    py::gil_scoped_release release;  // the command may run for a long time
    return workspace->exec(args, options);
  }();
  return to_python(unwrap(std::move(result)));
}

void close(SandboxFs& self) {
  std::shared_ptr<fs::Filesystem> impl = std::move(self.impl);
  std::shared_ptr<fs::SandboxWorkspace> workspace = std::move(self.workspace);
  py::gil_scoped_release release;  // removing the overlay may take a while
  impl.reset();
  workspace.reset();
}

}  // namespace

void bind_sandbox(py::module_& m) {
  py::class_<SandboxFs, NativeFs>(
      m, "SandboxWorkspace",
      "An overlay directory on the host, hydrated from HostMounts and served as a "
      "HostFilesystem (snapshots included), where exec() runs commands under bubblewrap: "
      "the overlay read-write at /workspace, only the system paths programs need (/usr, /bin, "
      "/lib*, a few /etc files; extra_read_only_paths adds more) read-only, no network, "
      "a time limit. close() removes a default overlay unless keep_overlay; a given "
      "overlay_dir is never deleted.")
      .def(py::init(&make_sandbox), py::kw_only(), py::arg("mounts") = py::tuple(),
           py::arg("allowed_host_roots") = py::tuple(), py::arg("overlay_dir") = py::none(),
           py::arg("keep_overlay") = false, py::arg("read_only") = false,
           py::arg("git_dir") = py::none(), py::arg("limits") = py::none(),
           py::arg("allow_hard_links") = false, py::arg("bwrap_path") = "bwrap",
           py::arg("extra_read_only_paths") = py::tuple(),
           "Creates (or reuses) the overlay and copies the mounts in. Raises "
           "PermissionError (mount outside allowed_host_roots), FileNotFoundError, ValueError.")
      .def("exec", &exec, py::arg("argv"), py::kw_only(), py::arg("cwd") = ".",
           py::arg("env") = py::none(), py::arg("timeout") = 30.0,
           py::arg("max_output_bytes") = 1 << 20,
           "Runs argv inside the sandbox (cwd relative to /workspace; env replaces the "
           "environment; timeout in seconds). Returns an ExecResult; a failing command is not "
           "an error. Raises RuntimeError when bubblewrap cannot run here, ValueError, "
           "FileNotFoundError (cwd).")
      .def_property_readonly(
          "filesystem", [](py::object self) { return self; },
          "The workspace's Filesystem (the workspace itself; seed's WorkspaceSection).")
      .def_property_readonly(
          "overlay_dir",
          [](const SandboxFs& self) { return path_str(self.get_workspace()->overlay_dir()); },
          "The overlay directory on the host (== root).")
      .def("close", &close,
           "Releases the workspace (removing a default overlay unless keep_overlay).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](SandboxFs& self, const py::args&) { close(self); });

  m.def(
      "sandbox_available",
      [](const std::string& bwrap_path) {
        Status status = [&] {
          py::gil_scoped_release release;
          return fs::sandbox_available(bwrap_path);
        }();
        return status.ok();
      },
      py::arg("bwrap_path") = "bwrap",
      "True when bubblewrap can create the sandbox namespaces on this machine.");
}

}  // namespace weft::python
