// The doc's event delivery, error mapping and value conversions (doc_state.h).
#include <Python.h>

#include <limits>

#include "doc_state.h"
#include "py_convert.h"

namespace weft::python {
namespace {

using crdt::Value;

// The value classes of weft/_doc.py, looked up on first use. Never freed:
// destroying py::objects after the interpreter has finalised crashes.
struct DocTypes {
  py::object id, id_span, frontiers, version_vector, import_status, change_meta, container_diff,
      doc_event;
};

const DocTypes& doc_types() {
  static DocTypes* types = [] {
    py::module_ m = py::module_::import("weft._doc");
    auto* t = new DocTypes();
    t->id = m.attr("ID");
    t->id_span = m.attr("IdSpan");
    t->frontiers = m.attr("Frontiers");
    t->version_vector = m.attr("VersionVector");
    t->import_status = m.attr("ImportStatus");
    t->change_meta = m.attr("ChangeMeta");
    t->container_diff = m.attr("ContainerDiff");
    t->doc_event = m.attr("DocEvent");
    return t;
  }();
  return *types;
}

// UTF-8 the C++ layer produced; invalid bytes (never expected) become U+FFFD.
py::str utf8_str(std::string_view text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

[[noreturn]] void raise_with(PyObject* type, std::string_view message) {
  PyErr_SetObject(type, utf8_str(message).ptr());
  throw py::error_already_set();
}

std::string utf8_arg(const py::handle& value) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) throw py::error_already_set();  // lone surrogates: UnicodeEncodeError
  return std::string(data, static_cast<size_t>(size));
}

Value value_from_python(const py::handle& value, size_t depth) {
  PyObject* o = value.ptr();
  if (o == Py_None) return Value();
  if (PyBool_Check(o)) return Value(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow != 0) {
      raise_value_error("integer " + std::string(py::str(value)) +
                        " does not fit in 64 bits (store it as a str or float)");
    }
    return Value(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Value(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) return Value(utf8_arg(value));
  if (PyBytes_Check(o) || PyByteArray_Check(o) || PyMemoryView_Check(o)) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
    const auto* data = static_cast<const uint8_t*>(view.buf);
    crdt::Binary binary{std::vector<uint8_t>(data, data + view.len)};
    PyBuffer_Release(&view);
    return Value(std::move(binary));
  }
  const bool is_list = PyList_Check(o) || PyTuple_Check(o);
  if (is_list || PyDict_Check(o)) {
    if (depth >= crdt::kMaxValueDepth) {
      raise_value_error("value nests lists and dicts deeper than " +
                        std::to_string(crdt::kMaxValueDepth) + " levels (or contains itself)");
    }
    if (is_list) {
      crdt::ValueList list;
      py::sequence seq = py::reinterpret_borrow<py::sequence>(value);
      list.reserve(seq.size());
      for (const auto& item : seq) list.push_back(value_from_python(item, depth + 1));
      return Value(std::move(list));
    }
    crdt::ValueMap map;
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(value)) {
      if (!PyUnicode_Check(k.ptr())) {
        raise_type_error("dict keys must be str, not " + type_name(k));
      }
      map.insert_or_assign(utf8_arg(k), value_from_python(v, depth + 1));
    }
    return Value(std::move(map));
  }
  if (py::isinstance<PyContainer>(value)) {
    raise_type_error(
        "a container handle cannot be stored as a value; create the child with "
        "Map.set_container() or List.insert_container()");
  }
  raise_type_error("cannot store a " + type_name(value) +
                   " in a doc: use None, bool, int, float, str, bytes, list, tuple or dict");
}

py::object to_python(const std::shared_ptr<DocState>& s, const crdt::TextDelta& delta) {
  py::list out;
  for (const auto& item : delta) {
    py::dict step;
    switch (item.kind) {
      case crdt::TextDeltaItem::Kind::kRetain: step["retain"] = item.len; break;
      case crdt::TextDeltaItem::Kind::kInsert: step["insert"] = utf8_str(item.text); break;
      case crdt::TextDeltaItem::Kind::kDelete: step["delete"] = item.len; break;
    }
    out.append(step);
  }
  return out;
}

py::object to_python(const std::shared_ptr<DocState>& s, const crdt::ListDelta& delta) {
  py::list out;
  for (const auto& item : delta) {
    py::dict step;
    switch (item.kind) {
      case crdt::ListDeltaItem::Kind::kRetain: step["retain"] = item.len; break;
      case crdt::ListDeltaItem::Kind::kDelete: step["delete"] = item.len; break;
      case crdt::ListDeltaItem::Kind::kInsert: {
        py::list values;
        for (const auto& v : item.values) values.append(value_to_python(s, v));
        step["insert"] = values;
        break;
      }
    }
    out.append(step);
  }
  return out;
}

py::object to_python(const std::shared_ptr<DocState>& s, const crdt::MapDelta& delta) {
  py::dict out;
  for (const auto& [key, value] : delta.updated) {
    out[utf8_str(key)] = value ? value_to_python(s, *value) : py::object(py::none());
  }
  return out;
}

