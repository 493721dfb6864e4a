// StructuredDocument text operations: content, set (minimal diff), append,
// and replace (literal or RE2; first / all / nth) as CRDT splices.
#include <re2/re2.h>

#include "doc/doc_ops.h"
#include "weft/base/utf.h"

namespace weft::doc {
namespace {

struct Match {
  size_t begin = 0;  // bytes
  size_t end = 0;
  std::string replacement;
};

Result<std::vector<Match>> literal_matches(const std::string& text, std::string_view find,
                                           std::string_view replacement) {
  std::vector<Match> out;
  size_t pos = 0;
  while ((pos = text.find(find, pos)) != std::string::npos) {
    out.push_back({pos, pos + find.size(), std::string(replacement)});
    pos += find.size();
  }
  return out;
}

Result<std::vector<Match>> regex_matches(const std::string& text, std::string_view find,
                                         std::string_view replacement) {
  RE2::Options opts;
  opts.set_log_errors(false);
  RE2 re(re2::StringPiece(find.data(), find.size()), opts);
  if (!re.ok()) return invalid_argument("bad regular expression: " + re.error());
  std::string rewrite_error;
  re2::StringPiece rewrite(replacement.data(), replacement.size());
  if (!re.CheckRewriteString(rewrite, &rewrite_error)) {
    return invalid_argument("bad replacement: " + rewrite_error);
  }
  int ngroups = re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> groups(static_cast<size_t>(ngroups));
  std::vector<Match> out;
  size_t pos = 0;
  while (pos <= text.size() &&
         re.Match(text, pos, text.size(), RE2::UNANCHORED, groups.data(), ngroups)) {
    Match m;
    m.begin = static_cast<size_t>(groups[0].data() - text.data());
    m.end = m.begin + groups[0].size();
    re.Rewrite(&m.replacement, rewrite, groups.data(), ngroups);
    out.push_back(std::move(m));
    if (out.back().end > out.back().begin) {
      pos = out.back().end;
    } else {  // an empty match: step over one whole character
      if (out.back().end >= text.size()) break;
      pos = out.back().end + utf8_sequence_length(static_cast<unsigned char>(text[pos]));
    }
  }
  return out;
}

}  // namespace

Result<std::string> StructuredDocument::text_content(Section section) const {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kText, "text_content"));
  return state_->doc.get_text(t.key).to_string();
}

Status StructuredDocument::set_text(std::string_view content, Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t, DocOps::resolve(*this, section, SchemaKind::kText, "set_text"));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kOverwrite, is_system));
  WEFT_RETURN_IF_ERROR(validate_utf8(content));
  crdt::TextRef text = state_->doc.get_text(t.key);
  WEFT_RETURN_IF_ERROR(DocOps::check_limit(*this, text.len(), count_unicode_unchecked(content)));
  WEFT_RETURN_IF_ERROR(text.update(content));
  return DocOps::finish(*this, "set_text", is_system);
}

Status StructuredDocument::append_text(std::string_view content, Section section, bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kText, "append_text"));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kAppend, is_system));
  WEFT_RETURN_IF_ERROR(validate_utf8(content));
  if (content.empty()) return Status();
  WEFT_RETURN_IF_ERROR(DocOps::check_limit(*this, 0, count_unicode_unchecked(content)));
  crdt::TextRef text = state_->doc.get_text(t.key);
  WEFT_RETURN_IF_ERROR(text.insert(text.len(), content));
  return DocOps::finish(*this, "append_text", is_system);
}

Result<size_t> StructuredDocument::replace_text(std::string_view find, std::string_view replacement,
                                                const ReplaceOptions& options, Section section,
                                                bool is_system) {
  DocOps::Lock lock(state_->mu);
  WEFT_ASSIGN_OR_RETURN(Target t,
                        DocOps::resolve(*this, section, SchemaKind::kText, "replace_text"));
  WEFT_RETURN_IF_ERROR(DocOps::check_write(*this, t, MemoryOp::kOverwrite, is_system));
  WEFT_RETURN_IF_ERROR(validate_utf8(find));
  WEFT_RETURN_IF_ERROR(validate_utf8(replacement));
  if (find.empty()) return invalid_argument("replace_text: the text to find is empty");
  crdt::TextRef text = state_->doc.get_text(t.key);
  std::string current = text.to_string();
  WEFT_ASSIGN_OR_RETURN(std::vector<Match> all, options.regex
                                                    ? regex_matches(current, find, replacement)
                                                    : literal_matches(current, find, replacement));
  if (all.empty()) {
    return not_found("'" + std::string(find) + "' does not occur in " + t.where);
  }
  std::vector<Match> chosen;
  switch (options.mode) {
    case ReplaceMode::kFirst:
      chosen.push_back(all.front());
      break;
    case ReplaceMode::kAll:
      chosen = std::move(all);
      break;
    case ReplaceMode::kNth:
      if (options.nth == 0 || options.nth > all.size()) {
        return out_of_range("replace_text: asked for match " + std::to_string(options.nth) +
                            " of '" + std::string(find) + "' but " + t.where + " has " +
                            std::to_string(all.size()));
      }
      chosen.push_back(all[options.nth - 1]);
      break;
  }
  // Byte ranges -> Unicode positions, walking the text once.
  struct Splice {
    size_t pos, len;
    std::string insert;
  };
  std::vector<Splice> splices;
  size_t removed = 0, added = 0, byte = 0, chars = 0;
  for (Match& m : chosen) {
    chars += count_unicode_unchecked(std::string_view(current).substr(byte, m.begin - byte));
    size_t len =
        count_unicode_unchecked(std::string_view(current).substr(m.begin, m.end - m.begin));
    splices.push_back({chars, len, std::move(m.replacement)});
    removed += len;
    added += count_unicode_unchecked(splices.back().insert);
    chars += len;
    byte = m.end;
  }
  WEFT_RETURN_IF_ERROR(DocOps::check_limit(*this, removed, added));
  // From the end backwards, so earlier positions stay valid.
  for (auto it = splices.rbegin(); it != splices.rend(); ++it) {
    WEFT_RETURN_IF_ERROR(text.splice(it->pos, it->len, it->insert));
  }
  WEFT_RETURN_IF_ERROR(DocOps::finish(*this, "replace_text", is_system));
  return splices.size();
}

}  // namespace weft::doc
