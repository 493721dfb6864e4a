// The shell pre-hook: a table of commands from agent transcripts and shell
// idioms with the operations and flags predicted for each, the checker
// against weft.toml rules, weft.toml's [shell.commands] tables, the errors
// for bad input, and properties (never crashes; the answer is stable).
#include "weft/source/shell_predict.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>


namespace weft::source {
namespace {

using doc::PermissionDecision;

// The workspace the table's commands run in (root /ws, home /home/u).
const std::vector<std::string>& fake_files() {
  static const std::vector<std::string> files = {
      "README.md",  "src/main.cc",     "src/util.cc",     "src/util.h",     "src/old.txt",
      "docs/a.md",  "docs/b.md",       "notes.txt",       "a.txt",          "b.txt",
      "test.log",   "logs/x.log",      "logs/y.log",      "package.json",   "vendor/lib.js",
      "tests/test_a.py", "scripts/run.sh", "archive.tar.gz", "data.csv.gz", "build/app.o"};
  return files;
}
const std::vector<std::string>& fake_dirs() {
  static const std::vector<std::string> dirs = {"src",  "docs",    "build",   "logs",
                                                "dist", "vendor",  "tests",   "scripts",
                                                "node_modules", ".git", "."};
  return dirs;
}

ShellOptions fake_options() {
  ShellOptions o;
  o.root = "/ws";
  o.home = "/home/u";
  o.glob = [](std::string_view pattern) {
    static const std::vector<std::string> all = [] {
      std::vector<std::string> paths = fake_files();
      paths.insert(paths.end(), fake_dirs().begin(), fake_dirs().end() - 1);  // not "."
      std::sort(paths.begin(), paths.end());
      return paths;
    }();
    return shell_glob_in(pattern, all);
  };
  o.kind = [](std::string_view path) {
    for (const std::string& d : fake_dirs()) {
      if (d == path) return ShellPathKind::kDirectory;
    }
    for (const std::string& f : fake_files()) {
      if (f == path) return ShellPathKind::kFile;
    }
    return ShellPathKind::kMissing;
  };
  return o;
}

// "delete build/**; move a.txt -> b.txt; overwrite src/*.cc (pattern)".
std::string render_ops(const ShellPrediction& p) {
  std::string out;
  for (const PredictedOp& op : p.ops) {
    if (!out.empty()) out += "; ";
    out += file_op_name(op.op);
    out += ' ';
    out += op.path;
    if (op.tree) out += "/**";
    if (op.op == FileOp::kMove) out += " -> " + op.target;
    if (op.pattern) out += " (pattern)";
  }
  return out;
}

std::string render_flags(const ShellPrediction& p) {
  std::string out;
  for (const Unpredictable& u : p.flags) {
    if (!out.empty()) out += ',';
    out += shell_construct_name(u.kind);
  }
  return out;
}

struct Case {
  const char* command;
  const char* ops;
  const char* flags;
};

// Commands as agents write them, with what they do to files.
const Case kCases[] = {
    {"ls -la",
     "", ""},
    {"cat README.md",
     "", ""},
    {"echo hello > notes.txt",
     "overwrite notes.txt", ""},
    {"echo hello > new.txt",
     "create new.txt", ""},
    {"echo more >> notes.txt",
     "append notes.txt", ""},
    {"echo x >> fresh.log",
     "create fresh.log", ""},
    {"make 2> err.log",
     "create err.log", "build_tool"},
    {"npm test > /dev/null 2>&1",
     "", "build_tool"},
    {"ls &> out.txt",
     "create out.txt", ""},
    {"cat > src/new.py <<'EOF'\nprint(\"hi\")\nEOF",
     "create src/new.py", ""},
    {"cat <<EOF > docs/a.md\n# Title\nEOF",
     "overwrite docs/a.md", ""},
    {"rm a.txt",
     "delete a.txt", ""},
    {"rm -rf build",
     "delete build/**", ""},
    {"rm -rf build dist node_modules",
     "delete build/**; delete dist/**; delete node_modules/**", ""},
    {"rm *.log",
     "delete test.log", ""},
    {"rm -f logs/*.log",
     "delete logs/x.log; delete logs/y.log", ""},
    {"rm -- -weird",
     "delete -weird", ""},
    {"mv a.txt b.txt",
     "move a.txt -> b.txt", ""},
    {"mv a.txt docs/",
     "move a.txt -> docs/a.txt", ""},
    {"mv a.txt src",
     "move a.txt -> src/a.txt", ""},
    {"mv docs/*.md archive/",
     "move docs/a.md -> archive/a.md; move docs/b.md -> archive/b.md", ""},
    {"mv -t dist a.txt b.txt",
     "move a.txt -> dist/a.txt; move b.txt -> dist/b.txt", ""},
    {"mv src old_src",
     "move src/** -> old_src", ""},
    {"mv -- *.txt docs/",
     "move a.txt -> docs/a.txt; move b.txt -> docs/b.txt; move notes.txt -> docs/notes.txt", ""},
    {"cp a.txt b.txt",
     "read a.txt; overwrite b.txt", ""},
    {"cp -r src backup",
     "read src/**; create backup/**", ""},
    {"cp README.md docs/",
     "read README.md; create docs/README.md", ""},
    {"cp -a src/. /tmp/backup",
     "read src/**; overwrite /tmp/backup/**", ""},
    {"cp src/{main,util}.cc /tmp/",
     "read src/main.cc; overwrite /tmp/main.cc; read src/util.cc; overwrite /tmp/util.cc", ""},
    {"touch src/new.cc",
     "create src/new.cc", ""},
    {"touch README.md",
     "create README.md", ""},
    {"touch \"file with spaces.txt\"",
     "create file with spaces.txt", ""},
    {"echo a\\ b > 'my file'",
     "create my file", ""},
    {"mkdir -p src/components/ui",
     "create src/components/ui", ""},
    {"mkdir -p src/{api,models,utils}",
     "create src/api; create src/models; create src/utils", ""},
    {"mkdir build && cd build && cmake .. && make -j4",
     "create build", "build_tool,build_tool"},
    {"rmdir build",
     "delete build", ""},
    {"echo log | tee out.log",
     "create out.log", ""},
    {"echo log | tee -a notes.txt",
     "append notes.txt", ""},
    {"echo x | sudo tee /etc/hosts > /dev/null",
     "overwrite /etc/hosts", ""},
    {"ls | tee listing.txt | wc -l",
     "create listing.txt", ""},
    {"cat file | sed 's/a/b/' | tee result.txt > /dev/null",
     "create result.txt", ""},
    {"pytest tests/ 2>&1 | tee test_output.log",
     "create test_output.log", "build_tool"},
    {"sed -i 's/foo/bar/g' src/main.cc",
     "overwrite src/main.cc", ""},
    {"sed -i.bak -e 's/a/b/' notes.txt",
     "overwrite notes.txt", ""},
    {"sed -n '1,10p' README.md",
     "", ""},
    {"sed -i '' 's/x/y/' a.txt",
     "overwrite a.txt", ""},
    {"sed 's/a/b/' in.txt > out.txt",
     "create out.txt", ""},
    {"sed -i -E 's/v1/v2/' src/*.cc",
     "overwrite src/main.cc; overwrite src/util.cc", ""},
    {"sed -e 's/a/b/' -i src/util.h",
     "overwrite src/util.h", ""},
    {"truncate -s 0 test.log",
     "overwrite test.log", ""},
    {"ln -s ../README.md docs/README.md",
     "create docs/README.md", ""},
    {"ln -sf /usr/bin/python3 bin/python",
     "create bin/python", ""},
    {"ln -s src/main.cc link.cc",
     "create link.cc", ""},
    {"chmod +x scripts/run.sh",
     "overwrite scripts/run.sh", ""},
    {"chmod -R 755 scripts",
     "overwrite scripts/**", ""},
    {"chmod 644 a.txt b.txt",
     "overwrite a.txt; overwrite b.txt", ""},
    {"chmod -x scripts/run.sh",
     "overwrite scripts/run.sh", ""},
    {"chown -R user:group dist",
     "overwrite dist/**", ""},
    {"install -m 755 build/tool /usr/local/bin/tool",
     "read build/tool; overwrite /usr/local/bin/tool", ""},
    {"install -d out/bin",
     "create out/bin", ""},
    {"shred -u secret.txt",
     "delete secret.txt", ""},
    {"patch -p1 < fix.diff",
     "read fix.diff; overwrite ./**", ""},
    {"patch src/main.cc < fix.patch",
     "read fix.patch; overwrite src/main.cc", ""},
    {"patch --dry-run -p1 < fix.diff",
     "read fix.diff", ""},
    {"git checkout -- src/main.cc",
     "overwrite src/main.cc", ""},
    {"git checkout main",
     "overwrite ./**", ""},
    {"git checkout -b feature/x",
     "", ""},
    {"git checkout .",
     "overwrite ./**", ""},
    {"git checkout HEAD~1 -- docs/a.md",
     "overwrite docs/a.md", ""},
    {"git restore src/util.cc",
     "overwrite src/util.cc", ""},
    {"git restore --staged src/util.cc",
     "", ""},
    {"git reset --hard HEAD",
     "overwrite ./**", ""},
    {"git reset HEAD~1",
     "", ""},
    {"git status && git diff",
     "", ""},
    {"git add -A && git commit -m \"fix: update $(date)\"",
     "", ""},
    {"git commit -m \"$(cat <<'EOF'\nmessage\nEOF\n)\"",
     "", ""},
    {"git stash",
     "overwrite ./**", ""},
    {"git stash list",
     "", ""},
    {"git clean -fd",
     "delete ./**", ""},
    {"git clean -n",
     "", ""},
    {"git rm -r --cached build",
     "", ""},
    {"git rm a.txt",
     "delete a.txt", ""},
    {"git mv a.txt b.txt",
     "move a.txt -> b.txt", ""},
    {"git pull --rebase",
     "overwrite ./**", ""},
    {"git clone https://github.com/x/repo.git",
     "create repo/**", ""},
    {"git -C src checkout -- util.h",
     "overwrite src/util.h", ""},
    {"git log --oneline | head -20",
     "", ""},
    {"git switch -c new-branch",
     "", ""},
    {"git switch main",
     "overwrite ./**", ""},
    {"git apply --check fix.diff",
     "", ""},
    {"git diff > changes.patch && git apply -R changes.patch",
     "create changes.patch; overwrite ./**", ""},
    {"git fetch origin && git merge origin/main",
     "overwrite ./**", ""},
    {"git frobnicate",
     "", "unknown_command"},
    {"find . -name '*.pyc' -delete",
     "delete ./**", ""},
    {"find build -type f -name '*.o' -exec rm {} \\;",
     "delete build/**", ""},
    {"find . -name \"*.tmp\" -exec rm -f {} +",
     "delete ./**", ""},
    {"find src -name '*.cc' | xargs grep -n TODO",
     "", ""},
    {"find . -type f | xargs rm",
     "", "xargs"},
    {"find src -name '*.h' -exec sed -i 's/a/b/' {} +",
     "overwrite src/**", ""},
    {"find . -maxdepth 1 -type d",
     "", ""},
    {"find docs -name '*.md' -exec mv {} archive/ \\;",
     "move docs/** -> archive/docs", ""},
    {"find . -name '*.bak' -print0 | xargs -0 rm -f",
     "", "xargs"},
    {"find . -name '*.log' -fprint found.txt",
     "create found.txt", ""},
    {"python -c \"import os; os.remove('a.txt')\"",
     "", "inline_interpreter"},
    {"python3 script.py",
     "", "script"},
    {"python -m pytest tests/ -x",
     "", "build_tool"},
    {"pytest -q",
     "", "build_tool"},
    {"python -m venv .venv",
     "create .venv/**", ""},
    {"python -m json.tool data.json",
     "", ""},
    {"python3 --version",
     "", ""},
    {"node -e \"require('fs').writeFileSync('x','y')\"",
     "", "inline_interpreter"},
    {"node server.js",
     "", "script"},
    {"node --version",
     "", ""},
    {"perl -pi -e 's/foo/bar/' a.txt",
     "overwrite a.txt", ""},
    {"perl -e 'unlink \"a.txt\"'",
     "", "inline_interpreter"},
    {"perl -ne 'print if /x/' a.txt",
     "", ""},
    {"ruby -e 'File.write(\"x\", \"y\")'",
     "", "inline_interpreter"},
    {"awk '{print $1}' data.txt",
     "", ""},
    {"awk '{print > \"out_\" $1 \".txt\"}' data.txt",
     "", "inline_interpreter"},
    {"awk -F, '{sum+=$2} END {print sum}' data.csv > total.txt",
     "create total.txt", ""},
    {"awk 'BEGIN { system(\"rm -rf x\") }'",
     "", "inline_interpreter"},
    {"gawk -i inplace '{gsub(/a/,\"b\")}1' notes.txt",
     "overwrite notes.txt", ""},
    {"eval \"rm -rf build\"",
     "delete build/**", ""},
    {"eval \"$CMD\"",
     "", "eval"},
    {"sh -c 'rm -rf dist'",
     "delete dist/**", ""},
    {"bash -c \"$SCRIPT\"",
     "", "sh_c"},
    {"bash -lc 'cd src && rm old.txt'",
     "delete src/old.txt", ""},
    {"bash scripts/run.sh",
     "", "script"},
    {"./scripts/run.sh --fast",
     "", "script"},
    {"source .venv/bin/activate && pytest",
     "", "script,build_tool"},
    {". ./env.sh",
     "", "script"},
    {"xargs rm < files.txt",
     "read files.txt", "xargs"},
    {"rm -rf $BUILD_DIR",
     "", "variable"},
    {"rm -rf \"$TMPDIR/cache\"",
     "", "variable"},
    {"OUT=dist; rm -rf $OUT",
     "delete dist/**", ""},
    {"export OUT=build && rm -rf \"$OUT\"/*",
     "delete build/app.o", ""},
    {"rm -rf $(ls -d */)",
     "", "command_substitution"},
    {"cat $(find . -name x)",
     "", ""},
    {"echo hi > \"$LOG\"",
     "", "variable"},
    {"echo hi > out_$(date +%s).txt",
     "", "command_substitution"},
    {"echo \"$(date)\" >> notes.txt",
     "append notes.txt", ""},
    {"x=$(mktemp) && echo hi > \"$x\"",
     "", "variable"},
    {"f() { rm -f \"$1\"; }; f a.txt",
     "", "variable"},
    {"$EDITOR notes.txt",
     "", "variable"},
    {"$(which python) x.py",
     "", "command_substitution"},
    {"cd src && rm util.h",
     "delete src/util.h", ""},
    {"cd src && make && cd .. && rm a.txt",
     "delete a.txt", "build_tool"},
    {"(cd docs && rm a.md) && rm b.txt",
     "delete docs/a.md; delete b.txt", ""},
    {"cd \"$DIR\" && rm x.txt",
     "", "cd_unknown"},
    {"cd /tmp && rm -rf scratch",
     "delete /tmp/scratch/**", ""},
    {"cd ~ && ls",
     "", ""},
    {"rm ~/.cache/foo",
     "delete /home/u/.cache/foo", ""},
    {"pushd src && rm old.txt && popd && rm a.txt",
     "delete src/old.txt; delete a.txt", ""},
    {"cd src; cd -; rm a.txt",
     "delete a.txt", ""},
    {"for f in a.txt b.txt; do mv \"$f\" \"$f.bak\"; done",
     "move a.txt -> a.txt.bak; move b.txt -> b.txt.bak", ""},
    {"for f in *.txt; do cp \"$f\" backup/; done",
     "read a.txt; create backup/a.txt; read b.txt; create backup/b.txt; read notes.txt; create backup/notes.txt", ""},
    {"for i in $(seq 1 3); do echo $i > out$i.txt; done",
     "", "variable"},
    {"for d in src docs; do\n  touch $d/.keep\ndone",
     "create src/.keep; create docs/.keep", ""},
    {"while read f; do rm \"$f\"; done < list.txt",
     "read list.txt", "variable"},
    {"if [ -f a.txt ]; then rm a.txt; fi",
     "delete a.txt", ""},
    {"if test -d build; then\n  rm -rf build\nelif true; then\n  echo no\nelse\n  mkdir out\nfi",
     "delete build/**; create out", ""},
    {"[ -d build ] || mkdir build",
     "create build", ""},
    {"test -f out.txt && cat out.txt",
     "", ""},
    {"case \"$1\" in clean) rm -rf build;; *) echo usage;; esac",
     "delete build/**", ""},
    {"[[ -f a.txt && $x > 3 ]] && rm a.txt",
     "delete a.txt", ""},
    {"(( i++ )); echo $i",
     "", ""},
    {"until false; do rm -f lock; done",
     "delete lock", ""},
    {"npm install",
     "", "build_tool"},
    {"npm install --save-dev typescript",
     "", "build_tool"},
    {"npm ls",
     "", ""},
    {"npm run build 2>&1 | tail -20",
     "", "build_tool"},
    {"npx prettier --write src/",
     "overwrite src/**", ""},
    {"npx tsc --noEmit",
     "", ""},
    {"pip install -r requirements.txt",
     "", "build_tool"},
    {"pip list | grep foo",
     "", ""},
    {"cargo build --release",
     "", "build_tool"},
    {"go test ./...",
     "", "build_tool"},
    {"go version",
     "", ""},
    {"make -n",
     "", ""},
    {"make clean && make",
     "", "build_tool,build_tool"},
    {"uv run pytest",
     "", "build_tool"},
    {"timeout 60 npm test",
     "", "build_tool"},
    {"docker build -t app .",
     "", "build_tool"},
    {"tar -xzf archive.tar.gz",
     "read archive.tar.gz; overwrite ./**", ""},
    {"tar xzf archive.tar.gz -C vendor",
     "read archive.tar.gz; overwrite vendor/**", ""},
    {"tar -czf backup.tgz src docs",
     "create backup.tgz", ""},
    {"tar -tzf archive.tar.gz",
     "", ""},
    {"tar --extract --file=archive.tar.gz --directory=out",
     "read archive.tar.gz; create out/**", ""},
    {"unzip -o data.zip -d data",
     "read data.zip; create data/**", ""},
    {"unzip -l data.zip",
     "", ""},
    {"zip -r out.zip src",
     "create out.zip", ""},
    {"gzip test.log",
     "create test.log.gz; delete test.log", ""},
    {"gunzip data.csv.gz",
     "create data.csv; delete data.csv.gz", ""},
    {"gzip -k notes.txt",
     "create notes.txt.gz", ""},
    {"gzip -c notes.txt > notes.gz",
     "create notes.gz", ""},
    {"curl -o page.html https://example.com/",
     "create page.html", ""},
    {"curl -sSL https://example.com/install.sh | bash",
     "", "sh_c"},
    {"curl -O https://example.com/files/tool.tar.gz",
     "create tool.tar.gz", ""},
    {"curl -s https://api.example.com/x | jq .",
     "", ""},
    {"curl -fsSL -H 'Accept: x' https://e.com/a -o out.bin",
     "create out.bin", ""},
    {"wget https://example.com/file.zip",
     "create file.zip", ""},
    {"wget -O - https://x.y/z | tar xz",
     "overwrite ./**", ""},
    {"wget -q -O out.json https://x/y",
     "create out.json", ""},
    {"dd if=/dev/zero of=disk.img bs=1M count=10",
     "create disk.img", ""},
    {"rsync -av src/ backup/",
     "create backup/**", ""},
    {"rsync -av --delete dist/ user@host:/var/www/",
     "", ""},
    {"gcc -o app main.c",
     "create app", ""},
    {"gcc -c src/main.cc",
     "create main.o", ""},
    {"clang-format -i src/*.cc",
     "overwrite src/main.cc; overwrite src/util.cc", ""},
    {"black .",
     "overwrite ./**", ""},
    {"black --check .",
     "", ""},
    {"ruff check --fix src",
     "overwrite src/**", ""},
    {"ruff format .",
     "overwrite ./**", ""},
    {"ruff check .",
     "", ""},
    {"eslint src",
     "", ""},
    {"sort -o sorted.txt data.txt",
     "create sorted.txt", ""},
    {"sort data.txt | uniq > uniq.txt",
     "create uniq.txt", ""},
    {"diff a.txt b.txt > changes.diff || true",
     "create changes.diff", ""},
    {"exec > log.txt 2>&1",
     "create log.txt", ""},
    {"{ echo a; echo b; } > notes.txt",
     "overwrite notes.txt", ""},
    {"(echo a; echo b) >> notes.txt",
     "append notes.txt", ""},
    {"env NODE_ENV=production node build.js",
     "", "script"},
    {"FOO=bar rm a.txt",
     "delete a.txt", ""},
    {"sudo rm -rf /var/log/app",
     "delete /var/log/app/**", ""},
    {"nohup python server.py > server.log 2>&1 &",
     "create server.log", "script"},
    {"cat a.txt b.txt > combined.txt && rm a.txt b.txt",
     "create combined.txt; delete a.txt; delete b.txt", ""},
    {"mytool --flag x",
     "", "unknown_command"},
    {"history | grep rm",
     "", ""},
    {"echo 'rm -rf /'",
     "", ""},
    {"trap 'rm -f /tmp/lock' EXIT",
     "delete /tmp/lock", ""},
    {"rm -rf node_modules package-lock.json && npm install",
     "delete node_modules/**; delete package-lock.json", "build_tool"},
    {"ls nonexistent 2>/dev/null || echo none",
     "", ""},
    {"cat <<EOF | python3\nprint(1)\nEOF",
     "", "inline_interpreter"},
    {"python3 - <<'EOF'\nimport os\nEOF",
     "", "inline_interpreter"},
    {"bash <<'EOF'\nrm -rf build\nEOF",
     "", "sh_c"},
    {"echo '{\"a\":1}' > data.json && jq '.a' data.json",
     "create data.json", ""},
    {"ls -la # rm -rf /",
     "", ""},
    {"rm -rf ../other",
     "delete /other/**", ""},
    {"rm -rf /ws/build",
     "delete build/**", ""},
    {"rm -rf .git",
     "delete .git/**", ""},
    {"rm -rf \"build/\"",
     "delete build/**", ""},
    {"yes | rm -i a.txt",
     "delete a.txt", ""},
    {"ls *.md",
     "", ""},
    {"echo done; exit 0",
     "", ""},
    {"wc -l src/*.cc > counts.txt",
     "create counts.txt", ""},
    {"cat <<-EOF > a.txt\n\tindented\n\tEOF",
     "overwrite a.txt", ""},
    {"cat <<EOF > out.sh\necho $(rm -rf x)\nEOF",
     "create out.sh", "command_substitution"},
    {"tr a-z A-Z <<< \"hello\" > upper.txt",
     "create upper.txt", ""},
    {"diff <(sort a.txt) <(sort b.txt) > d.txt",
     "create d.txt", ""},
    {"echo `date` > stamp.txt",
     "create stamp.txt", ""},
    {"echo `rm a.txt` > /dev/null",
     "delete a.txt", ""},
    {"ls \"$(pwd)\"/src",
     "", ""},
    {"cp notes.txt \"$HOME/notes.txt\"",
     "read notes.txt; overwrite /home/u/notes.txt", ""},
    {"echo $PWD/x > p.txt",
     "create p.txt", ""},
    {"touch $PWD/new.txt",
     "create new.txt", ""},
    {"echo a > src/../b.txt",
     "overwrite b.txt", ""},
    {"mv \"a.txt\" 'b c.txt'",
     "move a.txt -> b c.txt", ""},
    {"cp -t docs a.txt b.txt",
     "read a.txt; create docs/a.txt; read b.txt; create docs/b.txt", ""},
    {"function build { make; }; build",
     "", "build_tool"},
    {"set -euo pipefail; rm -f a.txt",
     "delete a.txt", ""},
    {"command -v python3 >/dev/null || echo missing",
     "", ""},
    {"sudo -u www-data rm /var/www/x",
     "delete /var/www/x", ""},
    {"nice -n 10 rm a.txt",
     "delete a.txt", ""},
    {"/usr/bin/rm a.txt",
     "delete a.txt", ""},
    {"printf '%s' a b > list.txt",
     "create list.txt", ""},
};

TEST(ShellPredictTest, TableOfCommands) {
  ShellOptions options = fake_options();
  size_t n = 0;
  for (const Case& c : kCases) {
    ++n;
    Result<ShellPrediction> p = predict_shell(c.command, options);
    ASSERT_TRUE(p.ok()) << c.command << "\n" << p.status();
    EXPECT_EQ(render_ops(*p), c.ops) << "command: " << c.command;
    EXPECT_EQ(render_flags(*p), c.flags) << "command: " << c.command;
  }
  EXPECT_GE(n, 150u);
}

TEST(ShellPredictTest, SpansPointAtTheWords) {
  const std::string command = "cd src && rm -f util.h > log.txt";
  Result<ShellPrediction> p = predict_shell(command, fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->ops.size(), 2u) << render_ops(*p);
  const PredictedOp& redirect = p->ops[0];
  EXPECT_TRUE(redirect.redirect);
  EXPECT_EQ(redirect.path, "src/log.txt");
  EXPECT_EQ(command.substr(redirect.span.begin, redirect.span.end - redirect.span.begin),
            "> log.txt");
  const PredictedOp& rm = p->ops[1];
  EXPECT_EQ(rm.command, "rm");
  EXPECT_FALSE(rm.redirect);
  EXPECT_EQ(command.substr(rm.span.begin, rm.span.end - rm.span.begin), "util.h");
}

TEST(ShellPredictTest, FlagsNameTheConstruct) {
  const std::string command = "rm -rf \"$OUT/cache\" && eval \"$X\"";
  Result<ShellPrediction> p = predict_shell(command, fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->flags.size(), 2u) << render_flags(*p);
  EXPECT_EQ(p->flags[0].kind, ShellConstruct::kVariable);
  EXPECT_EQ(p->flags[0].text, "\"$OUT/cache\"");
  EXPECT_EQ(p->flags[0].command, "rm");
  EXPECT_EQ(p->flags[1].kind, ShellConstruct::kEval);
  EXPECT_FALSE(p->predictable());
}

TEST(ShellPredictTest, CwdOptionAndOutsideRoot) {
  ShellOptions o = fake_options();
  o.cwd = "src";
  Result<ShellPrediction> p = predict_shell("rm util.h ../a.txt /etc/passwd", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_ops(*p), "delete src/util.h; delete a.txt; delete /etc/passwd");
  EXPECT_TRUE(p->ops[0].inside_root);
  EXPECT_FALSE(p->ops[2].inside_root);
  o.cwd = "/ws/docs";
  p = predict_shell("rm a.md", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_ops(*p), "delete docs/a.md");
}

TEST(ShellPredictTest, WithoutCallbacksGlobsStayPatterns) {
  ShellOptions o;
  o.root = "/ws";
  Result<ShellPrediction> p = predict_shell("rm docs/*.md && echo x > a.txt && rm -r build", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_ops(*p), "delete docs/*.md (pattern); overwrite a.txt; delete build/**");
  EXPECT_EQ(render_flags(*p), "glob_unresolved");
  // ~ without a home is unknown.
  p = predict_shell("rm ~/x", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_flags(*p), "variable");
}

// ---- errors ----

std::string predict_error_of(std::string_view command) {
  Result<ShellPrediction> p = predict_shell(command, fake_options());
  EXPECT_FALSE(p.ok()) << "predicted: " << command;
  if (p.ok()) return "";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << p.status();
  return std::string(p.status().message());
}

TEST(ShellPredictErrorsTest, BadInputIsAClearError) {
  EXPECT_NE(predict_error_of(std::string(1 << 20, 'a')).find("64 KiB"), std::string::npos);
  EXPECT_NE(predict_error_of(std::string("rm a\0b", 6)).find("NUL byte at byte 4"), std::string::npos);
  std::string m = predict_error_of("echo 'abc");
  EXPECT_NE(m.find("unterminated single quote"), std::string::npos) << m;
  EXPECT_NE(m.find("line 1, column 6"), std::string::npos) << m;
  m = predict_error_of("echo \"abc\nrm x");
  EXPECT_NE(m.find("unterminated double quote"), std::string::npos) << m;
  m = predict_error_of("cat > f <<EOF\nbody\n");
  EXPECT_NE(m.find("here-document has no closing line 'EOF'"), std::string::npos) << m;
  m = predict_error_of("if true; then rm x");
  EXPECT_NE(m.find("expected 'fi' to close 'if'"), std::string::npos) << m;
  m = predict_error_of("for f in a b; rm $f; done");
  EXPECT_NE(m.find("expected 'do'"), std::string::npos) << m;
  m = predict_error_of("echo $(rm x");
  EXPECT_NE(m.find("unterminated $("), std::string::npos) << m;
  m = predict_error_of("echo `rm x");
  EXPECT_NE(m.find("unterminated backquote"), std::string::npos) << m;
  m = predict_error_of("echo ${x");
  EXPECT_NE(m.find("unterminated ${"), std::string::npos) << m;
  m = predict_error_of("rm a )");
  EXPECT_NE(m.find("unexpected ')'"), std::string::npos) << m;
  m = predict_error_of("echo >");
  EXPECT_NE(m.find("expected a word after '>'"), std::string::npos) << m;
  m = predict_error_of("ls | | wc");
  EXPECT_NE(m.find("unexpected '|'"), std::string::npos) << m;
  m = predict_error_of("case x in a) rm y;;");
  EXPECT_NE(m.find("esac"), std::string::npos) << m;
  m = predict_error_of("{ rm x; ");
  EXPECT_NE(m.find("expected '}'"), std::string::npos) << m;
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "$(";
  m = predict_error_of(deep);
  EXPECT_NE(m.find("nested more than 64 levels"), std::string::npos) << m;
  std::string parens;
  for (int i = 0; i < 2500; ++i) parens += "( ";
  m = predict_error_of(parens);
  EXPECT_NE(m.find("nested more than 64 levels"), std::string::npos) << m;
  m = predict_error_of("echo ok\necho 'x");
  EXPECT_NE(m.find("line 2, column 6"), std::string::npos) << m;
  Result<ShellPrediction> empty = predict_shell("  # nothing\n\n", fake_options());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->ops.empty());
  ShellOptions relative;
  relative.root = "ws";
  EXPECT_FALSE(predict_shell("ls", relative).ok());
}

TEST(ShellPredictErrorsTest, LimitsBoundTheOutput) {
  // Brace expansion, loops and op counts stay bounded.
  Result<ShellPrediction> p =
      predict_shell("touch {a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}", fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_LE(p->ops.size(), kMaxShellOps);
  std::string many = "touch";
  for (int i = 0; i < 6000; ++i) many += " f" + std::to_string(i);
  p = predict_shell(many, fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ops.size(), kMaxShellOps);
  EXPECT_TRUE(p->truncated);
  EXPECT_FALSE(p->predictable());
  std::string wrapped;
  for (int i = 0; i < 5000; ++i) wrapped += "nohup ";
  p = predict_shell(wrapped + "rm a.txt", fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_flags(*p), "unknown_command");
  p = predict_shell("for a in 1 2 3 4 5 6 7 8; do for b in 1 2 3 4 5 6 7 8; do for c in 1 2 3 4 "
                    "5 6 7 8; do for d in 1 2 3 4 5 6 7 8; do for e in 1 2 3 4 5 6 7 8; do "
                    "touch $a$b$c$d$e; done; done; done; done; done",
                    fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->truncated);
}

// ---- the checker ----

constexpr std::string_view kPredictRules = R"(
[permissions]
default = "read_write"
rules = [
  { glob = "vendor/**", level = "read_only" },
  { glob = "docs/**",   level = "human", escalate = ["delete", "overwrite"] },
  { glob = "logs/**",   level = "append" },
  { glob = "src/generated/**", level = "read_only" },
]
)";

WorkspaceRules predict_rules_of(std::string_view text) {
  Result<WorkspaceRules> r = WorkspaceRules::parse(text);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(r).value() : WorkspaceRules();
}

PermissionDecision decision_of(std::string_view command, const WorkspaceRules& rules,
                               ShellCheckOptions check = {}) {
  Result<ShellPrediction> p = predict_shell(command, fake_options());
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return PermissionDecision::kDenied;
  return strictest_decision(check_prediction(*p, rules, check));
}

TEST(ShellCheckTest, DecidesEachOpByTheRules) {
  WorkspaceRules rules = predict_rules_of(kPredictRules);
  constexpr auto kAllowed = PermissionDecision::kAllowed;
  constexpr auto kApproval = PermissionDecision::kNeedsApproval;
  constexpr auto kDenied = PermissionDecision::kDenied;
  EXPECT_EQ(decision_of("echo x >> notes.txt", rules), kAllowed);
  EXPECT_EQ(decision_of("rm vendor/lib.js", rules), kDenied);
  EXPECT_EQ(decision_of("sed -i s/a/b/ docs/a.md", rules), kApproval);
  EXPECT_EQ(decision_of("rm -rf docs", rules), kApproval);
  EXPECT_EQ(decision_of("echo x >> logs/x.log", rules), kAllowed);
  EXPECT_EQ(decision_of("echo x > logs/x.log", rules), kDenied);
  EXPECT_EQ(decision_of("echo x > logs/new.log", rules), kAllowed);  // a create
  EXPECT_EQ(decision_of("mv a.txt vendor/", rules), kDenied);
  EXPECT_EQ(decision_of("mv docs/a.md docs/c.md", rules), kApproval);
  EXPECT_EQ(decision_of("echo x > weft.toml", rules), kDenied);
  EXPECT_EQ(decision_of("cat vendor/lib.js > /tmp/x", rules), kAllowed);
  EXPECT_EQ(decision_of("rm /tmp/x", rules), kAllowed);
  ShellCheckOptions strict;
  strict.outside_root = kDenied;
  EXPECT_EQ(decision_of("rm /tmp/x", rules, strict), kDenied);
  // Tree ops reach the rules of what lies below.
  EXPECT_EQ(decision_of("rm -rf src", rules), kDenied);  // src/generated/** is read_only
  EXPECT_EQ(decision_of("git checkout main", rules), kDenied);
  EXPECT_EQ(decision_of("rm -rf build", rules), kAllowed);
  EXPECT_EQ(decision_of("find docs -name '*.md' -delete", rules), kApproval);
  EXPECT_EQ(decision_of("ls -la && cat README.md", rules), kAllowed);
}

TEST(ShellCheckTest, ReasonsNameTheRule) {
  WorkspaceRules rules = predict_rules_of(kPredictRules);
  Result<ShellPrediction> p = predict_shell("rm -rf src && rm vendor/lib.js", fake_options());
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<ShellOpCheck> checks = check_prediction(*p, rules);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].path, "src");
  EXPECT_EQ(checks[0].decision, PermissionDecision::kDenied);
  EXPECT_NE(checks[0].reason.find("glob \"src/generated/**\""), std::string::npos)
      << checks[0].reason;
  EXPECT_NE(checks[0].reason.find("for files under src"), std::string::npos) << checks[0].reason;
  EXPECT_EQ(checks[1].op_index, 1u);
  EXPECT_EQ(checks[1].op, FileOp::kDelete);
  EXPECT_EQ(checks[1].level, doc::MemoryPermission::kReadOnly);
  EXPECT_NE(checks[1].reason.find("rule 1"), std::string::npos) << checks[1].reason;
}

