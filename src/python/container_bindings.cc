// weft.Container and its handles weft.Text, weft.Map, weft.List, weft.Counter
// (weft/crdt/handles.h).
#include <pybind11/stl.h>

#include <limits>

#include "bindings.h"
#include "doc_state.h"
#include "py_convert.h"

namespace weft::python {

namespace {

using crdt::Value;

// Runs f(ref) on the handle's C++ container under the doc's lock; f returns a
// Status or a Result, and so does this (a handle that cannot be resolved
// fails with its error).
template <typename H, typename F>
auto on_ref(H& self, F&& f, bool heavy = false) {
  return with_doc(self.state, heavy, [&](crdt::Doc& d) {
    auto ref = self.resolve(d);
    using R = decltype(f(**ref));
    if (!ref.ok()) return R(ref.status());
    return f(**ref);
  });
}

std::string text_value_arg(const py::handle& value, const char* what) {
  if (!PyUnicode_Check(value.ptr())) {
    raise_type_error(std::string(what) + " must be str, not " +
                     std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) throw py::error_already_set();
  return std::string(data, static_cast<size_t>(size));
}

int expand_arg(const std::string& expand) {
  if (expand == "none") return 0;
  if (expand == "after") return 1;
  if (expand == "before") return 2;
  if (expand == "both") return 3;
  raise_value_error("expand must be 'none', 'after', 'before' or 'both', not '" + expand + "'");
}

Status out_of_range_index(int64_t index, size_t len) {
  return out_of_range("index " + std::to_string(index) + " is out of range for length " +
                      std::to_string(len));
}

// A Python index (negative counts from the end) as a position < len.
Result<size_t> sequence_index(int64_t index, size_t len) {
  int64_t i = index < 0 ? index + static_cast<int64_t>(len) : index;
  if (i < 0 || static_cast<size_t>(i) >= len) return out_of_range_index(index, len);
  return static_cast<size_t>(i);
}

template <typename H>
py::object child_handle(H& self, Result<crdt::ContainerId> made) {
  return handle_for(self.state, unwrap_doc(std::move(made)));
}

void bind_container_base(py::module_& m) {
  py::class_<PyContainer> c(m, "Container",
                            "Base of the handles Text, Map, List and Counter: a container of "
                            "one Doc, named by its container id. Handles keep their doc alive.");
  c.def_property_readonly(
      "id", [](const PyContainer& self) { return self.id.to_string(); },
      "The container id: 'cid:root-NAME:Type' or 'cid:COUNTER@PEER:Type'.");
  c.def_property_readonly(
      "container_type",
      [](const PyContainer& self) {
        return std::string(crdt::container_type_name(self.id.type()));
      },
      "'Text', 'Map', 'List' or 'Counter'.");
  c.def_property_readonly(
      "is_attached",
      [](const PyContainer& self) {
        return with_doc(self.state, false, [&](crdt::Doc& d) {
          auto attached = [](const auto& ref) { return ref.ok() && (*ref).is_attached_to_root(); };
          switch (self.id.type()) {
            case crdt::ContainerType::kText: return attached(d.text(self.id));
            case crdt::ContainerType::kMap: return attached(d.map(self.id));
            case crdt::ContainerType::kList: return attached(d.list(self.id));
            case crdt::ContainerType::kCounter: return attached(d.counter(self.id));
            default: return false;
          }
        });
      },
      "True while the container is reachable from a root (a child can be overwritten or "
      "deleted by a map or list edit).");
  c.def_property_readonly(
      "doc", [](const PyContainer& self) { return PyDoc{self.state}; },
      "The Doc this container belongs to.");
  c.def(
      "to_python",
      [](const PyContainer& self) {
        Value v = unwrap_doc(
            with_doc(self.state, true, [&](crdt::Doc& d) { return d.get_value(self.id); }));
        return value_to_python(self.state, v);
      },
      "The container's value with children nested (str, dict, list or float). Raises "
      "LookupError for an unknown child.");
  c.def(
      "subscribe",
      [](const PyContainer& self, const py::object& callback) {
        return subscribe_python(self.state, callback, false, self.id);
      },
      py::arg("callback"),
      "Calls callback(DocEvent) when this container changes (its diffs only). Returns a "
      "Subscription.");
  c.def("__eq__", [](const PyContainer& self, const py::object& other) -> py::object {
    if (!py::isinstance<PyContainer>(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    const auto& o = other.cast<const PyContainer&>();
    return py::bool_(self.state == o.state && self.id == o.id);
  });
  c.def("__hash__",
        [](const PyContainer& self) { return std::hash<crdt::ContainerId>()(self.id); });
  c.def("__repr__", [](const PyContainer& self) {
    return std::string(crdt::container_type_name(self.id.type())) + "(" +
           std::string(py::repr(py::str(self.id.to_string()))) + ")";
  });
}

void bind_text(py::module_& m) {
  py::class_<PyText, PyContainer> c(m, "Text",
                                    "A text (Unicode code points, like str) with rich-text "
                                    "marks. Positions count code points unless unit= says "
                                    "'utf16' or 'bytes' (UTF-8).");
  c.def(
      "insert",
      [](PyText& self, int64_t pos, const py::object& text, const std::string& unit) {
        size_t p = index_from_python(pos, "pos");
        std::string t = text_value_arg(text, "text");
        PosUnit u = pos_unit_from_python(unit);
        check_doc(on_ref(self, [&](crdt::TextRef& r) { return r.insert(p, t, u); }));
      },
      py::arg("pos"), py::arg("text"), py::kw_only(), py::arg("unit") = "unicode",
      "Inserts `text` at `pos`. Raises IndexError (past the end), ValueError (inside a "
      "character), RuntimeError (doc detached).");
  c.def(
      "delete",
      [](PyText& self, int64_t pos, int64_t length, const std::string& unit) {
        size_t p = index_from_python(pos, "pos");
        size_t n = index_from_python(length, "length");
        PosUnit u = pos_unit_from_python(unit);
        check_doc(on_ref(self, [&](crdt::TextRef& r) { return r.erase(p, n, u); }));
      },
      py::arg("pos"), py::arg("length"), py::kw_only(), py::arg("unit") = "unicode",
      "Deletes `length` units at `pos`. Errors as insert().");
  c.def(
      "splice",
      [](PyText& self, int64_t pos, int64_t length, const py::object& text,
         const std::string& unit) {
        size_t p = index_from_python(pos, "pos");
        size_t n = index_from_python(length, "length");
        std::string t = text_value_arg(text, "text");
        PosUnit u = pos_unit_from_python(unit);
        check_doc(on_ref(self, [&](crdt::TextRef& r) { return r.splice(p, n, t, u); }));
      },
      py::arg("pos"), py::arg("length"), py::arg("text") = "", py::kw_only(),
      py::arg("unit") = "unicode",
      "Deletes `length` units at `pos`, then inserts `text` there. Errors as insert().");
  c.def(
      "update",
      [](PyText& self, const py::object& text) {
        std::string t = text_value_arg(text, "text");
        check_doc(on_ref(self, [&](crdt::TextRef& r) { return r.update(t); }, true));
      },
      py::arg("text"),
      "Replaces the whole text by `text`, writing a small diff (line diff, then characters "
      "within changed lines), so concurrent edits elsewhere survive.");
  c.def(
      "mark",
      [](PyText& self, int64_t start, int64_t end, const std::string& key,
         const py::object& value, const std::string& unit, const std::string& expand) {
        size_t s = index_from_python(start, "start");
        size_t e = index_from_python(end, "end");
        Value v = value_from_python(value);
        PosUnit u = pos_unit_from_python(unit);
        int x = expand_arg(expand);
        check_doc(on_ref(self, [&](crdt::TextRef& r) { return r.mark(s, e, key, v, u, x); }));
      },
      py::arg("start"), py::arg("end"), py::arg("key"), py::arg("value") = true, py::kw_only(),
      py::arg("unit") = "unicode", py::arg("expand") = "after",
      "Styles [start, end) with key=value (e.g. mark(0, 5, 'bold')). expand: whether text "
      "typed at the edges joins the style: 'none', 'after' (default), 'before', 'both'. "
      "Raises ValueError when start >= end.");
  c.def(
      "unmark",
      [](PyText& self, int64_t start, int64_t end, const std::string& key,
         const std::string& unit, const std::string& expand) {
        size_t s = index_from_python(start, "start");
        size_t e = index_from_python(end, "end");
        PosUnit u = pos_unit_from_python(unit);
        int x = expand_arg(expand);
        check_doc(on_ref(self, [&](crdt::TextRef& r) { return r.mark(s, e, key, Value(), u, x); }));
      },
      py::arg("start"), py::arg("end"), py::arg("key"), py::kw_only(),
      py::arg("unit") = "unicode", py::arg("expand") = "after",
      "Removes style `key` from [start, end) (a mark with value None).");
  c.def(
      "length",
      [](PyText& self, const std::string& unit) {
        PosUnit u = pos_unit_from_python(unit);
        return unwrap_doc(
            on_ref(self, [&](crdt::TextRef& r) { return Result<size_t>(r.len(u)); }));
      },
      py::arg("unit") = "unicode", "Length in `unit` (len(text) counts code points).");
  c.def("__len__", [](PyText& self) {
    return unwrap_doc(on_ref(self, [&](crdt::TextRef& r) { return Result<size_t>(r.len()); }));
  });
  auto to_string = [](PyText& self) {
    std::string s = unwrap_doc(
        on_ref(self, [&](crdt::TextRef& r) { return Result<std::string>(r.to_string()); }));
    return py::str(s);
  };
  c.def("to_string", to_string, "The current text.");
  c.def("__str__", to_string);
  c.def(
      "convert_pos",
      [](PyText& self, int64_t pos, const std::string& from, const std::string& to) {
        size_t p = index_from_python(pos, "pos");
        PosUnit f = pos_unit_from_python(from);
        PosUnit t = pos_unit_from_python(to);
        return unwrap_doc(on_ref(self, [&](crdt::TextRef& r) { return r.convert_pos(p, f, t); }));
      },
      py::arg("pos"), py::arg("from_"), py::arg("to"),
      "Converts a position between units ('unicode', 'utf16', 'bytes'). Raises IndexError, "
      "ValueError (inside a character).");
}

void bind_map(py::module_& m) {
  py::class_<PyMap, PyContainer> c(m, "Map",
                                   "A map from str keys to values or child containers (last "
                                   "writer wins). Supports m[key], m[key] = v, del m[key], "
                                   "`in`, len() and iteration over keys.");
  auto set = [](PyMap& self, const std::string& key, const py::object& value) {
    Value v = value_from_python(value);
    check_doc(on_ref(self, [&](crdt::MapRef& r) { return r.set(key, v); }));
  };
  c.def("set", set, py::arg("key"), py::arg("value"),
        "Sets `key` to `value` (None, bool, int, float, str, bytes, list, tuple, dict).");
  c.def("__setitem__", set);
  c.def(
      "delete",
      [](PyMap& self, const std::string& key) {
        check_doc(on_ref(self, [&](crdt::MapRef& r) { return r.erase(key); }));
      },
      py::arg("key"), "Deletes `key` (a no-op when absent).");
  c.def("__delitem__", [](PyMap& self, const std::string& key) {
    bool found = unwrap_doc(on_ref(self, [&](crdt::MapRef& r) -> Result<bool> {
      if (!r.contains(key)) return false;
      WEFT_RETURN_IF_ERROR(r.erase(key));
      return true;
    }));
    if (!found) throw py::key_error(key);
  });
  auto lookup = [](PyMap& self, const std::string& key) {
    return unwrap_doc(on_ref(
        self, [&](crdt::MapRef& r) { return Result<std::optional<Value>>(r.get(key)); }));
  };
  c.def(
      "get",
      [lookup](PyMap& self, const std::string& key, const py::object& default_value) {
        std::optional<Value> v = lookup(self, key);
        return v ? value_to_python(self.state, *v) : default_value;
      },
      py::arg("key"), py::arg("default") = py::none(),
      "The value under `key` (a handle for a child container), or `default`.");
  c.def("__getitem__", [lookup](PyMap& self, const std::string& key) {
    std::optional<Value> v = lookup(self, key);
    if (!v) throw py::key_error(key);
    return value_to_python(self.state, *v);
  });
  c.def("__contains__", [lookup](PyMap& self, const py::object& key) {
    return PyUnicode_Check(key.ptr()) && lookup(self, py::cast<std::string>(key)).has_value();
  });
  c.def("__len__", [](PyMap& self) {
    return unwrap_doc(on_ref(self, [&](crdt::MapRef& r) { return Result<size_t>(r.size()); }));
  });
  auto shallow = [](PyMap& self) {
    return unwrap_doc(
        on_ref(self, [&](crdt::MapRef& r) { return Result<crdt::ValueMap>(r.values()); }));
  };
  c.def(
      "keys",
      [shallow](PyMap& self) {
        py::list out;
        for (const auto& [k, v] : shallow(self)) out.append(py::str(k));
        return out;
      },
      "The keys, sorted (a list: a snapshot of the map).");
  c.def(
      "values",
      [shallow](PyMap& self) {
        py::list out;
        for (const auto& [k, v] : shallow(self)) out.append(value_to_python(self.state, v));
        return out;
      },
      "The values in key order (handles for child containers).");
  c.def(
      "items",
      [shallow](PyMap& self) {
        py::list out;
        for (const auto& [k, v] : shallow(self)) {
          out.append(py::make_tuple(py::str(k), value_to_python(self.state, v)));
        }
        return out;
      },
      "(key, value) pairs in key order.");
  c.def("__iter__", [shallow](PyMap& self) {
    py::list keys;
    for (const auto& [k, v] : shallow(self)) keys.append(py::str(k));
    return py::iter(keys);
  });
  c.def(
      "set_container",
      [](PyMap& self, const std::string& key, const py::object& type) {
        crdt::ContainerType t = container_type_from_python(type);
        return child_handle(
            self, on_ref(self, [&](crdt::MapRef& r) { return r.set_container(key, t); }));
      },
      py::arg("key"), py::arg("type"),
      "Creates a child container under `key` (type: 'Text', 'Map', 'List', 'Counter' or the "
      "class) and returns its handle.");
}

void bind_list(py::module_& m) {
  py::class_<PyList, PyContainer> c(m, "List",
                                    "A list of values or child containers. Supports l[i] "
                                    "(negative i from the end, slices), del l[i], len() and "
                                    "iteration.");
  c.def(
      "insert",
      [](PyList& self, int64_t index, const py::object& value) {
        size_t i = index_from_python(index, "index");
        Value v = value_from_python(value);
        check_doc(on_ref(self, [&](crdt::ListRef& r) { return r.insert(i, v); }));
      },
      py::arg("index"), py::arg("value"),
      "Inserts `value` at `index` (0 <= index <= len). Raises IndexError.");
  auto push = [](PyList& self, const py::object& value) {
    Value v = value_from_python(value);
    check_doc(on_ref(self, [&](crdt::ListRef& r) { return r.push(v); }));
  };
  c.def("push", push, py::arg("value"), "Appends `value`.");
  c.def("append", push, py::arg("value"), "Same as push().");
  c.def(
      "delete",
      [](PyList& self, int64_t index, int64_t count) {
        size_t i = index_from_python(index, "index");
        size_t n = index_from_python(count, "count");
        check_doc(on_ref(self, [&](crdt::ListRef& r) { return r.erase(i, n); }));
      },
      py::arg("index"), py::arg("count") = 1,
      "Deletes `count` elements at `index`. Raises IndexError past the end.");
  c.def(
      "get",
      [](PyList& self, int64_t index) {
        size_t i = index_from_python(index, "index");
        Value v = unwrap_doc(on_ref(self, [&](crdt::ListRef& r) { return r.get(i); }));
        return value_to_python(self.state, v);
      },
      py::arg("index"), "The element at `index` (a handle for a child). Raises IndexError.");
  auto shallow = [](PyList& self) {
    crdt::ValueList values = unwrap_doc(
        on_ref(self, [&](crdt::ListRef& r) { return Result<crdt::ValueList>(r.values()); }));
    py::list out;
    for (const auto& v : values) out.append(value_to_python(self.state, v));
    return out;
  };
  c.def("values", shallow, "The elements as a list (handles for child containers).");
  c.def("__iter__", [shallow](PyList& self) { return py::iter(shallow(self)); });
  c.def("__getitem__", [](PyList& self, int64_t index) {
    Value v = unwrap_doc(on_ref(self, [&](crdt::ListRef& r) -> Result<Value> {
      WEFT_ASSIGN_OR_RETURN(size_t i, sequence_index(index, r.len()));
      return r.get(i);
    }));
    return value_to_python(self.state, v);
  });
  c.def("__getitem__", [shallow](PyList& self, const py::slice& slice) {
    py::list values = shallow(self);
    return py::object(values[slice]);
  });
  c.def("__delitem__", [](PyList& self, int64_t index) {
    check_doc(on_ref(self, [&](crdt::ListRef& r) -> Status {
      WEFT_ASSIGN_OR_RETURN(size_t i, sequence_index(index, r.len()));
      return r.erase(i, 1);
    }));
  });
  c.def("__len__", [](PyList& self) {
    return unwrap_doc(on_ref(self, [&](crdt::ListRef& r) { return Result<size_t>(r.len()); }));
  });
  c.def(
      "insert_container",
      [](PyList& self, int64_t index, const py::object& type) {
        size_t i = index_from_python(index, "index");
        crdt::ContainerType t = container_type_from_python(type);
        return child_handle(
            self, on_ref(self, [&](crdt::ListRef& r) { return r.insert_container(i, t); }));
      },
      py::arg("index"), py::arg("type"),
      "Creates a child container at `index` and returns its handle.");
  c.def(
      "push_container",
      [](PyList& self, const py::object& type) {
        crdt::ContainerType t = container_type_from_python(type);
        return child_handle(self, on_ref(self, [&](crdt::ListRef& r) {
                              return r.insert_container(r.len(), t);
                            }));
      },
      py::arg("type"), "Appends a child container and returns its handle.");
}

void bind_counter(py::module_& m) {
  py::class_<PyCounter, PyContainer> c(m, "Counter",
                                       "A counter: the float sum of every peer's increments.");
  c.def(
      "increment",
      [](PyCounter& self, double delta) {
        check_doc(on_ref(self, [&](crdt::CounterRef& r) { return r.increment(delta); }));
      },
      py::arg("delta") = 1.0, "Adds `delta` (may be negative). Raises ValueError for NaN/inf.");
  c.def(
      "decrement",
      [](PyCounter& self, double delta) {
        check_doc(on_ref(self, [&](crdt::CounterRef& r) { return r.decrement(delta); }));
      },
      py::arg("delta") = 1.0, "Subtracts `delta`.");
  auto value = [](PyCounter& self) {
    return unwrap_doc(
        on_ref(self, [&](crdt::CounterRef& r) { return Result<double>(r.value()); }));
  };
  c.def_property_readonly("value", value, "The current sum.");
  c.def("__float__", value);
}

}  // namespace

void bind_containers(py::module_& m) {
  bind_container_base(m);
  bind_text(m);
  bind_map(m);
  bind_list(m);
  bind_counter(m);
}

}  // namespace weft::python
