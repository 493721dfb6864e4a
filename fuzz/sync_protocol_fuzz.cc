// Fuzzes the loro-protocol decoder and the sync core behind it.
//
// 1. decode() of the whole input never crashes; what it accepts re-encodes
//    and decodes to the same message.
// 2. The input, cut into frames (a length byte, then that many bytes), is fed
//    to a SyncRooms from two connections of which one may only read, with a
//    store that keeps nothing, and a clock that moves with every frame. It
//    must never crash and never hold fragment bytes past its caps.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weft/server/sync_protocol.h"
#include "weft/server/sync_rooms.h"

namespace {

using namespace weft::server::sync;

class NullSink : public SyncConnection {
 public:
  void send_binary(std::string frame) override {
    if (frame.size() > kMaxMessageBytes) __builtin_trap();
    if (!decode(frame).ok()) __builtin_trap();  // the core only sends valid frames
  }
  void send_text(std::string) override {}
  void close(uint16_t, std::string_view) override {}
};

class ForgetfulBackend : public SyncBackend {
 public:
  weft::Result<JoinGrant> join(const RoomKey& room, std::string_view, std::string_view version) override {
    if (!version.empty() && version[0] == 'x') return weft::invalid_argument("unreadable version");
    JoinGrant g;
    g.version = "v";
    if (room.room_id.size() % 3 == 0) g.updates.push_back("seed");
    return g;
  }
  weft::Result<bool> apply(const RoomKey&, std::string_view update, std::string_view) override {
    if (update[0] == 0) return weft::invalid_argument("bad update");
    return update[0] != 1;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  auto m = decode(input);
  if (m.ok()) {
    auto again = encode(*m);
    if (!again.ok()) __builtin_trap();
    auto back = decode(*again);
    if (!back.ok() || !(*back == *m)) __builtin_trap();
  }
  (void)peek_envelope(input);

  auto now = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  SyncOptions options;
  options.max_fragment_bytes_per_connection = 4096;
  options.max_fragment_bytes_total = 6000;
  options.max_update_bytes = 8192;
  options.max_outbound_bytes = 1 << 16;
  options.eps_state_max_bytes = 512;
  options.clock = [&now] { return now; };
  SyncRooms rooms(options, std::make_shared<ForgetfulBackend>());
  auto writer = rooms.connect({"w", [](const RoomKey&, std::string_view) {
                                 return std::optional<Permission>(Permission::kWrite);
                               },
                               std::make_shared<NullSink>()});
  auto reader = rooms.connect({"r", [](const RoomKey&, std::string_view auth) {
                                 if (auth == "no") return std::optional<Permission>();
                                 return std::optional<Permission>(Permission::kRead);
                               },
                               std::make_shared<NullSink>()});
  if (!writer.ok() || !reader.ok()) __builtin_trap();
  size_t pos = 0;
  while (pos < size) {
    const uint8_t head = data[pos++];
    const size_t len = std::min<size_t>(head & 0x7f, size - pos);
    const std::string_view frame = input.substr(pos, len);
    pos += len;
    const ConnectionId id = (head & 0x80) ? *reader : *writer;
    if (frame == "T") {
      rooms.on_text(id, "ping");
    } else {
      rooms.on_binary(id, frame);
    }
    now += std::chrono::milliseconds(500);
    rooms.tick();
    if (rooms.stats().fragment_bytes > options.max_fragment_bytes_total) __builtin_trap();
  }
  rooms.disconnect(*writer);
  rooms.disconnect(*reader);
  if (rooms.stats().fragment_bytes != 0) __builtin_trap();
  return 0;
}
