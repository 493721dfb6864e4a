// The embedded web bundle (WEFT_WEB_BUNDLE_PATH, set by src/server/CMakeLists.txt)
// and its parser.
#include "weft/server/web_assets.h"

#include <zlib.h>

#include <charconv>
#include <cstdio>

#include "weft/base/hash.h"

#ifndef WEFT_WEB_BUNDLE_PATH
#error "WEFT_WEB_BUNDLE_PATH must name the web bundle (src/server/CMakeLists.txt sets it)"
#endif

// The bundle's bytes, placed in .rodata by the assembler: no generated
// source to compile, and the build relinks when the bundle changes (the
// object depends on it: src/server/CMakeLists.txt).
asm(".section .rodata\n"
    ".balign 16\n"
    ".globl weft_web_bundle_begin\n"
    ".hidden weft_web_bundle_begin\n"
    "weft_web_bundle_begin:\n"
    ".incbin \"" WEFT_WEB_BUNDLE_PATH "\"\n"
    ".globl weft_web_bundle_end\n"
    ".hidden weft_web_bundle_end\n"
    "weft_web_bundle_end:\n"
    ".byte 0\n"
    ".previous\n");

extern "C" const char weft_web_bundle_begin[];
extern "C" const char weft_web_bundle_end[];

namespace weft::server {
namespace {

std::string_view embedded_bytes() {
  return std::string_view(weft_web_bundle_begin,
                          static_cast<size_t>(weft_web_bundle_end - weft_web_bundle_begin));
}

constexpr std::string_view kMagic = "WEFTWEB1\n";

}  // namespace

Result<WebBundle> parse_web_bundle(std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return data_loss("web bundle: it does not start with WEFTWEB1 (rebuild with scripts/build.sh)");
  }
  WebBundle bundle;
  char etag[32];
  std::snprintf(etag, sizeof etag, "\"%016llx\"",
                static_cast<unsigned long long>(hash64(bytes)));
  bundle.etag = etag;
  size_t pos = kMagic.size();
  while (pos < bytes.size()) {
    const size_t eol = bytes.find('\n', pos);
    if (eol == std::string_view::npos) return data_loss("web bundle: a header line has no end");
    std::string_view line = bytes.substr(pos, eol - pos);
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == std::string_view::npos ? tab1 : line.find('\t', tab1 + 1);
    const size_t tab3 = tab2 == std::string_view::npos ? tab2 : line.find('\t', tab2 + 1);
    const std::string_view encoding =
        tab3 == std::string_view::npos ? "" : line.substr(tab2 + 1, tab3 - tab2 - 1);
    if (tab3 == std::string_view::npos || tab1 == 0 ||
        (encoding != "gzip" && encoding != "identity")) {
      return data_loss("web bundle: malformed header line '" + std::string(line.substr(0, 80)) +
                       "' (want NAME<TAB>TYPE<TAB>gzip|identity<TAB>BYTES)");
    }
    std::string_view size_text = line.substr(tab3 + 1);
    size_t size = 0;
    auto [end, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
    if (ec != std::errc() || end != size_text.data() + size_text.size()) {
      return data_loss("web bundle: bad size '" + std::string(size_text) + "'");
    }
    pos = eol + 1;
    if (size > bytes.size() - pos) {
      return data_loss("web bundle: entry '" + std::string(line.substr(0, tab1)) + "' is truncated");
    }
    bundle.files[std::string(line.substr(0, tab1))] =
        WebAsset{line.substr(tab1 + 1, tab2 - tab1 - 1), encoding == "gzip", bytes.substr(pos, size)};
    pos += size;
  }
  return bundle;
}

const WebBundle& embedded_web_bundle() {
  static const WebBundle bundle = [] {
    auto parsed = parse_web_bundle(embedded_bytes());
    if (parsed.ok()) return std::move(parsed).value();
    std::fprintf(stderr, "weft: %s\n", parsed.status().to_string().c_str());
    return WebBundle{};
  }();
  return bundle;
}

Result<std::string> gunzip(std::string_view gzip, size_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return internal_error("gunzip: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzip.data()));
  zs.avail_in = static_cast<uInt>(gzip.size());
  std::string out;
  char buf[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return data_loss("gunzip: the bytes are not a complete gzip stream");
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      return resource_exhausted("gunzip: more than " + std::to_string(max_bytes) + " bytes");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return data_loss("gunzip: the gzip stream is truncated");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace weft::server
