// Fuzzes UTF-8 validation and position conversion with arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "weft/base/utf.h"
#include "weft/base/varint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  weft::ByteReader reader(text);
  auto pos = reader.read_uvarint();
  size_t p = pos.ok() ? static_cast<size_t>(*pos % (size + 2)) : 0;
  for (auto from : {weft::PosUnit::kBytes, weft::PosUnit::kUnicode, weft::PosUnit::kUtf16}) {
    for (auto to : {weft::PosUnit::kBytes, weft::PosUnit::kUnicode, weft::PosUnit::kUtf16}) {
      (void)weft::convert_pos(text, p, from, to);
    }
  }
  if (weft::is_valid_utf8(text)) {
    auto u16 = weft::utf8_to_utf16_unchecked(text);
    auto back = weft::utf16_to_utf8(u16);
    if (!back.ok() || *back != text) __builtin_trap();
  }
  return 0;
}
