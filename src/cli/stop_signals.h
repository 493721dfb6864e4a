// Graceful stop of a long-running command (`weft serve`) on SIGINT or
// SIGTERM: the command shuts down as on any other stop (connections closed,
// the kernel's pending appends written, its socket removed) instead of dying
// on the signal's default action.
//
// Thread safety: construct it before the command starts any thread (threads
// inherit the blocked signals); on_stop() and received() from any thread.
#ifndef WEFT_SRC_CLI_STOP_SIGNALS_H_
#define WEFT_SRC_CLI_STOP_SIGNALS_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace weft::cli {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in this thread and waits for them on a thread
  // of its own.
  StopSignals();
  // Ends the waiting thread and restores the signal mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // `stop` runs once, on the waiting thread, when a signal comes (at once if
  // one came already).
  void on_stop(std::function<void()> stop);
  // Ends the waiting thread, after a `stop` it is running returns: call it
  // before what `stop` uses goes away. The destructor calls it too.
  void finish();
  // The signal that came, or 0.
  int received() const { return received_.load(); }

 private:
  void wait();

  sigset_t signals_;
  sigset_t old_mask_;
  std::mutex mu_;
  std::function<void()> stop_;
  std::atomic<int> received_{0};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace weft::cli

#endif  // WEFT_SRC_CLI_STOP_SIGNALS_H_
