#include "weft/base/utf.h"

#include <cstring>

namespace weft {
namespace {

// Returns the byte length of the valid sequence at text[i], or 0 if invalid.
size_t valid_sequence_at(std::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  unsigned char c = s[i];
  if (c < 0x80) return 1;
  auto cont = [&](size_t k) { return i + k < n && (s[i + k] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && s[i + 1] < 0xA0) return 0;   // overlong
    if (c == 0xED && s[i + 1] >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && s[i + 1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && s[i + 1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Skips a run of ASCII bytes eight at a time; returns the new index.
size_t skip_ascii(std::string_view text, size_t i) {
  const char* p = text.data();
  while (i + 8 <= text.size()) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    if (word & 0x8080808080808080ULL) break;
    i += 8;
  }
  return i;
}

}  // namespace

std::string_view pos_unit_name(PosUnit unit) {
  switch (unit) {
    case PosUnit::kBytes: return "bytes";
    case PosUnit::kUnicode: return "unicode";
    case PosUnit::kUtf16: return "utf16";
  }
  return "unknown";
}

Status validate_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    i = skip_ascii(text, i);
    if (i >= text.size()) break;
    size_t len = valid_sequence_at(text, i);
    if (len == 0) {
      return invalid_argument("invalid UTF-8 at byte " + std::to_string(i));
    }
    i += len;
  }
  return Status();
}

bool is_valid_utf8(std::string_view text) { return validate_utf8(text).ok(); }

size_t count_unicode_unchecked(std::string_view text) {
  size_t count = 0;
  for (unsigned char c : text) count += !is_continuation(c);
  return count;
}

size_t count_utf16_unchecked(std::string_view text) {
  size_t count = 0;
  for (unsigned char c : text) count += !is_continuation(c) + (c >= 0xF0);
  return count;
}

size_t utf8_length_unchecked(std::string_view text, PosUnit unit) {
  switch (unit) {
    case PosUnit::kBytes: return text.size();
    case PosUnit::kUnicode: return count_unicode_unchecked(text);
    case PosUnit::kUtf16: return count_utf16_unchecked(text);
  }
  return 0;
}

size_t byte_offset_of_unicode_unchecked(std::string_view text, size_t n) {
  size_t i = 0;
  while (n > 0 && i < text.size()) {
    size_t next = skip_ascii(text, i);
    size_t ascii = next - i;
    if (ascii >= n) return i + n;
    n -= ascii;
    i = next;
    if (i >= text.size()) break;
    i += utf8_sequence_length(static_cast<unsigned char>(text[i]));
    --n;
  }
  return i;
}

Result<size_t> byte_offset_unchecked(std::string_view text, size_t pos, PosUnit unit) {
  switch (unit) {
    case PosUnit::kBytes:
      if (pos > text.size()) {
        return out_of_range("byte position " + std::to_string(pos) + " is past the end (" +
                            std::to_string(text.size()) + " bytes)");
      }
      if (pos < text.size() && is_continuation(static_cast<unsigned char>(text[pos]))) {
        return invalid_argument("byte position " + std::to_string(pos) +
                                " is inside a UTF-8 character");
      }
      return pos;
    case PosUnit::kUnicode: {
      size_t i = byte_offset_of_unicode_unchecked(text, pos);
      if (i == text.size() && count_unicode_unchecked(text) < pos) {
        return out_of_range("unicode position " + std::to_string(pos) + " is past the end (" +
                            std::to_string(count_unicode_unchecked(text)) + " characters)");
      }
      return i;
    }
    case PosUnit::kUtf16: {
      size_t i = 0, units = 0;
      while (units < pos && i < text.size()) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        size_t len = utf8_sequence_length(c);
        size_t w = len == 4 ? 2 : 1;
        if (units + w > pos) {
          return invalid_argument("UTF-16 position " + std::to_string(pos) +
                                  " splits a surrogate pair");
        }
        units += w;
        i += len;
      }
      if (units < pos) {
        return out_of_range("UTF-16 position " + std::to_string(pos) + " is past the end (" +
                            std::to_string(units) + " code units)");
      }
      return i;
    }
  }
  return internal_error("unknown position unit");
}

Result<size_t> convert_pos(std::string_view text, size_t pos, PosUnit from, PosUnit to) {
  WEFT_RETURN_IF_ERROR(validate_utf8(text));
  WEFT_ASSIGN_OR_RETURN(size_t byte, byte_offset_unchecked(text, pos, from));
  return utf8_length_unchecked(text.substr(0, byte), to);
}

char32_t decode_utf8_unchecked(std::string_view text, size_t& i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  unsigned char c = s[i];
  if (c < 0x80) {
    ++i;
    return c;
  }
  size_t len = utf8_sequence_length(c);
  char32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < len && i + k < text.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
  i += len;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::u16string utf8_to_utf16_unchecked(std::string_view text) {
  std::u16string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char32_t cp = decode_utf8_unchecked(text, i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
  }
  return out;
}

Result<std::string> utf16_to_utf8(std::u16string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char32_t u = text[i];
    if (u >= 0xD800 && u <= 0xDBFF) {
      if (i + 1 >= text.size() || text[i + 1] < 0xDC00 || text[i + 1] > 0xDFFF) {
        return invalid_argument("unpaired high surrogate at UTF-16 index " + std::to_string(i));
      }
      u = 0x10000 + ((u - 0xD800) << 10) + (text[i + 1] - 0xDC00);
      ++i;
    } else if (u >= 0xDC00 && u <= 0xDFFF) {
      return invalid_argument("unpaired low surrogate at UTF-16 index " + std::to_string(i));
    }
    append_utf8(out, u);
  }
  return out;
}

}  // namespace weft
