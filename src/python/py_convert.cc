#include "py_convert.h"

#include <cerrno>
#include <chrono>
#include <cstring>

namespace weft::python {
namespace {

// Handles on the Python types the binding builds. Allocated once and never
// freed: destroying py::objects after the interpreter has finalised crashes.
struct Types {
  py::object read_result, read_bytes_result, file_stat, file_entry, glob_match, grep_match,
      write_result, snapshot, hydrate_stats, exec_result, limits, host_mount;
  py::object snapshot_error, restore_error;
  py::object uuid, epoch, timedelta, one_microsecond;
};

Types* g_types = nullptr;

const Types& types() {
  if (g_types == nullptr) init_types();
  return *g_types;
}

// Text the C++ layer has validated as UTF-8 (read() content). Strict, so a
// broken invariant raises UnicodeDecodeError (a ValueError) instead of crashing.
py::str strict_str(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), nullptr);
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

// Text that should be UTF-8 but might not be (command output, grep lines).
py::str lenient_str(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::object optional_str(const std::optional<std::string>& value) {
  return value ? py::object(path_str(*value)) : py::object(py::none());
}

py::object to_datetime(fs::TimePoint t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch());
  const Types& ty = types();
  return ty.epoch + ty.timedelta(py::arg("microseconds") = micros.count());
}

py::object to_datetime(const std::optional<fs::TimePoint>& t) {
  return t ? to_datetime(*t) : py::object(py::none());
}

fs::TimePoint from_datetime(const py::handle& value) {
  const Types& ty = types();
  py::object delta = value - ty.epoch;  // TypeError for a naive datetime
  int64_t micros = py::cast<int64_t>(delta.attr("__floordiv__")(ty.one_microsecond));
  return fs::TimePoint(
      std::chrono::duration_cast<fs::TimePoint::duration>(std::chrono::microseconds(micros)));
}

std::optional<std::string> optional_string_attr(const py::handle& obj, const char* name) {
  py::object value = obj.attr(name);
  if (value.is_none()) return std::nullopt;
  return path_arg(value, name);
}

bool is_instance(const py::handle& value, const py::object& type) {
  int r = PyObject_IsInstance(value.ptr(), type.ptr());
  if (r < 0) throw py::error_already_set();
  return r == 1;
}

// Where a HostMount with mount_path=None lands: a plain relative host path
// keeps its place ("src/" -> "src", as in the seed's example); an absolute
// one (or one climbing with "..") is copied to the root.
std::string default_mount_path(const std::string& host_path) {
  if (host_path.empty() || host_path.front() == '/') return "";
  std::string out;
  size_t start = 0;
  while (start <= host_path.size()) {
    size_t end = host_path.find('/', start);
    if (end == std::string::npos) end = host_path.size();
    std::string segment = host_path.substr(start, end - start);
    if (segment == "..") return "";
    if (!segment.empty() && segment != ".") out += (out.empty() ? "" : "/") + segment;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string type_name(const py::handle& value) {
  return py::str(py::type::handle_of(value).attr("__name__"));
}

py::str path_str(const std::string& path) {
  PyObject* s =
      PyUnicode_DecodeUTF8(path.data(), static_cast<Py_ssize_t>(path.size()), "surrogateescape");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

void init_types() {
  if (g_types != nullptr) return;
  auto* t = new Types();
  py::module_ m = py::module_::import("weft._types");
  t->read_result = m.attr("ReadResult");
  t->read_bytes_result = m.attr("ReadBytesResult");
  t->file_stat = m.attr("FileStat");
  t->file_entry = m.attr("FileEntry");
  t->glob_match = m.attr("GlobMatch");
  t->grep_match = m.attr("GrepMatch");
  t->write_result = m.attr("WriteResult");
  t->snapshot = m.attr("FilesystemSnapshot");
  t->hydrate_stats = m.attr("HydrateStats");
  t->exec_result = m.attr("ExecResult");
  t->limits = m.attr("FilesystemLimits");
  t->host_mount = m.attr("HostMount");
  t->snapshot_error = m.attr("SnapshotError");
  t->restore_error = m.attr("SnapshotRestoreError");
  t->uuid = py::module_::import("uuid").attr("UUID");
  py::module_ datetime = py::module_::import("datetime");
  py::object utc = datetime.attr("timezone").attr("utc");
  t->epoch = datetime.attr("datetime")(1970, 1, 1, py::arg("tzinfo") = utc);
  t->timedelta = datetime.attr("timedelta");
  t->one_microsecond = t->timedelta(py::arg("microseconds") = 1);
  g_types = t;
}

void raise_status(const Status& status, ErrorKind kind) {
  PyObject* type = PyExc_RuntimeError;
  int err = 0;
  switch (status.code()) {
    case StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      err = ENOENT;
      break;
    case StatusCode::kIsADirectory:
      type = PyExc_IsADirectoryError;
      err = EISDIR;
      break;
    case StatusCode::kNotADirectory:
      type = PyExc_NotADirectoryError;
      err = ENOTDIR;
      break;
    case StatusCode::kPermissionDenied:
      type = PyExc_PermissionError;
      err = EACCES;
      break;
    case StatusCode::kAlreadyExists:
      type = PyExc_FileExistsError;
      err = EEXIST;
      break;
    case StatusCode::kInvalidArgument:
    case StatusCode::kResourceExhausted:
    case StatusCode::kOutOfRange:
      type = PyExc_ValueError;
      break;
    default:
      break;
  }
  const bool permission = status.code() == StatusCode::kPermissionDenied;
  py::object custom;
  if (kind == ErrorKind::kRestore && !permission) {
    custom = types().restore_error;
  } else if (kind == ErrorKind::kSnapshot && !permission && type != PyExc_ValueError) {
    custom = types().snapshot_error;
  }
  // Mapped file errors carry the plain message; generic ones keep the code name.
  const bool generic = custom || type == PyExc_RuntimeError;
  py::str message = lenient_str(generic ? status.to_string() : std::string(status.message()));
  if (custom) {
    PyErr_SetObject(custom.ptr(), message.ptr());
  } else if (err != 0) {
    py::object exc = py::reinterpret_borrow<py::object>(type)(err, message);
    PyErr_SetObject(type, exc.ptr());
  } else {
    PyErr_SetObject(type, message.ptr());
  }
  throw py::error_already_set();
}

void raise_type_error(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw py::error_already_set();
}

void raise_value_error(const std::string& message) {
  PyErr_SetString(PyExc_ValueError, message.c_str());
  throw py::error_already_set();
}

std::string path_arg(const py::handle& value, const char* what) {
  PyObject* fspath = PyOS_FSPath(value.ptr());
  if (fspath == nullptr) throw py::error_already_set();
  py::object path = py::reinterpret_steal<py::object>(fspath);
  if (!PyUnicode_Check(path.ptr())) {
    raise_type_error(std::string(what) + " must be str or os.PathLike[str], not " +
                     type_name(path));
  }
  PyObject* encoded = PyUnicode_AsEncodedString(path.ptr(), "utf-8", "surrogateescape");
  if (encoded == nullptr) throw py::error_already_set();
  py::bytes bytes = py::reinterpret_steal<py::bytes>(encoded);
  return std::string(bytes);
}

std::string text_arg(const py::handle& value) {
  if (!PyUnicode_Check(value.ptr())) {
    raise_type_error("content must be str, not " + type_name(value) +
                     " (use write_bytes() for binary content)");
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) throw py::error_already_set();  // UnicodeEncodeError (a ValueError)
  return std::string(data, static_cast<size_t>(size));
}

std::string bytes_arg(const py::handle& value) {
  if (PyBytes_Check(value.ptr())) {
    return std::string(PyBytes_AS_STRING(value.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(value.ptr())));
  }
  if (PyUnicode_Check(value.ptr()) || !PyObject_CheckBuffer(value.ptr())) {
    raise_type_error("content must be bytes-like, not " + type_name(value) +
                     " (use write() for text)");
  }
  Py_buffer view;
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
    throw py::error_already_set();
  }
  std::string out(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
  PyBuffer_Release(&view);
  return out;
}

py::object to_python(const fs::ReadResult& v) {
  py::tuple cut(v.cut_lines.size());
  for (size_t i = 0; i < v.cut_lines.size(); ++i) {
    cut[i] = py::make_tuple(v.cut_lines[i].line, v.cut_lines[i].length_bytes);
  }
  return types().read_result(strict_str(v.content), path_str(v.path), v.total_lines, v.offset,
                             v.limit, v.truncated, v.lines, cut);
}

py::object to_python(const fs::ReadBytesResult& v) {
  return types().read_bytes_result(py::bytes(v.content), path_str(v.path), v.size_bytes, v.offset,
                                   v.limit, v.truncated);
}

py::object to_python(const fs::FileStat& v) {
  return types().file_stat(path_str(v.path), v.is_file, v.is_directory, v.size_bytes,
                           to_datetime(v.created_at), to_datetime(v.modified_at),
                           py::str(std::string(fs::file_type_name(v.type))),
                           optional_str(v.symlink_target));
}

py::object to_python(const fs::WriteResult& v) {
  return types().write_result(path_str(v.path), v.bytes_written,
                              py::str(std::string(fs::write_mode_name(v.mode))));
}

py::object to_python(const fs::FilesystemSnapshot& v) {
  const Types& ty = types();
  return ty.snapshot(ty.uuid(py::str(v.snapshot_id)), to_datetime(v.created_at),
                     py::str(v.commit_ref), path_str(v.root_path), optional_str(v.git_dir),
                     v.tag ? py::object(lenient_str(*v.tag)) : py::object(py::none()));
}

py::object to_python(const fs::HydrateStats& v) {
  return types().hydrate_stats(v.files, v.bytes, v.skipped);
}

py::object to_python(const fs::ExecResult& v) {
  return types().exec_result(v.exit_code, lenient_str(v.stdout_text), lenient_str(v.stderr_text),
                             v.timed_out, v.truncated);
}

py::list to_python(const std::vector<fs::FileEntry>& values) {
  py::list out;
  const py::object& type = types().file_entry;
  for (const auto& v : values) {
    out.append(type(path_str(v.name), path_str(v.path), v.is_file, v.is_directory,
                    py::str(std::string(fs::file_type_name(v.type))),
                    optional_str(v.symlink_target)));
  }
  return out;
}

py::list to_python(const std::vector<fs::GlobMatch>& values) {
  py::list out;
  const py::object& type = types().glob_match;
  for (const auto& v : values) out.append(type(path_str(v.path), v.is_file));
  return out;
}

py::list to_python(const std::vector<fs::GrepMatch>& values) {
  py::list out;
  const py::object& type = types().grep_match;
  for (const auto& v : values) {
    out.append(type(path_str(v.path), v.line_number, lenient_str(v.line_content), v.match_start,
                    v.match_end, v.line_length_bytes, v.line_content_offset_byte));
  }
  return out;
}

py::list to_python(const std::vector<fs::FilesystemSnapshot>& values) {
  py::list out;
  for (const auto& v : values) out.append(to_python(v));
  return out;
}

py::object to_python(const fs::FsLimits& v) {
  return types().limits(v.max_write_chars, v.max_path_depth, v.max_segment_length,
                        v.default_read_lines, v.max_grep_matches, v.max_read_file_bytes);
}

fs::FilesystemSnapshot snapshot_from_python(const py::handle& value) {
  if (!is_instance(value, types().snapshot)) {
    raise_type_error("restore() takes a weft.FilesystemSnapshot, not " + type_name(value) +
                     " (FilesystemSnapshot.from_json() rebuilds a stored record)");
  }
  fs::FilesystemSnapshot s;
  s.snapshot_id = py::str(value.attr("snapshot_id"));
  s.created_at = from_datetime(value.attr("created_at"));
  s.commit_ref = path_arg(value.attr("commit_ref"), "commit_ref");
  s.root_path = path_arg(value.attr("root_path"), "root_path");
  s.git_dir = optional_string_attr(value, "git_dir");
  s.tag = optional_string_attr(value, "tag");
  return s;
}

fs::FsLimits limits_from_python(const py::handle& value) {
  fs::FsLimits limits;
  if (value.is_none()) return limits;
  if (!is_instance(value, types().limits)) {
    raise_type_error("limits must be a weft.FilesystemLimits, not " + type_name(value));
  }
  limits.max_write_chars = py::cast<int64_t>(value.attr("max_write_chars"));
  limits.max_path_depth = py::cast<int>(value.attr("max_path_depth"));
  limits.max_segment_length = py::cast<int>(value.attr("max_segment_length"));
  limits.default_read_lines = py::cast<int64_t>(value.attr("default_read_lines"));
  limits.max_grep_matches = py::cast<int64_t>(value.attr("max_grep_matches"));
  limits.max_read_file_bytes = py::cast<int64_t>(value.attr("max_read_file_bytes"));
  if (limits.max_write_chars <= 0 || limits.max_path_depth <= 0 || limits.max_segment_length <= 0 ||
      limits.default_read_lines <= 0 || limits.max_grep_matches <= 0 ||
      limits.max_read_file_bytes <= 0) {
    raise_value_error("every FilesystemLimits field must be a positive integer");
  }
  return limits;
}

fs::HostMount mount_from_python(const py::handle& value) {
  if (!is_instance(value, types().host_mount)) {
    raise_type_error("mount must be a weft.HostMount, not " + type_name(value));
  }
  fs::HostMount mount;
  mount.host_path = path_arg(value.attr("host_path"), "host_path");
  py::object mount_path = value.attr("mount_path");
  mount.mount_path = mount_path.is_none() ? default_mount_path(mount.host_path)
                                          : path_arg(mount_path, "mount_path");
  for (const auto& g : value.attr("include_glob"))
    mount.include_glob.push_back(path_arg(g, "glob"));
  for (const auto& g : value.attr("exclude_glob"))
    mount.exclude_glob.push_back(path_arg(g, "glob"));
  py::object max_bytes = value.attr("max_bytes");
  if (!max_bytes.is_none()) {
    mount.max_bytes = py::cast<int64_t>(max_bytes);
    if (mount.max_bytes <= 0) raise_value_error("HostMount.max_bytes must be positive");
  }
  return mount;
}

std::vector<std::string> paths_from_python(const py::handle& value, const char* what) {
  if (PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr())) {
    raise_type_error(std::string(what) + " must be a sequence of paths, not a single string");
  }
  std::vector<std::string> out;
  for (const auto& item : value) out.push_back(path_arg(item, what));
  return out;
}

}  // namespace weft::python
