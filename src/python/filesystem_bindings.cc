// The seed's Filesystem protocol as Python methods on weft.NativeFilesystem,
// and the InMemoryFilesystem / HostFilesystem constructors.
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>

#include "bindings.h"
#include "py_convert.h"
#include "weft/fs/hydrate.h"

namespace weft::python {

std::shared_ptr<fs::Filesystem> NativeFs::get() const {
  if (!impl) {
    PyErr_SetString(PyExc_RuntimeError,
                    (std::string(kind) + " is closed; create a new one").c_str());
    throw py::error_already_set();
  }
  return impl;
}

namespace {

using fs::Filesystem;

// The seed guarantees only UTF-8; other encodings would silently change
// line counting, so they are refused with a way out.
void check_encoding(std::string encoding) {
  std::string key;
  for (char c : encoding) {
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key != "utf8") {
    raise_value_error("encoding '" + encoding +
                      "' is not supported: read() decodes UTF-8 only; use read_bytes() and "
                      "decode the bytes yourself");
  }
}

std::optional<std::string> optional_path(const py::object& value, const char* what) {
  if (value.is_none()) return std::nullopt;
  return path_arg(value, what);
}

void bind_read_methods(py::class_<NativeFs>& c) {
  c.def(
      "read",
      [](const NativeFs& self, const py::object& path, int64_t offset, std::optional<int64_t> limit,
         const std::string& encoding) {
        check_encoding(encoding);
        std::string p = path_arg(path);
        auto r = without_gil(self, [&](Filesystem& f) { return f.read(p, offset, limit); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("path"), py::kw_only(), py::arg("offset") = 0, py::arg("limit") = py::none(),
      py::arg("encoding") = "utf-8",
      "Lines [offset, offset+limit) of a UTF-8 text file as a ReadResult (limit None: the "
      "backend default, 2,000). Raises FileNotFoundError, IsADirectoryError, PermissionError, "
      "ValueError (bad offset/limit, content not UTF-8, unsupported encoding).");
  c.def(
      "read_bytes",
      [](const NativeFs& self, const py::object& path, int64_t offset,
         std::optional<int64_t> limit) {
        std::string p = path_arg(path);
        auto r = without_gil(self, [&](Filesystem& f) { return f.read_bytes(p, offset, limit); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("path"), py::kw_only(), py::arg("offset") = 0, py::arg("limit") = py::none(),
      "Bytes [offset, offset+limit) of a file as a ReadBytesResult (limit None: to the end). "
      "Raises FileNotFoundError, IsADirectoryError, PermissionError, ValueError.");
  c.def(
      "exists",
      [](const NativeFs& self, const py::object& path) {
        std::string p = path_arg(path);
        return without_gil(self, [&](Filesystem& f) { return f.exists(p); });
      },
      py::arg("path"), "True if the path exists inside the root; False for invalid paths.");
  c.def(
      "stat",
      [](const NativeFs& self, const py::object& path) {
        std::string p = path_arg(path);
        auto r = without_gil(self, [&](Filesystem& f) { return f.stat(p); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("path"),
      "FileStat of a path. Raises FileNotFoundError, PermissionError, ValueError.");
  c.def(
      "list",
      [](const NativeFs& self, const py::object& path) {
        std::string p = path_arg(path);
        auto r = without_gil(self, [&](Filesystem& f) { return f.list(p); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("path") = ".",
      "FileEntry list of a directory, sorted by name. Raises FileNotFoundError, "
      "NotADirectoryError.");
  c.def(
      "glob",
      [](const NativeFs& self, const std::string& pattern, const py::object& path) {
        std::string p = path_arg(path);
        auto r = without_gil(self, [&](Filesystem& f) { return f.glob(pattern, p); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("pattern"), py::kw_only(), py::arg("path") = ".",
      "GlobMatch list of the paths under `path` matching `pattern` (** spans directories), "
      "sorted by path; paths are relative to the root. Raises ValueError for a bad pattern.");
  c.def(
      "grep",
      [](const NativeFs& self, const std::string& pattern, const py::object& path,
         const py::object& glob, std::optional<int64_t> max_matches) {
        std::string p = path_arg(path);
        std::optional<std::string> g = optional_path(glob, "glob");
        auto r =
            without_gil(self, [&](Filesystem& f) { return f.grep(pattern, p, g, max_matches); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("pattern"), py::kw_only(), py::arg("path") = ".", py::arg("glob") = py::none(),
      py::arg("max_matches") = py::none(),
      "GrepMatch list (RE2 syntax; first match per line) sorted by (path, line_number); at "
      "most max_matches (default and cap 1,000). Binary files are skipped. Raises ValueError "
      "for a bad regex or glob.");
}

py::object do_write(const NativeFs& self, const py::object& path, std::string content,
                    const std::string& mode, bool create_parents, bool text) {
  std::string p = path_arg(path);
  fs::WriteMode m = unwrap(fs::parse_write_mode(mode));
  auto r = without_gil(self, [&](Filesystem& f) {
    return text ? f.write(p, content, m, create_parents)
                : f.write_bytes(p, content, m, create_parents);
  });
  return to_python(unwrap(std::move(r)));
}

void bind_write_methods(py::class_<NativeFs>& c) {
  c.def(
      "write",
      [](const NativeFs& self, const py::object& path, const py::object& content,
         const std::string& mode, bool create_parents) {
        return do_write(self, path, text_arg(content), mode, create_parents, true);
      },
      py::arg("path"), py::arg("content"), py::kw_only(), py::arg("mode") = "overwrite",
      py::arg("create_parents") = true,
      "Writes str content as UTF-8; mode is 'create', 'overwrite' or 'append'. Returns a "
      "WriteResult. Raises FileExistsError, FileNotFoundError, IsADirectoryError, "
      "NotADirectoryError, PermissionError, ValueError (over 48,000 characters, bad mode).");
  c.def(
      "write_bytes",
      [](const NativeFs& self, const py::object& path, const py::object& content,
         const std::string& mode, bool create_parents) {
        return do_write(self, path, bytes_arg(content), mode, create_parents, false);
      },
      py::arg("path"), py::arg("content"), py::kw_only(), py::arg("mode") = "overwrite",
      py::arg("create_parents") = true,
      "Writes bytes-like content exactly. Errors as write() (the limit counts bytes).");
  c.def(
      "delete",
      [](const NativeFs& self, const py::object& path, bool recursive) {
        std::string p = path_arg(path);
        check(without_gil(self, [&](Filesystem& f) { return f.remove(p, recursive); }));
      },
      py::arg("path"), py::kw_only(), py::arg("recursive") = false,
      "Deletes a file, or a directory with recursive=True. Raises FileNotFoundError, "
      "IsADirectoryError, PermissionError.");
  c.def(
      "mkdir",
      [](const NativeFs& self, const py::object& path, bool parents, bool exist_ok) {
        std::string p = path_arg(path);
        check(without_gil(self, [&](Filesystem& f) { return f.mkdir(p, parents, exist_ok); }));
      },
      py::arg("path"), py::kw_only(), py::arg("parents") = true, py::arg("exist_ok") = true,
      "Creates a directory. Raises FileExistsError, FileNotFoundError, NotADirectoryError.");
  c.def(
      "move",
      [](const NativeFs& self, const py::object& source, const py::object& destination,
         bool overwrite) {
        std::string s = path_arg(source, "source");
        std::string d = path_arg(destination, "destination");
        check(without_gil(self, [&](Filesystem& f) { return f.move(s, d, overwrite); }));
      },
      py::arg("source"), py::arg("destination"), py::kw_only(), py::arg("overwrite") = false,
      "Renames a file or directory. Raises FileNotFoundError, FileExistsError, ValueError.");
  c.def(
      "copy",
      [](const NativeFs& self, const py::object& source, const py::object& destination,
         bool overwrite) {
        std::string s = path_arg(source, "source");
        std::string d = path_arg(destination, "destination");
        check(without_gil(self, [&](Filesystem& f) { return f.copy(s, d, overwrite); }));
      },
      py::arg("source"), py::arg("destination"), py::kw_only(), py::arg("overwrite") = false,
      "Copies a file or directory tree. Errors as move().");
}

void bind_snapshot_methods(py::class_<NativeFs>& c) {
  c.def(
      "snapshot",
      [](const NativeFs& self, const py::object& tag) {
        std::optional<std::string> t = optional_path(tag, "tag");
        auto r = without_gil(self, [&](Filesystem& f) { return f.snapshot(t); });
        return to_python(unwrap(std::move(r), ErrorKind::kSnapshot));
      },
      py::kw_only(), py::arg("tag") = py::none(),
      "Captures the whole tree; returns a FilesystemSnapshot. Raises SnapshotError.");
  c.def(
      "restore",
      [](const NativeFs& self, const py::object& snapshot) {
        fs::FilesystemSnapshot s = snapshot_from_python(snapshot);
        check(without_gil(self, [&](Filesystem& f) { return f.restore(s); }), ErrorKind::kRestore);
      },
      py::arg("snapshot"),
      "Makes the tree exactly what it was at `snapshot` (later files, ignored ones too, are "
      "removed). Raises SnapshotRestoreError (tree untouched), PermissionError (read-only).");
  c.def(
      "snapshots",
      [](const NativeFs& self) {
        auto r = without_gil(self, [&](Filesystem& f) { return f.snapshots(); });
        return to_python(unwrap(std::move(r), ErrorKind::kSnapshot));
      },
      "Snapshots of this root, oldest first.");
  c.def(
      "hydrate_from_host",
      [](const NativeFs& self, const py::object& mount, const py::object& allowed_roots) {
        fs::HostMount m = mount_from_python(mount);
        std::vector<std::string> roots = paths_from_python(allowed_roots, "allowed_roots");
        auto r =
            without_gil(self, [&](Filesystem& f) { return fs::hydrate_from_host(f, m, roots); });
        return to_python(unwrap(std::move(r)));
      },
      py::arg("mount"), py::kw_only(), py::arg("allowed_roots") = py::tuple(),
      "Copies a HostMount into this filesystem; the host path must lie inside one of "
      "allowed_roots. Returns HydrateStats. Raises PermissionError, FileNotFoundError, "
      "ValueError (over max_bytes).");
}

void bind_metadata(py::class_<NativeFs>& c) {
  c.def_property_readonly(
      "root", [](const NativeFs& self) { return path_str(self.get()->root()); },
      "Workspace root: an absolute host path, or '/' for in-memory filesystems.");
  c.def_property_readonly(
      "read_only", [](const NativeFs& self) { return self.get()->read_only(); },
      "True if write operations are disabled.");
  c.def_property_readonly(
      "limits", [](const NativeFs& self) { return to_python(self.get()->limits()); },
      "The FilesystemLimits this instance enforces.");
  c.def("__repr__", [](const NativeFs& self) {
    if (!self.impl) return std::string(self.kind) + "(<closed>)";
    py::str root = py::repr(path_str(self.impl->root()));
    return std::string(self.kind) + "(root=" + std::string(root) +
           ", read_only=" + (self.impl->read_only() ? "True" : "False") + ")";
  });
}

HostFs make_host(const py::object& root, bool read_only, const py::object& git_dir,
                 const py::object& limits, bool allow_hard_links, bool fsync) {
  std::string r = path_arg(root, "root");
  fs::HostOptions options;
  options.read_only = read_only;
  options.git_dir = optional_path(git_dir, "git_dir");
  options.limits = limits_from_python(limits);
  options.allow_hard_links = allow_hard_links;
  options.durability = fsync ? fs::WriteDurability::kFsync : fs::WriteDurability::kAtomicRename;
  Result<std::unique_ptr<Filesystem>> made = [&] {
    py::gil_scoped_release release;
    return fs::make_host_filesystem(r, options);
  }();
  HostFs out;
  out.impl = std::shared_ptr<Filesystem>(unwrap(std::move(made)));
  out.kind = "HostFilesystem";
  return out;
}

}  // namespace

void bind_filesystem(py::module_& m) {
  py::class_<NativeFs> base(m, "NativeFilesystem",
                            "Base of weft's backends: the seed 004 Filesystem protocol plus "
                            "snapshots. Not constructible; use a subclass.");
  bind_read_methods(base);
  bind_write_methods(base);
  bind_snapshot_methods(base);
  bind_metadata(base);

  py::class_<InMemoryFs, NativeFs>(m, "InMemoryFilesystem",
                                   "An in-memory tree rooted at '/', with O(1) snapshots "
                                   "(structural sharing).")
      .def(py::init([](bool read_only, const py::object& limits) {
             fs::InMemoryOptions options;
             options.read_only = read_only;
             options.limits = limits_from_python(limits);
             InMemoryFs out;
             out.impl = std::shared_ptr<Filesystem>(fs::make_in_memory_filesystem(options));
             out.kind = "InMemoryFilesystem";
             return out;
           }),
           py::kw_only(), py::arg("read_only") = false, py::arg("limits") = py::none());

  py::class_<HostFs, NativeFs>(m, "HostFilesystem",
                               "A host directory, confined by the kernel (no symlinks, no "
                               "escapes), with git snapshots stored outside the root.")
      .def(py::init(&make_host), py::arg("root"), py::arg("read_only") = false, py::kw_only(),
           py::arg("git_dir") = py::none(), py::arg("limits") = py::none(),
           py::arg("allow_hard_links") = false, py::arg("fsync") = true,
           "Opens the existing directory `root`. git_dir: snapshot store (default under "
           "$XDG_STATE_HOME/weft/snapshots; must be outside the root). fsync=False: writes "
           "stay atomic (temp file + rename) but are not flushed to disk, so they are faster "
           "and may be lost in a power cut. Raises FileNotFoundError, NotADirectoryError, "
           "ValueError.")
      // The seed's usage example spells the root `_root=`.
      .def(py::init(&make_host), py::kw_only(), py::arg("_root"), py::arg("read_only") = false,
           py::arg("git_dir") = py::none(), py::arg("limits") = py::none(),
           py::arg("allow_hard_links") = false, py::arg("fsync") = true);
}

}  // namespace weft::python
