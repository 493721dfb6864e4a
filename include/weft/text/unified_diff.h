// Unified diffs: the data model, making one from two texts, and parsing one
// (one or several files) from text. Applying is in weft/text/patch.h.
//
// A hunk line's `text` is the line without its "\n" (a CRLF line keeps its
// "\r": that is how diff(1) writes CRLF files). "\ No newline at end of file"
// sets `no_newline` on the line before it.
//
// Thread safety: value types and stateless functions; safe from any thread.
#ifndef WEFT_TEXT_UNIFIED_DIFF_H_
#define WEFT_TEXT_UNIFIED_DIFF_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft::text {

struct HunkLine {
  char kind = ' ';          // ' ' context, '-' removed, '+' added
  std::string text;         // the line without its "\n"
  bool no_newline = false;  // followed by "\ No newline at end of file"

  friend bool operator==(const HunkLine&, const HunkLine&) = default;
};

struct Hunk {
  size_t old_start = 0;  // 1-based first old line (0 with old_count 0: "insert at the top")
  size_t old_count = 0;
  size_t new_start = 0;
  size_t new_count = 0;
  std::string section;  // text after the closing "@@" (e.g. a function name), may be ""
  std::vector<HunkLine> lines;

  // "@@ -l,s +l,s @@" as it appears in a diff (without the section).
  std::string header() const;
  friend bool operator==(const Hunk&, const Hunk&) = default;
};

// The changes to one file. Paths are as written in the "---"/"+++" lines,
// without a trailing tab + timestamp; "/dev/null" marks creation/deletion.
// A diff made only of hunks (no file headers) gives one FilePatch with
// empty paths.
struct FilePatch {
  std::string old_path;
  std::string new_path;
  std::vector<std::string> preamble;  // lines before "---" ("diff --git ...", "Index: ...")
  std::vector<Hunk> hunks;

  bool is_creation() const { return old_path == "/dev/null"; }
  bool is_deletion() const { return new_path == "/dev/null"; }
  // The path the patch is about: new_path unless the file is deleted, with a
  // git-style "a/" / "b/" prefix removed when both paths carry one. "" when
  // there were no file headers.
  std::string target_path() const;
  friend bool operator==(const FilePatch&, const FilePatch&) = default;
};

struct MakeDiffOptions {
  std::string old_label = "a";  // written after "--- "
  std::string new_label = "b";  // written after "+++ "
  size_t context = 3;           // unchanged lines shown around each change
  bool file_headers = true;     // false: hunks only
};

// A unified diff turning `old_text` into `new_text`, or "" when they are
// equal. Lines are compared byte for byte (a changed line ending is a
// change); hunks whose context would touch or overlap are merged.
std::string make_unified_diff(std::string_view old_text, std::string_view new_text,
                              const MakeDiffOptions& options = {});

// The same diff as a structure (paths from the labels; no hunks when equal).
FilePatch make_file_patch(std::string_view old_text, std::string_view new_text,
                          const MakeDiffOptions& options = {});

// Writes a FilePatch back as unified-diff text (headers only when a path is
// non-empty). format_file_patch(parse(x)) reproduces well-formed input
// modulo timestamps and trailing garbage.
std::string format_file_patch(const FilePatch& patch);

struct ParseOptions {
  // Tolerate a fully empty line inside a hunk as an empty context line (many
  // editors and models strip the lone space). Counts are still checked.
  bool empty_line_is_context = true;
};

// Parses a unified diff holding one or several files. Text outside file
// sections (commit messages, "diff --git" and "index" lines) is kept as
// preamble or skipped; inside a hunk everything is validated. A patch
// with CRLF line breaks is accepted (the "\r" stays in hunk line text, as
// it does for a CRLF file's diff).
// Errors (kInvalidArgument, message "patch line N: ..."): no hunk at all, a
// malformed "@@" header, a hunk whose line counts do not match its header,
// a line in a hunk that starts with none of ' ', '-', '+', '\', a "+++"
// without "---", a hunk before any file header after a file has started,
// or a misplaced "\ No newline" marker.
Result<std::vector<FilePatch>> parse_unified_diff(std::string_view patch,
                                                  const ParseOptions& options = {});

}  // namespace weft::text

#endif  // WEFT_TEXT_UNIFIED_DIFF_H_
