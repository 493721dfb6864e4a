// The state behind weft.Doc and its container handles: one crdt::Doc behind a
// mutex (the C++ Doc is not thread-safe, the Python object must be), the
// events its C++ callbacks queue, and the Python callbacks that receive them.
// Also the conversions between CRDT values and Python objects.
//
// Thread safety: `mu` guards the Doc, the queue and the C++ subscriptions; the
// GIL guards the Python callbacks and the delivery flag. Nobody blocks on `mu`
// while holding the GIL (lock_doc releases it first), so a thread holding `mu`
// may always take the GIL (a heavy call finishing, a callback being queued).
#ifndef WEFT_PYTHON_DOC_STATE_H_
#define WEFT_PYTHON_DOC_STATE_H_

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft/base/status.h"
#include "weft/crdt/doc.h"

namespace weft::python {

namespace py = pybind11;

struct DocState {
  explicit DocState(crdt::Doc d) : doc(std::move(d)) {}

  std::mutex mu;
  crdt::Doc doc;  // under mu

  // One event a C++ callback queued for subscriber `id` (a DocEvent, or the
  // bytes of a local update); delivered once the call that caused it is done.
  struct Pending {
    uint64_t id;
    std::variant<crdt::DocEvent, std::string> payload;
  };
  std::vector<Pending> pending;                         // under mu
  std::atomic<bool> has_pending{false};                 // a hint read without mu
  std::map<uint64_t, crdt::Subscription> subscriptions;  // under mu; after `doc`

  std::map<uint64_t, py::object> callbacks;  // under the GIL
  uint64_t next_id = 1;                      // under the GIL
  bool delivering = false;                   // under the GIL
};

// The doc's mutex, taken without blocking while the GIL is held: try first,
// else release the GIL while waiting (REQUIRES: the GIL is held).
std::unique_lock<std::mutex> lock_doc(DocState& s);

// Calls the Python callbacks of the queued events (REQUIRES: the GIL, not
// `mu`). Events are delivered in order; when another thread is already
// delivering this doc's events, it delivers these too. A callback's exception
// goes to sys.unraisablehook.
void deliver_events(const std::shared_ptr<DocState>& s);

// Runs f(doc) under the doc's mutex, then delivers the events it queued.
// `heavy`: release the GIL for the call (imports, exports, checkouts...);
// otherwise the GIL stays held unless another thread holds the doc. `f` must
// not touch Python objects and must not throw.
template <typename F>
auto with_doc(const std::shared_ptr<DocState>& s, bool heavy, F&& f) {
  auto call = [&] {
    if (!heavy) {
      std::unique_lock<std::mutex> lock(s->mu, std::try_to_lock);
      if (lock.owns_lock()) return f(s->doc);
    }
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(s->mu);
    return f(s->doc);
  };
  if constexpr (std::is_void_v<decltype(call())>) {
    call();
    deliver_events(s);
  } else {
    auto result = call();
    deliver_events(s);
    return result;
  }
}

// Subscribes the Python `callback` to the doc's events (`target` unset), to
// one container's, or (local_updates) to the bytes of each local commit.
// Returns the weft.Subscription handle.
py::object subscribe_python(const std::shared_ptr<DocState>& s, const py::object& callback,
                            bool local_updates, const std::optional<crdt::ContainerId>& target);

// Python weft.Doc.
struct PyDoc {
  std::shared_ptr<DocState> state;
};

// Python weft.Container (base of Text, Map, List and Counter): a container id
// in one doc, the doc kept alive by `state`.
struct PyContainer {
  std::shared_ptr<DocState> state;
  crdt::ContainerId id;
};

template <typename Ref>
struct PyHandle : PyContainer {
  std::optional<Ref> ref;  // under state->mu; resolved on first use

  // The C++ handle. REQUIRES: state->mu held. Errors as Doc::text() etc.
  Result<Ref*> resolve(crdt::Doc& doc) {
    if (!ref) {
      Result<Ref> made = [&]() -> Result<Ref> {
        if constexpr (std::is_same_v<Ref, crdt::TextRef>) return doc.text(id);
        if constexpr (std::is_same_v<Ref, crdt::MapRef>) return doc.map(id);
        if constexpr (std::is_same_v<Ref, crdt::ListRef>) return doc.list(id);
        if constexpr (std::is_same_v<Ref, crdt::CounterRef>) return doc.counter(id);
      }();
      if (!made.ok()) return made.status();
      ref = std::move(made).value();
    }
    return &*ref;
  }
};
using PyText = PyHandle<crdt::TextRef>;
using PyMap = PyHandle<crdt::MapRef>;
using PyList = PyHandle<crdt::ListRef>;
using PyCounter = PyHandle<crdt::CounterRef>;

// ---- errors

// Raises the Python exception for a failed doc call: kOutOfRange IndexError,
// kNotFound LookupError, kDataLoss ValueError, the rest as raise_status
// (ValueError for invalid input, RuntimeError for kFailedPrecondition...).
[[noreturn]] void raise_doc_status(const Status& status);
inline void check_doc(const Status& status) {
  if (!status.ok()) raise_doc_status(status);
}
template <typename T>
T unwrap_doc(Result<T>&& result) {
  if (!result.ok()) raise_doc_status(result.status());
  return std::move(result).value();
}

// ---- conversions (GIL held)

// A Python value for a map slot or list element: None, bool, int (64-bit),
// float, str, bytes-like, list/tuple, dict with str keys, nested at most
// crdt::kMaxValueDepth deep. TypeError / ValueError otherwise (a container
// handle is refused: set_container / insert_container create children).
crdt::Value value_from_python(const py::handle& value);
// A value as Python; child container references become handles on `s`.
py::object value_to_python(const std::shared_ptr<DocState>& s, const crdt::Value& value);
// A handle (weft.Text/Map/List/Counter) for container `id` of `s`; the C++
// handle is resolved on first use. TypeError for MovableList and Tree.
py::object handle_for(const std::shared_ptr<DocState>& s, const crdt::ContainerId& id);

crdt::PeerId peer_from_python(const py::handle& value);
// weft.Frontiers or an iterable of op ids ((peer, counter) or "counter@peer").
crdt::Frontiers frontiers_from_python(const py::handle& value);
// weft.VersionVector or a Mapping[int, int]; None is the empty version.
crdt::VersionVector version_from_python(const py::handle& value);
py::object to_python(const crdt::Frontiers& value);
py::object to_python(const crdt::VersionVector& value);
py::object to_python(const crdt::ImportStatus& value);
py::object to_python(const std::vector<crdt::ChangeMeta>& values);
py::object to_python(const std::shared_ptr<DocState>& s, const crdt::DocEvent& event);
py::object to_python(const std::shared_ptr<DocState>& s,
                     const std::vector<crdt::ContainerDiff>& diffs);
// "unicode" | "utf16" | "bytes" (ValueError otherwise).
PosUnit pos_unit_from_python(const std::string& name);
// A container type: "Text", "Map", "List", "Counter" (any case) or the
// handle class itself (weft.Text...). TypeError / ValueError otherwise.
crdt::ContainerType container_type_from_python(const py::handle& value);
// An index or length argument: a non-negative int (IndexError otherwise).
size_t index_from_python(int64_t value, const char* what);

}  // namespace weft::python

#endif  // WEFT_PYTHON_DOC_STATE_H_
