// Fuzzes what the store reads back from disk: the persisted-version codec,
// and a block whose stored update blob is arbitrary bytes (as after disk
// corruption that kept the checksum). Loading must report, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/version_codec.h"
#include "weft/store/memory_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto vv = weft::store::decode_version(bytes);
  if (vv.ok() &&
      weft::store::decode_version(weft::store::encode_version(*vv)).status().ok() == false) {
    __builtin_trap();
  }
  auto opened = weft::store::BlockStore::open(":memory:");
  if (!opened.ok()) return 0;
  auto store = std::shared_ptr<weft::store::BlockStore>(std::move(*opened));
  weft::store::NewBlock nb;
  nb.agent_id = "fuzz";
  nb.label = "blob";
  nb.initial_update = std::string(bytes);
  nb.initial_version = std::string(bytes);
  if (!store->create_block(nb).ok()) return 0;
  weft::store::MemoryCache cache(store);
  auto doc = cache.get("fuzz", "blob");
  if (doc.ok()) (void)(*doc)->render();
  return 0;
}
