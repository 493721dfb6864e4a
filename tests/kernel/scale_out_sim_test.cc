// The scale-out design of docs/design/scale-out.md, simulated: three kernels,
// each with its own root and state directory, share one file block through an
// in-process bus that delivers at least once, in any order, duplicates
// messages, loses acknowledgements (so a message is delivered again) and
// partitions a server away for a while. Each server publishes what its
// kernel committed (the change listener marks the block; a publisher exports
// the Loro updates since what it last published); a consumer imports with
// Kernel::sync_apply and acks, and leaves a message whose dependencies have
// not arrived for redelivery. Catch-up asks a peer for the updates since its
// own version. After random edits on all three and a healed partition, every
// replica must have the same text and the same version.
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include "support/test_support.h"
#include "weft/crdt/doc.h"
#include "weft/fs/filesystem.h"
#include "weft/kernel/kernel.h"

namespace weft::kernel {
namespace scale_out_sim_test_local {

constexpr int kServers = 3;
const std::string kBlock = "file:shared.md";

struct Message {
  int from = 0;
  int to = 0;
  std::string bytes;  // Loro FastUpdates
};

class Server {
 public:
  Server(const std::filesystem::path& dir, int index) : index_(index) {
    root_ = dir / ("root" + std::to_string(index));
    state_ = dir / ("state" + std::to_string(index));
    std::filesystem::create_directories(root_);
    // Every server has the (empty) file; server 0 writes its first text.
    std::ofstream(root_ / "shared.md", std::ios::binary | std::ios::trunc);
  }

  void open() {
    fs::HostOptions host;
    host.durability = fs::WriteDurability::kAtomicRename;
    auto filesystem = fs::make_host_filesystem(root_.string(), host);
    ASSERT_TRUE(filesystem.ok()) << filesystem.status();
    KernelOptions options;
    options.state_dir = state_.string();
    options.watch = false;
    auto k = Kernel::open(std::shared_ptr<fs::Filesystem>(std::move(*filesystem)), options);
    ASSERT_TRUE(k.ok()) << k.status();
    kernel_ = std::move(*k);
    kernel_->set_change_listener(
        [this](const std::string& block_id, const std::string&, const std::string&) {
          std::lock_guard lock(mu_);
          dirty_.insert(block_id);
        });
  }

  Kernel& kernel() { return *kernel_; }
  int index() const { return index_; }

  // A random local edit: a line inserted, or one removed.
  void edit(std::mt19937& rng) {
    const std::string word = "s" + std::to_string(index_) + "-" + std::to_string(rng() % 1000);
    const bool remove = rng() % 4 == 0;
    const uint32_t pick = rng();
    auto out = kernel_->change_text(
        "shared.md", {"agent:sim" + std::to_string(index_), "edit", std::nullopt},
        source::FileOp::kOverwrite,
        [&](const std::optional<std::string>& old) -> Result<std::string> {
          std::vector<std::string> lines;
          std::string text = old.value_or("");
          for (size_t start = 0; start < text.size();) {
            size_t end = text.find('\n', start);
            end = end == std::string::npos ? text.size() : end + 1;
            lines.push_back(text.substr(start, end - start));
            start = end;
          }
          if (remove && !lines.empty()) {
            lines.erase(lines.begin() + static_cast<long>(pick % lines.size()));
          } else {
            lines.insert(lines.begin() + static_cast<long>(pick % (lines.size() + 1)), word + "\n");
          }
          std::string result;
          for (const auto& l : lines) result += l;
          return result;
        });
    ASSERT_TRUE(out.ok()) << out.status();
  }

  // The outbox: what the kernel committed since the last publication.
  std::vector<std::string> publish() {
    std::set<std::string> dirty;
    {
      std::lock_guard lock(mu_);
      dirty.swap(dirty_);
    }
    std::vector<std::string> out;
    for (const auto& block : dirty) {
      auto delta = kernel_->sync_export_since(block, published_[block]);
      EXPECT_TRUE(delta.ok()) << delta.status();
      if (!delta.ok()) continue;
      if (!delta->updates.empty()) out.push_back(delta->updates);
      published_[block] = delta->version;
    }
    return out;
  }

  // A delivery: true when acked (imported, or already known); false when it
  // waits for dependencies that have not arrived.
  bool deliver(const std::string& bytes) {
    auto applied = kernel_->sync_apply(kBlock, bytes, {"human:sim-bus", "sync", std::nullopt});
    if (applied.ok()) return true;
    EXPECT_EQ(applied.status().code(), StatusCode::kInvalidArgument) << applied.status();
    return false;
  }

  // "" (nothing) while the empty file has no block yet.
  std::string version_bytes() {
    auto all = kernel_->sync_export_since(kBlock, "");
    if (!all.ok() && all.status().code() == StatusCode::kNotFound) return "";
    EXPECT_TRUE(all.ok()) << all.status();
    return all.ok() ? all->version : "";
  }

  std::string text() {
    auto t = kernel_->read_text("shared.md");
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : "";
  }

  std::string disk_text() { return weft::testing::read_file(root_ / "shared.md"); }

 private:
  int index_;
  std::filesystem::path root_, state_;
  std::unique_ptr<Kernel> kernel_;
  std::mutex mu_;
  std::set<std::string> dirty_;
  std::map<std::string, std::string> published_;  // block -> Loro version last published
};

class Bus {
 public:
  explicit Bus(std::mt19937& rng) : rng_(rng) {}

