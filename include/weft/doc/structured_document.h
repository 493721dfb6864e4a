// StructuredDocument: a CRDT document (crdt::Doc) seen through a BlockSchema,
// with the permission and read-only rules an agent's tools must obey (seed
// 002). Every write checks, in order: the section exists and has the right
// schema kind (and the field exists in a declared map); unless `is_system`,
// the section's read_only flag, the field's read_only flag, then the block
// permission (permission.h; Human and Partner give "needs approval"); the
// value's type; the char limit. It then edits the CRDT (text edits are
// splices, never whole-text rewrites) and commits at once with an
// attribution message: the one set by set_attribution / auto_attribution if
// any, else "agent:<accessor>:<op>" for agent writes and "system:<op>" for
// system writes. Errors: doc_errors.h.
//
// Containers: Text "content", Map "root", List "items", Log "entries"; in a
// Composite each section's name. List and counter fields of a map live in
// root containers "<map>.<field>", so replicas never race to create them.
//
// Thread safety: every method is safe from any thread; one recursive mutex
// per document serialises them. Event callbacks run on the writing thread
// with the mutex held: they may read this document, not write it.
#ifndef WEFT_DOC_STRUCTURED_DOCUMENT_H_
#define WEFT_DOC_STRUCTURED_DOCUMENT_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/crdt/doc.h"
#include "weft/crdt/undo.h"
#include "weft/doc/doc_errors.h"
#include "weft/doc/permission.h"
#include "weft/doc/schema.h"

namespace weft::doc {

using Json = nlohmann::json;
using Section = std::optional<std::string_view>;

struct DocumentOptions {
  std::string label;
  BlockSchema schema;
  MemoryPermission permission = MemoryPermission::kReadWrite;
  std::optional<std::string> accessor_agent_id;  // the agent using this copy
  uint64_t char_limit = 0;                       // 0: unlimited
};

enum class ReplaceMode : uint8_t { kFirst, kAll, kNth };

struct ReplaceOptions {
  ReplaceMode mode = ReplaceMode::kFirst;
  size_t nth = 1;      // kNth: which match, counting from 1
  bool regex = false;  // RE2 syntax; the replacement may use \0..\9
};

class AgentUndo;

class StructuredDocument {
 public:
  // A fresh document: validates the schema and writes the schema defaults in
  // one "system:init" commit. Errors: kInvalidArgument for an invalid schema.
  static Result<std::unique_ptr<StructuredDocument>> create(DocumentOptions options);
  // Wraps an existing doc (e.g. loaded from the store); writes nothing.
  // Errors: kInvalidArgument for an invalid schema.
  static Result<std::unique_ptr<StructuredDocument>> wrap(DocumentOptions options, crdt::Doc doc);
  ~StructuredDocument();
  StructuredDocument(const StructuredDocument&) = delete;
  StructuredDocument& operator=(const StructuredDocument&) = delete;

  // ---- identity
  const std::string& label() const { return options_.label; }
  const std::optional<std::string>& accessor_agent_id() const { return options_.accessor_agent_id; }
  const BlockSchema& schema() const { return options_.schema; }
  MemoryPermission permission() const;
  void set_permission(MemoryPermission permission);
  uint64_t char_limit() const;
  void set_char_limit(uint64_t limit);

  // ---- text (Text schema or a Text section)
  Result<std::string> text_content(Section section = std::nullopt) const;
  // Rewrites the text to `content` as a minimal diff (Overwrite).
  Status set_text(std::string_view content, Section section = std::nullopt, bool is_system = false);
  Status append_text(std::string_view content, Section section = std::nullopt,
                     bool is_system = false);
  // Replaces matches of `find` (literal, or RE2 when options.regex) and
  // returns how many were replaced. Errors: kNotFound when nothing matches;
  // kOutOfRange for an nth past the last match; kInvalidArgument for a bad regex.
  Result<size_t> replace_text(std::string_view find, std::string_view replacement,
                              const ReplaceOptions& options = {}, Section section = std::nullopt,
                              bool is_system = false);

  // ---- fields (Map schema or a Map section)
  // The field's value; the schema default when never set; null when neither.
  // Counter fields read as integers, list fields as arrays.
  Result<Json> get_field(std::string_view name, Section section = std::nullopt) const;
  // All declared fields (and any extra keys) as one object.
  Result<Json> fields(Section section = std::nullopt) const;
  Status set_field(std::string_view name, const Json& value, Section section = std::nullopt,
                   bool is_system = false);
  Status set_text_field(std::string_view name, std::string_view value,
                        Section section = std::nullopt, bool is_system = false);
  Status append_to_list_field(std::string_view name, const Json& value,
                              Section section = std::nullopt, bool is_system = false);
  Status remove_from_list_field(std::string_view name, size_t index, Section section = std::nullopt,
                                bool is_system = false);
  // Returns the counter's new value.
  Result<int64_t> increment_counter(std::string_view name, int64_t delta,
                                    Section section = std::nullopt, bool is_system = false);

