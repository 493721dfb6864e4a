// Sequence diff: Myers' O(ND) algorithm with the linear-space (middle snake)
// refinement, over sequences of items already reduced to integers (equal
// integers mean equal items). Helpers on top diff text by lines, and by
// Unicode scalar values inside changed lines.
//
// Cost: common prefix and suffix are trimmed first, so a 1 MB text with a few
// changed lines costs about one pass over it. The search depth per
// subproblem is capped (DiffOptions::max_cost); past the cap the split is
// chosen heuristically, so the result stays a *valid* edit script but may be
// longer than the minimal one. Worst case is then O((N + M) * max_cost).
//
// Thread safety: stateless functions; safe from any thread.
#ifndef WEFT_BASE_DIFF_H_
#define WEFT_BASE_DIFF_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

enum class DiffOp : uint8_t {
  kEqual,   // `count` items equal in both sequences
  kDelete,  // `count` items of the old sequence removed
  kInsert,  // `count` items of the new sequence added
};

// One run of an edit script. Runs cover both sequences in order: kEqual
// advances both, kDelete the old one, kInsert the new one. Adjacent runs
// never share an op; within a changed region deletes come before inserts.
struct DiffRun {
  DiffOp op;
  size_t old_begin;  // index into the old sequence where the run starts
  size_t new_begin;  // index into the new sequence where the run starts
  size_t count;      // number of items

  friend bool operator==(const DiffRun&, const DiffRun&) = default;
};

struct DiffOptions {
  // Largest edit distance searched exactly per subproblem before the
  // heuristic split kicks in (0 = choose from the input size, at least 256).
  size_t max_cost = 0;
};

// The edit script turning `old_items` into `new_items`. Minimal when the
// edit distance stays under the cost cap. Never fails.
std::vector<DiffRun> diff_items(std::span<const uint64_t> old_items,
                                std::span<const uint64_t> new_items,
                                const DiffOptions& options = {});

// Splits `text` into lines, each keeping its terminator ("\n"; a "\r\n" line
// keeps both bytes); a last line without a terminator is kept as is. "" has
// no lines. The views point into `text`.
std::vector<std::string_view> split_lines_keep_ends(std::string_view text);

// Maps each line of `old_lines` and `new_lines` to an integer such that two
// lines get the same integer exactly when their bytes are equal (interned,
// so hash collisions cannot make different lines compare equal).
void intern_lines(std::span<const std::string_view> old_lines,
                  std::span<const std::string_view> new_lines, std::vector<uint64_t>& old_ids,
                  std::vector<uint64_t>& new_ids);

// A line diff of two texts (lines as split_lines_keep_ends gives them), in
// line indices.
std::vector<DiffRun> diff_lines(std::string_view old_text, std::string_view new_text,
                                const DiffOptions& options = {});

// One replacement turning part of the old text into part of the new one:
// the bytes old_text[old_offset, old_offset + old_length) become
// new_text[new_offset, new_offset + new_length). Offsets are byte offsets and
// fall on UTF-8 sequence boundaries when the inputs are valid UTF-8.
struct TextReplacement {
  size_t old_offset;
  size_t old_length;
  size_t new_offset;
  size_t new_length;

  friend bool operator==(const TextReplacement&, const TextReplacement&) = default;
};

struct TextDiffOptions {
  DiffOptions line_options;
  // A changed region is refined by a character diff (over Unicode scalar
  // values) only when old + new region bytes are at most this; larger
  // regions are replaced whole, which bounds the cost.
  size_t max_refine_bytes = 64 * 1024;
};

// The longest common prefix and suffix of two texts made of whole lines
// (each ends just after a '\n' or at a text's start/end) that do not overlap
// in either text. Lets a line diff skip the unchanged parts of big files.
struct CommonLines {
  size_t prefix_bytes = 0;
  size_t suffix_bytes = 0;
};
CommonLines common_line_affixes(std::string_view old_text, std::string_view new_text);

// A small list of replacements turning `old_text` into `new_text`: a line
// diff first, then a character diff inside each changed region. The
// replacements are sorted, do not overlap, and applying them all (to the old
// text, each at its old_offset) yields `new_text`. Invalid UTF-8 is diffed
// byte-wise inside lines instead of by scalar value. Never fails.
std::vector<TextReplacement> diff_text(std::string_view old_text, std::string_view new_text,
                                       const TextDiffOptions& options = {});

// Applies replacements as produced by diff_text (sorted, non-overlapping,
// within bounds) to `old_text`; returns the new text. For tests and callers
// that want the string form.
std::string apply_text_replacements(std::string_view old_text, std::string_view new_text,
                                    std::span<const TextReplacement> replacements);

}  // namespace weft

#endif  // WEFT_BASE_DIFF_H_
