// weft.Doc (the CRDT document of weft/crdt/doc.h) and weft.Subscription.
#include <pybind11/stl.h>

#include "bindings.h"
#include "doc_state.h"
#include "py_convert.h"

namespace weft::python {

namespace {

struct PySubscription {
  std::weak_ptr<DocState> state;
  uint64_t id = 0;

  bool active() const {
    auto s = state.lock();
    return s && s->callbacks.count(id) != 0;
  }
  void unsubscribe() {
    auto s = state.lock();
    if (!s) return;
    {
      auto lock = lock_doc(*s);
      auto it = s->subscriptions.find(id);
      if (it != s->subscriptions.end()) {
        it->second.unsubscribe();
        s->subscriptions.erase(it);
      }
    }
    s->callbacks.erase(id);
  }
};

// The data argument of import_(): bytes-like as is, str as its UTF-8 (JSON).
std::string import_arg(const py::handle& data) {
  if (PyUnicode_Check(data.ptr())) return text_arg(data);
  if (PyBytes_Check(data.ptr()) || PyByteArray_Check(data.ptr()) ||
      PyMemoryView_Check(data.ptr())) {
    return bytes_arg(data);
  }
  raise_type_error("import_() takes bytes (weft binary updates or snapshot, or Loro JSON) or "
                   "str (Loro JSON), not " +
                   std::string(py::str(py::type::handle_of(data).attr("__name__"))) +
                   " (json.dumps() a parsed JSON object first)");
}

std::string root_name_arg(const std::string& name) {
  if (!crdt::is_valid_root_name(name)) {
    raise_value_error("root container name '" + name +
                      "' is invalid: it must be non-empty, without '/' or NUL, and not start "
                      "with '\xF0\x9F\xA4\x9D:'");
  }
  return name;
}

template <typename Handle, typename Get>
py::object root_handle(const PyDoc& self, const std::string& name, Get get) {
  Handle handle;
  handle.state = self.state;
  handle.ref = with_doc(self.state, false, [&](crdt::Doc& d) { return get(d, name); });
  handle.id = handle.ref->id();
  return py::cast(std::move(handle));
}

PyDoc make_doc(crdt::Doc doc) { return PyDoc{std::make_shared<DocState>(std::move(doc))}; }

// Commits the open transaction, then exports (Loro's export does the same).
template <typename F>
auto export_committed(const PyDoc& self, F&& f) {
  auto r = with_doc(self.state, true, [&](crdt::Doc& d) -> Result<decltype(f(d))> {
    WEFT_RETURN_IF_ERROR(d.commit());
    return f(d);
  });
  return unwrap_doc(std::move(r));
}

void bind_doc_containers(py::class_<PyDoc>& c) {
  c.def(
      "get_text",
      [](const PyDoc& self, const std::string& name) {
        return root_handle<PyText>(self, root_name_arg(name),
                                   [](crdt::Doc& d, const std::string& n) { return d.get_text(n); });
      },
      py::arg("name"), "The root text `name` (created on first use). Raises ValueError.");
  c.def(
      "get_map",
      [](const PyDoc& self, const std::string& name) {
        return root_handle<PyMap>(self, root_name_arg(name),
                                  [](crdt::Doc& d, const std::string& n) { return d.get_map(n); });
      },
      py::arg("name"), "The root map `name` (created on first use).");
  c.def(
      "get_list",
      [](const PyDoc& self, const std::string& name) {
        return root_handle<PyList>(self, root_name_arg(name),
                                   [](crdt::Doc& d, const std::string& n) { return d.get_list(n); });
      },
      py::arg("name"), "The root list `name` (created on first use).");
  c.def(
      "get_counter",
      [](const PyDoc& self, const std::string& name) {
        return root_handle<PyCounter>(
            self, root_name_arg(name),
            [](crdt::Doc& d, const std::string& n) { return d.get_counter(n); });
      },
      py::arg("name"), "The root counter `name` (created on first use).");
  c.def(
      "container",
      [](const PyDoc& self, const std::string& cid) {
        crdt::ContainerId id = unwrap_doc(crdt::ContainerId::parse(cid));
        py::object handle = handle_for(self.state, id);
        // Resolve now, so that an unknown child fails here rather than on first use.
        Status found = with_doc(self.state, false, [&](crdt::Doc& d) {
          return d.get_value(id).status();
        });
        if (!id.is_root()) check_doc(found);
        return handle;
      },
      py::arg("cid"),
      "The handle of a container by its id ('cid:root-NAME:Text', 'cid:3@42:Map'). Raises "
      "ValueError (malformed id), LookupError (unknown child), TypeError (MovableList, Tree).");
}

void bind_doc_commit(py::class_<PyDoc>& c) {
  c.def(
      "commit",
      [](const PyDoc& self, std::optional<std::string> message, const std::string& origin,
         std::optional<int64_t> timestamp) {
        crdt::CommitOptions options;
        options.message = std::move(message);
        options.origin = origin;
        options.timestamp = timestamp;
        check_doc(with_doc(self.state, false, [&](crdt::Doc& d) { return d.commit(options); }));
      },
      py::arg("message") = py::none(), py::kw_only(), py::arg("origin") = "",
      py::arg("timestamp") = py::none(),
      "Closes the open transaction into a change (a no-op when nothing is pending) and fires "
      "its event. `origin` tags the event (and steers UndoManager); `timestamp` is Unix "
      "seconds. Edits stay pending until commit(), an import or an export.");
  c.def(
      "set_auto_commit",
      [](const PyDoc& self, bool on) {
        with_doc(self.state, false, [&](crdt::Doc& d) { d.set_auto_commit(on); });
      },
      py::arg("on"), "With auto-commit on, every edit commits at once.");
  c.def(
      "set_record_timestamp",
      [](const PyDoc& self, bool on) {
        with_doc(self.state, false, [&](crdt::Doc& d) { d.set_record_timestamp(on); });
      },
      py::arg("on"), "Record the wall-clock time on commits without an explicit timestamp.");
  c.def(
      "set_change_merge_interval",
      [](const PyDoc& self, int64_t seconds) {
        if (seconds < 0) raise_value_error("the merge interval must be >= 0 seconds");
        with_doc(self.state, false, [&](crdt::Doc& d) { d.set_change_merge_interval(seconds); });
      },
      py::arg("seconds"), "Max seconds between two commits merged into one change (1000).");
}

void bind_doc_exchange(py::class_<PyDoc>& c) {
  c.def(
      "import_",
      [](const PyDoc& self, const py::object& data, const std::string& origin) {
        std::string bytes = import_arg(data);
        auto r = with_doc(self.state, true,
                          [&](crdt::Doc& d) { return d.import(bytes, origin); });
        return to_python(unwrap_doc(std::move(r)));
      },
      py::arg("data"), py::kw_only(), py::arg("origin") = "",
      "Imports weft binary updates or a snapshot (bytes), or Loro JSON updates (str, or its "
      "UTF-8 bytes); the format is detected from the content. Atomic: on error the doc is "
      "unchanged. Returns ImportStatus (ops applied, ops waiting for missing ones). Raises "
      "TypeError, ValueError (malformed or corrupt data), IndexError (a position past the end "
      "of its version), RuntimeError (MovableList or Tree ops).");
  c.def(
      "export_updates",
      [](const PyDoc& self, const py::object& from) {
        crdt::VersionVector vv = version_from_python(from);
        return py::bytes(export_committed(self, [&](crdt::Doc& d) { return d.export_updates(vv); }));
      },
      py::arg("from_") = py::none(),
      "weft binary updates with every op not in version `from_` (None: all). Commits first.");
  c.def(
      "export_snapshot",
      [](const PyDoc& self, bool fast) {
        auto mode = fast ? crdt::SnapshotCompression::kFast : crdt::SnapshotCompression::kSmallest;
        return py::bytes(
            export_committed(self, [&](crdt::Doc& d) { return d.export_snapshot(mode); }));
      },
      py::kw_only(), py::arg("fast") = false,
      "weft binary snapshot: history and state, loads without replay. fast=True bounds the "
      "compression time for ~20% more bytes. Commits first.");
  c.def(
      "export_json_updates",
      [](const PyDoc& self, const py::object& from, bool peer_compression) {
        crdt::VersionVector vv = version_from_python(from);
        std::string json = export_committed(
            self, [&](crdt::Doc& d) { return d.export_json_updates(vv, peer_compression); });
        return py::str(json);
      },
      py::arg("from_") = py::none(), py::kw_only(), py::arg("peer_compression") = true,
      "Loro JSON updates (schema_version 1, as loro-crdt's exportJsonUpdates) with every op "
      "not in version `from_`, as a str. Commits first.");
}

void bind_doc_versions(py::class_<PyDoc>& c) {
  c.def(
      "version",
      [](const PyDoc& self) {
        return to_python(with_doc(self.state, false, [](crdt::Doc& d) { return d.version(); }));
      },
      "VersionVector of the current (possibly checked-out) state.");
  c.def(
      "oplog_version",
      [](const PyDoc& self) {
        return to_python(
            with_doc(self.state, false, [](crdt::Doc& d) { return d.oplog_version(); }));
      },
      "VersionVector of the whole history.");
  c.def(
      "frontiers",
      [](const PyDoc& self) {
        return to_python(with_doc(self.state, false, [](crdt::Doc& d) { return d.frontiers(); }));
      },
      "Frontiers of the current (possibly checked-out) state.");
  c.def(
      "oplog_frontiers",
      [](const PyDoc& self) {
        return to_python(
            with_doc(self.state, false, [](crdt::Doc& d) { return d.oplog_frontiers(); }));
      },
      "Frontiers of the whole history.");
  c.def(
      "frontiers_to_vv",
      [](const PyDoc& self, const py::object& frontiers) {
        crdt::Frontiers f = frontiers_from_python(frontiers);
        return to_python(unwrap_doc(
            with_doc(self.state, false, [&](crdt::Doc& d) { return d.frontiers_to_vv(f); })));
      },
      py::arg("frontiers"), "The VersionVector of `frontiers`. Raises LookupError.");
  c.def(
      "vv_to_frontiers",
      [](const PyDoc& self, const py::object& version) {
        crdt::VersionVector vv = version_from_python(version);
        auto r = with_doc(self.state, false, [&](crdt::Doc& d) -> Result<crdt::Frontiers> {
          if (!d.oplog_version().includes(vv)) {
            return invalid_argument("version " + vv.to_json_string() +
                                    " is not within the doc's history " +
                                    d.oplog_version().to_json_string());
          }
          return d.vv_to_frontiers(vv);
        });
        return to_python(unwrap_doc(std::move(r)));
      },
      py::arg("version"), "The Frontiers of `version`. Raises ValueError past the history.");
  c.def(
      "compare",
      [](const PyDoc& self, const py::object& a, const py::object& b) {
        crdt::Frontiers fa = frontiers_from_python(a);
        crdt::Frontiers fb = frontiers_from_python(b);
        auto order =
            unwrap_doc(with_doc(self.state, false, [&](crdt::Doc& d) { return d.compare(fa, fb); }));
        static constexpr const char* kNames[] = {"equal", "less", "greater", "concurrent"};
        return std::string(kNames[static_cast<int>(order)]);
      },
      py::arg("a"), py::arg("b"),
      "Causal order of two frontiers: 'equal', 'less' (a before b), 'greater' or "
      "'concurrent'. Raises LookupError.");
  c.def(
      "change_count",
      [](const PyDoc& self) {
        return with_doc(self.state, false, [](crdt::Doc& d) { return d.change_count(); });
      },
      "Number of stored changes.");
  c.def(
      "op_count",
      [](const PyDoc& self) {
        return with_doc(self.state, false, [](crdt::Doc& d) { return d.op_count(); });
      },
      "Number of op units in the history.");
  c.def(
      "changes",
      [](const PyDoc& self) {
        return to_python(with_doc(self.state, true, [](crdt::Doc& d) { return d.changes(); }));
      },
      "The stored changes in log order (list of ChangeMeta).");
}

void bind_doc_time_travel(py::class_<PyDoc>& c) {
  c.def(
      "fork",
      [](const PyDoc& self) {
        return make_doc(with_doc(self.state, true, [](crdt::Doc& d) { return d.fork(); }));
      },
      "A new Doc with the same history and state and a new random peer id.");
  c.def(
      "fork_at",
      [](const PyDoc& self, const py::object& frontiers) {
        crdt::Frontiers f = frontiers_from_python(frontiers);
        return make_doc(unwrap_doc(
            with_doc(self.state, true, [&](crdt::Doc& d) { return d.fork_at(f); })));
      },
      py::arg("frontiers"), "A new Doc holding the history up to `frontiers`. Raises LookupError.");
  c.def(
      "checkout",
      [](const PyDoc& self, const py::object& frontiers) {
        crdt::Frontiers f = frontiers_from_python(frontiers);
        check_doc(with_doc(self.state, true, [&](crdt::Doc& d) { return d.checkout(f); }));
      },
      py::arg("frontiers"),
      "Shows the state at `frontiers`, detached and read-only (edits raise RuntimeError) until "
      "attach(). Commits pending edits first. Raises LookupError.");
  c.def(
      "checkout_to_latest",
      [](const PyDoc& self) {
        check_doc(with_doc(self.state, true, [](crdt::Doc& d) { return d.checkout_to_latest(); }));
      },
      "Back to the latest state (attached).");
  c.def(
      "attach",
      [](const PyDoc& self) {
        check_doc(with_doc(self.state, true, [](crdt::Doc& d) { return d.attach(); }));
      },
      "Same as checkout_to_latest().");
  c.def(
      "detach",
      [](const PyDoc& self) { with_doc(self.state, false, [](crdt::Doc& d) { d.detach(); }); },
      "Stops following new imports: the state stays where it is until attach().");
  c.def_property_readonly(
      "is_detached",
      [](const PyDoc& self) {
        return with_doc(self.state, false, [](crdt::Doc& d) { return d.is_detached(); });
      },
      "True while checked out or detached.");
  c.def(
      "diff",
      [](const PyDoc& self, const py::object& from, const py::object& to) {
        crdt::Frontiers a = frontiers_from_python(from);
        crdt::Frontiers b = frontiers_from_python(to);
        auto diffs =
            unwrap_doc(with_doc(self.state, true, [&](crdt::Doc& d) { return d.diff(a, b); }));
        return to_python(self.state, diffs);
      },
      py::arg("from_"), py::arg("to"),
      "The per-container changes (list of ContainerDiff) from state `from_` to state `to`. "
      "Raises LookupError.");
  c.def(
      "revert_to",
      [](const PyDoc& self, const py::object& frontiers) {
        crdt::Frontiers f = frontiers_from_python(frontiers);
        check_doc(with_doc(self.state, true, [&](crdt::Doc& d) { return d.revert_to(f); }));
      },
      py::arg("frontiers"),
      "Writes new local edits that bring the state back to its value at `frontiers` (the "
      "history is kept). Raises LookupError, RuntimeError (detached).");
}

void bind_doc_values(py::class_<PyDoc>& c) {
  c.def(
      "to_python",
      [](const PyDoc& self) {
        crdt::Value v = with_doc(self.state, true, [](crdt::Doc& d) { return d.to_json(); });
        return value_to_python(self.state, v);
      },
      "The whole doc as Python values: {root name: value}, children nested (text as str, "
      "counter as float, binary as bytes), like loro-crdt's toJSON().");
  c.def(
      "to_json",
      [](const PyDoc& self) {
        return py::str(
            with_doc(self.state, true, [](crdt::Doc& d) { return d.to_json_string(); }));
      },
      "to_python() as compact JSON text with sorted keys (binary as arrays of bytes).");
  c.def(
      "subscribe",
      [](const PyDoc& self, const py::object& callback) {
        return subscribe_python(self.state, callback, false, std::nullopt);
      },
      py::arg("callback"),
      "Calls callback(DocEvent) after each commit, import or checkout that changes the doc. "
      "Returns a Subscription; the callback stays registered until its unsubscribe().");
  c.def(
      "subscribe_local_update",
      [](const PyDoc& self, const py::object& callback) {
        return subscribe_python(self.state, callback, true, std::nullopt);
      },
      py::arg("callback"),
      "Calls callback(bytes) with the weft binary updates of each local commit (send them to "
      "peers, who import_() them). Returns a Subscription.");
  c.def_property(
      "peer_id",
      [](const PyDoc& self) {
        return with_doc(self.state, false, [](crdt::Doc& d) { return d.peer_id(); });
      },
      [](const PyDoc& self, const py::object& peer) {
        crdt::PeerId p = peer_from_python(peer);
        check_doc(with_doc(self.state, false, [&](crdt::Doc& d) { return d.set_peer_id(p); }));
      },
      "This doc's peer id (an unsigned 64-bit int). Setting it commits pending edits first.");
  c.def("__repr__", [](const PyDoc& self) {
    auto [peer, ops, detached] = with_doc(self.state, false, [](crdt::Doc& d) {
      return std::make_tuple(d.peer_id(), d.oplog_version().total(), d.is_detached());
    });
    return "Doc(peer_id=" + std::to_string(peer) + ", ops=" + std::to_string(ops) +
           (detached ? ", detached" : "") + ")";
  });
}

}  // namespace

py::object subscribe_python(const std::shared_ptr<DocState>& s, const py::object& callback,
                            bool local_updates, const std::optional<crdt::ContainerId>& target) {
  if (!PyCallable_Check(callback.ptr())) {
    raise_type_error("callback must be callable, not " +
                     std::string(py::str(py::type::handle_of(callback).attr("__name__"))));
  }
  // The callback is stored first: events may arrive as soon as the C++ side is subscribed.
  const uint64_t id = s->next_id++;
  s->callbacks.emplace(id, callback);
  DocState* raw = s.get();  // the subscriptions live inside *raw
  with_doc(s, false, [&](crdt::Doc& d) {
    crdt::Subscription sub;
    if (local_updates) {
      sub = d.subscribe_local_update([raw, id](const std::string& bytes) {
        raw->pending.push_back({id, bytes});
        raw->has_pending.store(true, std::memory_order_release);
      });
    } else {
      auto queue = [raw, id](const crdt::DocEvent& event) {
        raw->pending.push_back({id, event});
        raw->has_pending.store(true, std::memory_order_release);
      };
      sub = target ? d.subscribe(*target, queue) : d.subscribe_root(queue);
    }
    s->subscriptions.emplace(id, std::move(sub));
  });
  return py::cast(PySubscription{s, id});
}

void bind_doc(py::module_& m) {
  py::class_<PySubscription>(m, "Subscription",
                             "A registered event callback; unsubscribe() removes it. Dropping "
                             "this object does not (the doc keeps the callback).")
      .def("unsubscribe", &PySubscription::unsubscribe,
           "Removes the callback (idempotent); queued events are not delivered to it.")
      .def_property_readonly("active", &PySubscription::active)
      .def("__enter__", [](const py::object& self) { return self; })
      .def("__exit__", [](PySubscription& self, const py::args&) { self.unsubscribe(); })
      .def("__repr__", [](const PySubscription& self) {
        return std::string("Subscription(") + (self.active() ? "active" : "inactive") + ")";
      });

  py::class_<PyDoc> c(m, "Doc",
                      "A CRDT document (Loro's model): root texts, maps, lists and counters, "
                      "a causal history, sync by binary or Loro JSON updates, time travel and "
                      "events. Thread-safe (calls on one doc are serialised); heavy calls "
                      "release the GIL.");
  c.def(py::init([](const py::object& peer_id) {
          if (peer_id.is_none()) return make_doc(crdt::Doc());
          return make_doc(crdt::Doc(peer_from_python(peer_id)));
        }),
        py::arg("peer_id") = py::none(),
        "A new empty doc with peer id `peer_id` (None: random). Raises ValueError for 2**64-1.");
  bind_doc_containers(c);
  bind_doc_commit(c);
  bind_doc_exchange(c);
  bind_doc_versions(c);
  bind_doc_time_travel(c);
  bind_doc_values(c);
}

}  // namespace weft::python
