// Framing of KernelLink's socket (see frame_io.h).
#include "kernel/frame_io.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace weft::kernel {

namespace {

constexpr size_t kReadBufferBytes = 64 << 10;
// Bodies larger than the buffer grow by at most this much per read, so that a
// peer announcing a large frame costs memory only for the bytes it sends.
constexpr size_t kBodyStepBytes = 1 << 20;

uint64_t load_be(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void store_be(uint64_t v, int bytes, char* p) {
  for (int i = bytes - 1; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

bool known_code(int c) { return (c >= 1 && c <= 15) || c == 100 || c == 101; }

}  // namespace

void encode_frame_header(uint64_t id, uint32_t body_length, char out[kFrameHeaderBytes]) {
  store_be(body_length, 4, out);
  store_be(id, 8, out + 4);
}

Status send_frame(int fd, uint64_t id, std::string_view prefix, std::string_view body) {
  char header[kFrameHeaderBytes];
  encode_frame_header(id, static_cast<uint32_t>(prefix.size() + body.size()), header);
  iovec iov[3] = {{header, sizeof header},
                  {const_cast<char*>(prefix.data()), prefix.size()},
                  {const_cast<char*>(body.data()), body.size()}};
  iovec* cur = iov;
  int count = 3;
  while (count > 0) {
    if (cur->iov_len == 0) {
      ++cur;
      --count;
      continue;
    }
    msghdr msg{};
    msg.msg_iov = cur;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return unavailable("send timed out");
      return unavailable(std::string("send failed: ") + std::strerror(errno));
    }
    size_t left = static_cast<size_t>(n);
    while (count > 0 && left >= cur->iov_len) {
      left -= cur->iov_len;
      ++cur;
      --count;
    }
    if (count > 0) {
      cur->iov_base = static_cast<char*>(cur->iov_base) + left;
      cur->iov_len -= left;
    }
  }
  return Status();
}

std::string encode_reply_prefix(const Status& status) {
  return std::string(1, static_cast<char>(static_cast<uint8_t>(status.code())));
}

Result<std::string> decode_reply(std::string&& body) {
  if (body.empty()) return data_loss("the kernel sent a reply without a status byte");
  int code = static_cast<unsigned char>(body[0]);
  if (code == 0) return body.substr(1);
  std::string_view message = std::string_view(body).substr(1);
  if (!known_code(code)) {
    return Status(StatusCode::kUnknown,
                  "the kernel answered with unknown status " + std::to_string(code) + ": " +
                      std::string(message));
  }
  return Status(static_cast<StatusCode>(code), message);
}

FrameReader::FrameReader(int fd, size_t max_body)
    : fd_(fd), max_body_(max_body), buf_(kReadBufferBytes) {}

long FrameReader::refill() {
  if (begin_ == end_) {
    begin_ = end_ = 0;
  } else if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  for (;;) {
    ssize_t n = ::recv(fd_, buf_.data() + end_, buf_.size() - end_, 0);
    if (n >= 0) {
      end_ += static_cast<size_t>(n);
      return n;
    }
    if (errno == EINTR) continue;
    error_ = std::strerror(errno);
    return -1;
  }
}

FrameReader::Outcome FrameReader::next(uint64_t* id, std::string* body) {
  while (end_ - begin_ < kFrameHeaderBytes) {
    bool at_boundary = begin_ == end_;
    long n = refill();
    if (n < 0) return Outcome::kError;
    if (n == 0) return at_boundary ? Outcome::kEof : Outcome::kTruncated;
  }
  const char* header = buf_.data() + begin_;
  uint64_t length = load_be(header, 4);
  if (length > max_body_) {
    error_ = std::to_string(length);
    return Outcome::kTooLarge;
  }
  *id = load_be(header + 4, 8);
  begin_ += kFrameHeaderBytes;
  body->clear();
  while (body->size() < length) {
    size_t want = length - body->size();
    if (begin_ < end_) {
      size_t take = std::min(want, end_ - begin_);
      body->append(buf_.data() + begin_, take);
      begin_ += take;
      continue;
    }
    if (want < buf_.size()) {
      long n = refill();
      if (n < 0) return Outcome::kError;
      if (n == 0) return Outcome::kTruncated;
      continue;
    }
    // Large remainder: read straight into the body.
    size_t old = body->size();
    size_t step = std::min(want, kBodyStepBytes);
    body->resize(old + step);
    ssize_t n;
    do {
      n = ::recv(fd_, body->data() + old, step, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      body->resize(old);
      if (n == 0) return Outcome::kTruncated;
      error_ = std::strerror(errno);
      return Outcome::kError;
    }
    body->resize(old + static_cast<size_t>(n));
  }
  return Outcome::kFrame;
}

}  // namespace weft::kernel