py::object to_python(const std::shared_ptr<DocState>&, const crdt::CounterDelta& delta) {
  return py::float_(delta.delta);
}

py::object to_python(const std::shared_ptr<DocState>& s, const crdt::ContainerDiff& diff) {
  static constexpr const char* kKinds[] = {"text", "list", "map", "counter"};
  py::object delta = std::visit([&](const auto& d) { return to_python(s, d); }, diff.diff);
  return doc_types().container_diff(diff.target.to_string(), kKinds[diff.diff.index()], delta);
}

const char* trigger_name(crdt::EventTrigger trigger) {
  switch (trigger) {
    case crdt::EventTrigger::kLocal: return "local";
    case crdt::EventTrigger::kImport: return "import";
    case crdt::EventTrigger::kCheckout: return "checkout";
  }
  return "local";
}

py::tuple spans_to_python(const std::vector<crdt::IdSpan>& spans) {
  py::tuple out(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    out[i] = doc_types().id_span(spans[i].peer, spans[i].start, spans[i].end);
  }
  return out;
}

crdt::Counter counter_from_python(const py::handle& value, const char* what) {
  int64_t v = py::cast<int64_t>(value);
  if (v < 0 || v > std::numeric_limits<crdt::Counter>::max()) {
    raise_value_error(std::string(what) + " must be in [0, 2**31-1], got " + std::to_string(v));
  }
  return static_cast<crdt::Counter>(v);
}

}  // namespace

std::unique_lock<std::mutex> lock_doc(DocState& s) {
  std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
  if (!lock.owns_lock()) {
    py::gil_scoped_release release;
    lock.lock();
  }
  return lock;
}

void deliver_events(const std::shared_ptr<DocState>& s) {
  // Re-checked after each round: a thread that queued events while this one
  // was finishing left them here.
  while (!s->delivering && s->has_pending.load(std::memory_order_acquire)) {
    s->delivering = true;
    struct Reset {
      DocState& s;
      ~Reset() { s.delivering = false; }
    } reset{*s};
    for (;;) {
      std::vector<DocState::Pending> batch;
      {
        auto lock = lock_doc(*s);
        batch.swap(s->pending);
        s->has_pending.store(false, std::memory_order_release);
      }
      if (batch.empty()) break;
      for (auto& p : batch) {
        auto it = s->callbacks.find(p.id);
        if (it == s->callbacks.end()) continue;  // unsubscribed meanwhile
        py::object callback = it->second;        // alive even if it unsubscribes itself
        try {
          py::object arg;
          if (auto* bytes = std::get_if<std::string>(&p.payload)) {
            arg = py::bytes(*bytes);
          } else {
            arg = to_python(s, std::get<crdt::DocEvent>(p.payload));
          }
          callback(arg);
        } catch (py::error_already_set& error) {
          error.discard_as_unraisable(callback);
        }
      }
    }
  }
}

void raise_doc_status(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOutOfRange: raise_with(PyExc_IndexError, status.message());
    case StatusCode::kNotFound: raise_with(PyExc_LookupError, status.message());
    case StatusCode::kDataLoss: raise_with(PyExc_ValueError, status.to_string());
    default: raise_status(status);
  }
}

crdt::Value value_from_python(const py::handle& value) { return value_from_python(value, 0); }

py::object value_to_python(const std::shared_ptr<DocState>& s, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNull: return py::none();
    case Value::Kind::kBool: return py::bool_(value.as_bool());
    case Value::Kind::kI64: return py::int_(value.as_i64());
    case Value::Kind::kF64: return py::float_(value.as_f64());
    case Value::Kind::kString: return utf8_str(value.as_string());
    case Value::Kind::kBinary: {
      const auto& b = value.as_binary().bytes;
      return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
    }
    case Value::Kind::kList: {
      py::list out;
      for (const auto& v : value.as_list()) out.append(value_to_python(s, v));
      return out;
    }
    case Value::Kind::kMap: {
      py::dict out;
      for (const auto& [k, v] : value.as_map()) out[utf8_str(k)] = value_to_python(s, v);
      return out;
    }
    case Value::Kind::kContainer: return handle_for(s, value.as_container());
  }
  return py::none();
}

py::object handle_for(const std::shared_ptr<DocState>& s, const crdt::ContainerId& id) {
  auto make = [&](auto handle) {
    handle.state = s;
    handle.id = id;
    return py::cast(std::move(handle));
  };
  switch (id.type()) {
    case crdt::ContainerType::kText: return make(PyText{});
    case crdt::ContainerType::kMap: return make(PyMap{});
    case crdt::ContainerType::kList: return make(PyList{});
    case crdt::ContainerType::kCounter: return make(PyCounter{});
    default: break;
  }
  raise_type_error("container " + id.to_string() +
                   " is a MovableList or Tree, which weft does not support yet");
}

