// UTF-8 validation and position conversion between the three units weft
// speaks: bytes (UTF-8 code units), Unicode scalar values (what the CRDT engine
// counts internally, and what Loro's JSON positions count) and UTF-16 code
// units (what JavaScript editors count).
//
// Every function takes UTF-8 text. Functions named `*_unchecked` assume the
// text was validated; the others validate as they go and report bad input as
// an error, never by crashing.
//
// Thread safety: stateless free functions; safe from any thread.
#ifndef WEFT_BASE_UTF_H_
#define WEFT_BASE_UTF_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft {

// The unit a text position is counted in.
enum class PosUnit : uint8_t {
  kBytes,    // UTF-8 code units
  kUnicode,  // Unicode scalar values (code points other than surrogates)
  kUtf16,    // UTF-16 code units (an astral character counts 2)
};

std::string_view pos_unit_name(PosUnit unit);

// OK when `text` is well-formed UTF-8 (no overlongs, no surrogates, nothing
// above U+10FFFF); otherwise kInvalidArgument naming the first bad byte offset.
Status validate_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text);

// Length of valid UTF-8 `text` in the given unit.
size_t utf8_length_unchecked(std::string_view text, PosUnit unit);
size_t count_unicode_unchecked(std::string_view text);
size_t count_utf16_unchecked(std::string_view text);

// Converts position `pos` (a boundary counted in `from`) into unit `to`.
// Errors: kInvalidArgument for invalid UTF-8, or a position that falls inside
// a character (a byte in the middle of a sequence, or between the two halves
// of a surrogate pair); kOutOfRange when `pos` is past the end.
Result<size_t> convert_pos(std::string_view text, size_t pos, PosUnit from, PosUnit to);

// Byte offset of `pos` counted in `unit`; the same errors as convert_pos.
// REQUIRES: `text` is valid UTF-8 (use convert_pos for unchecked input).
Result<size_t> byte_offset_unchecked(std::string_view text, size_t pos, PosUnit unit);

// Byte offset of the `n`-th scalar value; n == count gives text.size().
// REQUIRES: valid UTF-8 and n <= count_unicode_unchecked(text).
size_t byte_offset_of_unicode_unchecked(std::string_view text, size_t n);

// Length in bytes of the UTF-8 sequence that starts with `lead` (1 for any
// invalid lead byte, so loops over bad input still advance).
inline size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return lead <= 0xF4 ? 4 : 1;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC2) return 2;
  return 1;
}

// Decodes the scalar value starting at byte `i` of valid UTF-8 and advances `i`.
char32_t decode_utf8_unchecked(std::string_view text, size_t& i);

// Appends `cp` encoded as UTF-8. REQUIRES: cp is a scalar value.
void append_utf8(std::string& out, char32_t cp);

// Converts UTF-8 to UTF-16 and back (for UTF-16 peers and tests).
std::u16string utf8_to_utf16_unchecked(std::string_view text);
Result<std::string> utf16_to_utf8(std::u16string_view text);

}  // namespace weft

#endif  // WEFT_BASE_UTF_H_
