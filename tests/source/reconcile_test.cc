// Property: random interleavings of agent changes, disk edits, reconciles and
// restarts (store and load) against a model of which lines must survive.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "weft/source/file_block.h"

namespace weft::source {
namespace {

using Action = ReconcileResult::Action;
using doc::MemoryPermission;

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

enum class Step : int {
  kAgentInsert,
  kAgentDelete,
  kDiskInsert,
  kDiskDelete,
  kReconcile,
  kRestart,
  kCount,
};

// The file, the block, the store, and the lines that must exist.
class World {
 public:
  explicit World(MemoryPermission level) : level_(level) {
    std::vector<std::string> lines;
    for (int i = 0; i < 5; ++i) lines.push_back("L" + std::to_string(i));
    alive_ = lines;
    disk_ = join_lines(lines);
    auto b = FileBlock::create(disk_, disk_state(), who("source:disk", "initial content"));
    RC_ASSERT(b.ok());
    block_.emplace(std::move(*b));
    store();
  }

  void run(Step step, unsigned pick) {
    switch (step) {
      case Step::kAgentInsert: {
        auto lines = split_lines(block_->text());
        std::string token = "A" + std::to_string(next_++);
        lines.insert(lines.begin() + static_cast<long>(pick % (lines.size() + 1)), token);
        alive_.push_back(token);
        auto r = block_->change(join_lines(lines), who("agent:a", "fs_edit"));
        RC_ASSERT(r.ok());
        RC_ASSERT(r->changed);
        break;
      }
      case Step::kAgentDelete: {
        auto lines = split_lines(block_->text());
        if (lines.empty()) return;
        size_t i = pick % lines.size();
        forget(lines[i]);
        lines.erase(lines.begin() + static_cast<long>(i));
        RC_ASSERT(block_->change(join_lines(lines), who("agent:a", "fs_edit")).ok());
        break;
      }
      case Step::kDiskInsert: {
        auto lines = split_lines(disk_);
        std::string token = "D" + std::to_string(next_++);
        lines.insert(lines.begin() + static_cast<long>(pick % (lines.size() + 1)), token);
        alive_.push_back(token);
        write_disk(join_lines(lines));
        break;
      }
      case Step::kDiskDelete: {
        auto lines = split_lines(disk_);
        if (lines.empty()) return;
        size_t i = pick % lines.size();
        forget(lines[i]);
        lines.erase(lines.begin() + static_cast<long>(i));
        write_disk(join_lines(lines));
        break;
      }
      case Step::kReconcile:
        reconcile();
        break;
      case Step::kRestart:
        restart(pick % 2 == 0);
        break;
      case Step::kCount:
        break;
    }
    store();
  }

  void reconcile() {
    const std::string before = block_->text();
    const size_t entries = block_->history().size();
    auto r = block_->reconcile(disk_, disk_state(), level_, who("source:disk", "file changed"));
    RC_ASSERT(r.ok());
    if (r->write_file) {
      RC_ASSERT(r->action == Action::kTookMemory || r->action == Action::kMerged);
      write_disk(block_->text());
      block_->mark_synced(disk_state());
    }
    // Whatever happened, the file and the block now agree, nothing is lost
    // from history, and the block is not ahead of the file.
    RC_ASSERT(block_->text() == disk_);
    RC_ASSERT(!block_->ahead_of_disk());
    RC_ASSERT(block_->history().size() >= entries);
    switch (level_) {
      case MemoryPermission::kReadOnly:
        RC_ASSERT(r->action == Action::kNone || r->action == Action::kTookDisk);
        RC_ASSERT(!r->write_file);
        break;
      case MemoryPermission::kHuman:
        RC_ASSERT(r->action != Action::kMerged);
        if (r->action == Action::kConflict) {
          RC_ASSERT(r->proposed_text == before);
          RC_ASSERT(!r->block_diff.empty());
          RC_ASSERT(!r->disk_diff.empty());
          auto base = block_->text_at(r->base_version);
          RC_ASSERT(base.ok());
        }
        break;
      default: {
        RC_ASSERT(r->action != Action::kConflict);
        // Every line inserted by either side and deleted by neither, once.
        auto lines = split_lines(block_->text());
        std::sort(lines.begin(), lines.end());
        auto want = alive_;
        std::sort(want.begin(), want.end());
        RC_ASSERT(lines == want);
        break;
      }
    }
    // The model of a read-only or human path follows the block.
    if (level_ != MemoryPermission::kReadWrite) alive_ = split_lines(block_->text());
  }

  void restart(bool snapshot) {
    const std::string text = block_->text(), version = block_->version();
    const std::string synced = block_->synced_version();
    const size_t entries = block_->history().size();
    if (snapshot) blobs_ = {block_->export_snapshot()};
    std::vector<std::string_view> views(blobs_.begin(), blobs_.end());
    auto loaded = FileBlock::load(views, synced, block_->disk());
    RC_ASSERT(loaded.ok());
    block_.emplace(std::move(*loaded));
    RC_ASSERT(block_->text() == text);
    RC_ASSERT(block_->version() == version);
    RC_ASSERT(block_->synced_version() == synced);
    RC_ASSERT(block_->history().size() == entries);
    stored_ = block_->doc().oplog_version();
  }

  void store() {
    crdt::VersionVector now = block_->doc().oplog_version();
    if (now == stored_) return;
    blobs_.push_back(block_->export_updates(stored_));
    stored_ = now;
  }

 private:
  static Attribution who(std::string origin, std::string what) {
    return Attribution{std::move(origin), std::move(what), 1700000000};
  }
  DiskState disk_state() const {
    DiskState d;
    d.hash = content_hash(disk_);
    d.size = static_cast<int64_t>(disk_.size());
    d.mtime_ns = mtime_;
    d.inode = 1;
    return d;
  }
  void write_disk(std::string text) {
    disk_ = std::move(text);
    ++mtime_;
  }
  void forget(const std::string& token) {
    auto it = std::find(alive_.begin(), alive_.end(), token);
    if (it != alive_.end()) alive_.erase(it);
  }

  MemoryPermission level_;
  std::optional<FileBlock> block_;
  std::string disk_;
  int64_t mtime_ = 1;
  int next_ = 0;
  std::vector<std::string> alive_;
  std::vector<std::string> blobs_;
  crdt::VersionVector stored_;
};

void run_steps(MemoryPermission level) {
  auto steps = *rc::gen::container<std::vector<std::pair<int, unsigned>>>(rc::gen::pair(
      rc::gen::inRange(0, static_cast<int>(Step::kCount)), rc::gen::arbitrary<unsigned>()));
  World world(level);
  for (const auto& [kind, pick] : steps) world.run(static_cast<Step>(kind), pick);
  world.reconcile();
}

RC_GTEST_PROP(ReconcileProperty, ReadWriteMergesBothSides, ()) {
  run_steps(MemoryPermission::kReadWrite);
}

RC_GTEST_PROP(ReconcileProperty, ReadOnlyFollowsTheDisk, ()) {
  run_steps(MemoryPermission::kReadOnly);
}

RC_GTEST_PROP(ReconcileProperty, HumanSetsConflictsAside, ()) {
  run_steps(MemoryPermission::kHuman);
}

}  // namespace
}  // namespace weft::source
