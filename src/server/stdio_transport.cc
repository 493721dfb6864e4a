// The stdio transport (see include/weft/server/stdio_transport.h).
#include "weft/server/stdio_transport.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace weft::server {
namespace {

// Writes whole lines under a lock; remembers the first failure.
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}

  void write(const Json& message) {
    std::string line = serialize(message);
    line.push_back('\n');
    std::lock_guard lock(mu_);
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0 && !failed_) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed_ = true;
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  bool failed() const {
    std::lock_guard lock(mu_);
    return failed_;
  }

 private:
  int fd_;
  mutable std::mutex mu_;
  bool failed_ = false;
};

// A fixed pool running queued requests. The queue is bounded: submit() waits
// for a free slot, so a client that sends faster than the server answers is
// slowed down by the pipe instead of growing the server's memory.
class WorkerPool {
 public:
  WorkerPool(size_t n, size_t max_queued, McpServer& server, Session& session, LineWriter& out)
      : max_queued_(std::max<size_t>(1, max_queued)),
        server_(server),
        session_(session),
        out_(out) {
    for (size_t i = 0; i < std::max<size_t>(1, n); ++i) threads_.emplace_back([this] { run(); });
  }
  ~WorkerPool() { finish(); }

  void submit(Message message) {
    {
      std::unique_lock lock(mu_);
      space_.wait(lock, [this] { return queue_.size() < max_queued_; });
      queue_.push_back(std::move(message));
    }
    cv_.notify_one();
  }
  // Nothing queued and nothing running.
  bool idle() {
    std::lock_guard lock(mu_);
    return queue_.empty() && running_ == 0;
  }
  // Runs what is queued, then stops the threads.
  void finish() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void run() {
    Session::Sender related = [this](const Json& m) { out_.write(m); };
    for (;;) {
      Message message;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        message = std::move(queue_.front());
        queue_.pop_front();
        ++running_;
      }
      space_.notify_one();
      if (!out_.failed()) {  // else the client is gone: nobody reads the answer
        auto reply = server_.handle_message(message, session_, related);
        if (reply) out_.write(*reply);
      }
      std::lock_guard lock(mu_);
      --running_;
    }
  }

  const size_t max_queued_;
  McpServer& server_;
  Session& session_;
  LineWriter& out_;
  std::mutex mu_;
  std::condition_variable cv_;     // a message was queued, or closing
  std::condition_variable space_;  // a slot in the queue freed up
  std::deque<Message> queue_;
  bool closing_ = false;
  size_t running_ = 0;  // messages taken by a worker and not yet answered
  std::vector<std::thread> threads_;
};

bool blank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

void handle_line(std::string_view line, McpServer& server, Session& session, WorkerPool& pool,
                 LineWriter& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (blank(line)) return;
  Session::Sender related = [&out](const Json& m) { out.write(m); };
  ParsedInput input = parse_input(line, server.options().max_message_bytes);
  if (input.is_batch) {  // rare and legacy: handled whole, in order
    auto reply = server.handle_input(std::move(input), session, related);
    if (reply) out.write(*reply);
    return;
  }
  Incoming& item = input.items.front();
  if (item.error_response) {
    out.write(*item.error_response);
  } else if (McpServer::must_run_inline(*item.message) ||
             (server.is_quick_call(*item.message) && pool.idle())) {
    // (A quick call with nothing else in flight runs here: no hand-off.)
    auto reply = server.handle_message(*item.message, session, related);
    if (reply) out.write(*reply);
  } else {
    pool.submit(std::move(*item.message));
  }
}

// After the client's requests are answered, its next one usually follows
// within tens of microseconds when it calls back to back (a model streaming
// block_append). Waiting for it awake for a moment, instead of sleeping in
// read() at once, saves the scheduler wake-up that is most of such a quick
// call's round trip; an idle client costs this much CPU once per burst.
constexpr auto kAwakeWait = std::chrono::microseconds(150);

void wait_awake_for_input(int fd) {
  const auto until = std::chrono::steady_clock::now() + kAwakeWait;
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 0) == 0 && std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

Status serve_stdio(McpServer& server, int in_fd, int out_fd, StdioOptions options) {
  LineWriter out(out_fd);
  Session session([&out](const Json& m) { out.write(m); });
  WorkerPool pool(options.workers, options.max_queued, server, session, out);
  const size_t limit = server.options().max_message_bytes;
  std::string line;
  bool discarding = false;  // inside an oversize line
  size_t discarded = 0;
  std::vector<char> buf(1 << 16);
  Status status;
  for (;;) {
    wait_awake_for_input(in_fd);
    ssize_t n = ::read(in_fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = unavailable(std::string("reading stdin failed: ") + std::strerror(errno));
      break;
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      size_t nl = chunk.find('\n');
      std::string_view part = chunk.substr(0, nl);
      if (discarding) {
        discarded += part.size();
      } else if (line.size() + part.size() > limit) {
        discarding = true;
        discarded = line.size() + part.size();
        std::string().swap(line);
      } else {
        line.append(part);
      }
      if (nl == std::string_view::npos) break;
      chunk.remove_prefix(nl + 1);
      if (discarding) {
        out.write(make_oversize_error(discarded, limit));
        discarding = false;
      } else {
        handle_line(line, server, session, pool, out);
      }
      line.clear();
    }
  }
  // A last line without its newline is answered like any other line.
  if (discarding) {
    out.write(make_oversize_error(discarded, limit));
  } else if (!line.empty()) {
    handle_line(line, server, session, pool, out);
  }
  pool.finish();
  if (status.ok() && out.failed()) status = unavailable("writing stdout failed (client gone?)");
  return status;
}

}  // namespace weft::server
