#include "weft/base/hash.h"

#include <xxhash.h>

namespace weft {

uint64_t hash64(std::string_view data, uint64_t seed) {
  return XXH3_64bits_withSeed(data.data(), data.size(), seed);
}

}  // namespace weft
