// Tests of KernelLink: election, calls in process and over the socket,
// takeover when the kernel goes (also by kill -9 of another process), and a
// kernel that outlives misbehaving peers. Also prints the socket's round-trip
// latency and throughput.
#include "weft/kernel/kernel_link.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernel/frame_io.h"
#include "support/test_support.h"

extern char** environ;

namespace weft::kernel {
namespace kernel_link_test_local {

using namespace std::chrono_literals;
using weft::testing::TempDir;

constexpr const char* kChildDirEnv = "WEFT_LINK_CHILD_DIR";

// Collects the log lines of a link (they come from its threads).
struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> fn() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> l(mu);
      lines.push_back(line);
    };
  }
  bool contains(std::string_view part) {
    std::lock_guard<std::mutex> l(mu);
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& s) { return s.find(part) != std::string::npos; });
  }
};

// A factory whose kernel answers "<tag>:<request>", "missing" with
// kNotFound, and counts how often it was called.
KernelFactory echo_factory(std::string tag, std::atomic<int>* made = nullptr) {
  return [tag, made]() -> Result<RequestHandler> {
    if (made) ++*made;
    return RequestHandler([tag](std::string_view request) -> Result<std::string> {
      if (request == "missing") return not_found("no block named 'missing'");
      return tag + ":" + std::string(request);
    });
  };
}

LinkOptions options_with(LogSink* sink) {
  LinkOptions o;
  if (sink) o.log = sink->fn();
  return o;
}

std::unique_ptr<KernelLink> open_link(const std::string& dir, KernelFactory factory,
                                      LinkOptions options = {}) {
  auto r = KernelLink::open(dir, std::move(factory), std::move(options));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : nullptr;
}

template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = 10s) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::string socket_path(const TempDir& dir) {
  return (dir.path() / std::string(kKernelSocketName)).string();
}

// A raw connection to the kernel socket, for peers that break the protocol.
int raw_connect(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ADD_FAILURE() << "connect " << path << ": " << std::strerror(errno);
  }
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  // Every connection starts with the kernel's greeting.
  std::string hello(kFrameHeaderBytes + 1 + kHello.size(), '\0');
  EXPECT_EQ(::recv(fd, hello.data(), hello.size(), MSG_WAITALL),
            static_cast<ssize_t>(hello.size()));
  EXPECT_EQ(hello.substr(kFrameHeaderBytes), std::string(1, '\0') + std::string(kHello));
  return fd;
}

void send_all(int fd, std::string_view bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
}

// True when the peer closes the connection (recv sees EOF or a reset).
bool closed_by_peer(int fd) {
  char c;
  ssize_t n = ::recv(fd, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

std::string frame(uint64_t id, std::string_view body) {
  char header[kFrameHeaderBytes];
  encode_frame_header(id, static_cast<uint32_t>(body.size()), header);
  return std::string(header, sizeof header) + std::string(body);
}

TEST(KernelLinkTest, FirstLinkIsTheKernelAndCallsInProcess) {
  TempDir dir;
  std::atomic<int> made{0};
  LogSink sink;
  auto a = open_link(dir.path().string(), echo_factory("A", &made), options_with(&sink));
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->is_kernel());
  EXPECT_EQ(made.load(), 1);
  EXPECT_TRUE(sink.contains("became the kernel"));
  EXPECT_TRUE(std::filesystem::exists(socket_path(dir)));
  EXPECT_EQ(std::filesystem::status(socket_path(dir)).permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto r = a->call("hello");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "A:hello");
  auto missing = a->call("missing");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(a->front_ends(), 0u);
  a->linger();  // no front end: returns at once
  a.reset();
  EXPECT_FALSE(std::filesystem::exists(socket_path(dir)));
}

TEST(KernelLinkTest, SecondLinkIsAFrontEndOfTheFirst) {
  TempDir dir;
  std::atomic<int> made_a{0}, made_b{0};
  auto a = open_link(dir.path().string(), echo_factory("A", &made_a));
  auto b = open_link(dir.path().string(), echo_factory("B", &made_b));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(a->is_kernel());
  EXPECT_FALSE(b->is_kernel());
  EXPECT_EQ(made_b.load(), 0);
  auto r = b->call("hello");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "A:hello");
  std::string binary("\0\x01\xff zero", 8);
  r = b->call(binary);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "A:" + binary);
  r = b->call("");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "A:");
  auto missing = b->call("missing");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "no block named 'missing'");
  EXPECT_EQ(b->front_ends(), 0u);
  b->linger();  // a front end: returns at once
}

