// StructuredDocument::render(): the text an agent sees for a block, and the
// character count that char limits apply to. Deterministic: fields in schema
// order (then extra keys sorted), items numbered from 1, the last N log
// entries, composite sections in schema order under "## name" headings.
#include "doc/doc_ops.h"
#include "doc/json_value.h"
#include "weft/base/utf.h"

namespace weft::doc {
namespace {

// "[at] text" for the entries append_log_entry makes (and the same shape
// with "timestamp"/"message"); anything else as JSON.
std::string render_log_entry(const Json& e) {
  if (!e.is_object()) return json_display(e);
  std::string at, text;
  bool has_text = false;
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (it.key() == "at" || it.key() == "timestamp") {
      at = json_display(it.value());
    } else if ((it.key() == "text" || it.key() == "message") && !has_text) {
      text = json_display(it.value());
      has_text = true;
    } else {
      return json_display(e);
    }
  }
  if (!has_text) return json_display(e);
  return (at.empty() ? "" : "[" + at + "] ") + text;
}

void render_body(const StructuredDocument& d, const std::string& key, const BlockSchema& schema,
                 std::string& out) {
  crdt::Doc& doc = DocOps::state(d).doc;
  switch (schema.kind()) {
    case SchemaKind::kText:
      out += doc.get_text(key).to_string();
      if (!out.empty() && out.back() != '\n') out += '\n';
      break;
    case SchemaKind::kMap: {
      for (const FieldDef& f : schema.as_map()->fields) {
        Json v = DocOps::read_field(d, key, schema, f.name);
        out += f.name + (f.read_only ? " [read-only]" : "") + ": " + json_display(v) + "\n";
      }
      for (const auto& [k, v] : doc.get_map(key).values()) {
        if (schema.find_field(k)) continue;
        out += k + ": " + json_display(value_to_json(v, doc)) + "\n";
      }
      break;
    }
    case SchemaKind::kList: {
      std::vector<Json> items = DocOps::read_list(d, key);
      for (size_t i = 0; i < items.size(); ++i) {
        out += std::to_string(i + 1) + ". " + json_display(items[i]) + "\n";
      }
      break;
    }
    case SchemaKind::kLog: {
      std::vector<Json> entries = DocOps::read_list(d, key);
      size_t limit = schema.as_log()->display_limit;
      size_t first = entries.size() > limit ? entries.size() - limit : 0;
      if (first > 0) {
        out += "(last " + std::to_string(limit) + " of " + std::to_string(entries.size()) +
               " entries)\n";
      }
      for (size_t i = first; i < entries.size(); ++i) out += render_log_entry(entries[i]) + "\n";
      break;
    }
    case SchemaKind::kComposite:
      break;  // validated away: sections are never composite
  }
}

}  // namespace

size_t DocOps::chars_of(const StructuredDocument& d, const std::string& key,
                        const BlockSchema& schema) {
  crdt::Doc& doc = state(d).doc;
  switch (schema.kind()) {
    case SchemaKind::kText:
      return doc.get_text(key).len();
    case SchemaKind::kMap: {
      size_t n = 0;
      for (const FieldDef& f : schema.as_map()->fields) {
        n += json_chars(read_field(d, key, schema, f.name));
      }
      for (const auto& [k, v] : doc.get_map(key).values()) {
        if (!schema.find_field(k)) n += json_chars(value_to_json(v, doc));
      }
      return n;
    }
    case SchemaKind::kList: {
      size_t n = 0;
      for (const Json& item : read_list(d, key)) n += json_chars(item);
      return n;
    }
    case SchemaKind::kLog:
      return 0;  // logs are trimmed when shown (see append_log_entry)
    case SchemaKind::kComposite:
      return 0;
  }
  return 0;
}

size_t StructuredDocument::content_chars() const {
  DocOps::Lock lock(state_->mu);
  if (const auto* c = options_.schema.as_composite()) {
    size_t n = 0;
    for (const auto& s : c->sections) n += DocOps::chars_of(*this, s.name, *s.schema);
    return n;
  }
  // Log entries do not count toward the char limit (a growing log would block every write).
  if (options_.schema.kind() == SchemaKind::kLog) return 0;
  return DocOps::chars_of(*this, default_key(options_.schema), options_.schema);
}

std::string StructuredDocument::render() const {
  DocOps::Lock lock(state_->mu);
  std::string out;
  if (const auto* c = options_.schema.as_composite()) {
    for (size_t i = 0; i < c->sections.size(); ++i) {
      const CompositeSection& s = c->sections[i];
      if (i > 0) out += "\n";
      out += "## " + s.name + (s.read_only ? " [read-only]" : "") + "\n";
      if (s.description && !s.description->empty()) out += "(" + *s.description + ")\n";
      render_body(*this, s.name, *s.schema, out);
    }
    return out;
  }
  render_body(*this, default_key(options_.schema), options_.schema, out);
  return out;
}

}  // namespace weft::doc
