// The kernel as live sync's document store (see
// include/weft/server/sync_kernel_backend.h).
#include "weft/server/sync_kernel_backend.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace weft::server {

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
      cv.wait(lock, [this] { return stopping || !dirty.empty(); });
      if (stopping) return;
      std::set<std::string> batch;
      batch.swap(dirty);
      busy = true;
      lock.unlock();
      for (const auto& id : batch) publish(id);
      lock.lock();
      busy = false;
      cv.notify_all();
    }
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
  return k->sync_apply(room.room_id, update, who);
}

void KernelSyncBackend::drain() {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [this] {
    return impl_->stopping || (impl_->dirty.empty() && !impl_->busy);
  });
}

}  // namespace weft::server
