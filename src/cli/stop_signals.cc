// See stop_signals.h.
#include "cli/stop_signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace weft::cli {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
  waiter_ = std::thread([this] { wait(); });
}

StopSignals::~StopSignals() {
  finish();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void StopSignals::finish() {
  done_.store(true);
  if (waiter_.joinable()) waiter_.join();
}

void StopSignals::on_stop(std::function<void()> stop) {
  {
    std::lock_guard lock(mu_);
    if (received_.load() == 0) {
      stop_ = std::move(stop);
      return;
    }
  }
  stop();
}

void StopSignals::wait() {
  // Wakes every 100 ms to see whether the command ended without a signal.
  const timespec tick{0, 100'000'000};
  while (!done_.load()) {
    const int signal = sigtimedwait(&signals_, nullptr, &tick);
    if (signal <= 0) continue;  // EAGAIN (the tick) or EINTR
    std::function<void()> stop;
    {
      std::lock_guard lock(mu_);
      received_.store(signal);
      stop = std::move(stop_);
    }
    if (stop) stop();
    return;
  }
}

}  // namespace weft::cli
