// Handles to the containers of a Doc: TextRef, ListRef, MapRef, CounterRef.
// A handle names a container (by ContainerId) in one Doc; it is cheap to copy
// and stays valid as long as it is used (it keeps the Doc's internals alive,
// but edits through it fail with kFailedPrecondition once the Doc is gone).
//
// Edits go into the Doc's open transaction (see Doc::commit). They fail with
// kFailedPrecondition while the Doc is detached (checked out) and with
// kFailedPrecondition when the container is a child that is no longer visible.
//
// Thread safety: as the Doc (not thread-safe; one thread at a time).
#ifndef WEFT_CRDT_HANDLES_H_
#define WEFT_CRDT_HANDLES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "weft/base/utf.h"
#include "weft/crdt/container_id.h"
#include "weft/crdt/value.h"

namespace weft::crdt {

namespace detail {
class DocCore;  // the Doc's internals (src/crdt/)
}

class ContainerRef {
 public:
  ContainerRef() = default;
  ContainerRef(std::shared_ptr<detail::DocCore> core, ContainerId id)
      : core_(std::move(core)), id_(std::move(id)) {}
  const ContainerId& id() const { return id_; }
  bool valid() const { return core_ != nullptr; }
  // True while the container is reachable from a root (children can be
  // overwritten/deleted by map or list edits).
  bool is_attached_to_root() const;

 protected:
  // The container's index in its doc (interned on first use, then cached).
  // REQUIRES: valid().
  uint32_t doc_index() const;
  // The index doc_index() cached, UINT32_MAX before its first call (readers
  // use it to skip the id lookup without interning).
  uint32_t cached_index() const { return index_; }
  // The doc's core with buffered keystrokes applied (DocCore::settled), or
  // nullptr when the handle is empty: where every method but the typing
  // paths starts.
  detail::DocCore* settled() const;

  std::shared_ptr<detail::DocCore> core_;
  ContainerId id_;

 private:
  static constexpr uint32_t kNoIndex = UINT32_MAX;
  mutable uint32_t index_ = kNoIndex;
};

// A text: a sequence of Unicode scalar values (plus invisible style anchors).
class TextRef : public ContainerRef {
 public:
  using ContainerRef::ContainerRef;

  // Inserts UTF-8 `text` at `pos` (counted in `unit`).
  // Errors: kInvalidArgument for invalid UTF-8 or a position inside a
  // character; kOutOfRange past the end.
  Status insert(size_t pos, std::string_view text, PosUnit unit = PosUnit::kUnicode);
  // Deletes `len` units starting at `pos`. Errors as insert.
  Status erase(size_t pos, size_t len, PosUnit unit = PosUnit::kUnicode);
  // Deletes `len` units at `pos`, then inserts `text` there.
  Status splice(size_t pos, size_t len, std::string_view text, PosUnit unit = PosUnit::kUnicode);
  // Replaces the whole text by `new_text`, writing a small diff (line diff,
  // then a character diff inside changed lines). Errors: invalid UTF-8.
  Status update(std::string_view new_text);
  // Applies a style `key`=`value` to [start, end) (a null value unmarks).
  // `expand`: 0 none, 1 after, 2 before, 3 both (Loro's defaults: bold/italic
  // expand after, link none). Errors as insert; kInvalidArgument if start >= end.
  Status mark(size_t start, size_t end, std::string_view key, const Value& value,
              PosUnit unit = PosUnit::kUnicode, int expand = 1);

  // Length in `unit`.
  size_t len(PosUnit unit = PosUnit::kUnicode) const;
  bool empty() const { return len() == 0; }
  // The current text (UTF-8).
  std::string to_string() const;
  // Converts a position between units. Errors: kOutOfRange, kInvalidArgument
  // (a position inside a character).
  Result<size_t> convert_pos(size_t pos, PosUnit from, PosUnit to) const;

 private:
  // insert() past its one-store case of a key typed on (handles.cc).
  Status insert_general(size_t pos, std::string_view text, PosUnit unit);
};

// A list of values (or child containers).
class ListRef : public ContainerRef {
 public:
  using ContainerRef::ContainerRef;

  // Inserts `value` at `index`. Errors: kOutOfRange; kInvalidArgument for a
  // value that holds a container reference (use insert_container).
  Status insert(size_t index, const Value& value);
  Status push(const Value& value) { return insert(len(), value); }
  // Deletes `count` elements at `index`. Errors: kOutOfRange.
  Status erase(size_t index, size_t count = 1);
  // Creates a child container at `index` and returns its id.
  Result<ContainerId> insert_container(size_t index, ContainerType type);

  size_t len() const;
  // The element at `index` (a container reference for children). Errors: kOutOfRange.
  Result<Value> get(size_t index) const;
  // The shallow value (children as container references).
  ValueList values() const;
};

// A map from string keys to values (or child containers); last writer wins.
class MapRef : public ContainerRef {
 public:
  using ContainerRef::ContainerRef;

  // Sets `key` to `value`. Errors: kInvalidArgument for a container reference
  // inside `value` (use set_container).
  Status set(std::string_view key, const Value& value);
  // Deletes `key` (a no-op when absent).
  Status erase(std::string_view key);
  // Creates a child container under `key` and returns its id.
  Result<ContainerId> set_container(std::string_view key, ContainerType type);

  // The value under `key`, nullopt when absent.
  std::optional<Value> get(std::string_view key) const;
  bool contains(std::string_view key) const { return get(key).has_value(); }
  size_t size() const;
  // The shallow value (children as container references).
  ValueMap values() const;
};

// A counter: the f64 sum of all increments.
class CounterRef : public ContainerRef {
 public:
  using ContainerRef::ContainerRef;
  // Adds `delta` (may be negative). Errors: kInvalidArgument for NaN/Inf.
  Status increment(double delta);
  Status decrement(double delta) { return increment(-delta); }
  double value() const;
};

}  // namespace weft::crdt

#endif  // WEFT_CRDT_HANDLES_H_
