// Lexical path normalisation shared by every backend.
#include "weft/fs/path.h"

#include <cstdio>
#include <string>

#include "weft/base/utf.h"

namespace weft::fs {
namespace {

std::string quote(std::string_view path) {
  std::string out = "'" + display_name(path.substr(0, 200));
  if (path.size() > 200) out += "...";
  return out + "'";
}

void append_hex_byte(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out.push_back(kHex[c >> 4]);
  out.push_back(kHex[c & 15]);
}

// Characters that can move or hide text on a terminal or in a model's view.
bool invisible_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Splits `path` on '/' into `out`, applying "." and ".."; false when ".."
// climbs above the start.
bool apply_segments(std::string_view path, std::vector<std::string>* out) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    start = slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (out->empty()) return false;
      out->pop_back();
      continue;
    }
    out->emplace_back(seg);
  }
  return true;
}

}  // namespace

std::string display_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  size_t i = 0;
  while (i < name.size()) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) {
      if (c == 0) {
        out += "\\0";
      } else if (c == '\\') {
        out += "\\\\";
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7F) {
        append_hex_byte(out, c);
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    size_t len = utf8_sequence_length(c);
    std::string_view seq = name.substr(i, len);
    if (len == 1 || seq.size() < len || !is_valid_utf8(seq)) {
      append_hex_byte(out, c);
      ++i;
      continue;
    }
    size_t j = 0;
    char32_t cp = decode_utf8_unchecked(seq, j);
    if (invisible_control(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(seq);
    }
    i += len;
  }
  return out;
}

std::string NormalPath::str() const {
  if (segments.empty()) return ".";
  std::string out;
  for (const std::string& s : segments) {
    if (!out.empty()) out.push_back('/');
    out += s;
  }
  return out;
}

NormalPath NormalPath::parent() const {
  NormalPath p = *this;
  if (!p.segments.empty()) p.segments.pop_back();
  return p;
}

NormalPath NormalPath::child(std::string_view name) const {
  NormalPath p = *this;
  p.segments.emplace_back(name);
  return p;
}

bool NormalPath::within(const NormalPath& other) const {
  if (other.segments.size() > segments.size()) return false;
  for (size_t i = 0; i < other.segments.size(); ++i) {
    if (segments[i] != other.segments[i]) return false;
  }
  return true;
}

Result<NormalPath> normalize_path(std::string_view path, std::string_view root,
                                  const FsLimits& limits) {
  if (path.find('\0') != std::string_view::npos) {
    return invalid_argument("path " + quote(path) + " contains a NUL byte");
  }
  if (path.size() > 4096) {
    return invalid_argument("path of " + std::to_string(path.size()) +
                            " bytes is longer than 4096 bytes");
  }
  if (!is_valid_utf8(path)) return invalid_argument("path " + quote(path) + " is not valid UTF-8");
  NormalPath out;
  if (!path.empty() && path[0] == '/') {
    std::vector<std::string> abs;
    std::vector<std::string> root_segs;
    if (!apply_segments(path, &abs) || !apply_segments(root, &root_segs)) {
      return permission_denied("path " + quote(path) + " climbs above '/'");
    }
    bool inside = abs.size() >= root_segs.size();
    for (size_t i = 0; inside && i < root_segs.size(); ++i) inside = abs[i] == root_segs[i];
    if (!inside) {
      return permission_denied("absolute path " + quote(path) +
                               " is outside the workspace root; use a path relative to the root");
    }
    out.segments.assign(abs.begin() + static_cast<std::ptrdiff_t>(root_segs.size()), abs.end());
  } else if (!apply_segments(path, &out.segments)) {
    return permission_denied("path " + quote(path) + " climbs above the workspace root with '..'");
  }
  if (static_cast<int>(out.segments.size()) > limits.max_path_depth) {
    return invalid_argument("path " + quote(path) + " has " + std::to_string(out.segments.size()) +
                            " segments; the limit is " + std::to_string(limits.max_path_depth));
  }
  for (const std::string& seg : out.segments) {
    if (static_cast<int>(seg.size()) > limits.max_segment_length) {
      return invalid_argument("path segment " + quote(seg) + " is " + std::to_string(seg.size()) +
                              " bytes long; the limit is " +
                              std::to_string(limits.max_segment_length));
    }
  }
  return out;
}

}  // namespace weft::fs