TEST(KernelLinkTest, OversizedRequestIsRefused) {
  TempDir dir;
  auto a = open_link(dir.path().string(), echo_factory("A"));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  std::string big(kMaxFrameBytes + 1, 'x');
  EXPECT_EQ(a->call(big).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b->call(big).status().code(), StatusCode::kInvalidArgument);
  auto r = b->call("still fine");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "A:still fine");
}

TEST(KernelLinkTest, ConcurrentCallsGetTheirOwnReplies) {
  TempDir dir;
  KernelFactory jittery = []() -> Result<RequestHandler> {
    return RequestHandler([](std::string_view request) -> Result<std::string> {
      // Some requests take longer, so replies come back out of order.
      if (request.back() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      return "re:" + std::string(request);
    });
  };
  auto a = open_link(dir.path().string(), jittery);
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  ASSERT_FALSE(b->is_kernel());
  constexpr int kThreads = 8, kCalls = 300;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        std::string request = std::to_string(t * 100000 + i);
        auto r = b->call(request);
        if (!r.ok() || r->substr(0, 3) != "re:" || r->substr(3) != request) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(KernelLinkTest, CallsFromOneFrontEndRunConcurrently) {
  TempDir dir;
  constexpr int kThreads = 8;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  KernelFactory meeting = [&]() -> Result<RequestHandler> {
    return RequestHandler([&](std::string_view) -> Result<std::string> {
      std::unique_lock<std::mutex> l(mu);
      ++arrived;
      cv.notify_all();
      bool all = cv.wait_for(l, 10s, [&] { return arrived >= kThreads; });
      return std::string(all ? "together" : "alone");
    });
  };
  auto a = open_link(dir.path().string(), meeting);
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  std::vector<std::future<Result<std::string>>> calls;
  for (int t = 0; t < kThreads; ++t) {
    calls.push_back(std::async(std::launch::async, [&] { return b->call("meet"); }));
  }
  for (auto& c : calls) {
    auto r = c.get();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, "together");
  }
}

TEST(KernelLinkTest, FrontEndTakesOverWhenTheKernelIsDestroyed) {
  TempDir dir;
  std::atomic<int> made_b{0}, made_c{0};
  LogSink sink_b;
  auto a = open_link(dir.path().string(), echo_factory("A"));
  auto b = open_link(dir.path().string(), echo_factory("B", &made_b), options_with(&sink_b));
  auto c = open_link(dir.path().string(), echo_factory("C", &made_c));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(*b->call("1"), "A:1");
  EXPECT_EQ(*c->call("1"), "A:1");
  a.reset();
  auto r = b->call("2");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "B:2");
  EXPECT_TRUE(b->is_kernel());
  EXPECT_EQ(made_b.load(), 1);
  EXPECT_TRUE(sink_b.contains("took over"));
  r = c->call("2");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "B:2");
  EXPECT_FALSE(c->is_kernel());
  EXPECT_EQ(made_c.load(), 0);
}

TEST(KernelLinkTest, CallInFlightWhenTheKernelGoesFailsAsUnavailable) {
  TempDir dir;
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, release = false;
  KernelFactory blocking = [&]() -> Result<RequestHandler> {
    return RequestHandler([&](std::string_view) -> Result<std::string> {
      std::unique_lock<std::mutex> l(mu);
      started = true;
      cv.notify_all();
      cv.wait(l, [&] { return release; });
      return std::string("late");
    });
  };
  auto a = open_link(dir.path().string(), blocking);
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  auto call = std::async(std::launch::async, [&] { return b->call("slow"); });
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, 10s, [&] { return started; }));
  }
  // The kernel's destructor closes the connection, then waits for the handler.
  auto destroy = std::async(std::launch::async, [&] { a.reset(); });
  auto r = call.get();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("went away during the call"), std::string_view::npos)
      << r.status();
  EXPECT_NE(r.status().message().find(dir.path().string()), std::string_view::npos);
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  destroy.get();
  auto next = b->call("again");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, "B:again");
}

TEST(KernelLinkTest, StaleSocketWithoutLockHolderIsReplaced) {
  TempDir dir;
  {
    // A socket file whose listener is gone, as a crashed kernel leaves it.
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string path = socket_path(dir);
    std::memcpy(addr.sun_path, path.data(), path.size());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    ::close(fd);
    ASSERT_TRUE(std::filesystem::exists(path));
  }
  LogSink sink;
  auto a = open_link(dir.path().string(), echo_factory("A"), options_with(&sink));
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->is_kernel());
  EXPECT_TRUE(sink.contains("removed a stale kernel socket"));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b->call("x"), "A:x");
}

