#include "cli/command_registry.h"

#include <algorithm>
#include <iostream>
#include <tuple>
#include <vector>

namespace weft::cli {
namespace {

struct Entry {
  std::string name;
  int order;
  CommandSetup setup;
};

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

int g_exit_code = kExitOk;

}  // namespace

bool register_command(std::string name, int order, CommandSetup setup) {
  registry().push_back(Entry{std::move(name), order, std::move(setup)});
  return true;
}

void setup_commands(CLI::App& app) {
  auto& entries = registry();
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.order, a.name) < std::tie(b.order, b.name);
  });
  for (auto& entry : entries) entry.setup(app);
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return kExitUsage;
    case StatusCode::kNotFound: return kExitNotFound;
    case StatusCode::kPermissionDenied: return kExitPermission;
    case StatusCode::kDataLoss: return kExitBadData;
    case StatusCode::kUnavailable: return kExitUnavailable;
    default: return kExitFailure;
  }
}

int fail(const Status& status) {
  std::cerr << "weft: " << status.to_string() << "\n";
  int code = exit_code_for(status);
  set_exit_code(code);
  return code;
}

}  // namespace weft::cli
