// weft.UndoManager: undo/redo of one Doc's local changes (weft/crdt/undo.h).
#include <memory>

#include "bindings.h"
#include "doc_state.h"
#include "py_convert.h"
#include "weft/crdt/undo.h"

namespace weft::python {

namespace {

// The C++ manager subscribes to the doc, so it is made and destroyed under the
// doc's lock; it holds the doc's state, which outlives it.
struct PyUndo {
  std::shared_ptr<DocState> state;
  std::unique_ptr<crdt::UndoManager> impl;

  PyUndo() = default;
  PyUndo(PyUndo&&) = default;
  PyUndo& operator=(PyUndo&&) = delete;
  ~PyUndo() {
    if (!impl) return;
    auto lock = lock_doc(*state);
    impl.reset();
  }

  template <typename F>
  auto run(F&& f) {
    return with_doc(state, false, [&](crdt::Doc&) { return f(*impl); });
  }
};

}  // namespace

void bind_undo(py::module_& m) {
  py::class_<PyUndo> c(m, "UndoManager",
                       "Undo/redo of a Doc's own local commits, transformed over concurrent "
                       "remote changes (remote edits are never undone).");
  c.def(py::init([](const PyDoc& doc) {
          PyUndo out;
          out.state = doc.state;
          out.impl = with_doc(doc.state, false, [](crdt::Doc& d) {
            return std::make_unique<crdt::UndoManager>(d);
          });
          return out;
        }),
        py::arg("doc"), "Tracks the local commits `doc` makes from now on.");
  c.def(
      "undo",
      [](PyUndo& self) { return unwrap_doc(self.run([](crdt::UndoManager& u) { return u.undo(); })); },
      "Undoes the latest step; False when there is none. Raises RuntimeError while detached.");
  c.def(
      "redo",
      [](PyUndo& self) { return unwrap_doc(self.run([](crdt::UndoManager& u) { return u.redo(); })); },
      "Redoes the latest undone step; False when there is none.");
  c.def_property_readonly("can_undo", [](PyUndo& self) {
    return self.run([](crdt::UndoManager& u) { return u.can_undo(); });
  });
  c.def_property_readonly("can_redo", [](PyUndo& self) {
    return self.run([](crdt::UndoManager& u) { return u.can_redo(); });
  });
  c.def_property_readonly("undo_count", [](PyUndo& self) {
    return self.run([](crdt::UndoManager& u) { return u.undo_count(); });
  });
  c.def_property_readonly("redo_count", [](PyUndo& self) {
    return self.run([](crdt::UndoManager& u) { return u.redo_count(); });
  });
  c.def(
      "set_merge_interval",
      [](PyUndo& self, int64_t ms) {
        if (ms < 0) raise_value_error("the merge interval must be >= 0 ms");
        self.run([&](crdt::UndoManager& u) { u.set_merge_interval(ms); });
      },
      py::arg("ms"), "Commits closer than `ms` milliseconds merge into one undo step (0).");
  c.def(
      "set_max_undo_steps",
      [](PyUndo& self, int64_t steps) {
        size_t n = index_from_python(steps, "steps");
        self.run([&](crdt::UndoManager& u) { u.set_max_undo_steps(n); });
      },
      py::arg("steps"), "Keeps at most `steps` undo steps (100).");
  c.def(
      "add_exclude_origin_prefix",
      [](PyUndo& self, const std::string& prefix) {
        self.run([&](crdt::UndoManager& u) { u.add_exclude_origin_prefix(prefix); });
      },
      py::arg("prefix"), "Commits whose origin starts with `prefix` are not recorded.");
  c.def(
      "add_include_origin_prefix",
      [](PyUndo& self, const std::string& prefix) {
        self.run([&](crdt::UndoManager& u) { u.add_include_origin_prefix(prefix); });
      },
      py::arg("prefix"),
      "Once set, only commits whose origin starts with an include prefix are recorded.");
  c.def(
      "group_start",
      [](PyUndo& self) { check_doc(self.run([](crdt::UndoManager& u) { return u.group_start(); })); },
      "Everything committed until group_end() is one step. Raises RuntimeError when a group "
      "is open.");
  c.def(
      "group_end", [](PyUndo& self) { self.run([](crdt::UndoManager& u) { u.group_end(); }); },
      "Closes the group group_start() opened.");
  c.def(
      "clear", [](PyUndo& self) { self.run([](crdt::UndoManager& u) { u.clear(); }); },
      "Forgets every step.");
}

}  // namespace weft::python
