// Events: what changed in a Doc, delivered to subscribers; and the RAII
// Subscription handle that keeps a callback registered.
//
// Callbacks run synchronously on the thread that changed the doc, after the
// doc's state is consistent; they may read the doc (re-entrant reads are
// allowed) but must not edit, import, checkout or commit it.
//
// Thread safety: a Subscription may be destroyed on any thread only while no
// other thread uses the Doc (the Doc is not thread-safe, see doc.h).
#ifndef WEFT_CRDT_EVENT_H_
#define WEFT_CRDT_EVENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "weft/crdt/container_id.h"
#include "weft/crdt/value.h"
#include "weft/crdt/version.h"

namespace weft::crdt {

// What caused an event.
enum class EventTrigger : uint8_t { kLocal, kImport, kCheckout };
std::string_view event_trigger_name(EventTrigger trigger);

// One step of a text delta; lengths count Unicode scalar values of the text
// (style anchors are not counted).
struct TextDeltaItem {
  enum class Kind : uint8_t { kRetain, kInsert, kDelete };
  Kind kind = Kind::kRetain;
  size_t len = 0;    // retain/delete length; insert: length of `text`
  std::string text;  // insert only (UTF-8)
  friend bool operator==(const TextDeltaItem&, const TextDeltaItem&) = default;
};
using TextDelta = std::vector<TextDeltaItem>;

// One step of a list delta (positions in elements).
struct ListDeltaItem {
  enum class Kind : uint8_t { kRetain, kInsert, kDelete };
  Kind kind = Kind::kRetain;
  size_t len = 0;             // retain/delete length; insert: values.size()
  std::vector<Value> values;  // insert only
  friend bool operator==(const ListDeltaItem&, const ListDeltaItem&) = default;
};
using ListDelta = std::vector<ListDeltaItem>;

// Changed map keys: the new value, or nullopt when the key was deleted.
struct MapDelta {
  std::map<std::string, std::optional<Value>> updated;
  friend bool operator==(const MapDelta&, const MapDelta&) = default;
};

// The change of a counter's value.
struct CounterDelta {
  double delta = 0;
  friend bool operator==(const CounterDelta&, const CounterDelta&) = default;
};

// The change of one container.
struct ContainerDiff {
  ContainerId target;
  std::variant<TextDelta, ListDelta, MapDelta, CounterDelta> diff;
};

// One event: everything one commit, import or checkout changed.
struct DocEvent {
  EventTrigger by = EventTrigger::kLocal;
  std::string origin;                  // the commit/import origin tag ("" if none)
  std::optional<std::string> message;  // commit message of a local commit
  Frontiers from;                      // state frontiers before
  Frontiers to;                        // state frontiers after
  std::vector<ContainerDiff> diffs;    // one per changed container (for subscribe(): the one)
};

using EventCallback = std::function<void(const DocEvent&)>;
// Receives the bytes (weft binary updates) of each local commit.
using LocalUpdateCallback = std::function<void(const std::string& bytes)>;

// Keeps a callback registered; unsubscribes when destroyed or unsubscribe()d.
// Movable, not copyable. Safe to destroy after the Doc is gone.
class Subscription {
 public:
  Subscription() = default;
  explicit Subscription(std::function<void()> unsubscribe) : unsubscribe_(std::move(unsubscribe)) {}
  ~Subscription() { unsubscribe(); }
  Subscription(Subscription&& o) noexcept : unsubscribe_(std::move(o.unsubscribe_)) {
    o.unsubscribe_ = nullptr;
  }
  Subscription& operator=(Subscription&& o) noexcept {
    if (this != &o) {
      unsubscribe();
      unsubscribe_ = std::move(o.unsubscribe_);
      o.unsubscribe_ = nullptr;
    }
    return *this;
  }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // Removes the callback now (idempotent).
  void unsubscribe() {
    if (unsubscribe_) {
      auto f = std::move(unsubscribe_);
      unsubscribe_ = nullptr;
      f();
    }
  }
  bool active() const { return static_cast<bool>(unsubscribe_); }

 private:
  std::function<void()> unsubscribe_;
};

}  // namespace weft::crdt

#endif  // WEFT_CRDT_EVENT_H_
