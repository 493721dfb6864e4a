// serialize (see include/weft/server/jsonrpc.h): the one-line JSON text of a
// message, byte for byte what nlohmann's dump(-1, ' ', false, replace) gives,
// but with a fast path for strings. Tool results carry file contents of
// 100 KB and more; nlohmann escapes them through a per-byte UTF-8 decoder,
// which made serialising an fs_read result cost more than reading the file.
// Here a valid UTF-8 string is copied in runs between the bytes that need an
// escape (control characters, '"', '\\'); anything unusual (invalid UTF-8,
// binary values) falls back to nlohmann.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "weft/base/utf.h"
#include "weft/server/jsonrpc.h"

namespace weft::server {
namespace {

constexpr Json::error_handler_t kReplace = Json::error_handler_t::replace;

// True for the bytes JSON requires escaping.
inline bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// The first byte at or after p that needs an escape (or end). Checks 8 bytes at a time: a
// byte below 0x20, a '"' or a '\\' anywhere in the word (exact existence tests, see
// "Bit Twiddling Hacks": haszero / hasless), then finds it byte by byte.
const char* skip_plain(const char* p, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
    if (below_space | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\'))) break;
    p += 8;
  }
  while (p < end && !needs_escape(static_cast<unsigned char>(*p))) ++p;
  return p;
}

void append_string(std::string& out, const std::string& s) {
  if (!is_valid_utf8(s)) {  // nlohmann replaces invalid sequences with U+FFFD
    out += Json(s).dump(-1, ' ', false, kReplace);
    return;
  }
  if (s.size() > 4096) out.reserve(out.size() + s.size() + s.size() / 16 + 2);  // file text
  out.push_back('"');
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const char* run = p;
    p = skip_plain(p, end);
    out.append(run, static_cast<size_t>(p - run));
    if (p == end) break;
    unsigned char c = static_cast<unsigned char>(*p++);
    // Two-character escapes where JSON has them, else \u00XX (lower-case hex, as nlohmann).
    constexpr std::string_view kEscaped("\b\f\n\r\t\"\\", 7);
    constexpr std::string_view kLetter("bfnrt\"\\", 7);
    size_t named = kEscaped.find(static_cast<char>(c));
    if (named != std::string_view::npos) {
      out.push_back('\\');
      out.push_back(kLetter[named]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    }
  }
  out.push_back('"');
}

void append_value(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        append_string(out, it.key());
        out.push_back(':');
        append_value(out, it.value());
      }
      out.push_back('}');
      return;
    }
    case Json::value_t::array: {
      out.push_back('[');
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out.push_back(',');
        append_value(out, value[i]);
      }
      out.push_back(']');
      return;
    }
    case Json::value_t::string:
      append_string(out, value.get_ref<const std::string&>());
      return;
    default:  // numbers, booleans, null, binary: short, nlohmann's own text
      out += value.dump(-1, ' ', false, kReplace);
  }
}

}  // namespace

std::string serialize(const Json& message) {
  std::string out;
  append_value(out, message);
  return out;
}

}  // namespace weft::server
