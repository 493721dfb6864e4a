// The compiled part of the `weft` Python package (weft/_weft*.so). The
// package's __init__.py imports weft._types first (the result dataclasses
// this module builds), then re-exports the classes registered here.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "py_convert.h"

PYBIND11_MODULE(_weft, m) {
  m.doc() = "weft's C++ filesystem backends (seed 004 protocol) and CRDT Doc; import `weft` "
            "instead.";
  weft::python::init_types();
  weft::python::bind_filesystem(m);
  weft::python::bind_sandbox(m);
  weft::python::bind_containers(m);
  weft::python::bind_doc(m);
  weft::python::bind_undo(m);
  weft::python::bind_kernel(m);
}
