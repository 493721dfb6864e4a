// The web page's files (web/, built by esbuild into build/web/weft-web.bundle
// and embedded in the binary), looked up by their path under /assets/.
//
// The bundle format, written by web/build.mjs: the line "WEFTWEB1\n", then for
// each file a header line "NAME\tCONTENT_TYPE\tENCODING\tBYTES\n" followed by
// that many bytes of the file's content, ENCODING being "gzip" (compressed)
// or "identity" (as is).
//
// Thread safety: every function is safe to call from any thread; the
// embedded bundle is parsed once, on first use.
#ifndef WEFT_SERVER_WEB_ASSETS_H_
#define WEFT_SERVER_WEB_ASSETS_H_

#include <map>
#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft::server {

struct WebAsset {
  std::string_view content_type;
  bool gzipped = false;    // `bytes` are gzip-compressed
  std::string_view bytes;
};

struct WebBundle {
  std::map<std::string, WebAsset, std::less<>> files;
  std::string etag;  // quoted, from a hash of the whole bundle
};

// Parses a bundle whose bytes outlive the result. kDataLoss naming what is
// wrong (bad magic, a truncated entry, a malformed header line).
Result<WebBundle> parse_web_bundle(std::string_view bytes);

// The bundle built into this binary (an empty one, whose index.html says how
// to build the page, when web/ was not built).
const WebBundle& embedded_web_bundle();

// Inflates gzip bytes, for clients that do not accept gzip. kDataLoss when
// they are not gzip; kResourceExhausted past max_bytes of output.
Result<std::string> gunzip(std::string_view gzip, size_t max_bytes = 64u << 20);

}  // namespace weft::server

#endif  // WEFT_SERVER_WEB_ASSETS_H_