// ---- weft.toml [shell.commands] ----

constexpr std::string_view kShellToml = R"(
[shell.commands.protoc]
writes = ["-o", "--descriptor_set_out"]
value_options = ["-I", "--proto_path"]
operands = "read"

[shell.commands.gen-docs]
operands = "overwrite"
skip_operands = 1
tree = true

[shell.commands.deploy]
unpredictable = true

[shell.commands.make]
operands = "none"
)";

TEST(ShellCommandsConfigTest, ParsedAndUsed) {
  WorkspaceRules rules = predict_rules_of(kShellToml);
  ASSERT_EQ(rules.shell_commands().size(), 4u);
  ShellOptions o = fake_options();
  o.commands = &rules.shell_commands();
  Result<ShellPrediction> p =
      predict_shell("protoc -I proto --descriptor_set_out=out.pb a.proto", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_ops(*p), "create out.pb; read a.proto");
  p = predict_shell("gen-docs html docs", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_ops(*p), "overwrite docs/**");
  p = predict_shell("deploy --prod", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_flags(*p), "configured");
  // An entry replaces the built-in one: make is now predictable.
  p = predict_shell("make -j4 && ls | xargs make", o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(render_flags(*p), "");
}

TEST(ShellCommandsConfigTest, MistakesNameTheLine) {
  auto error = [](std::string_view text) {
    Result<WorkspaceRules> r = WorkspaceRules::parse(text);
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  std::string m = error("[shell.commands.x]\nwrite = [\"-o\"]\n");
  EXPECT_NE(m.find("weft.toml:2"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown key \"write\""), std::string::npos) << m;
  m = error("[shell.commands.x]\noperands = \"erase\"\n");
  EXPECT_NE(m.find("unknown operands op \"erase\""), std::string::npos) << m;
  m = error("[shell.commands.x]\nwrites = [\"o\"]\n");
  EXPECT_NE(m.find("starting with '-'"), std::string::npos) << m;
  m = error("[shell.commands.x]\ntree = \"yes\"\n");
  EXPECT_NE(m.find("must be true or false"), std::string::npos) << m;
  m = error("[shell]\naliases = 1\n");
  EXPECT_NE(m.find("unknown key \"aliases\" in [shell]"), std::string::npos) << m;
  m = error("[shell.commands.x]\nskip_operands = 99\n");
  EXPECT_NE(m.find("0..16"), std::string::npos) << m;
}

// ---- properties ----

RC_GTEST_PROP(ShellPredictProperty, AnyTextIsPredictedOrRefusedCleanly, (std::string text)) {
  Result<ShellPrediction> p = predict_shell(text, fake_options());
  if (!p.ok()) {
    RC_ASSERT(p.status().code() == StatusCode::kInvalidArgument);
    RC_ASSERT(!p.status().message().empty());
    return;
  }
  RC_ASSERT(p->ops.size() <= kMaxShellOps);
  for (const PredictedOp& op : p->ops) {
    RC_ASSERT(op.span.begin <= op.span.end);
    RC_ASSERT(op.span.end <= text.size());
    RC_ASSERT(!op.path.empty());
  }
}

RC_GTEST_PROP(ShellPredictProperty, ComposedCommandsKeepTheirOps, ()) {
  // Joining two commands with && predicts the ops of both, in order.
  static const std::vector<std::string> pieces = {
      "rm -rf build", "echo x > notes.txt", "mv a.txt b.txt", "git checkout -- src/util.h",
      "sed -i s/a/b/ src/main.cc", "touch new.txt", "ls -la", "cat README.md | grep x"};
  const std::string& a = *rc::gen::elementOf(pieces);
  const std::string& b = *rc::gen::elementOf(pieces);
  ShellOptions o = fake_options();
  Result<ShellPrediction> pa = predict_shell(a, o);
  Result<ShellPrediction> pb = predict_shell(b, o);
  Result<ShellPrediction> both = predict_shell(a + " && " + b, o);
  RC_ASSERT(pa.ok() && pb.ok() && both.ok());
  std::string ra = render_ops(*pa);
  std::string rb = render_ops(*pb);
  std::string expected = ra.empty() ? rb : rb.empty() || ra == rb ? ra : ra + "; " + rb;
  RC_ASSERT(render_ops(*both) == expected);
}

}  // namespace
}  // namespace weft::source
