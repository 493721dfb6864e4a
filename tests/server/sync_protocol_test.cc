// loro-protocol frames: golden bytes from loro-protocol@0.3.0's JS encoder,
// round trips, strict rejection of malformed frames, and properties.
#include "weft/server/sync_protocol.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

namespace weft::server::sync {
namespace {

std::string unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

BatchId batch(std::string_view hex16) {
  std::string raw = unhex(hex16);
  BatchId id;
  for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(raw[i]);
  return id;
}

struct Golden {
  const char* name;
  const char* hex;  // printed by loro-protocol@0.3.0's encode()
  Message message;
};

std::vector<Golden> goldens() {
  return {
      {"join_request", "254c4f520f66696c653a6e6f7465732f612e6d640003746f6b03010203",
       Message{CrdtType::kLoro, "file:notes/a.md", JoinRequest{"tok", unhex("010203")}}},
      {"join_ok", "254c4f520272310105777269746502090800",
       Message{CrdtType::kLoro, "r1", JoinResponseOk{Permission::kWrite, unhex("0908"), ""}}},
      {"join_ok_read", "25455053027231010472656164000107",
       Message{CrdtType::kEphemeralPersisted, "r1", JoinResponseOk{Permission::kRead, "", unhex("07")}}},
      {"join_error_auth", "254c4f52017202021541757468656e7469636174696f6e206661696c6564",
       Message{CrdtType::kLoro, "r",
               JoinError{JoinErrorCode::kAuthFailed, "Authentication failed", std::nullopt, std::nullopt}}},
      {"join_error_version", "254c4f52017202010176020506",
       Message{CrdtType::kLoro, "r",
               JoinError{JoinErrorCode::kVersionUnknown, "v", unhex("0506"), std::nullopt}}},
      {"join_error_app", "254c4f520172027f016d0571756f7461",
       Message{CrdtType::kLoro, "r", JoinError{JoinErrorCode::kAppError, "m", std::nullopt, "quota"}}},
      {"doc_update", "2545504806636f6e763a310302020102000102030405060708",
       Message{CrdtType::kEphemeral, "conv:1",
               DocUpdate{{unhex("0102"), ""}, batch("0102030405060708")}}},
      {"frag_header", "254c4f520362696704a0a1a2a3a4a5a6a703c0cf24",
       Message{CrdtType::kLoro, "big", FragmentHeader{batch("a0a1a2a3a4a5a6a7"), 3, 600000}}},
      {"fragment", "254c4f520362696705a0a1a2a3a4a5a6a70203ff0080",
       Message{CrdtType::kLoro, "big", Fragment{batch("a0a1a2a3a4a5a6a7"), 2, unhex("ff0080")}}},
      {"room_error", "254c4f520172060203627965",
       Message{CrdtType::kLoro, "r", RoomError{RoomErrorCode::kEvicted, "bye"}}},
      {"leave", "254c4f52096d656d6f72793a343207", Message{CrdtType::kLoro, "memory:42", Leave{}}},
      {"ack_ok", "254c4f52017208010203040506070800",
       Message{CrdtType::kLoro, "r", Ack{batch("0102030405060708"), UpdateStatus::kOk}}},
      {"ack_denied", "254c4f52017208ffeeddccbbaa998803",
       Message{CrdtType::kLoro, "r", Ack{batch("ffeeddccbbaa9988"), UpdateStatus::kPermissionDenied}}},
  };
}

TEST(SyncProtocol, EncodesTheBytesLoroProtocolEncodes) {
  for (const auto& g : goldens()) {
    auto bytes = encode(g.message);
    ASSERT_TRUE(bytes.ok()) << g.name << ": " << bytes.status();
    EXPECT_EQ(hex(*bytes), g.hex) << g.name;
  }
}

TEST(SyncProtocol, DecodesWhatLoroProtocolEncodes) {
  for (const auto& g : goldens()) {
    auto m = decode(unhex(g.hex));
    ASSERT_TRUE(m.ok()) << g.name << ": " << m.status();
    EXPECT_EQ(*m, g.message) << g.name;
    EXPECT_EQ(static_cast<size_t>(m->type()), g.message.body.index());
  }
}

TEST(SyncProtocol, EveryMagicRoundTrips) {
  for (int t = 0; t <= static_cast<int>(CrdtType::kFlock); ++t) {
    auto crdt = static_cast<CrdtType>(t);
    EXPECT_EQ(crdt_from_magic(crdt_magic(crdt)), crdt);
    Message m{crdt, "x", Leave{}};
    auto back = decode(*encode(m));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, m);
  }
  EXPECT_EQ(crdt_from_magic("%XYZ"), std::nullopt);
  EXPECT_EQ(crdt_magic(CrdtType::kEphemeralPersisted), "%EPS");
}

TEST(SyncProtocol, RejectsMalformedFrames) {
  const std::string ack = unhex("254c4f52017208010203040506070800");
  struct Case {
    const char* name;
    std::string frame;
    const char* needle;
  };
  std::vector<Case> cases = {
      {"empty", "", "4-byte"},
      {"bad magic", "%XYZ" + ack.substr(4), "magic"},
      {"room length past end", unhex("254c4f5205616263"), "room id length"},
      {"room too long", "%LOR" + std::string(1, char(129)) + std::string(1, 1) + std::string(129, 'a') + std::string(1, 7),
       "limit is 128"},
      {"unknown type", unhex("254c4f52017209"), "unknown message type"},
      {"trailing bytes", ack + "x", "trailing"},
      {"ack truncated", ack.substr(0, ack.size() - 1), "status"},
      {"leave trailing", unhex("254c4f5201720700"), "trailing"},
      {"bad permission", unhex("254c4f5201720104726f6f740000"), "permission"},
      {"update count too big", unhex("254c4f5201720305000102030405060708"), "update count"},
      {"update without batch", unhex("254c4f52017203010100"), "exceeds what the frame holds"},
      {"room id not utf8", unhex("254c4f5201ff07"), "UTF-8"},
      {"overlong varint", unhex("254c4f5201720401020304050607089999999999990100"), "32 bits"},
  };
  for (const auto& c : cases) {
    auto m = decode(c.frame);
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(m.status().message().find(c.needle), std::string_view::npos)
        << c.name << ": " << m.status();
  }
}

TEST(SyncProtocol, UnknownCodesDecodeAsUnknown) {
  auto ack = decode(unhex("254c4f52017208010203040506070842"));
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(std::get<Ack>(ack->body).status, UpdateStatus::kUnknown);
  auto room = decode(unhex("254c4f52017206420162"));
  ASSERT_TRUE(room.ok());
  EXPECT_EQ(std::get<RoomError>(room->body).code, RoomErrorCode::kUnknown);
  auto join = decode(unhex("254c4f52017202420162"));
  ASSERT_TRUE(join.ok());
  EXPECT_EQ(std::get<JoinError>(join->body).code, JoinErrorCode::kUnknown);
}

TEST(SyncProtocol, EncodeRefusesOversizeRoomsAndFrames) {
  auto long_room = encode(Message{CrdtType::kLoro, std::string(129, 'a'), Leave{}});
  EXPECT_EQ(long_room.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(encode(Message{CrdtType::kLoro, std::string(128, 'a'), Leave{}}).ok());
  auto big = encode(Message{CrdtType::kLoro, "r", DocUpdate{{std::string(kMaxMessageBytes, 'x')}, {}}});
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  auto bad_utf8 = encode(Message{CrdtType::kLoro, "\xff", Leave{}});
  EXPECT_EQ(bad_utf8.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(decode(std::string(kMaxMessageBytes + 1, '%')).ok());
}

TEST(SyncProtocol, LargeUpdatesTravelAsFragments) {
  std::string update(600000, '\0');
  for (size_t i = 0; i < update.size(); ++i) update[i] = static_cast<char>(i * 7);
  BatchId id = batch("0011223344556677");
  auto frames = encode_update_frames(CrdtType::kLoro, "file:a", update, id);
  ASSERT_TRUE(frames.ok());
  ASSERT_EQ(frames->size(), 4u);  // header + ceil(600000 / 245760)
  auto header = decode((*frames)[0]);
  ASSERT_TRUE(header.ok());
  const auto& h = std::get<FragmentHeader>(header->body);
  EXPECT_EQ(h.fragment_count, 3u);
  EXPECT_EQ(h.total_size, 600000u);
  EXPECT_EQ(h.batch_id, id);
  std::string joined;
  for (size_t i = 1; i < frames->size(); ++i) {
    EXPECT_LE((*frames)[i].size(), kMaxMessageBytes);
    auto f = decode((*frames)[i]);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(std::get<Fragment>(f->body).index, i - 1);
    joined += std::get<Fragment>(f->body).data;
  }
  EXPECT_EQ(joined, update);

  auto small = encode_update_frames(CrdtType::kLoro, "file:a", "abc", id);
  ASSERT_TRUE(small.ok());
  ASSERT_EQ(small->size(), 1u);
  EXPECT_EQ(std::get<DocUpdate>(decode((*small)[0])->body).updates,
            std::vector<std::string>{"abc"});
}

TEST(SyncProtocol, PeekFindsRoomAndBatchOfBrokenUpdates) {
  // A DocUpdate whose count is wrong still names its room and batch id.
  auto env = peek_envelope(unhex("254c4f5201720305aa0102030405060708"));
  ASSERT_TRUE(env.room_id.has_value());
  EXPECT_EQ(*env.room_id, "r");
  EXPECT_EQ(env.type, MessageType::kDocUpdate);
  ASSERT_TRUE(env.batch_id.has_value());
  EXPECT_EQ(*env.batch_id, batch("0102030405060708"));
  EXPECT_FALSE(peek_envelope("%LO").crdt.has_value());
  EXPECT_FALSE(peek_envelope(unhex("254c4f5205")).room_id.has_value());
}

TEST(SyncProtocol, KeepaliveIsExactlyPingOrPong) {
  EXPECT_EQ(parse_keepalive("ping"), Keepalive::kPing);
  EXPECT_EQ(parse_keepalive("pong"), Keepalive::kPong);
  EXPECT_EQ(parse_keepalive("ping "), std::nullopt);
  EXPECT_EQ(parse_keepalive("PING"), std::nullopt);
}

TEST(SyncProtocol, NamesMatchTheClientsReasons) {
  EXPECT_EQ(update_status_name(UpdateStatus::kPermissionDenied), "permission_denied");
  EXPECT_EQ(update_status_name(UpdateStatus::kFragmentTimeout), "fragment_timeout");
  EXPECT_EQ(permission_name(Permission::kRead), "read");
  EXPECT_EQ(batch_id_hex(batch("00ff10ab00000001")), "00ff10ab00000001");
}

// ---- properties -------------------------------------------------------------

rc::Gen<std::string> gen_bytes(size_t max) {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, max + 1), [](size_t n) {
    return rc::gen::container<std::string>(n, rc::gen::arbitrary<char>());
  });
}

rc::Gen<std::string> gen_text(size_t max_chars) {
  // ASCII and a few multi-byte characters: always valid UTF-8.
  return rc::gen::map(
      rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 6)), [max_chars](std::vector<int> v) {
        static const char* kPieces[] = {"a", "Z", "/", ":", "é", "中"};
        std::string s;
        for (size_t i = 0; i < v.size() && i < max_chars; ++i) s += kPieces[v[i]];
        return s;
      });
}

