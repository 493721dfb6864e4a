// Search helpers over a text: literal and RE2 regex occurrences with their
// line numbers, and exact string edits ("old_string" -> "new_string") with
// the uniqueness rule coding agents expect.
//
// Thread safety: stateless functions; safe from any thread.
#ifndef WEFT_TEXT_SEARCH_H_
#define WEFT_TEXT_SEARCH_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft::text {

struct Match {
  size_t offset = 0;  // byte offset of the first matched byte
  size_t length = 0;  // bytes matched
  size_t line = 0;    // 1-based line holding `offset`
  size_t column = 0;  // 1-based byte column of `offset` within that line

  friend bool operator==(const Match&, const Match&) = default;
};

// Non-overlapping occurrences of `needle`, left to right, at most
// `max_matches` (0 = all). An empty needle matches nothing.
std::vector<Match> find_all(std::string_view text, std::string_view needle, size_t max_matches = 0);

// Counts non-overlapping occurrences of `needle` (0 for an empty needle).
size_t count_occurrences(std::string_view text, std::string_view needle);

struct RegexOptions {
  bool case_insensitive = false;
  bool literal = false;    // treat the pattern as a plain string
  size_t max_matches = 0;  // 0 = all
};

// Non-overlapping matches of an RE2 pattern (linear time: no catastrophic
// backtracking). "^" and "$" match at line boundaries. An empty match
// advances by one character. Error kInvalidArgument when the pattern does
// not compile, with RE2's reason.
Result<std::vector<Match>> find_all_regex(std::string_view text, std::string_view pattern,
                                          const RegexOptions& options = {});

// "lines 4, 19 and 40" (each line once; at most `max_listed`, then "...").
std::string describe_lines(const std::vector<Match>& matches, size_t max_listed = 20);

struct StringEdit {
  std::string old_string;
  std::string new_string;
  bool replace_all = false;
};

struct EditOutcome {
  std::string new_text;
  std::vector<size_t> replacements;  // how many occurrences each edit replaced
  std::vector<bool> crlf_adapted;    // edit matched only after "\n" -> "\r\n"
};

// Applies `edits` in order to `text` (each to the result of the previous
// one); all or nothing. An old_string that does not occur in a CRLF file is
// retried with its "\n" turned into "\r\n" (new_string likewise), so edits
// written with LF keep the file's endings. Errors (kInvalidArgument, message
// "edit N: ..."): empty old_string, old_string equal to new_string,
// old_string not found (kNotFound), or found several times without
// replace_all (kFailedPrecondition, with the count and the line numbers).
Result<EditOutcome> apply_string_edits(std::string_view text, const std::vector<StringEdit>& edits);

}  // namespace weft::text

#endif  // WEFT_TEXT_SEARCH_H_
