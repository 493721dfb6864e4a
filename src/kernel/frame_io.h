// Framing of KernelLink's socket (see include/weft/kernel/kernel_link.h).
//
// A frame is a 12-byte header, the body's length (4 bytes, big-endian) then a
// request id (8 bytes, big-endian), followed by the body. A request's body is
// the request's bytes. A reply's body is one status byte (0 for ok, else a
// weft::StatusCode value) then the reply's bytes or the error's message.
//
// Thread safety: send_frame() may be called from any thread, but two frames
// sent at once on one socket interleave: callers serialise them. A
// FrameReader belongs to one thread.
#ifndef WEFT_KERNEL_FRAME_IO_H_
#define WEFT_KERNEL_FRAME_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft::kernel {

inline constexpr size_t kFrameHeaderBytes = 12;
// What the kernel sends first on every connection it accepts: a reply frame
// with id 0 and this body. A front end counts itself connected only once it
// has it, so a connection a dying kernel's socket took but never served is
// not mistaken for a live kernel.
inline constexpr uint64_t kHelloId = 0;
inline constexpr std::string_view kHello = "weft-kernel 1";

// Writes the header of a frame whose body is `body_length` bytes.
void encode_frame_header(uint64_t id, uint32_t body_length, char out[kFrameHeaderBytes]);

// Sends one frame whose body is `prefix` then `body` (MSG_NOSIGNAL: a closed
// peer is an error, not a signal). kUnavailable with the reason on failure;
// the frame is then incomplete or unsent, and the connection unusable.
// REQUIRES: prefix.size() + body.size() fits in 32 bits.
Status send_frame(int fd, uint64_t id, std::string_view prefix, std::string_view body);

// The body of a reply: the status byte then the value or the message.
std::string encode_reply_prefix(const Status& status);
// Decodes a reply body; kDataLoss when it lacks the status byte.
Result<std::string> decode_reply(std::string&& body);

// Reads frames from a stream socket through a buffer.
class FrameReader {
 public:
  enum class Outcome {
    kFrame,      // *id and *body hold the next frame
    kEof,        // the peer closed between frames
    kTruncated,  // the peer closed inside a frame
    kTooLarge,   // a header announced more than max_body bytes (nothing more is read)
    kError,      // a socket error: error() says which
  };

  FrameReader(int fd, size_t max_body);
  Outcome next(uint64_t* id, std::string* body);
  // The reason of the last kError, or the announced length of a kTooLarge.
  const std::string& error() const { return error_; }

 private:
  // Reads more bytes into the buffer; the number read, 0 at EOF, -1 on error.
  long refill();

  int fd_;
  size_t max_body_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  std::string error_;
};

}  // namespace weft::kernel

#endif  // WEFT_KERNEL_FRAME_IO_H_