rc::Gen<BatchId> gen_batch() {
  return rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t v) {
    BatchId id;
    for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(v >> (8 * i));
    return id;
  });
}

rc::Gen<MessageBody> gen_body() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::tuple(gen_bytes(64), gen_bytes(64)),
                   [](auto t) { return MessageBody(JoinRequest{std::get<0>(t), std::get<1>(t)}); }),
      rc::gen::map(rc::gen::tuple(rc::gen::arbitrary<bool>(), gen_bytes(64), gen_bytes(16)),
                   [](auto t) {
                     return MessageBody(JoinResponseOk{
                         std::get<0>(t) ? Permission::kRead : Permission::kWrite, std::get<1>(t),
                         std::get<2>(t)});
                   }),
      rc::gen::map(rc::gen::tuple(rc::gen::element(JoinErrorCode::kUnknown, JoinErrorCode::kVersionUnknown,
                                                   JoinErrorCode::kAuthFailed, JoinErrorCode::kAppError),
                                  gen_text(20), gen_bytes(8), gen_text(8)),
                   [](auto t) {
                     JoinError e{std::get<0>(t), std::get<1>(t), std::nullopt, std::nullopt};
                     if (e.code == JoinErrorCode::kVersionUnknown) e.receiver_version = std::get<2>(t);
                     if (e.code == JoinErrorCode::kAppError) e.app_code = std::get<3>(t);
                     return MessageBody(std::move(e));
                   }),
      rc::gen::map(rc::gen::tuple(rc::gen::container<std::vector<std::string>>(gen_bytes(32)), gen_batch()),
                   [](auto t) { return MessageBody(DocUpdate{std::get<0>(t), std::get<1>(t)}); }),
      rc::gen::map(rc::gen::tuple(gen_batch(), rc::gen::arbitrary<uint32_t>(), rc::gen::arbitrary<uint32_t>()),
                   [](auto t) {
                     return MessageBody(FragmentHeader{std::get<0>(t), std::get<1>(t), std::get<2>(t)});
                   }),
      rc::gen::map(rc::gen::tuple(gen_batch(), rc::gen::arbitrary<uint32_t>(), gen_bytes(64)),
                   [](auto t) {
                     return MessageBody(Fragment{std::get<0>(t), std::get<1>(t), std::get<2>(t)});
                   }),
      rc::gen::map(rc::gen::tuple(rc::gen::element(RoomErrorCode::kRejoinSuggested, RoomErrorCode::kEvicted,
                                                   RoomErrorCode::kUnknown),
                                  gen_text(20)),
                   [](auto t) { return MessageBody(RoomError{std::get<0>(t), std::get<1>(t)}); }),
      rc::gen::just(MessageBody(Leave{})),
      rc::gen::map(rc::gen::tuple(gen_batch(),
                                  rc::gen::element(UpdateStatus::kOk, UpdateStatus::kUnknown,
                                                   UpdateStatus::kPermissionDenied, UpdateStatus::kInvalidUpdate,
                                                   UpdateStatus::kPayloadTooLarge, UpdateStatus::kRateLimited,
                                                   UpdateStatus::kFragmentTimeout, UpdateStatus::kAppError)),
                   [](auto t) { return MessageBody(Ack{std::get<0>(t), std::get<1>(t)}); }));
}