TEST(KernelLinkTest, LockHolderThatNeverListensTimesOut) {
  TempDir dir;
  std::string lock_path = (dir.path() / std::string(kKernelLockName)).string();
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_len = 1;
  ASSERT_EQ(::fcntl(fd, F_OFD_SETLK, &fl), 0);
  LinkOptions quick;
  quick.connect_timeout = 200ms;
  auto r = KernelLink::open(dir.path().string(), echo_factory("A"), quick);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(dir.path().string()), std::string_view::npos);
  // The holder dies while a link is waiting for it: the link takes the lock.
  std::atomic<int> made{0};
  auto waiting = std::async(std::launch::async, [&] {
    return KernelLink::open(dir.path().string(), echo_factory("A", &made));
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(made.load(), 0);
  ::close(fd);
  auto opened = waiting.get();
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE((*opened)->is_kernel());
  EXPECT_EQ(made.load(), 1);
}

TEST(KernelLinkTest, FactoryErrorIsReturnedAndFreesTheLock) {
  TempDir dir;
  auto r = KernelLink::open(dir.path().string(), []() -> Result<RequestHandler> {
    return unavailable("the database is locked");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "the database is locked");
  auto a = open_link(dir.path().string(), echo_factory("A"));
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->is_kernel());
}

TEST(KernelLinkTest, TooLongStateDirectoryIsAClearError) {
  TempDir dir;
  std::string deep = (dir.path() / std::string(120, 'd')).string();
  auto r = KernelLink::open(deep, echo_factory("A"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("too long"), std::string_view::npos) << r.status();
  EXPECT_NE(r.status().message().find(deep), std::string_view::npos);
}

TEST(KernelLinkTest, WireFormatOfRequestsAndReplies) {
  TempDir dir;
  auto a = open_link(dir.path().string(), echo_factory("A"));
  ASSERT_NE(a, nullptr);
  int fd = raw_connect(socket_path(dir));
  send_all(fd, frame(0x0102030405060708ull, "ping") + frame(9, "missing"));
  FrameReader reader(fd, 1 << 20);
  uint64_t id = 0;
  std::string body;
  ASSERT_EQ(reader.next(&id, &body), FrameReader::Outcome::kFrame);
  std::string second_body;
  uint64_t second_id = 0;
  ASSERT_EQ(reader.next(&second_id, &second_body), FrameReader::Outcome::kFrame);
  if (id != 0x0102030405060708ull) {  // the two requests may finish in either order
    std::swap(id, second_id);
    std::swap(body, second_body);
  }
  EXPECT_EQ(id, 0x0102030405060708ull);
  EXPECT_EQ(body, std::string("\0A:ping", 7));
  EXPECT_EQ(second_id, 9u);
  ASSERT_FALSE(second_body.empty());
  EXPECT_EQ(second_body[0], static_cast<char>(StatusCode::kNotFound));
  EXPECT_EQ(second_body.substr(1), "no block named 'missing'");
  char header[kFrameHeaderBytes];
  encode_frame_header(0x0102030405060708ull, 0x0a0b0c0d, header);
  EXPECT_EQ(std::string(header, sizeof header),
            std::string("\x0a\x0b\x0c\x0d\x01\x02\x03\x04\x05\x06\x07\x08", 12));
  ::close(fd);
}

TEST(KernelLinkTest, OversizedFrameClosesOnlyThatConnection) {
  TempDir dir;
  LogSink sink;
  auto a = open_link(dir.path().string(), echo_factory("A"), options_with(&sink));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  int fd = raw_connect(socket_path(dir));
  char header[kFrameHeaderBytes];
  encode_frame_header(1, static_cast<uint32_t>(kMaxFrameBytes + 1), header);
  send_all(fd, std::string_view(header, sizeof header));
  EXPECT_TRUE(closed_by_peer(fd));
  ::close(fd);
  EXPECT_TRUE(wait_until([&] { return sink.contains("refused a frame"); }));
  EXPECT_EQ(*b->call("x"), "A:x");
}

TEST(KernelLinkTest, GarbageAndTruncatedFramesDoNotHurtTheKernel) {
  TempDir dir;
  LogSink sink;
  auto a = open_link(dir.path().string(), echo_factory("A"), options_with(&sink));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(wait_until([&] { return a->front_ends() == 1; }));
  int garbage = raw_connect(socket_path(dir));
  send_all(garbage, "\xff\xfe GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(closed_by_peer(garbage));
  ::close(garbage);
  int half = raw_connect(socket_path(dir));
  send_all(half, frame(7, std::string(100, 'q')).substr(0, 40));
  ::close(half);
  int header_only = raw_connect(socket_path(dir));
  send_all(header_only, frame(8, "abc").substr(0, 5));
  ::close(header_only);
  EXPECT_TRUE(wait_until([&] { return sink.contains("inside a frame"); }));
  EXPECT_TRUE(wait_until([&] { return a->front_ends() == 1; }));
  EXPECT_EQ(*b->call("x"), "A:x");
}

TEST(KernelLinkTest, SilentPeerBlocksNeitherCallsNorShutdown) {
  TempDir dir;
  auto a = open_link(dir.path().string(), echo_factory("A"));
  int silent = raw_connect(socket_path(dir));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b->call("x"), "A:x");
  ASSERT_TRUE(wait_until([&] { return a->front_ends() == 2; }));
  auto destroyed = std::async(std::launch::async, [&] { a.reset(); });
  EXPECT_EQ(destroyed.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(closed_by_peer(silent));
  ::close(silent);
}

TEST(KernelLinkTest, FrontEndsCountAndLingerWaitsForTheLast) {
  TempDir dir;
  auto a = open_link(dir.path().string(), echo_factory("A"));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  auto c = open_link(dir.path().string(), echo_factory("C"));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(wait_until([&] { return a->front_ends() == 2; }));
  EXPECT_EQ(b->front_ends(), 0u);
  auto lingering = std::async(std::launch::async, [&] { a->linger(); });
  b.reset();
  EXPECT_TRUE(wait_until([&] { return a->front_ends() == 1; }));
  EXPECT_EQ(lingering.wait_for(50ms), std::future_status::timeout);
  c.reset();
  EXPECT_EQ(lingering.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(a->front_ends(), 0u);
}

// Run only as the child of KillNineOfTheKernelProcess: be the kernel until killed.
TEST(KernelLinkChild, RunKernel) {
  const char* dir = std::getenv(kChildDirEnv);
  if (!dir) GTEST_SKIP() << "runs only as the child process of KillNineOfTheKernelProcess";
  auto link = open_link(dir, echo_factory("child"));
  ASSERT_NE(link, nullptr);
  ASSERT_TRUE(link->is_kernel());
  std::ofstream(std::string(dir) + "/child.ready") << ::getpid();
  for (;;) ::pause();
}

TEST(KernelLinkTest, KillNineOfTheKernelProcessHandsTheKernelOver) {
  TempDir dir;
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=KernelLinkChild.RunKernel";
  std::string env_dir = std::string(kChildDirEnv) + "=" + dir.path().string();
  std::vector<char*> argv = {self.data(), filter.data(), nullptr};
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(env_dir.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  } reaper{pid};
  bool child_exited = false;
  ASSERT_TRUE(wait_until(
      [&] {
        child_exited = ::waitpid(pid, nullptr, WNOHANG) == pid;
        return child_exited || std::filesystem::exists(dir.path() / "child.ready");
      },
      60s));
  ASSERT_FALSE(child_exited) << "the child kernel exited early";
  reaper.pid = pid;

  std::atomic<int> made{0};
  LogSink sink;
  auto b = open_link(dir.path().string(), echo_factory("parent", &made), options_with(&sink));
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->is_kernel());
  auto r = b->call("x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "child:x");
  EXPECT_EQ(made.load(), 0);

  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  reaper.pid = 0;
  EXPECT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

  r = b->call("y");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "parent:y");
  EXPECT_TRUE(b->is_kernel());
  EXPECT_EQ(made.load(), 1);
  EXPECT_TRUE(sink.contains("took over"));
  // The dead kernel's socket file was left behind and replaced.
  EXPECT_TRUE(sink.contains("removed a stale kernel socket"));
}

// Prints the round-trip latency and throughput of calls over the socket.
TEST(KernelLinkBench, RoundTripLatencyAndThroughput) {
  if (weft::testing::kSanitizerBuild) GTEST_SKIP() << "a timing print, meaningless under sanitizers";
  TempDir dir;
  auto a = open_link(dir.path().string(), echo_factory("A"));
  auto b = open_link(dir.path().string(), echo_factory("B"));
  ASSERT_NE(b, nullptr);
  const std::string request = R"({"op":"get","block":"notes"})";
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(b->call(request).ok());
  constexpr int kCalls = 10000;
  std::vector<double> micros;
  micros.reserve(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = b->call(request);
    auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(r.ok());
    micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(micros.begin(), micros.end());
  double p50 = micros[kCalls / 2], p99 = micros[kCalls * 99 / 100];

  constexpr int kThreads = 8, kPerThread = 5000;
  std::atomic<int> failed{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        if (!b->call(request).ok()) ++failed;
      }
    });
  }
  for (auto& th : threads) th.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(failed.load(), 0);
  std::printf("kernel link round trip over %d calls: p50 %.1f us, p99 %.1f us\n", kCalls, p50,
              p99);
  std::printf("kernel link throughput, %d threads: %.0f calls/s\n", kThreads,
              kThreads * kPerThread / seconds);
}

}  // namespace kernel_link_test_local
}  // namespace weft::kernel
