// LinkClient: a front end's connection to the kernel over KernelLink's
// socket. Calls from many threads share it: each call sends a frame with a
// fresh request id and waits; one reader thread hands each reply to the call
// with its id. When the connection ends, every waiting call fails with
// kUnavailable and the client is dead (KernelLink then elects again).
//
// Thread safety: call() and dead() from any thread; the destructor from a
// thread that is not the client's reader.
#ifndef WEFT_KERNEL_LINK_CLIENT_H_
#define WEFT_KERNEL_LINK_CLIENT_H_

#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "weft/base/status.h"

namespace weft::kernel {

class LinkClient {
 public:
  // Connects to the socket at `socket_path`; `state_dir` names the kernel in
  // messages. kUnavailable with the reason when nothing listens there;
  // kPermissionDenied when the listener belongs to another user.
  static Result<std::shared_ptr<LinkClient>> connect(const std::string& socket_path,
                                                     const std::string& state_dir);
  ~LinkClient();
  LinkClient(const LinkClient&) = delete;
  LinkClient& operator=(const LinkClient&) = delete;

  // Sends `request` and waits for its reply. *delivered is false when the
  // frame could not be sent whole: the kernel cannot have run it, and the
  // client is dead.
  Result<std::string> call(std::string_view request, bool* delivered);

  bool dead() const;

 private:
  LinkClient(int fd, std::string state_dir);
  void read_loop();

  const int fd_;
  const std::string state_dir_;
  std::mutex write_mu_;  // one frame at a time on the socket
  mutable std::mutex mu_;
  bool dead_ = false;
  uint64_t next_id_ = 1;
  // The calls waiting for a reply; the reader moves a promise out to fulfil it.
  std::unordered_map<uint64_t, std::promise<Result<std::string>>> pending_;
  std::thread reader_;
};

}  // namespace weft::kernel

#endif  // WEFT_KERNEL_LINK_CLIENT_H_