RC_GTEST_PROP(SyncProtocolProps, DecodeInvertsEncode, ()) {
  Message m;
  m.crdt = *rc::gen::element(CrdtType::kLoro, CrdtType::kEphemeral, CrdtType::kEphemeralPersisted,
                             CrdtType::kYjs, CrdtType::kYjsAwareness, CrdtType::kElo, CrdtType::kFlock);
  m.room_id = *gen_text(40);
  RC_PRE(m.room_id.size() <= kMaxRoomIdBytes);
  m.body = *gen_body();
  auto bytes = encode(m);
  RC_ASSERT(bytes.ok());
  auto back = decode(*bytes);
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == m);
}

RC_GTEST_PROP(SyncProtocolProps, RandomBytesNeverCrash, ()) {
  // Half the inputs start with a valid magic and room, to reach the bodies.
  std::string tail = *gen_bytes(200);
  std::string frame = *rc::gen::arbitrary<bool>() ? std::string("%LOR\x01r") + tail : tail;
  auto m = decode(frame);
  if (m.ok()) {
    auto again = encode(*m);
    RC_ASSERT(again.ok());
    RC_ASSERT(decode(*again).ok());
  }
  (void)peek_envelope(frame);
}

RC_GTEST_PROP(SyncProtocolProps, TruncationIsAlwaysAnError, ()) {
  Message m{CrdtType::kLoro, *gen_text(10), *gen_body()};
  auto bytes = encode(m);
  RC_ASSERT(bytes.ok());
  const size_t cut = *rc::gen::inRange<size_t>(0, bytes->size());
  auto r = decode(bytes->substr(0, cut));
  // A cut frame is either rejected or (JoinError's optional tail) a shorter valid message.
  if (r.ok()) RC_ASSERT(m.type() == MessageType::kJoinError);
}

}  // namespace
}  // namespace weft::server::sync
