// Private: the checks and plumbing every StructuredDocument write shares —
// resolving the target container, permission / read-only checks, the char
// limit, and the attributed auto-commit. Callers hold the document's lock.
#ifndef WEFT_SRC_DOC_DOC_OPS_H_
#define WEFT_SRC_DOC_DOC_OPS_H_

#include <optional>
#include <string>

#include "weft/doc/structured_document.h"

namespace weft::doc {

// The container a non-composite schema's content lives in: Text "content",
// Map "root", List "items", Log "entries"; "" for Composite (sections name theirs).
std::string default_key(const BlockSchema& schema);

// Where an operation lands.
struct Target {
  std::string key;                      // container name ("content", "root", a section...)
  const BlockSchema* schema = nullptr;  // the effective schema (a section's for Composite)
  std::optional<std::string> section;
  bool section_read_only = false;
  // "block 'x'" or "section 'y' of block 'x'", for messages.
  std::string where;
};

class DocOps {
 public:
  using Lock = std::lock_guard<std::recursive_mutex>;

  static StructuredDocument::State& state(const StructuredDocument& d) { return *d.state_; }
  static const DocumentOptions& options(const StructuredDocument& d) { return d.options_; }

  // Resolves `section` against the schema and checks the effective schema is
  // of kind `want`. Errors: missing section, schema mismatch.
  static Result<Target> resolve(const StructuredDocument& d, Section section, SchemaKind want,
                                std::string_view op);
  // Unless is_system: the section's read_only flag, then the block
  // permission for `op`.
  static Status check_write(const StructuredDocument& d, const Target& t, MemoryOp op,
                            bool is_system);
  // Errors when the write would leave more than char_limit characters
  // (writes that shrink the content are always allowed).
  static Status check_limit(const StructuredDocument& d, size_t removed, size_t added);
  // Commits with the pending attribution or the default message for `op`.
  static Status finish(const StructuredDocument& d, std::string_view op, bool is_system);

  // Root container names for list / counter fields of the map at `key`.
  static std::string field_container(const std::string& key, std::string_view field) {
    return key + "." + std::string(field);
  }
  // Characters of the content under `t` (for char limits and content_chars).
  static size_t chars_of(const StructuredDocument& d, const std::string& key,
                         const BlockSchema& schema);
  // The field's value as JSON (schema default when unset).
  static Json read_field(const StructuredDocument& d, const std::string& key,
                         const BlockSchema& schema, std::string_view name);
  static std::vector<Json> read_list(const StructuredDocument& d, const std::string& list_name);
  // Writes schema defaults of the map at `key`; returns whether it wrote.
  static Status write_defaults(StructuredDocument& d, const std::string& key,
                               const BlockSchema& schema, bool& wrote);
};

}  // namespace weft::doc

#endif  // WEFT_SRC_DOC_DOC_OPS_H_