crdt::PeerId peer_from_python(const py::handle& value) {
  if (PyBool_Check(value.ptr()) || !PyLong_Check(value.ptr())) {
    raise_type_error("a peer id must be an int, not " + type_name(value));
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    raise_value_error("a peer id must be in [0, 2**64-2], got " + std::string(py::str(value)));
  }
  if (v == crdt::kReservedPeer) {
    raise_value_error("peer id 2**64-1 is reserved; use one in [0, 2**64-2]");
  }
  return static_cast<crdt::PeerId>(v);
}

crdt::Frontiers frontiers_from_python(const py::handle& value) {
  const DocTypes& t = doc_types();
  py::object f = py::reinterpret_borrow<py::object>(value);
  if (!py::isinstance(value, t.frontiers)) f = t.frontiers(value);  // validates, TypeError
  std::vector<crdt::ID> ids;
  for (const auto& item : f) {
    py::tuple id = py::reinterpret_borrow<py::tuple>(item);
    ids.push_back(crdt::ID{py::cast<uint64_t>(id[0]), counter_from_python(id[1], "counter")});
  }
  return crdt::Frontiers(std::move(ids));
}

crdt::VersionVector version_from_python(const py::handle& value) {
  crdt::VersionVector vv;
  if (value.is_none()) return vv;
  const DocTypes& t = doc_types();
  py::object v = py::reinterpret_borrow<py::object>(value);
  if (!py::isinstance(value, t.version_vector)) v = t.version_vector(value);  // validates
  for (const auto& [peer, end] : py::reinterpret_borrow<py::dict>(v.attr("_entries"))) {
    vv.set(py::cast<uint64_t>(peer), counter_from_python(end, "end counter"));
  }
  return vv;
}

py::object to_python(const crdt::Frontiers& value) {
  const DocTypes& t = doc_types();
  py::list ids;
  for (const auto& id : value.ids()) ids.append(t.id(id.peer, id.counter));
  return t.frontiers(ids);
}

py::object to_python(const crdt::VersionVector& value) {
  py::dict entries;
  for (const auto& [peer, end] : value.entries()) entries[py::int_(peer)] = end;
  return doc_types().version_vector(entries);
}

py::object to_python(const crdt::ImportStatus& value) {
  return doc_types().import_status(spans_to_python(value.success),
                                   spans_to_python(value.pending));
}

py::object to_python(const std::vector<crdt::ChangeMeta>& values) {
  const DocTypes& t = doc_types();
  py::list out;
  for (const auto& c : values) {
    out.append(t.change_meta(t.id(c.id.peer, c.id.counter), c.len, c.lamport, c.timestamp,
                             c.message ? py::object(utf8_str(*c.message)) : py::object(py::none()),
                             to_python(crdt::Frontiers(c.deps))));
  }
  return out;
}

py::object to_python(const std::shared_ptr<DocState>& s, const crdt::DocEvent& event) {
  return doc_types().doc_event(
      trigger_name(event.by), utf8_str(event.origin),
      event.message ? py::object(utf8_str(*event.message)) : py::object(py::none()),
      to_python(event.from), to_python(event.to), py::tuple(to_python(s, event.diffs)));
}

py::object to_python(const std::shared_ptr<DocState>& s,
                     const std::vector<crdt::ContainerDiff>& diffs) {
  py::list out;
  for (const auto& d : diffs) out.append(to_python(s, d));
  return out;
}

PosUnit pos_unit_from_python(const std::string& name) {
  if (name == "unicode") return PosUnit::kUnicode;
  if (name == "utf16" || name == "utf-16") return PosUnit::kUtf16;
  if (name == "bytes" || name == "utf8" || name == "utf-8") return PosUnit::kBytes;
  raise_value_error("unit must be 'unicode' (code points, as Python's str), 'utf16' or "
                    "'bytes' (UTF-8), not '" + name + "'");
}

crdt::ContainerType container_type_from_python(const py::handle& value) {
  if (PyType_Check(value.ptr())) {
    if (value.is(py::type::of<PyText>())) return crdt::ContainerType::kText;
    if (value.is(py::type::of<PyMap>())) return crdt::ContainerType::kMap;
    if (value.is(py::type::of<PyList>())) return crdt::ContainerType::kList;
    if (value.is(py::type::of<PyCounter>())) return crdt::ContainerType::kCounter;
    raise_type_error("container type must be weft.Text, weft.Map, weft.List or weft.Counter");
  }
  if (!PyUnicode_Check(value.ptr())) {
    raise_type_error("container type must be a str such as 'Text' or a handle class, not " +
                     type_name(value));
  }
  std::string name = utf8_arg(value);
  Result<crdt::ContainerType> type = crdt::parse_container_type(name);
  if (!type.ok() || *type == crdt::ContainerType::kMovableList ||
      *type == crdt::ContainerType::kTree) {
    raise_value_error("container type must be 'Text', 'Map', 'List' or 'Counter', not '" + name +
                      "'");
  }
  return *type;
}

size_t index_from_python(int64_t value, const char* what) {
  if (value < 0) {
    raise_with(PyExc_IndexError,
               std::string(what) + " must be >= 0, got " + std::to_string(value));
  }
  return static_cast<size_t>(value);
}

}  // namespace weft::python
