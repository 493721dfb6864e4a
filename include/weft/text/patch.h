// Applying a parsed unified diff (weft/text/unified_diff.h) to a text.
//
// All or nothing: apply_patch returns the new text only when every hunk
// applies. Hunks are located by their context: first at the line the header
// names (shifted by the drift of earlier hunks), then at growing distances
// above and below it, then with up to `max_fuzz` context lines ignored at the
// hunk's edges (as GNU patch does). Lines compare without their line
// endings, so an LF patch applies to a CRLF file; trailing whitespace
// differences are tolerated only as a last resort. Bytes outside the
// replaced lines, and the endings of context lines, are kept exactly.
//
// Endings of added lines: when some hunk line carries a "\r" (the patch was
// made from CRLF text), each added line's own "\r" decides between "\r\n"
// and "\n", so make-then-apply reproduces the new text exactly. Otherwise
// (an LF patch, as agents write them) an added line takes the ending of the
// nearest preceding file line the hunk consumes (or the first one after it,
// or the line before the hunk, or the file's dominant ending): an LF patch
// keeps a CRLF file CRLF.
//
// Thread safety: stateless functions; safe from any thread.
#ifndef WEFT_TEXT_PATCH_H_
#define WEFT_TEXT_PATCH_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/text/unified_diff.h"

namespace weft::text {

struct ApplyOptions {
  size_t max_fuzz = 2;  // context lines that may be ignored at each hunk edge
  // Largest distance (in lines) from the expected position that is searched;
  // 0 = the whole text.
  size_t max_offset = 0;
  bool allow_whitespace_fuzz = true;  // last resort: ignore trailing whitespace
};

// What happened to one hunk.
struct HunkReport {
  size_t index = 0;    // 0-based position of the hunk in the patch
  std::string header;  // "@@ -l,s +l,s @@"
  bool applies = false;
  size_t line = 0;          // 1-based old line where it applies (when applies)
  long offset = 0;          // lines between the header's position and the real one
  size_t fuzz = 0;          // context lines ignored at each edge
  bool whitespace = false;  // matched only when ignoring trailing whitespace
  std::string message;      // why not, when !applies ("context not found ...")
};

struct PatchPlan {
  bool ok = false;                // every hunk applies
  std::vector<HunkReport> hunks;  // one per hunk, in order
  std::string new_text;           // the result, when ok
  // A one-line summary: "3 hunks apply" or the first failure.
  std::string summary() const;
};

// Locates every hunk of `patch` in `text` and, when all are found, builds
// the new text. Never fails: a dry run reads `hunks`. A creation patch
// (old "/dev/null") applies to an empty text; a deletion patch leaves "".
PatchPlan plan_patch(std::string_view text, const FilePatch& patch,
                     const ApplyOptions& options = {});

// The patched text, or kFailedPrecondition naming the first hunk that does
// not apply and why ("hunk 2 (@@ -10,3 +10,4 @@): context not found; ...").
Result<std::string> apply_patch(std::string_view text, const FilePatch& patch,
                                const ApplyOptions& options = {});

}  // namespace weft::text

#endif  // WEFT_TEXT_PATCH_H_
