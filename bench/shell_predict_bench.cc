// The shell pre-hook's speed: predict_shell() over a mix of typical agent
// commands (git, npm, pytest, make, sed -i, here-documents, cd && ..., loops,
// pipes into tee, find -exec, rm -rf, cp -r, globs, redirections), with glob
// and kind callbacks over a small in-memory tree, and the same followed by
// check_prediction() against a few rules. Prints one JSON object:
//   {"predict_per_s": N, "predict_and_check_per_s": N, "commands": K, ...}
//   weft_shell_predict_bench [--quick]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weft/source/shell_predict.h"

namespace {

using Clock = std::chrono::steady_clock;
using weft::source::ShellOptions;
using weft::source::ShellPathKind;

const std::vector<std::string> kCommands = {
    "git status",
    "git diff --stat && git log --oneline -5",
    "git add -A && git commit -m \"fix: handle empty input\"",
    "git checkout -- src/main.cc",
    "git reset --hard HEAD",
    "npm install",
    "npm run build 2>&1 | tail -20",
    "npm test > /dev/null 2>&1",
    "python -m pytest tests/ -x -q",
    "pytest -q tests/test_a.py::test_one",
    "make -j4 2>&1 | tee build.log",
    "cd build && cmake .. && make",
    "sed -i 's/old_name/new_name/g' src/main.cc src/util.h",
    "cat > src/new.py <<'EOF'\nimport os\n\ndef main():\n    print('hi')\nEOF",
    "cat <<EOF > docs/notes.md\n# Notes\n- one\n- two\nEOF",
    "cd src && rm -f util.o && cd ..",
    "for f in *.txt; do mv \"$f\" \"$f.bak\"; done",
    "echo done | tee -a log.txt",
    "find . -name '*.pyc' -delete",
    "find build -type f -name '*.o' -exec rm {} \\;",
    "rm -rf build dist node_modules",
    "cp -r src backup",
    "mv docs/*.md archive/",
    "ls -la src/ | grep '\\.cc$' | wc -l",
    "grep -rn 'TODO' src/ | head -20",
    "echo \"$(date): started\" >> notes.txt",
    "mkdir -p src/{api,models,utils} && touch src/api/__init__.py",
    "tar -xzf archive.tar.gz -C vendor",
    "curl -sSL https://example.com/data.json -o data.json",
    "python3 -c \"import json; print(json.load(open('data.json')))\"",
    "if [ -f package.json ]; then npm ci; else echo none; fi",
    "chmod +x scripts/run.sh && ./scripts/run.sh",
    "diff <(sort a.txt) <(sort b.txt) > changes.diff || true",
    "export OUT=dist && rm -rf \"$OUT\"",
    "ruff check --fix src && black src",
    "go test ./... 2>&1 | tee test.log",
    "cargo build --release",
    "xargs rm < files.txt",
    "git stash && git pull --rebase && git stash pop",
    "cat README.md",
};

const std::vector<std::string> kTree = {
    "README.md", "a.txt",  "b.txt",       "notes.txt", "src",       "src/main.cc",
    "src/util.h", "docs",  "docs/a.md",   "docs/b.md", "build",     "package.json",
    "scripts",   "scripts/run.sh", "vendor", "archive.tar.gz", "tests"};

ShellOptions options() {
  static const std::unordered_map<std::string, ShellPathKind> kinds = [] {
    std::unordered_map<std::string, ShellPathKind> m;
    for (const std::string& p : kTree) {
      m[p] = p.find('.') == std::string::npos ? ShellPathKind::kDirectory : ShellPathKind::kFile;
    }
    return m;
  }();
  ShellOptions o;
  o.root = "/ws";
  o.home = "/home/u";
  o.glob = [](std::string_view pattern) { return weft::source::shell_glob_in(pattern, kTree); };
  o.kind = [](std::string_view path) {
    auto it = kinds.find(std::string(path));
    return it == kinds.end() ? ShellPathKind::kMissing : it->second;
  };
  return o;
}

// Predictions per second over `seconds` of rounds through kCommands.
double rate(double seconds, bool check, const weft::source::WorkspaceRules& rules,
            size_t* ops_out) {
  const ShellOptions o = options();
  size_t done = 0;
  size_t ops = 0;
  auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (const std::string& c : kCommands) {
      auto p = weft::source::predict_shell(c, o);
      if (!p.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.c_str(), p.status().to_string().c_str());
        return 0;
      }
      ops += p->ops.size();
      if (check) ops += weft::source::check_prediction(*p, rules).size();
      ++done;
    }
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  *ops_out = ops;
  return static_cast<double>(done) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const double seconds = quick ? 0.3 : 2.0;
  auto rules = weft::source::WorkspaceRules::parse(
      "[permissions]\nrules = [\n{ glob = \"vendor/**\", level = \"read_only\" },\n"
      "{ glob = \"docs/**\", level = \"human\", escalate = [\"delete\"] },\n"
      "{ glob = \"logs/**\", level = \"append\" },\n]\n");
  if (!rules.ok()) {
    std::fprintf(stderr, "%s\n", rules.status().to_string().c_str());
    return 1;
  }
  size_t ops = 0;
  rate(quick ? 0.05 : 0.3, false, *rules, &ops);  // warm-up
  double predict = rate(seconds, false, *rules, &ops);
  double both = rate(seconds, true, *rules, &ops);
  nlohmann::json out = {{"predict_per_s", static_cast<int64_t>(predict)},
                        {"predict_and_check_per_s", static_cast<int64_t>(both)},
                        {"commands", kCommands.size()},
                        {"seconds", seconds}};
  std::printf("%s\n", out.dump().c_str());
  return predict > 0 ? 0 : 1;
}
