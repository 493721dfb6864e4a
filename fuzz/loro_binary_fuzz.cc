// Fuzzes the Loro binary decoder (FastUpdates / FastSnapshot): arbitrary
// bytes must be rejected with a Status or imported, never crash or allocate
// without bound, and a failed import must leave the doc unchanged; an
// accepted one must re-export as Loro binary and load again into the same
// value. The input is tried as a whole file and, behind an envelope with a
// correct checksum, as an updates body and a snapshot body (so the decoders
// proper are reached rather than stopping at the checksum). The same bytes go
// through inspect_loro_update (what an update needs and carries, read from its
// headers alone) and join_loro_updates, which must not crash either.
#include <cstddef>
#include <cstdint>
#include <string>

#include "crdt/loro_binary.h"
#include "weft/crdt/doc.h"

namespace {

// inspect_loro_update answers a Status or a consistent summary: every span
// it reports is non-empty and within the update's end.
void try_inspect(const std::string& base, const std::string& input) {
  auto info = weft::crdt::inspect_loro_update(input);
  if (info.ok()) {
    for (const auto& span : info->spans) {
      if (span.start >= span.end || info->end.get(span.peer) < span.end) __builtin_trap();
    }
  }
  auto joined = weft::crdt::join_loro_updates({base, input});
  if (joined.ok()) {
    weft::crdt::Doc doc(9);
    (void)doc.import(*joined);
  }
}

void try_import(const std::string& base, const std::string& input) {
  try_inspect(base, input);
  weft::crdt::Doc doc(1);
  (void)doc.import(base);
  const std::string before = doc.to_json_string();
  const auto vv = doc.oplog_version();
  auto st = doc.import(input);
  if (!st.ok()) {
    if (doc.to_json_string() != before || doc.oplog_version() != vv) __builtin_trap();
    return;
  }
  weft::crdt::Doc again(3);
  if (!again.import(doc.export_loro_updates()).ok()) __builtin_trap();
  if (again.to_json_string() != doc.to_json_string()) __builtin_trap();
  weft::crdt::Doc from_snapshot(5);
  if (!from_snapshot.import(doc.export_loro_snapshot()).ok()) __builtin_trap();
  if (from_snapshot.to_json_string() != doc.to_json_string()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using weft::crdt::detail::loro::wrap;
  // A small history with a mark, a child container and a counter, as
  // Loro updates (imported before each input).
  static const std::string base = [] {
    weft::crdt::Doc d(7);
    auto text = d.get_text("t");
    (void)text.insert(0, "héllo😀");
    (void)text.mark(0, 2, "bold", weft::crdt::Value(true));
    (void)d.get_map("m").set_container("child", weft::crdt::ContainerType::kList);
    (void)d.get_counter("c").increment(1.5);
    (void)d.commit();
    return d.export_loro_updates();
  }();
  const std::string input(reinterpret_cast<const char*>(data), size);
  try_import(base, input);
  try_import(base, wrap(weft::crdt::detail::loro::kModeFastUpdates, input));
  try_import(base, wrap(weft::crdt::detail::loro::kModeFastSnapshot, input));
  return 0;
}
