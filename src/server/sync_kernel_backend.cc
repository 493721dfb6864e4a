// The kernel as live sync's document store (see
// include/weft/server/sync_kernel_backend.h).
#include "weft/server/sync_kernel_backend.h"

#include "weft/crdt/doc.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace weft::server {
namespace {

// Updates that wait for changes the block lacks (an editor's update that
// depends on another editor's, still in flight on another connection): kept
// per room, bounded, and retried after each update applied to the room.
constexpr size_t kMaxParkedPerRoom = 256;
constexpr size_t kMaxParkedBytesPerRoom = 4u << 20;
constexpr size_t kMaxParkedBytesTotal = 16u << 20;
constexpr std::chrono::seconds kParkedFor{10};

struct Parked {
  std::string update;
  std::string identity;
  std::chrono::steady_clock::time_point since;
};

}  // namespace

struct KernelSyncBackend::Impl : std::enable_shared_from_this<Impl> {
  std::function<kernel::Kernel*()> kernel;
  std::weak_ptr<sync::SyncRooms> rooms;

  std::mutex mu;
  std::condition_variable cv;
  kernel::Kernel* listening = nullptr;  // the kernel our listener is on
  uint64_t listener_id = 0;             // its id there
  // Rooms joined at least once: block id -> the version last published (or
  // granted at the first join). Only these are exported on a change.
  std::map<std::string, std::string> published;
  std::set<std::string> dirty;  // changed since their last publish
  // Rooms with an editor's update being applied: their publishing waits for
  // it (see apply), so that the update is not sent twice.
  std::map<std::string, int> applying;
  std::map<std::string, std::vector<Parked>> parked;  // by block id
  size_t parked_bytes = 0;                             // of all rooms
  bool busy = false;            // the publisher is working on a batch
  bool stopping = false;
  std::thread publisher;

  kernel::Kernel* current() {
    kernel::Kernel* k = kernel ? kernel() : nullptr;
    if (!k) return nullptr;
    std::lock_guard lock(mu);
    if (listening != k) {
      listening = k;
      std::weak_ptr<Impl> self = weak_from_this();
      // Runs with the block's lock held: only marks the room.
      listener_id = k->add_change_listener(
          [self](const std::string& block_id, const std::string&, const std::string&) {
            if (auto impl = self.lock()) impl->mark(block_id);
          });
    }
    return k;
  }

  void mark(const std::string& block_id) {
    std::lock_guard lock(mu);
    if (stopping || !published.count(block_id)) return;
    dirty.insert(block_id);
    cv.notify_all();
  }

  void run() {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [this] { return stopping || ready_locked(); });
      if (stopping) return;
      std::set<std::string> batch;
      for (auto it = dirty.begin(); it != dirty.end();) {
        if (applying.count(*it)) {
          ++it;
        } else {
          batch.insert(*it);
          it = dirty.erase(it);
        }
      }
      busy = true;
      lock.unlock();
      for (const auto& id : batch) publish(id);
      lock.lock();
      busy = false;
      cv.notify_all();
    }
  }

  // A dirty room whose publishing need not wait. Caller holds mu.
  bool ready_locked() const {
    for (const auto& id : dirty) {
      if (!applying.count(id)) return true;
    }
    return false;
  }

  // An editor's update took the block from `before` to `after` and is being
  // relayed to the room's members by SyncRooms: when everything up to
  // `before` was published, so is everything up to `after` now.
  void relayed(const std::string& block_id, const std::string& before, const std::string& after) {
    auto it = published.find(block_id);
    if (it == published.end() || before.empty() || after.empty()) return;
    if (it->second != before) {
      auto a = crdt::decode_loro_version_vector(it->second);
      auto b = crdt::decode_loro_version_vector(before);
      if (!a.ok() || !b.ok() || !(*a == *b)) return;
    }
    it->second = after;
  }

  void publish(const std::string& block_id) {
    kernel::Kernel* k = kernel ? kernel() : nullptr;
    auto r = rooms.lock();
    if (!k || !r) return;
    std::string since;
    {
      std::lock_guard lock(mu);
      auto it = published.find(block_id);
      if (it == published.end()) return;
      since = it->second;
    }
    auto delta = k->sync_export_since(block_id, since);
    if (!delta.ok()) return;  // the block went away; its members stay until they leave
    if (!delta->updates.empty()) {
      r->publish(sync::RoomKey{sync::CrdtType::kLoro, block_id}, delta->updates);
    }
    std::lock_guard lock(mu);
    published[block_id] = delta->version;
  }
};

KernelSyncBackend::KernelSyncBackend(std::function<kernel::Kernel*()> kernel)
    : impl_(std::make_shared<Impl>()) {
  impl_->kernel = std::move(kernel);
  // The thread holds the state it runs on: see the destructor.
  impl_->publisher = std::thread([impl = impl_] { impl->run(); });
}

KernelSyncBackend::~KernelSyncBackend() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    impl_->cv.notify_all();
  }
  // The publisher may itself drop the last reference to the rooms, which own
  // this backend: it cannot join itself, so it is left to end on its own.
  if (impl_->publisher.get_id() == std::this_thread::get_id()) {
    impl_->publisher.detach();
  } else {
    impl_->publisher.join();
  }
  std::lock_guard lock(impl_->mu);
  if (impl_->listening) impl_->listening->remove_change_listener(impl_->listener_id);
}

