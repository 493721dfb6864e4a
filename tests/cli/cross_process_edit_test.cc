// Two `weft mcp` processes on one root, each editing the same file: every
// edit a server acknowledged must be in the file afterwards (the change lock
// in the root's state directory serialises their read-modify-writes).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"

namespace {

using nlohmann::json;

// A `weft mcp` child with its stdin and stdout on pipes.
class McpChild {
 public:
  McpChild(const std::string& root, const std::string& state) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::execl(WEFT_BIN, WEFT_BIN, "mcp", "--root", root.c_str(), "--state", state.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = ::fdopen(in[1], "w");
    from_ = ::fdopen(out[0], "r");
  }
  ~McpChild() {
    if (to_) std::fclose(to_);  // end of input stops the server
    if (from_) std::fclose(from_);
    if (pid_ > 0) {
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }
  bool started() const { return pid_ > 0 && to_ && from_; }

  // Sends one request and returns the response with its id (null on EOF).
  json call(int id, const std::string& method, const json& params) {
    json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    std::string line = request.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), to_);
    std::fflush(to_);
    std::string got;
    for (int c; (c = std::fgetc(from_)) != EOF;) {
      if (c != '\n') {
        got.push_back(static_cast<char>(c));
        continue;
      }
      json response = json::parse(got, nullptr, false);
      got.clear();
      if (response.is_object() && response.value("id", json()) == id) return response;
    }
    return json();
  }

  void notify(const std::string& method) {
    std::string line = json{{"jsonrpc", "2.0"}, {"method", method}}.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), to_);
    std::fflush(to_);
  }

 private:
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

TEST(CrossProcessEditTest, EveryAcknowledgedEditOfTwoServersIsKept) {
  constexpr int kEdits = 300;
  std::signal(SIGPIPE, SIG_IGN);  // a server that died shows as EOF, not a killed test
  weft::testing::TempDir dir;
  std::string root = (dir.path() / "ws").string();
  std::string state = (dir.path() / "state").string();
  std::filesystem::create_directories(root);
  std::ofstream(root + "/f.txt") << "END\n";

  std::vector<std::vector<std::string>> acknowledged(2);
  std::vector<std::string> failures(2);
  auto drive = [&](int peer) {
    McpChild mcp(root, state);
    if (!mcp.started()) {
      failures[peer] = "could not start weft mcp";
      return;
    }
    json init = mcp.call(0, "initialize",
                         {{"protocolVersion", "2025-06-18"},
                          {"capabilities", json::object()},
                          {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
    if (!init.contains("result")) {
      failures[peer] = "initialize failed: " + init.dump();
      return;
    }
    mcp.notify("notifications/initialized");
    for (int i = 1; i <= kEdits; ++i) {
      std::string line = "p" + std::to_string(peer) + "-" + std::to_string(i);
      json edit = {{"name", "fs_edit"},
                   {"arguments",
                    {{"path", "f.txt"},
                     {"edits", json::array({{{"old_string", "END"},
                                             {"new_string", line + "\nEND"}}})}}}};
      json r = mcp.call(i, "tools/call", edit);
      if (r.contains("result") && !r["result"].value("isError", false)) {
        acknowledged[peer].push_back(line);
      } else if (failures[peer].empty()) {
        failures[peer] = "edit " + line + " failed: " + r.dump();
      }
    }
  };
  std::thread a(drive, 0), b(drive, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");

  std::string content = weft::testing::read_file(root + "/f.txt");
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = content.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(content.substr(start, nl - start));
  }
  std::set<std::string> present(lines.begin(), lines.end());
  size_t lost = 0;
  for (const auto& peer : acknowledged) {
    EXPECT_EQ(peer.size(), static_cast<size_t>(kEdits));
    for (const std::string& line : peer) lost += present.count(line) ? 0 : 1;
  }
  EXPECT_EQ(lost, 0u) << "acknowledged edits missing from the file";
  EXPECT_EQ(lines.size(), 2u * kEdits + 1);
  EXPECT_TRUE(std::filesystem::exists(state + "/change.lock"));
}

}  // namespace
