// Many concurrent MCP sessions over Streamable HTTP (run by
// `scripts/bench.sh mcp_load --json [--sessions N] [--seconds S] [--interval-ms M]`):
// starts `weft serve --port 0` on a fresh workspace, opens N legacy-era
// sessions (one keep-alive connection each), then every session calls fs_read
// on a 4 KB file for S seconds, one call every M ms (0: back to back; the
// sessions' first calls spread evenly over M ms); a call's latency runs from its send to its full response. Prints
// one JSON line: requests, errors (any failed call), lost_sessions (sessions
// answered 404), latency percentiles, the server's peak RSS (VmHWM) and the
// CPU time of both sides over the run.
//
// The sessions are driven by an asio event loop on T threads (default 1),
// not a thread each: client and server share the machine's cores, and 300
// client threads would take CPU from the server the figure is about.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace stdfs = std::filesystem;

struct Options {
  int sessions = 300;
  double seconds = 20;
  int interval_ms = 0;
  int client_threads = 1;
  std::string weft;
};

// Parses --sessions/--seconds/--interval-ms/--client-threads/--weft; --json is accepted (the output is JSON).
std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  const char* build = std::getenv("WEFT_BUILD");
  o.weft = std::string(build ? build : "build/release") + "/weft";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    std::optional<std::string> v;
    if (a == "--json") continue;
    if (!(v = value())) return std::nullopt;
    if (a == "--sessions") {
      o.sessions = std::atoi(v->c_str());
    } else if (a == "--seconds") {
      o.seconds = std::atof(v->c_str());
    } else if (a == "--interval-ms") {
      o.interval_ms = std::atoi(v->c_str());
    } else if (a == "--client-threads") {
      o.client_threads = std::atoi(v->c_str());
    } else if (a == "--weft") {
      o.weft = *v;
    } else {
      return std::nullopt;
    }
  }
  if (o.sessions < 1 || o.seconds <= 0 || o.interval_ms < 0 || o.client_threads < 1) return std::nullopt;
  return o;
}

// `weft serve` on `root`, its stdout on a pipe until the endpoint line names the port.
struct Server {
  pid_t pid = -1;
  int port = 0;
  int out_fd = -1;
};