void KernelSyncBackend::set_rooms(std::weak_ptr<sync::SyncRooms> rooms) {
  impl_->rooms = std::move(rooms);
}

std::string KernelSyncBackend::origin_of(std::string_view identity) {
  return "human:" + std::string(identity);
}

Result<sync::JoinGrant> KernelSyncBackend::join(const sync::RoomKey& room,
                                                std::string_view identity,
                                                std::string_view client_version) {
  kernel::Kernel* k = impl_->current();
  if (!k) {
    return unavailable("the workspace kernel runs in another weft process; live sync needs "
                       "`weft serve` to run it (stop the other weft processes on this root)");
  }
  WEFT_ASSIGN_OR_RETURN(kernel::SyncJoin joined,
                        k->sync_join(room.room_id, identity, client_version));
  {
    std::lock_guard lock(impl_->mu);
    // The first join starts the room's publishing from what it was given; a
    // change committed while it joined (not yet marked) goes out next.
    impl_->published.emplace(room.room_id, joined.version);
    impl_->dirty.insert(room.room_id);
    impl_->cv.notify_all();
  }
  sync::JoinGrant grant;
  grant.permission = joined.writable ? sync::Permission::kWrite : sync::Permission::kRead;
  if (!joined.updates.empty()) grant.updates.push_back(std::move(joined.updates));
  grant.version = std::move(joined.version);
  return grant;
}

Result<bool> KernelSyncBackend::apply(const sync::RoomKey& room, std::string_view update,
                                      std::string_view identity) {
  kernel::Kernel* k = impl_->current();
  if (!k) return unavailable("the workspace kernel runs in another weft process");
  source::Attribution who{origin_of(identity), "live sync", std::nullopt};
  {
    std::lock_guard lock(impl_->mu);
    ++impl_->applying[room.room_id];
  }
  auto applied = k->sync_apply_tracked(room.room_id, update, who);
  {
    std::lock_guard lock(impl_->mu);
    if (--impl_->applying[room.room_id] == 0) impl_->applying.erase(room.room_id);
    if (applied.ok() && applied->changed) {
      impl_->relayed(room.room_id, applied->version_before, applied->version_after);
    }
    impl_->cv.notify_all();
  }
  if (!applied.ok()) return applied.status();
  if (applied->waiting) {
    // Not relayed now: the publisher sends it once it applies.
    if (!park(room.room_id, update, identity)) {
      return invalid_argument(
          "the update depends on changes this block does not have, and too many updates "
          "already wait for theirs; rejoin to catch up");
    }
    return false;
  }
  if (applied->changed) retry_parked(*k, room.room_id);
  return applied->changed;
}

bool KernelSyncBackend::park(const std::string& block_id, std::string_view update,
                             std::string_view identity) {
  std::lock_guard lock(impl_->mu);
  auto& list = impl_->parked[block_id];
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(list, [&](const Parked& p) {
    if (now - p.since < kParkedFor) return false;
    impl_->parked_bytes -= p.update.size();
    return true;
  });
  size_t room_bytes = 0;
  for (const auto& p : list) room_bytes += p.update.size();
  if (list.size() >= kMaxParkedPerRoom || room_bytes + update.size() > kMaxParkedBytesPerRoom ||
      impl_->parked_bytes + update.size() > kMaxParkedBytesTotal) {
    if (list.empty()) impl_->parked.erase(block_id);
    return false;
  }
  list.push_back(Parked{std::string(update), std::string(identity), now});
  impl_->parked_bytes += update.size();
  return true;
}

void KernelSyncBackend::retry_parked(kernel::Kernel& k, const std::string& block_id) {
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<Parked> list;
    {
      std::lock_guard lock(impl_->mu);
      auto it = impl_->parked.find(block_id);
      if (it == impl_->parked.end()) return;
      list = std::move(it->second);
      impl_->parked.erase(it);
      for (const auto& p : list) impl_->parked_bytes -= p.update.size();
    }
    std::vector<Parked> still;
    const auto now = std::chrono::steady_clock::now();
    for (auto& p : list) {
      if (now - p.since >= kParkedFor) continue;  // its editor resends it on rejoin
      source::Attribution who{origin_of(p.identity), "live sync", std::nullopt};
      auto r = k.sync_apply_tracked(block_id, p.update, who);
      if (r.ok() && r->waiting) {
        still.push_back(std::move(p));
      } else if (r.ok() && r->changed) {
        progress = true;
      }
    }
    if (still.empty()) continue;
    std::lock_guard lock(impl_->mu);
    auto& list_now = impl_->parked[block_id];
    for (auto& p : still) {
      impl_->parked_bytes += p.update.size();
      list_now.push_back(std::move(p));
    }
  }
}

void KernelSyncBackend::drain() {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [this] {
    return impl_->stopping || (impl_->dirty.empty() && !impl_->busy);
  });
}

}  // namespace weft::server
