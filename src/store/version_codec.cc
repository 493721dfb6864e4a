#include "store/version_codec.h"

#include "weft/base/varint.h"

namespace weft::store {

namespace {
constexpr std::string_view kMagic = "wv1";
}

std::string encode_version(const crdt::VersionVector& vv) {
  std::string out(kMagic);
  put_uvarint(out, vv.entries().size());
  for (const auto& [peer, end] : vv.entries()) {
    put_fixed64(out, peer);
    put_uvarint(out, static_cast<uint64_t>(end));
  }
  return out;
}

Result<crdt::VersionVector> decode_version(std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) return data_loss("stored version has no header");
  ByteReader r(bytes.substr(kMagic.size()));
  WEFT_ASSIGN_OR_RETURN(uint64_t n, r.read_count(r.remaining() / 9, "version entries"));
  crdt::VersionVector vv;
  for (uint64_t i = 0; i < n; ++i) {
    WEFT_ASSIGN_OR_RETURN(uint64_t peer, r.read_fixed64());
    WEFT_ASSIGN_OR_RETURN(uint64_t end, r.read_count(INT32_MAX, "version counter"));
    vv.set(peer, static_cast<crdt::Counter>(end));
  }
  if (!r.at_end()) return data_loss("stored version has trailing bytes");
  return vv;
}

}  // namespace weft::store
