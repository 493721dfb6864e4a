// Token generation and constant-time comparison for the sync endpoint.
#include "weft/server/sync_auth.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace weft::server::sync {

Result<std::string> generate_token() {
  uint8_t raw[kTokenRandomBytes];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unavailable(std::string("sync: cannot read random bytes for a token: ") +
                         std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  token.reserve(2 * sizeof raw);
  for (uint8_t b : raw) {
    token.push_back(kHex[b >> 4]);
    token.push_back(kHex[b & 15]);
  }
  return token;
}

bool token_matches(std::string_view expected, std::string_view given) {
  // Every byte of `given` is read and compared against `expected` (cycled
  // when shorter), so the time depends only on given.size().
  if (expected.empty()) return false;
  const volatile unsigned char* e = reinterpret_cast<const unsigned char*>(expected.data());
  const volatile unsigned char* g = reinterpret_cast<const unsigned char*>(given.data());
  unsigned diff = static_cast<unsigned>(expected.size() ^ given.size());
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned>(e[i % expected.size()] ^ g[i]);
  }
  return diff == 0;
}

std::string_view bearer_token(std::string_view header) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  header = trim(header);
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size()) return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = header[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return {};
  }
  if (header[kScheme.size()] != ' ' && header[kScheme.size()] != '\t') return {};
  return trim(header.substr(kScheme.size()));
}

}  // namespace weft::server::sync
