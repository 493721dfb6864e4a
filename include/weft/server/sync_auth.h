// Access tokens for the live-sync endpoint (ws://HOST:PORT/sync): a generator
// and a constant-time check. The WebSocket transport checks the same token in
// `Authorization: Bearer ...` and `?token=...`; the sync core checks it in a
// JoinRequest's auth payload (see token_permission()).
//
// Thread safety: every function is safe to call from any thread.
#ifndef WEFT_SERVER_SYNC_AUTH_H_
#define WEFT_SERVER_SYNC_AUTH_H_

#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft::server::sync {

// Bytes of randomness in a token; the token is their lower-case hex (64 chars).
inline constexpr size_t kTokenRandomBytes = 32;

// A fresh token from the kernel's CSPRNG (getrandom(2)).
// Errors: kUnavailable when the system cannot supply random bytes.
Result<std::string> generate_token();

// True when `given` equals `expected`. Takes the same time for every `given`
// of a given length and for every position of the first difference; an empty
// `expected` matches nothing (an unset token never grants access).
bool token_matches(std::string_view expected, std::string_view given);

// The token from an `Authorization` header value ("Bearer <token>", scheme
// case-insensitive, surrounding spaces ignored); empty when it is not a
// bearer credential.
std::string_view bearer_token(std::string_view authorization_header);

}  // namespace weft::server::sync

#endif  // WEFT_SERVER_SYNC_AUTH_H_