std::optional<Server> start_server(const Options& o, const stdfs::path& dir) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  Server s;
  s.pid = fork();
  if (s.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("XDG_STATE_HOME", (dir / "state").c_str(), 1);
    std::string root = (dir / "ws").string();
    execl(o.weft.c_str(), "weft", "serve", "--root", root.c_str(), "--port", "0",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  s.out_fd = fds[0];
  std::string seen;
  char buf[4096];
  const std::string marker = "http://127.0.0.1:";
  while (s.pid > 0) {
    ssize_t n = read(s.out_fd, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<size_t>(n));
    size_t at = seen.find(marker);
    if (at != std::string::npos && seen.find("/mcp", at) != std::string::npos) {
      s.port = std::atoi(seen.c_str() + at + marker.size());
      return s;
    }
  }
  std::fprintf(stderr, "mcp_load: %s serve printed no endpoint: %s\n", o.weft.c_str(),
               seen.c_str());
  return std::nullopt;
}

double peak_rss_mb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

Json rpc(const std::string& method, Json params, std::optional<int> id) {
  Json m = {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
  if (id) m["id"] = *id;
  return m;
}

// A strict JSON scanner for the calls' replies: it checks the syntax of the
// whole text and finds what a call's outcome depends on without building a
// document. (Building one costs the client more CPU per call than the server
// spends answering, and the two share the machine's cores.)
class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // Whether `text` is one JSON object whose "result" is an object with
  // "isError" absent or false: a successful tools/call reply.
  static bool call_succeeded(std::string_view text) {
    Scanner s(text);
    bool has_result = false;
    bool is_error = false;
    s.skip_space();
    if (!s.at('{')) return false;
    bool ok = s.object([&](std::string_view key) {
      if (key != "result") return s.value(1);
      s.skip_space();
      if (!s.at('{')) return s.value(1);
      has_result = true;
      return s.object([&](std::string_view member) {
        if (member != "isError") return s.value(2);
        s.skip_space();
        if (s.literal("false")) return true;
        is_error = true;
        return s.value(2);
      });
    });
    s.skip_space();
    return ok && s.p_ == s.end_ && has_result && !is_error;
  }

 private:
  static constexpr int kMaxDepth = 128;

  bool at(char c) const { return p_ < end_ && *p_ == c; }
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }
  bool digits() {
    const char* start = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ > start;
  }
  bool number() {
    if (at('-')) ++p_;
    if (at('0')) {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (at('.')) {
      ++p_;
      if (!digits()) return false;
    }
    if (at('e') || at('E')) {
      ++p_;
      if (at('+') || at('-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }
  // A string; *raw gets its text between the quotes, escapes left as they are.
  bool string(std::string_view* raw) {
    if (!at('"')) return false;
    const char* start = ++p_;
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *raw = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      ++p_;
      if (c != '\\') continue;
      if (p_ == end_) return false;
      const char e = *p_++;
      if (e == 'u') {
        for (int i = 0; i < 4; ++i, ++p_) {
          if (p_ == end_ || !std::isxdigit(static_cast<unsigned char>(*p_))) return false;
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }
  // An object at p_ ('{'); `member(key)` scans each member's value.
  template <class Member>
  bool object(Member&& member) {
    ++p_;
    skip_space();
    if (at('}')) return ++p_, true;
    for (;;) {
      std::string_view key;
      skip_space();
      if (!string(&key)) return false;
      skip_space();
      if (!at(':')) return false;
      ++p_;
      if (!member(key)) return false;
      skip_space();
      if (at('}')) return ++p_, true;
      if (!at(',')) return false;
      ++p_;
    }
  }
  bool value(int depth) {
    if (depth > kMaxDepth) return false;
    skip_space();
    if (p_ == end_) return false;
    std::string_view ignored;
    switch (*p_) {
      case '{':
        return object([&](std::string_view) { return value(depth + 1); });
      case '[':
        ++p_;
        skip_space();
        if (at(']')) return ++p_, true;
        for (;;) {
          if (!value(depth + 1)) return false;
          skip_space();
          if (at(']')) return ++p_, true;
          if (!at(',')) return false;
          ++p_;
        }
      case '"':
        return string(&ignored);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  const char* p_;
  const char* end_;
};

// Scanner::call_succeeded() by a full parse: the bench checks the scanner
// against it now and then.
bool parsed_call_succeeded(std::string_view text) {
  Json reply = Json::parse(text, nullptr, false);
  if (!reply.is_object() || !reply.contains("result") || !reply["result"].is_object()) return false;
  auto is_error = reply["result"].find("isError");
  return is_error == reply["result"].end() || *is_error == false;
}

// What every session shares: the timed phase starts once the last session is
// open (or failed to open), and ends `seconds` later.
struct Run {
  const Options& o;
  tcp::endpoint server;
  std::atomic<int> opening;
  Clock::time_point start;
  Clock::time_point deadline;
  std::function<void()> on_all_open;
};

// One session: a keep-alive connection carrying its requests, driven by
// completion handlers (on its own strand when the loop has several threads;
// no thread of its own). A transport failure closes the connection and the
// next call reconnects, as a client would.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(net::io_context& ioc, Run& run)
      : run_(run),
        // A strand only when several threads run the loop: on one it would
        // add a hop to every completion.
        executor_(run.o.client_threads > 1 ? net::any_io_executor(net::make_strand(ioc))
                                           : net::any_io_executor(ioc.get_executor())),
        sock_(executor_),
        timer_(executor_) {}

  // Initializes the session, then tells `run` it is open (or failed to be).
  void open() {
    net::dispatch(executor_, [self = shared_from_this()] { self->initialize(); });
  }
  // Starts the timed calls (after every session opened), the first one at `first`.
  void start_calls(Clock::time_point first) {
    net::dispatch(executor_, [self = shared_from_this(), first] {
      if (!self->opened_) return;
      self->timer_.expires_at(first);
      self->timer_.async_wait([self](beast::error_code) { self->call(); });
    });
  }

  bool opened() const { return opened_; }
  bool lost() const { return lost_; }
  int64_t requests() const { return requests_; }
  int64_t errors() const { return errors_; }
  const std::string& first_error() const { return first_error_; }
  const std::vector<double>& latencies_ms() const { return latencies_ms_; }

 private:
  // The reply's text is valid until the next post().
  using Done = std::function<void(beast::error_code, int status, std::string_view reply)>;

  void initialize() {
    Json init = {{"protocolVersion", "2025-11-25"},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "mcp_load_bench"}, {"version", "1"}}}};
    post(rpc("initialize", init, 0), [this](beast::error_code ec, int status, std::string_view) {
      if (ec) error("initialize: " + ec.message());
      opened_ = !ec && status == 200 && !session_id_.empty();
      if (!opened_) return arrived();
      post(rpc("notifications/initialized", Json::object(), std::nullopt),
           [this](beast::error_code ec, int, std::string_view) {
             if (ec) error("initialize: " + ec.message());
             arrived();
           });
    });
  }
  void arrived() {
    if (run_.opening.fetch_sub(1) == 1) run_.on_all_open();
  }

  void call() {
    if (Clock::now() >= run_.deadline) return;
    const auto t0 = Clock::now();
    ++requests_;
    static const Json kArgs = {{"name", "fs_read"}, {"arguments", {{"path", "hello.txt"}}}};
    post(rpc("tools/call", kArgs, ++next_id_), [this, t0](beast::error_code ec, int status,
                                                          std::string_view reply) {
      if (ec) {
        error("fs_read: " + ec.message());
      } else {
        latencies_ms_.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (status == 404) {
          error("session lost (404)");
          lost_ = true;
          return;
        }
        const bool succeeded = Scanner::call_succeeded(reply);
        if (requests_ % 256 == 1 && succeeded != parsed_call_succeeded(reply)) {
          error("the reply scanner and nlohmann disagree on: " + std::string(reply.substr(0, 200)));
        }
        if (status != 200 || !succeeded) {
          error("HTTP " + std::to_string(status) + ": " + std::string(reply.substr(0, 200)));
        }
      }
      if (run_.o.interval_ms <= 0) return call();
      timer_.expires_at(t0 + std::chrono::milliseconds(run_.o.interval_ms));
      timer_.async_wait([self = shared_from_this()](beast::error_code) { self->call(); });
    });
  }

  // Posts a JSON-RPC message; `done` gets the status and the reply's text
  // (the last SSE `data:` line or the JSON body; empty when there is none).
  void post(const Json& message, Done done) {
    req_ = {http::verb::post, "/mcp", 11};
    req_.set(http::field::host, "127.0.0.1:" + std::to_string(run_.server.port()));
    req_.set(http::field::content_type, "application/json");
    req_.set(http::field::accept, "application/json, text/event-stream");
    if (!session_id_.empty()) {
      req_.set("Mcp-Session-Id", session_id_);
      req_.set("MCP-Protocol-Version", "2025-11-25");
    }
    req_.body() = message.dump();
    req_.prepare_payload();
    done_ = std::move(done);
    if (sock_.is_open()) return write();
    buffer_.clear();
    sock_.async_connect(run_.server, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->fail(ec);
      self->sock_.set_option(tcp::no_delay(true), ec);
      self->write();
    });
  }
  void write() {
    http::async_write(sock_, req_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->fail(ec);
      self->parser_.emplace();
      self->parser_->body_limit(64 << 20);
      http::async_read(self->sock_, self->buffer_, *self->parser_,
                       [self](beast::error_code ec, size_t) { self->on_response(ec); });
    });
  }
  void on_response(beast::error_code ec) {
    if (ec) return fail(ec);
    auto& res = parser_->get();
    if (session_id_.empty() && res.count("Mcp-Session-Id")) {
      session_id_ = std::string(res["Mcp-Session-Id"]);
    }
    if (!res.keep_alive()) close();
    std::string_view reply = res.body();
    if (std::string_view(res[http::field::content_type]).rfind("text/event-stream", 0) == 0) {
      size_t at = reply.rfind("data: ");
      reply = at == std::string_view::npos ? std::string_view() : reply.substr(at + 6);
      reply = reply.substr(0, reply.find('\n'));
    }
    std::exchange(done_, nullptr)(ec, res.result_int(), reply);
  }
  void fail(beast::error_code ec) {
    close();  // reconnect on the next call
    std::exchange(done_, nullptr)(ec, 0, std::string_view());
  }
  void close() {
    beast::error_code ignored;
    sock_.close(ignored);
  }
  void error(const std::string& what) {
    ++errors_;
    if (first_error_.empty()) first_error_ = what;
  }

  Run& run_;
  net::any_io_executor executor_;
  tcp::socket sock_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  std::optional<http::response_parser<http::string_body>> parser_;
  Done done_;
  std::string session_id_;
  int next_id_ = 0;
  bool opened_ = false;
  bool lost_ = false;
  int64_t requests_ = 0;
  int64_t errors_ = 0;
  std::string first_error_;
  std::vector<double> latencies_ms_;
};

// CPU seconds (user + system) used by a process so far.
double cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  auto options = parse_args(argc, argv);
  if (!options) {
    std::fprintf(stderr,
                 "usage: weft_mcp_load_bench [--json] [--sessions N (300)] [--seconds S (20)] "
                 "[--interval-ms M (0)] [--client-threads T (1)] [--weft PATH ($WEFT_BUILD/weft)]\n");
    return 2;
  }
  const Options& o = *options;
  stdfs::path dir = stdfs::temp_directory_path() / ("weft-mcp-load-" + std::to_string(getpid()));
  stdfs::create_directories(dir / "ws");
  {
    std::ofstream file(dir / "ws" / "hello.txt", std::ios::binary);
    for (int i = 0; i < 100; ++i) file << "line " << i << ": the quick brown fox jumps over it\n";
  }
  auto server = start_server(o, dir);
  if (!server) return 1;
  Run run{o, tcp::endpoint(net::ip::make_address("127.0.0.1"),
                            static_cast<unsigned short>(server->port)),
          {o.sessions}, {}, {}, {}};
  net::io_context ioc;
  std::vector<std::shared_ptr<Session>> sessions;
  for (int i = 0; i < o.sessions; ++i) sessions.push_back(std::make_shared<Session>(ioc, run));
  run.on_all_open = [&] {
    run.start = Clock::now();
    run.deadline = run.start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(o.seconds));
    // Paced sessions start spread evenly over one interval, as independent
    // clients would be, rather than all calling in the same instant.
    for (size_t i = 0; i < sessions.size(); ++i) {
      sessions[i]->start_calls(run.start + std::chrono::milliseconds(o.interval_ms) * i /
                                               sessions.size());
    }
  };
  const double client_cpu_before = cpu_seconds(getpid());
  const double server_cpu_before = cpu_seconds(server->pid);
  for (auto& s : sessions) s->open();
  std::vector<std::thread> threads;
  for (int i = 1; i < o.client_threads; ++i) threads.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - run.start).count();
  const double client_cpu = cpu_seconds(getpid()) - client_cpu_before;
  const double server_cpu = cpu_seconds(server->pid) - server_cpu_before;
  double rss = peak_rss_mb(server->pid);
  kill(server->pid, SIGTERM);
  int wstatus = 0;
  waitpid(server->pid, &wstatus, 0);
  close(server->out_fd);
  stdfs::remove_all(dir);

  struct {
    std::vector<double> latencies_ms;
    int64_t requests = 0;
    int64_t errors = 0;
    int lost_sessions = 0;
    int failed_opens = 0;
    std::string first_error;
  } totals;
  for (const auto& s : sessions) {
    totals.latencies_ms.insert(totals.latencies_ms.end(), s->latencies_ms().begin(),
                               s->latencies_ms().end());
    totals.requests += s->requests();
    totals.errors += s->errors();
    totals.lost_sessions += s->lost() ? 1 : 0;
    totals.failed_opens += s->opened() ? 0 : 1;
    if (totals.first_error.empty()) totals.first_error = s->first_error();
  }
  std::sort(totals.latencies_ms.begin(), totals.latencies_ms.end());
  auto round2 = [](double v) { return std::round(v * 100) / 100; };
  nlohmann::ordered_json out = {
      {"suite", "mcp_load"},
      {"sessions", o.sessions},
      {"seconds", o.seconds},
      {"interval_ms", o.interval_ms},
      {"requests", totals.requests},
      {"requests_per_s", std::round(static_cast<double>(totals.requests) / elapsed)},
      {"errors", totals.errors},
      {"lost_sessions", totals.lost_sessions},
      {"failed_session_opens", totals.failed_opens},
      {"p50_ms", round2(percentile(totals.latencies_ms, 0.50))},
      {"p99_ms", round2(percentile(totals.latencies_ms, 0.99))},
      {"max_ms", round2(totals.latencies_ms.empty() ? 0 : totals.latencies_ms.back())},
      {"server_peak_rss_mb", std::round(rss * 10) / 10},
      {"client_threads", o.client_threads},
      {"client_cpu_s", round2(client_cpu)},
      {"server_cpu_s", round2(server_cpu)}};
  if (!totals.first_error.empty()) out["first_error"] = totals.first_error;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
