// KernelLink: one kernel per workspace root, many front ends. Every weft
// process on a root (`weft mcp`, `weft serve`, the CLI) opens a KernelLink on
// the root's state directory. The first one takes `kernel.lock` (an OFD lock,
// released by the OS when the process dies, even by kill -9), builds the
// kernel with the factory it was given, and listens on `kernel.sock`; later
// ones connect to that socket and send their requests there. A socket left by
// a dead kernel is detected (its lock is free) and replaced. When the kernel's
// process goes away, each front end's next call finds the connection gone, and
// one of them takes the lock and becomes the kernel (the others reconnect to
// it); the call that was in flight fails with kUnavailable and is not retried
// (it may or may not have been applied), later calls go to the new kernel.
//
// Requests and replies are opaque byte strings (the kernel's JSON). On the
// socket each is a frame: 4-byte big-endian length then the bytes, at most
// kMaxFrameBytes, tagged with a request id so that calls from many threads
// share one connection. (Exactly: the length of the body, then the request id
// in 8 big-endian bytes, then the body; a reply's body is a status byte, 0 or
// a StatusCode, then the reply or the error's message. A peer that sends a
// longer or truncated frame loses its connection.) The socket is mode 0600 inside the 0700 state
// directory; peers of another uid are refused (SO_PEERCRED).
//
// Thread safety: call() is safe from any number of threads. The handler the
// kernel runs is called from several threads at once (one per in-flight
// request, bounded).
#ifndef WEFT_KERNEL_KERNEL_LINK_H_
#define WEFT_KERNEL_KERNEL_LINK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft::kernel {

inline constexpr size_t kMaxFrameBytes = 64u << 20;
inline constexpr std::string_view kKernelSocketName = "kernel.sock";
inline constexpr std::string_view kKernelLockName = "kernel.lock";

// What the kernel does with one request (the reply, or an error whose message
// goes back to the front end).
using RequestHandler = std::function<Result<std::string>(std::string_view request)>;
// Builds the kernel when this process must run it. Called at most once per
// takeover, with the lock held; an error here is returned by open()/call().
using KernelFactory = std::function<Result<RequestHandler>()>;

struct LinkOptions {
  // How long a front end waits to connect to a kernel that holds the lock but
  // is not listening yet (it is starting).
  std::chrono::milliseconds connect_timeout{5000};
  // Requests the kernel runs at once over the socket; more wait.
  size_t max_in_flight = 64;
  // Diagnostics (one line each): became kernel, took over, stale socket removed,
  // a front end refused or closed for breaking the protocol. Called from the
  // link's threads, several at once: it must be thread-safe.
  std::function<void(const std::string&)> log;
};

class KernelLink {
 public:
  // Becomes the kernel (factory called) or connects to the running one.
  // Errors: kUnavailable naming the state directory and the reason (cannot
  // create the lock or socket, connect timed out, a peer of another user).
  static Result<std::unique_ptr<KernelLink>> open(const std::string& state_dir,
                                                  KernelFactory factory, LinkOptions options = {});
  ~KernelLink();  // stops serving (does not wait for front ends: see linger())
  KernelLink(const KernelLink&) = delete;
  KernelLink& operator=(const KernelLink&) = delete;

  // Sends one request to the kernel (in process when this is the kernel).
  // Errors: the handler's error; kUnavailable when the kernel went away during
  // the call (the next call fails over); kInvalidArgument for a request
  // larger than kMaxFrameBytes.
  Result<std::string> call(std::string_view request);

  // True while this process runs the kernel.
  bool is_kernel() const;
  // Front ends connected to this process's kernel now (0 when not the kernel).
  size_t front_ends() const;
  // Blocks while this process is the kernel and any front end is connected:
  // what the first `weft mcp` does when its own client leaves, so the kernel
  // outlives it. Returns at once for a front end.
  void linger();

  struct Impl;

 private:
  explicit KernelLink(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::kernel

#endif  // WEFT_KERNEL_KERNEL_LINK_H_
