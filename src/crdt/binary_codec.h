// Internal: weft's binary update/snapshot format (docs/formats/binary.md).
#ifndef WEFT_SRC_CRDT_BINARY_CODEC_H_
#define WEFT_SRC_CRDT_BINARY_CODEC_H_

#include <string_view>

namespace weft::crdt::detail {

inline constexpr std::string_view kBinaryMagic = "WFTC";
inline constexpr uint8_t kBinaryFormatVersion = 1;
inline constexpr uint8_t kKindUpdates = 1;
inline constexpr uint8_t kKindSnapshot = 2;

// True when `data` starts with the weft binary magic.
inline bool is_weft_binary(std::string_view data) { return data.substr(0, 4) == kBinaryMagic; }

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_BINARY_CODEC_H_
