// Fuzzes the Streamable HTTP transport's connection handling: arbitrary bytes
// are sent as a request stream to a loopback HttpServer, then the client
// half-closes. The server must answer (each answer a well-formed HTTP/1.1
// status line first) or close, within a few seconds, and never crash. Its
// sessions are capped small, so memory stays bounded across inputs.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "weft/server/http_transport.h"
#include "weft/server/mcp_server.h"

namespace {

struct Fixture {
  std::unique_ptr<weft::server::McpServer> server;
  std::unique_ptr<weft::server::HttpServer> http;
  std::thread runner;

  Fixture() {
    weft::server::ServerOptions server_options;
    server_options.max_message_bytes = 1 << 16;
    server = std::make_unique<weft::server::McpServer>(
        server_options, std::make_shared<weft::server::ToolRegistry>());
    weft::server::HttpOptions options;
    options.port = 0;
    options.max_sessions = 8;
    options.session_evict_grace_ms = 0;
    options.request_timeout_ms = 2000;
    http = std::make_unique<weft::server::HttpServer>(*server, options);
    if (!http->listen().ok()) __builtin_trap();
    runner = std::thread([this] { http->run().ignore_error(); });
    runner.detach();
  }
};

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    __builtin_trap();
  }
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Never destroyed: the server keeps running on its thread until the process ends.
  static Fixture* fixture = new Fixture;
  const int fd = connect_to(fixture->http->port());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string answer;
  size_t sent = 0;
  bool half_closed = false;
  for (;;) {
    // Writes and reads interleave, so a server answering pipelined requests
    // never blocks on a client that is still writing.
    if (sent == size && !half_closed) {
      ::shutdown(fd, SHUT_WR);
      half_closed = true;
    }
    pollfd p{fd, static_cast<short>(POLLIN | (half_closed ? 0 : POLLOUT)), 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) __builtin_trap();  // the server hung
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    if (p.revents & POLLIN || p.revents & (POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;  // closed (or reset)
      if (n > 0) answer.append(buf, static_cast<size_t>(n));
      if (answer.size() > (8u << 20)) __builtin_trap();  // answers must stay small
    }
    if (!half_closed && (p.revents & POLLOUT)) {
      ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) half_closed = true;  // server closed
    }
  }
  ::close(fd);
  if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) __builtin_trap();
  return 0;
}
