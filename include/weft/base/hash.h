// Fast non-cryptographic hashing (xxHash3) for checksums in encodings and
// hash tables. Not for security: an adversary can find collisions.
//
// Thread safety: stateless; safe from any thread.
#ifndef WEFT_BASE_HASH_H_
#define WEFT_BASE_HASH_H_

#include <cstdint>
#include <string_view>

namespace weft {

// 64-bit xxHash3 of `data` (stable across versions and machines: used in
// persisted formats).
uint64_t hash64(std::string_view data, uint64_t seed = 0);

// 32-bit checksum: the low 32 bits of hash64, for format headers.
inline uint32_t checksum32(std::string_view data) {
  return static_cast<uint32_t>(hash64(data));
}

}  // namespace weft

#endif  // WEFT_BASE_HASH_H_
