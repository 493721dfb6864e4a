// Private: the bytes a block's persisted version is stored as (blocks.
// persisted_version, block_snapshots.version): "wv1" then a uvarint count and
// (fixed64 peer, uvarint end) per entry.
#ifndef WEFT_SRC_STORE_VERSION_CODEC_H_
#define WEFT_SRC_STORE_VERSION_CODEC_H_

#include <string>
#include <string_view>

#include "weft/base/status.h"
#include "weft/crdt/version.h"

namespace weft::store {

std::string encode_version(const crdt::VersionVector& vv);
// Errors: kDataLoss for bytes that are not an encoded version.
Result<crdt::VersionVector> decode_version(std::string_view bytes);

}  // namespace weft::store

#endif  // WEFT_SRC_STORE_VERSION_CODEC_H_
