// Conversions between weft::fs values and the Python objects of the `weft`
// package (the frozen dataclasses in weft/_types.py), and the mapping from
// weft::Status codes onto the seed's Python exceptions.
//
// Thread safety: every function here touches Python objects and must be
// called with the GIL held.
#ifndef WEFT_PYTHON_PY_CONVERT_H_
#define WEFT_PYTHON_PY_CONVERT_H_

#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/filesystem.h"
#include "weft/fs/hydrate.h"
#include "weft/fs/sandbox.h"
#include "weft/fs/types.h"

namespace weft::python {

namespace py = pybind11;

// Which exception a failed call maps to when the code is not one of the
// seed's file errors: snapshot() failures raise SnapshotError, restore()
// failures SnapshotRestoreError, everything else the seed table.
enum class ErrorKind { kGeneral, kSnapshot, kRestore };

// Sets the Python exception for `status` (REQUIRES: !status.ok()) and throws
// py::error_already_set. Table: kNotFound FileNotFoundError, kIsADirectory
// IsADirectoryError, kNotADirectory NotADirectoryError, kPermissionDenied
// PermissionError, kAlreadyExists FileExistsError, kInvalidArgument /
// kResourceExhausted / kOutOfRange ValueError, anything else RuntimeError.
[[noreturn]] void raise_status(const Status& status, ErrorKind kind = ErrorKind::kGeneral);

// Raises for a non-OK status; no-op otherwise.
inline void check(const Status& status, ErrorKind kind = ErrorKind::kGeneral) {
  if (!status.ok()) raise_status(status, kind);
}

// The value of `result`, or raises its error.
template <typename T>
T unwrap(Result<T>&& result, ErrorKind kind = ErrorKind::kGeneral) {
  if (!result.ok()) raise_status(result.status(), kind);
  return std::move(result).value();
}

// Throws TypeError / ValueError with `message`.
[[noreturn]] void raise_type_error(const std::string& message);
[[noreturn]] void raise_value_error(const std::string& message);

// Looks up the dataclasses in weft._types once (call from module init).
void init_types();

// The Python type name of `value`, for TypeError messages.
std::string type_name(const py::handle& value);

// A path from C++ as str, decoded like os.fsdecode (bad UTF-8 bytes become
// lone surrogates, so the name round-trips through path_arg).
py::str path_str(const std::string& path);

// A path argument: str or os.PathLike[str] (TypeError otherwise; bytes are refused).
std::string path_arg(const py::handle& value, const char* what = "path");
// write(): the UTF-8 bytes of a str (TypeError for bytes; UnicodeEncodeError,
// a ValueError, for lone surrogates).
std::string text_arg(const py::handle& value);
// write_bytes(): the bytes of a bytes-like object (TypeError for str).
std::string bytes_arg(const py::handle& value);

py::object to_python(const fs::ReadResult& value);
py::object to_python(const fs::ReadBytesResult& value);
py::object to_python(const fs::FileStat& value);
py::object to_python(const fs::WriteResult& value);
py::object to_python(const fs::FilesystemSnapshot& value);
py::object to_python(const fs::HydrateStats& value);
py::object to_python(const fs::ExecResult& value);
py::list to_python(const std::vector<fs::FileEntry>& values);
py::list to_python(const std::vector<fs::GlobMatch>& values);
py::list to_python(const std::vector<fs::GrepMatch>& values);
py::list to_python(const std::vector<fs::FilesystemSnapshot>& values);
py::object to_python(const fs::FsLimits& value);

// A weft.FilesystemSnapshot (TypeError for anything else).
fs::FilesystemSnapshot snapshot_from_python(const py::handle& value);
// None (the defaults) or a weft.FilesystemLimits.
fs::FsLimits limits_from_python(const py::handle& value);
// A weft.HostMount; a None mount_path is resolved as HostMount documents.
fs::HostMount mount_from_python(const py::handle& value);
// A sequence of str / os.PathLike (a bare str is refused: it is not a list of roots).
std::vector<std::string> paths_from_python(const py::handle& value, const char* what);

}  // namespace weft::python

#endif  // WEFT_PYTHON_PY_CONVERT_H_
