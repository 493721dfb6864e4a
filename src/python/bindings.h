// The Python objects behind weft's filesystem backends, and the functions
// that register them on the `weft._weft` extension module.
//
// Thread safety: a NativeFs is used with the GIL held; the C++ Filesystem it
// shares is itself thread-safe (filesystem.h), so blocking calls release the
// GIL (see without_gil) and may run concurrently.
#ifndef WEFT_PYTHON_BINDINGS_H_
#define WEFT_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>

#include "weft/fs/filesystem.h"
#include "weft/fs/sandbox.h"

namespace weft::python {

namespace py = pybind11;

// Base of every backend class (Python: weft.NativeFilesystem). Holds the C++
// filesystem by shared_ptr so that a call in flight keeps it alive even if
// another thread closes the Python object meanwhile.
struct NativeFs {
  std::shared_ptr<fs::Filesystem> impl;
  const char* kind = "NativeFilesystem";

  // The filesystem, or RuntimeError once closed.
  std::shared_ptr<fs::Filesystem> get() const;
};

struct InMemoryFs : NativeFs {};
struct HostFs : NativeFs {};
struct SandboxFs : NativeFs {
  std::shared_ptr<fs::SandboxWorkspace> workspace;
  std::shared_ptr<fs::SandboxWorkspace> get_workspace() const;
};

// Runs f(filesystem) with the GIL released; f must not touch Python objects.
template <typename F>
auto without_gil(const NativeFs& self, F&& f) {
  std::shared_ptr<fs::Filesystem> impl = self.get();
  py::gil_scoped_release release;
  return f(*impl);
}

// Registers NativeFilesystem, InMemoryFilesystem and HostFilesystem.
void bind_filesystem(py::module_& m);
// Registers SandboxWorkspace and sandbox_available().
void bind_sandbox(py::module_& m);
// Registers Container, Text, Map, List and Counter (container_bindings.cc).
void bind_containers(py::module_& m);
// Registers Doc and Subscription (doc_bindings.cc).
void bind_doc(py::module_& m);
// Registers UndoManager (undo_bindings.cc).
void bind_undo(py::module_& m);
// Registers _KernelLink, the link weft.Kernel (weft/_kernel.py) calls the kernel through.
void bind_kernel(py::module_& m);

}  // namespace weft::python

#endif  // WEFT_PYTHON_BINDINGS_H_