  void send(int from, const std::string& bytes) {
    for (int to = 0; to < kServers; ++to) {
      if (to == from) continue;
      queue_.push_back({from, to, bytes});
      if (rng_() % 5 == 0) queue_.push_back({from, to, bytes});  // duplicated
    }
  }

  bool partitioned(const Message& m) const {
    return isolated_ >= 0 && (m.from == isolated_ || m.to == isolated_);
  }
  void isolate(int server) { isolated_ = server; }
  void heal() { isolated_ = -1; }
  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }

  // Delivers one random message that can cross; returns false when none can.
  bool deliver_one(std::vector<std::unique_ptr<Server>>& servers) {
    std::vector<size_t> ready;
    for (size_t i = 0; i < queue_.size(); ++i) {
      if (!partitioned(queue_[i])) ready.push_back(i);
    }
    if (ready.empty()) return false;
    const size_t pick = ready[rng_() % ready.size()];
    Message m = queue_[pick];
    const bool acked = servers[m.to]->deliver(m.bytes);
    const bool ack_lost = rng_() % 10 == 0;  // imported, but the ack never reached the stream
    if (acked && !ack_lost) queue_.erase(queue_.begin() + static_cast<long>(pick));
    return true;
  }

 private:
  std::mt19937& rng_;
  std::deque<Message> queue_;
  int isolated_ = -1;
};

// Catch-up: `to` asks `from` for what it lacks since its own version.
void catch_up(Server& to, Server& from) {
  auto delta = from.kernel().sync_export_since(kBlock, to.version_bytes());
  ASSERT_TRUE(delta.ok()) << delta.status();
  if (!delta->updates.empty()) {
    auto applied = to.kernel().sync_apply(kBlock, delta->updates, {"human:sim-catchup", "sync", std::nullopt});
    ASSERT_TRUE(applied.ok()) << applied.status();
  }
}

void run_simulation(uint32_t seed, int steps) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  weft::testing::TempDir dir;
  std::mt19937 rng(seed);
  std::vector<std::unique_ptr<Server>> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.push_back(std::make_unique<Server>(dir.path(), i));
    servers.back()->open();
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Server 0 starts the file; the others get it through the bus.
  servers[0]->edit(rng);
  Bus bus(rng);
  for (int step = 0; step < steps; ++step) {
    const uint32_t action = rng() % 100;
    Server& s = *servers[rng() % kServers];
    if (action < 30) {
      // Another server edits only once it has the file (its block starts from
      // server 0's history, never a history of its own).
      if (s.index() == 0 || !s.text().empty()) s.edit(rng);
    } else if (action < 50) {
      for (const auto& bytes : s.publish()) bus.send(s.index(), bytes);
    } else if (action < 93) {
      bus.deliver_one(servers);
    } else if (action < 96) {
      bus.isolate(static_cast<int>(rng() % kServers));
    } else if (action < 98) {
      bus.heal();
    } else {
      Server& peer = *servers[rng() % kServers];
      if (&peer != &s) catch_up(s, peer);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The partition heals; outboxes drain; the bus delivers everything.
  bus.heal();
  for (int round = 0; round < 10000 && !bus.empty(); ++round) {
    for (auto& s : servers) {
      for (const auto& bytes : s->publish()) bus.send(s->index(), bytes);
    }
    for (int i = 0; i < 50 && bus.deliver_one(servers); ++i) {
    }
  }
  for (auto& s : servers) {
    for (const auto& bytes : s->publish()) bus.send(s->index(), bytes);
  }
  while (bus.deliver_one(servers)) {
  }
  ASSERT_TRUE(bus.empty()) << bus.size() << " messages never imported";
  const std::string text = servers[0]->text();
  EXPECT_FALSE(text.empty());
  for (auto& s : servers) {
    EXPECT_EQ(s->text(), text) << "server " << s->index();
    EXPECT_EQ(s->disk_text(), text) << "server " << s->index() << "'s file";
    auto a = crdt::decode_loro_version_vector(s->version_bytes());
    auto b = crdt::decode_loro_version_vector(servers[0]->version_bytes());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(*a == *b) << "server " << s->index() << "'s version differs";
  }
}

TEST(ScaleOutSimulation, ThreeKernelsConvergeThroughAnUnreliableBus) {
  const int steps = testing::kSanitizerBuild ? 150 : 600;
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    run_simulation(seed, steps);
    if (HasFatalFailure()) return;
  }
}

TEST(ScaleOutSimulation, CatchUpAloneBringsAServerThatMissedEverything) {
  weft::testing::TempDir dir;
  std::mt19937 rng(9);
  Server a(dir.path(), 0), b(dir.path(), 1);
  a.open();
  b.open();
  for (int i = 0; i < 40; ++i) a.edit(rng);
  catch_up(b, a);
  EXPECT_EQ(b.text(), a.text());
  EXPECT_EQ(b.disk_text(), a.text());
  // Importing the same catch-up again changes nothing.
  auto again = a.kernel().sync_export_since(kBlock, "");
  ASSERT_TRUE(again.ok());
  auto applied = b.kernel().sync_apply(kBlock, again->updates, {"human:sim", "sync", std::nullopt});
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_FALSE(*applied);
}

}  // namespace scale_out_sim_test_local
}  // namespace weft::kernel
