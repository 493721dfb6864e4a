// Fuzzes the weft binary decoder/importer: arbitrary bytes must be rejected
// or imported, never crash, and a failed import must leave the doc unchanged;
// an accepted one must reload from its snapshot and take a local delete.
// The input is tried three ways: as a whole file, as a version-2 body and as
// a version-1 body behind a header with a correct checksum (so the decoders
// proper are reached rather than stopping at the checksum). After every
// step the docs' invariants must hold (Doc::check_invariants, deep).
#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/base/hash.h"
#include "weft/base/varint.h"
#include "weft/crdt/doc.h"

namespace {

void check(const weft::crdt::Doc& doc) {
  if (!doc.check_invariants(true).ok()) __builtin_trap();
}

std::string frame(std::string_view body, uint8_t version, uint8_t kind) {
  std::string out = "WFTC";
  out.push_back(static_cast<char>(version));
  out.push_back(static_cast<char>(kind));
  out.push_back(0);
  out.push_back(0);
  weft::put_fixed32(out, static_cast<uint32_t>(body.size()));
  weft::put_fixed32(out, weft::checksum32(body));
  out += body;
  return out;
}

void try_import(const std::string& base, const std::string& input) {
  weft::crdt::Doc doc(1);
  (void)doc.import(base);
  check(doc);
  const std::string before = doc.to_json_string();
  const auto vv = doc.oplog_version();
  auto st = doc.import(input);
  check(doc);
  if (!st.ok() && (doc.to_json_string() != before || doc.oplog_version() != vv)) {
    __builtin_trap();
  }
  if (st.ok()) {
    // Whatever was accepted must re-encode and load again.
    weft::crdt::Doc again(3);
    if (!again.import(doc.export_snapshot()).ok()) __builtin_trap();
    check(again);
    if (again.to_json_string() != doc.to_json_string()) __builtin_trap();
    // A local delete rebuilds the element ids the import did not keep; its
    // ops must apply on another replica the same way.
    weft::crdt::TextRef text = doc.get_text("t");
    if (text.len() > 0) {
      if (!text.erase(0, (text.len() + 1) / 2).ok() || !doc.commit().ok()) __builtin_trap();
      check(doc);
      if (!again.import(doc.export_updates(again.oplog_version())).ok()) __builtin_trap();
      check(again);
      if (again.to_json_string() != doc.to_json_string()) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    weft::crdt::Doc d(7);
    (void)d.get_text("t").insert(0, "héllo😀");
    (void)d.get_list("l").push(weft::crdt::Value(1));
    (void)d.get_map("m").set("k", weft::crdt::Value("v"));
    (void)d.commit();
    return d.export_snapshot();
  }();
  std::string input(reinterpret_cast<const char*>(data), size);
  try_import(base, input);
  try_import(base, frame(input, 2, 1));
  try_import(base, frame(input, 1, 1));
  return 0;
}
