// Many concurrent MCP sessions over Streamable HTTP (run by
// `scripts/bench.sh mcp_load --json [--sessions N] [--seconds S] [--interval-ms M]`):
// starts `weft serve --port 0` on a fresh workspace, opens N legacy-era
// sessions (one keep-alive connection and one thread each), then every
// session calls fs_read on a 4 KB file for S seconds, pausing M ms between
// its calls (0: back to back). Prints one JSON line: requests, errors (any
// failed call), lost_sessions (sessions answered 404), latency percentiles
// and the server's peak RSS (VmHWM) over the run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
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
  std::string weft;
};

// Parses --sessions/--seconds/--interval-ms/--weft; --json is accepted (the output is JSON).
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
    } else if (a == "--weft") {
      o.weft = *v;
    } else {
      return std::nullopt;
    }
  }
  if (o.sessions < 1 || o.seconds <= 0 || o.interval_ms < 0) return std::nullopt;
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

// One session: a keep-alive connection carrying its requests.
class Client {
 public:
  explicit Client(int port) : port_(port) {}

  // Posts a JSON-RPC message; returns the status and the reply (the last SSE `data:` line or
  // the JSON body; null when there is none). Throws on a transport failure.
  std::pair<int, Json> post(const Json& message) {
    if (!sock_) connect();
    http::request<http::string_body> req{http::verb::post, "/mcp", 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port_));
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json, text/event-stream");
    if (!session_id_.empty()) {
      req.set("Mcp-Session-Id", session_id_);
      req.set("MCP-Protocol-Version", "2025-11-25");
    }
    req.body() = message.dump();
    req.prepare_payload();
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    try {
      http::write(*sock_, req);
      http::read(*sock_, buffer_, parser);
    } catch (...) {
      sock_.reset();  // reconnect on the next call
      throw;
    }
    auto& res = parser.get();
    if (session_id_.empty() && res.count("Mcp-Session-Id")) {
      session_id_ = std::string(res["Mcp-Session-Id"]);
    }
    if (!res.keep_alive()) sock_.reset();
    const std::string& body = res.body();
    Json reply;
    if (std::string(res[http::field::content_type]).rfind("text/event-stream", 0) == 0) {
      size_t at = body.rfind("data: ");
      if (at != std::string::npos) {
        size_t end = body.find('\n', at);
        reply = Json::parse(body.substr(at + 6, end - at - 6), nullptr, false);
      }
    } else if (!body.empty()) {
      reply = Json::parse(body, nullptr, false);
    }
    return {res.result_int(), std::move(reply)};
  }

  const std::string& session_id() const { return session_id_; }

 private:
  void connect() {
    sock_ = std::make_unique<tcp::socket>(ioc_);
    sock_->connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
    sock_->set_option(tcp::no_delay(true));
    buffer_.clear();
  }

  int port_;
  net::io_context ioc_;
  std::unique_ptr<tcp::socket> sock_;
  beast::flat_buffer buffer_;
  std::string session_id_;
};

Json rpc(const std::string& method, Json params, std::optional<int> id) {
  Json m = {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
  if (id) m["id"] = *id;
  return m;
}

struct Totals {
  std::mutex mu;
  std::vector<double> latencies_ms;
  int64_t requests = 0;
  int64_t errors = 0;
  int lost_sessions = 0;
  int failed_opens = 0;
  std::string first_error;

  void error(const std::string& what) {
    std::lock_guard lock(mu);
    ++errors;
    if (first_error.empty()) first_error = what;
  }
};

// Stamps the start of the timed phase when the last session is open.
struct MarkStart {
  Clock::time_point* start;
  void operator()() noexcept { *start = Clock::now(); }
};

void run_session(const Options& o, int port, std::barrier<MarkStart>& ready,
                 Clock::time_point& start, Totals& totals) {
  Client c(port);
  bool opened = false;
  try {
    Json init = {{"protocolVersion", "2025-11-25"},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "mcp_load_bench"}, {"version", "1"}}}};
    auto [status, reply] = c.post(rpc("initialize", init, 0));
    opened = status == 200 && !c.session_id().empty();
    if (opened) c.post(rpc("notifications/initialized", Json::object(), std::nullopt));
  } catch (const std::exception& e) {
    totals.error(std::string("initialize: ") + e.what());
  }
  if (!opened) {
    std::lock_guard lock(totals.mu);
    ++totals.failed_opens;
  }
  ready.arrive_and_wait();  // every session is open before the timed calls start
  if (!opened) return;
  const auto deadline = start + std::chrono::duration<double>(o.seconds);
  const Json args = {{"name", "fs_read"}, {"arguments", {{"path", "hello.txt"}}}};
  std::vector<double> mine;
  int64_t requests = 0;
  for (int id = 1; Clock::now() < deadline; ++id) {
    const auto t0 = Clock::now();
    ++requests;
    try {
      auto [status, reply] = c.post(rpc("tools/call", args, id));
      mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (status == 404) {
        totals.error("session lost (404)");
        std::lock_guard lock(totals.mu);
        ++totals.lost_sessions;
        break;
      }
      bool ok = status == 200 && reply.is_object() && reply.contains("result") &&
                !reply["result"].value("isError", false);
      if (!ok) totals.error("HTTP " + std::to_string(status) + ": " + reply.dump().substr(0, 200));
    } catch (const std::exception& e) {
      totals.error(std::string("fs_read: ") + e.what());
    }
    if (o.interval_ms > 0)
      std::this_thread::sleep_until(t0 + std::chrono::milliseconds(o.interval_ms));
  }
  std::lock_guard lock(totals.mu);
  totals.requests += requests;
  totals.latencies_ms.insert(totals.latencies_ms.end(), mine.begin(), mine.end());
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
                 "[--interval-ms M (0)] [--weft PATH ($WEFT_BUILD/weft)]\n");
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
  Totals totals;
  Clock::time_point start;
  std::barrier<MarkStart> ready(o.sessions, MarkStart{&start});
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(o.sessions));
  for (int i = 0; i < o.sessions; ++i) {
    threads.emplace_back([&] { run_session(o, server->port, ready, start, totals); });
  }
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  double rss = peak_rss_mb(server->pid);
  kill(server->pid, SIGTERM);
  int wstatus = 0;
  waitpid(server->pid, &wstatus, 0);
  close(server->out_fd);
  stdfs::remove_all(dir);

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
      {"server_peak_rss_mb", std::round(rss * 10) / 10}};
  if (!totals.first_error.empty()) out["first_error"] = totals.first_error;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