  // ---- list (List schema or a List section)
  Result<std::vector<Json>> list_items(Section section = std::nullopt) const;
  Status push_item(const Json& value, Section section = std::nullopt, bool is_system = false);
  Status insert_item(size_t index, const Json& value, Section section = std::nullopt,
                     bool is_system = false);
  Status delete_item(size_t index, Section section = std::nullopt, bool is_system = false);

  // ---- log (Log schema or a Log section): every entry is kept; render()
  // shows the last display_limit. `limit` nullopt: all entries.
  Result<std::vector<Json>> log_entries(Section section = std::nullopt,
                                        std::optional<size_t> limit = std::nullopt) const;
  Status append_log_entry(const Json& entry, Section section = std::nullopt, bool is_system = true);

  // ---- attribution and commits
  // The message of the next commit (used once).
  void set_attribution(std::string message);
  // set_attribution("agent:<accessor>:<operation>") when there is an accessor.
  void auto_attribution(std::string_view operation);
  // Commits pending raw edits (made through with_doc) with the pending
  // attribution, or `message`.
  Status commit();
  Status commit_with_attribution(std::string message);
  static std::string agent_attribution(std::string_view agent_id, std::string_view operation);
  static std::string source_attribution(std::string_view source_id);  // "source:<id>:update"
  static std::string system_attribution(std::string_view what);       // "system:<what>"

  // ---- subscriptions (RAII handles; see crdt/event.h)
  crdt::Subscription subscribe_root(crdt::EventCallback callback);
  crdt::Subscription subscribe(const crdt::ContainerId& container, crdt::EventCallback callback);
  // The schema's main container (Composite: every change, like subscribe_root).
  crdt::Subscription subscribe_content(crdt::EventCallback callback);
  // Container id of the schema's main container, or a section's.
  Result<crdt::ContainerId> content_container_id(Section section = std::nullopt) const;

  // Undo/redo of one agent's writes to this document: `agent_id`'s, else the
  // accessor agent's, else every agent's. System and source commits, other
  // agents' writes and imported changes are never undone.
  std::unique_ptr<AgentUndo> undo_manager(std::optional<std::string> agent_id = std::nullopt);

  // ---- rendering: what an agent sees in its context (deterministic).
  std::string render() const;
  // Characters counted against char_limit (Unicode scalar values).
  size_t content_chars() const;

  // ---- versions, sync and persistence
  crdt::VersionVector version() const;
  std::string export_updates(const crdt::VersionVector& from = {}) const;
  std::string export_snapshot(
      crdt::SnapshotCompression compression = crdt::SnapshotCompression::kSmallest) const;
  // Merges updates from another replica. Errors: as crdt::Doc::import.
  Result<crdt::ImportStatus> import(std::string_view data, std::string_view origin = "import");
  // A replica with the same history (new peer id) for another accessor.
  std::unique_ptr<StructuredDocument> fork(std::optional<std::string> accessor_agent_id) const;

  // Runs `f(crdt::Doc&)` under the document's lock (raw access: no checks,
  // no commit; call commit() after editing).
  template <typename F>
  auto with_doc(F&& f) const {
    std::lock_guard lock(state_->mu);
    return f(state_->doc);
  }

  struct State {
    mutable std::recursive_mutex mu;
    crdt::Doc doc;
    std::optional<std::string> pending_attribution;
    MemoryPermission permission = MemoryPermission::kReadWrite;
    uint64_t char_limit = 0;
  };

 private:
  StructuredDocument(DocumentOptions options, crdt::Doc doc);
  friend class DocOps;

  DocumentOptions options_;
  std::shared_ptr<State> state_;
};

// Agent-scoped undo over one StructuredDocument. Thread-safe (takes the
// document's lock). Keeps the document's state alive.
class AgentUndo {
 public:
  // Records the writes attributed to `agent_id` ("agent:<id>:..."), or every
  // agent's when it is nullopt.
  AgentUndo(std::shared_ptr<StructuredDocument::State> state,
            std::optional<std::string> agent_id = std::nullopt);
  ~AgentUndo();
  // Undoes the latest step; false when there is none.
  Result<bool> undo();
  Result<bool> redo();
  bool can_undo() const;
  bool can_redo() const;

 private:
  std::shared_ptr<StructuredDocument::State> state_;
  std::unique_ptr<crdt::UndoManager> manager_;
};

}  // namespace weft::doc

#endif  // WEFT_DOC_STRUCTURED_DOCUMENT_H_
