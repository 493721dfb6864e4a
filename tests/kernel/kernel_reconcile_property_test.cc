// A property of the kernel's reconcile (watcher off): any interleaving of
// agents' edits (change_text), edits on disk (picked up by a read_text, by
// the next agent edit, or at the next start) and restarts of the kernel on
// the same state directory loses no line anyone added and brings back none
// anyone deleted, and leaves the disk equal to the block.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "support/test_support.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace kernel_reconcile_property_test_local {

constexpr char kFile[] = "notes.txt";

enum class OpKind : int {
  kAgentInsert,
  kAgentDelete,
  kDiskInsert,       // written, then read_text reconciles it
  kDiskInsertLater,  // written; whatever comes next reconciles it
  kDiskDelete,
  kRestart,
};
constexpr int kOpKinds = 6;

struct Op {
  OpKind kind;
  int where;  // picks the line
};
// How RapidCheck prints a counterexample.
void showValue(const Op& op, std::ostream& os) {
  static constexpr const char* kNames[] = {"agent-insert",      "agent-delete", "disk-insert",
                                           "disk-insert-later", "disk-delete",  "restart"};
  os << kNames[static_cast<int>(op.kind)] << "@" << op.where;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// `text` with `token` as a new line before line where % (lines + 1).
std::string insert_line(const std::string& text, const std::string& token, int where) {
  auto lines = split_lines(text);
  lines.insert(lines.begin() + where % static_cast<int>(lines.size() + 1), token);
  return join_lines(lines);
}

// `text` without one of its token lines (picked by `where`), and that token;
// "" when it has none.
std::pair<std::string, std::string> delete_line(const std::string& text, int where) {
  auto lines = split_lines(text);
  std::vector<size_t> tokens;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "base") tokens.push_back(i);
  }
  if (tokens.empty()) return {text, ""};
  size_t i = tokens[where % tokens.size()];
  std::string token = lines[i];
  lines.erase(lines.begin() + i);
  return {join_lines(lines), token};
}

class Workspace {
 public:
  Workspace() {
    std::filesystem::create_directories(root());
    std::ofstream(root() + "/" + kFile, std::ios::binary) << "base\nbase\n";
  }
  std::string root() const { return (dir_.path() / "root").string(); }
  std::string state() const { return (dir_.path() / "state").string(); }
  std::string disk() const { return weft::testing::read_file(root() + "/" + kFile); }
  void write_disk(const std::string& text) const {
    std::ofstream(root() + "/" + kFile, std::ios::binary | std::ios::trunc) << text;
  }

  Result<std::unique_ptr<Kernel>> open() const {
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    WEFT_ASSIGN_OR_RETURN(auto filesystem, fs::make_host_filesystem(root(), host));
    KernelOptions options;
    options.state_dir = state();
    options.watch = false;
    return Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(filesystem)), options);
  }

 private:
  weft::testing::TempDir dir_;
};

void check_interleaving(const std::vector<Op>& ops) {
  Workspace ws;
  auto opened = ws.open();
  RC_ASSERT(opened.ok());
  std::unique_ptr<Kernel> k = std::move(*opened);
  RC_ASSERT(k->read_text(kFile).ok());
  std::multiset<std::string> live;  // every token acknowledged and not deleted
  int next = 0;
  for (const Op& op : ops) {
    std::string token = "token-" + std::to_string(next++);
    switch (op.kind) {
      case OpKind::kAgentInsert:
      case OpKind::kAgentDelete: {
        std::string removed;
        bool insert = op.kind == OpKind::kAgentInsert;
        auto out = k->change_text(
            kFile, {"agent:prop", "fs_edit", std::nullopt}, source::FileOp::kOverwrite,
            [&](const std::optional<std::string>& old) -> Result<std::string> {
              if (insert) return insert_line(*old, token, op.where);
              auto [text, gone] = delete_line(*old, op.where);
              removed = gone;
              return text;
            });
        RC_ASSERT(out.ok());
        RC_ASSERT(out->applied);
        if (insert) live.insert(token);
        if (!removed.empty()) live.erase(live.find(removed));
        break;
      }
      case OpKind::kDiskInsert:
      case OpKind::kDiskInsertLater:
        ws.write_disk(insert_line(ws.disk(), token, op.where));
        live.insert(token);
        if (op.kind == OpKind::kDiskInsert) RC_ASSERT(k->read_text(kFile).ok());
        break;
      case OpKind::kDiskDelete: {
        auto [text, gone] = delete_line(ws.disk(), op.where);
        ws.write_disk(text);
        if (!gone.empty()) live.erase(live.find(gone));
        RC_ASSERT(k->read_text(kFile).ok());
        break;
      }
      case OpKind::kRestart:
        k.reset();
        opened = ws.open();
        RC_ASSERT(opened.ok());
        k = std::move(*opened);
        break;
    }
  }
  auto text = k->read_text(kFile);
  RC_ASSERT(text.ok());
  std::string disk = ws.disk();
  RC_ASSERT(*text == disk);
  std::multiset<std::string> on_disk;
  int bases = 0;
  for (const auto& line : split_lines(disk)) {
    if (line == "base") {
      ++bases;
    } else {
      on_disk.insert(line);
    }
  }
  RC_ASSERT(bases == 2);
  RC_ASSERT(on_disk == live);
  // And so after one more restart.
  k.reset();
  opened = ws.open();
  RC_ASSERT(opened.ok());
  auto again = (*opened)->read_text(kFile);
  RC_ASSERT(again.ok());
  RC_ASSERT(*again == disk);
}

// A few cases only (each opens kernels and writes files) unless RC_PARAMS
// asks for more.
TEST(KernelReconcileProperty, InterleavedAgentDiskAndRestartsLoseNothing) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (std::getenv("RC_PARAMS") == nullptr) {
    params.maxSuccess = 30;
    params.maxSize = 24;  // operations per case
  }
  rc::detail::TestMetadata metadata;
  metadata.id = "KernelReconcileProperty/InterleavedAgentDiskAndRestartsLoseNothing";
  metadata.description = "InterleavedAgentDiskAndRestartsLoseNothing";
  auto result = rc::detail::checkTestable(
      [] {
        // inRange scales with the size, which is kept small: fixed at 100
        // every kind and line is as likely.
        auto ops = *rc::gen::container<std::vector<Op>>(rc::gen::construct<Op>(
            rc::gen::cast<OpKind>(rc::gen::resize(100, rc::gen::inRange(0, kOpKinds))),
            rc::gen::resize(100, rc::gen::inRange(0, 1 << 16))));
        check_interleaving(ops);
      },
      metadata, params);
  if (!result.is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str();
  }
}

}  // namespace kernel_reconcile_property_test_local
}  // namespace weft::kernel
