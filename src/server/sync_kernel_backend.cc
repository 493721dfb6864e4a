// The kernel as live sync's document store (see
// include/weft/server/sync_kernel_backend.h).
#include "weft/server/sync_kernel_backend.h"

#include "weft/crdt/doc.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace weft::server {
namespace {

// An update that waits for changes the block lacks (an editor's update that
// depends on another editor's, still in flight on another connection), with
// what it needs and carries (crdt::inspect_loro_update).
struct Held {
  std::string update;
  std::string identity;
  crdt::VersionVector needs;
  crdt::VersionVector end;
  // The block's version when it last failed to apply although `needs` were
  // there (empty: never): it is tried again only past that version.
  crdt::VersionVector tried;
  std::chrono::steady_clock::time_point since;
};

// A room's held updates, in arrival order (the block's version they are
// checked against is Impl::versions).
struct HeldRoom {
  std::vector<Held> waiting;
  size_t bytes = 0;
};

// How many links of a chain of held updates one retry takes out at most
// (each link costs a pass over the room's held updates).
constexpr int kDueRounds = 64;

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
  HeldUpdateLimits limits;
  std::map<std::string, HeldRoom> held;  // by block id
  // Each synced block's version as the applies saw it (changes from other
  // sources may have raised it since): what held updates and apply_batch
  // check their needs on.
  std::map<std::string, crdt::VersionVector> versions;
  size_t held_bytes = 0;                 // of all rooms
  std::chrono::steady_clock::time_point next_sweep{};
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
      // With updates held, it also wakes to drop the expired ones.
      const auto ready = [this] { return stopping || ready_locked(); };
      if (held.empty()) {
        cv.wait(lock, [&] { return ready() || !held.empty(); });
      } else {
        cv.wait_until(lock, next_sweep, ready);
      }
      if (stopping) return;
      if (!held.empty() && std::chrono::steady_clock::now() >= next_sweep) sweep_locked();
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

  // Drops every expired held update. Caller holds mu.
  void sweep_locked() {
    const auto now = std::chrono::steady_clock::now();
    for (auto it = held.begin(); it != held.end();) {
      expire_locked(it->second, now);
      it = it->second.waiting.empty() ? held.erase(it) : std::next(it);
    }
    next_sweep = now + std::max<std::chrono::milliseconds>(limits.held_for / 4,
                                                           std::chrono::milliseconds(1));
  }

  // Drops `room`'s held updates older than the limit (their editors resend
  // them on rejoin). Caller holds mu.
  void expire_locked(HeldRoom& room, std::chrono::steady_clock::time_point now) {
    std::erase_if(room.waiting, [&](const Held& h) {
      if (now - h.since < limits.held_for) return false;
      drop_bytes_locked(room, h);
      return true;
    });
  }

  void drop_bytes_locked(HeldRoom& room, const Held& h) {
    room.bytes -= h.update.size();
    held_bytes -= h.update.size();
  }

  // Raises `block_id`'s known version to the Loro version `bytes` (the
  // block's history only grows). Caller holds mu.
  void saw_version_locked(const std::string& block_id, std::string_view bytes) {
    if (bytes.empty()) return;
    auto vv = crdt::decode_loro_version_vector(bytes);
    if (vv.ok()) versions[block_id].merge(*vv);
  }

  // Holds `h` in `block_id`'s room with the block's version `seen` (at its
  // failed import). False when a bound refuses it. Caller holds mu.
  bool hold_locked(const std::string& block_id, Held h, std::string_view seen) {
    saw_version_locked(block_id, seen);
    const crdt::VersionVector& version = versions[block_id];
    HeldRoom& room = held[block_id];
    const auto now = std::chrono::steady_clock::now();
    expire_locked(room, now);
    const size_t n = h.update.size();
    if (room.waiting.size() >= limits.per_room || room.bytes + n > limits.bytes_per_room ||
        held_bytes + n > limits.bytes_total) {
      if (room.waiting.empty()) held.erase(block_id);
      return false;
    }
    // Its needs already there (an estimate the import disagreed with): it is
    // tried again once the version grows.
    if (version.includes(h.needs)) h.tried = version;
    if (h.since == std::chrono::steady_clock::time_point{}) h.since = now;
    room.bytes += n;
    held_bytes += n;
    room.waiting.push_back(std::move(h));
    if (held.size() == 1 && room.waiting.size() == 1) {
      next_sweep = now + std::max<std::chrono::milliseconds>(limits.held_for / 4,
                                                             std::chrono::milliseconds(1));
      cv.notify_all();
    }
    return true;
  }

  // Takes out of `block_id`'s room the held updates that apply on its
  // version, in an order they apply in: those its version covers, then those
  // that these cover in turn (a chain of editors' updates comes out whole,
  // up to kDueRounds links per call). Drops those it already contains or
  // that expired. `extra`: the end of an update being applied with them.
  // Caller holds mu.
  std::vector<Held> take_due_locked(const std::string& block_id,
                                    const crdt::VersionVector* extra = nullptr) {
    std::vector<Held> due;
    auto it = held.find(block_id);
    if (it == held.end()) return due;
    HeldRoom& room = it->second;
    const crdt::VersionVector& version = versions[block_id];
    std::vector<Held>& waiting = room.waiting;
    const auto now = std::chrono::steady_clock::now();
    enum : uint8_t { kKeep, kDrop, kDue };
    std::vector<uint8_t> state(waiting.size(), kKeep);
    for (size_t i = 0; i < waiting.size(); ++i) {
      const Held& h = waiting[i];
      if (now - h.since >= limits.held_for || version.includes(h.end)) state[i] = kDrop;
    }
    std::vector<size_t> order;
    crdt::VersionVector v = version;  // with the updates taken so far
    if (extra) v.merge(*extra);
    for (int round = 0; round < kDueRounds; ++round) {
      const size_t before = order.size();
      for (size_t i = 0; i < waiting.size(); ++i) {
        const Held& h = waiting[i];
        if (state[i] != kKeep || !v.includes(h.needs)) continue;
        if (!h.tried.empty() && h.tried.includes(v)) continue;
        state[i] = kDue;
        order.push_back(i);
        v.merge(h.end);
      }
      if (order.size() == before) break;
    }
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (state[i] != kKeep) drop_bytes_locked(room, waiting[i]);
    }
    due.reserve(order.size());
    for (size_t i : order) due.push_back(std::move(waiting[i]));
    size_t kept = 0;
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (state[i] != kKeep) continue;
      if (kept != i) waiting[kept] = std::move(waiting[i]);
      ++kept;
    }
    waiting.resize(kept);
    if (waiting.empty()) held.erase(it);
    return due;
  }

  // Applies one held update; a refusal drops it (its editor is not told).
  void apply_held(kernel::Kernel& k, const std::string& block_id, Held& h) {
    source::Attribution who{origin_of(h.identity), "live sync", std::nullopt};
    auto r = k.sync_apply_tracked(block_id, h.update, who);
    std::lock_guard lock(mu);
    if (!r.ok()) return;
    if (r->changed) {
      saw_version_locked(block_id, r->version_after);
    } else if (r->waiting) {
      // Its needs were there, yet it waits: held on, for a later version.
      (void)hold_locked(block_id, std::move(h), r->version_before);
    }
  }

  // Retries `block_id`'s held updates that apply now, until none is left
  // (each one applied may let more apply).
  void retry_held(kernel::Kernel& k, const std::string& block_id) {
    for (;;) {
      std::vector<Held> due;
      {
        std::lock_guard lock(mu);
        due = take_due_locked(block_id);
      }
      if (due.empty()) return;
      apply_due(k, block_id, due, 0);
    }
  }

  // Applies due[from..]. Consecutive ones of one editor are imported as one
  // update: one replay of the changes concurrent with them instead of one each.
  void apply_due(kernel::Kernel& k, const std::string& block_id, std::vector<Held>& due,
                 size_t from) {
    for (size_t i = from; i < due.size();) {
      size_t j = i + 1;
      while (j < due.size() && due[j].identity == due[i].identity) ++j;
      if (j - i > 1 && apply_joined(k, block_id, due, i, j)) {
        i = j;
        continue;
      }
      for (; i < j; ++i) apply_held(k, block_id, due[i]);
    }
  }

  // An editor's update that lets held ones apply goes in with those of the
  // same editor that follow it, as one import (nullopt: it has none, or the
  // import failed and the held ones are back; apply it alone). The update is
  // then not relayed by the caller: the publisher sends it with them.
  // `info`: the update's needs, read here (outside the lock) when the room
  // holds updates and the caller has not read them, and kept for the caller.
  std::optional<Result<bool>> apply_with_held(kernel::Kernel& k, const std::string& block_id,
                                              std::string_view update,
                                              std::string_view identity,
                                              std::optional<Result<crdt::LoroUpdateInfo>>& info) {
    {
      std::lock_guard lock(mu);
      if (!held.count(block_id)) return std::nullopt;
    }
    if (!info) info = crdt::inspect_loro_update(update);
    if (!info->ok()) return std::nullopt;
    std::vector<Held> due;
    {
      std::lock_guard lock(mu);
      if (!held.count(block_id) || !versions[block_id].includes((*info)->needs)) {
        return std::nullopt;
      }
      due = take_due_locked(block_id, &(*info)->end);
    }
    size_t run = 0;
    while (run < due.size() && due[run].identity == identity) ++run;
    if (run > 0) {
      std::vector<std::string_view> parts{update};
      for (size_t i = 0; i < run; ++i) parts.push_back(due[i].update);
      auto joined = crdt::join_loro_updates(parts);
      source::Attribution who{origin_of(identity), "live sync", std::nullopt};
      auto r = joined.ok() ? k.sync_apply_tracked(block_id, *joined, who)
                           : Result<kernel::SyncApplied>(joined.status());
      if (r.ok() && !r->waiting) {
        {
          std::lock_guard lock(mu);
          if (r->changed) saw_version_locked(block_id, r->version_after);
        }
        apply_due(k, block_id, due, run);
        retry_held(k, block_id);
        return false;
      }
    }
    // Back where they were; the caller applies the update alone.
    std::lock_guard lock(mu);
    for (auto& h : due) (void)hold_locked(block_id, std::move(h), "");
    return std::nullopt;
  }

  // due[from, to) (one editor's) as one import. False when that fails: the
  // caller applies them one by one.
  bool apply_joined(kernel::Kernel& k, const std::string& block_id, std::vector<Held>& due,
                    size_t from, size_t to) {
    std::vector<std::string_view> parts;
    for (size_t i = from; i < to; ++i) parts.push_back(due[i].update);
    auto joined = crdt::join_loro_updates(parts);
    if (!joined.ok()) return false;
    source::Attribution who{origin_of(due[from].identity), "live sync", std::nullopt};
    auto r = k.sync_apply_tracked(block_id, *joined, who);
    if (!r.ok() || r->waiting) return false;
    std::lock_guard lock(mu);
    if (r->changed) saw_version_locked(block_id, r->version_after);
    return true;
  }

  // Imports `update` from `identity`, which the caller relays to the room's
  // members when it changed the block: the publisher waits meanwhile, and
  // counts it as published.
  Result<kernel::SyncApplied> apply_relayed(kernel::Kernel& k, const std::string& block_id,
                                            std::string_view update,
                                            std::string_view identity) {
    source::Attribution who{origin_of(identity), "live sync", std::nullopt};
    {
      std::lock_guard lock(mu);
      ++applying[block_id];
    }
    auto r = k.sync_apply_tracked(block_id, update, who);
    std::lock_guard lock(mu);
    if (--applying[block_id] == 0) applying.erase(block_id);
    if (r.ok() && r->changed) {
      relayed(block_id, r->version_before, r->version_after);
      saw_version_locked(block_id, r->version_after);
    }
    cv.notify_all();
    return r;
  }

  // updates[at[0]], updates[at[1]], ... (one person's, each with its end in
  // `ends`) as one import: a result per update, or nullopt when the import
  // did not take them all (nothing changed then).
  std::optional<std::vector<Result<bool>>> apply_run(
      kernel::Kernel& k, const std::string& block_id,
      const std::vector<sync::SyncBackend::Incoming>& updates, const std::vector<size_t>& at,
      const std::vector<const crdt::VersionVector*>& ends) {
    std::vector<std::string_view> parts;
    for (size_t i : at) parts.push_back(updates[i].update);
    auto joined = crdt::join_loro_updates(parts);
    if (!joined.ok()) return std::nullopt;
    auto r = apply_relayed(k, block_id, *joined, updates[at.front()].identity);
    if (!r.ok() || r->waiting) return std::nullopt;
    // An update changed the block unless the block, or one before it in the
    // run, already had all of it.
    auto seen = crdt::decode_loro_version_vector(r->version_before);
    std::vector<Result<bool>> out;
    out.reserve(ends.size());
    for (const crdt::VersionVector* end : ends) {
      if (!seen.ok()) {
        out.push_back(true);
        continue;
      }
      out.push_back(!seen->includes(*end));
      seen->merge(*end);
    }
    if (r->changed) retry_held(k, block_id);
    return out;
  }

  // KernelSyncBackend::apply on kernel `k`; `info`: the update's needs when
  // the caller has read them (else read here only when needed).
  Result<bool> apply_one(kernel::Kernel& k, const std::string& block_id, std::string_view update,
                         std::string_view identity,
                         std::optional<Result<crdt::LoroUpdateInfo>> info) {
    if (auto with_held = apply_with_held(k, block_id, update, identity, info)) {
      return *std::move(with_held);
    }
    auto applied = apply_relayed(k, block_id, update, identity);
    if (!applied.ok()) return applied.status();
    if (applied->waiting) {
      // Not relayed now: the publisher sends it once it applies.
      if (!info) info = crdt::inspect_loro_update(update);
      if (!info->ok()) {
        return invalid_argument("not a Loro update of this block: " +
                                std::string(info->status().message()));
      }
      Held h{std::string(update), std::string(identity), std::move((*info)->needs),
             std::move((*info)->end), {}, {}};
      std::lock_guard lock(mu);
      if (!hold_locked(block_id, std::move(h), applied->version_before)) {
        return invalid_argument(
            "the update depends on changes this block does not have, and too many updates "
            "already wait for theirs; rejoin to catch up");
      }
      return false;
    }
    if (applied->changed) retry_held(k, block_id);
    return applied->changed;
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
    : KernelSyncBackend(std::move(kernel), HeldUpdateLimits{}) {}

KernelSyncBackend::KernelSyncBackend(std::function<kernel::Kernel*()> kernel,
                                     HeldUpdateLimits limits)
    : impl_(std::make_shared<Impl>()) {
  impl_->kernel = std::move(kernel);
  impl_->limits = limits;
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
  return impl_->apply_one(*k, room.room_id, update, identity, std::nullopt);
}

std::vector<Result<bool>> KernelSyncBackend::apply_batch(const sync::RoomKey& room,
                                                         const std::vector<Incoming>& updates) {
  std::vector<std::optional<Result<bool>>> results(updates.size());
  // Each update's needs, read once (the updates applied alone reuse them).
  std::vector<std::optional<Result<crdt::LoroUpdateInfo>>> infos(updates.size());
  kernel::Kernel* k = impl_->current();
  if (k && updates.size() > 1) {
    // The updates that the block's version (as the last apply saw it) and
    // the batch's other such updates cover go in together, one import per
    // person; the others (their dependencies are not here yet) one by one,
    // as apply takes them.
    for (size_t i = 0; i < updates.size(); ++i) {
      infos[i] = crdt::inspect_loro_update(updates[i].update);
    }
    crdt::VersionVector v;
    {
      std::lock_guard lock(impl_->mu);
      if (auto it = impl_->versions.find(room.room_id); it != impl_->versions.end()) v = it->second;
    }
    std::vector<uint8_t> ready(updates.size(), 0);
    for (int round = 0; round < kDueRounds; ++round) {
      bool progress = false;
      for (size_t i = 0; i < updates.size(); ++i) {
        if (ready[i] || !infos[i]->ok() || !v.includes((*infos[i])->needs)) continue;
        ready[i] = 1;
        v.merge((*infos[i])->end);
        progress = true;
      }
      if (!progress) break;
    }
    std::vector<bool> grouped(updates.size(), false);
    for (size_t i = 0; i < updates.size(); ++i) {
      if (!ready[i] || grouped[i]) continue;
      std::vector<size_t> at;
      std::vector<const crdt::VersionVector*> ends;
      for (size_t j = i; j < updates.size(); ++j) {
        if (!ready[j] || grouped[j] || updates[j].identity != updates[i].identity) continue;
        grouped[j] = true;
        at.push_back(j);
        ends.push_back(&(*infos[j])->end);
      }
      if (at.size() < 2) continue;
      if (auto run = impl_->apply_run(*k, room.room_id, updates, at, ends)) {
        for (size_t n = 0; n < at.size(); ++n) results[at[n]] = std::move((*run)[n]);
      }
    }
  }
  std::vector<Result<bool>> out;
  out.reserve(updates.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    if (!results[i]) {
      results[i] = k ? impl_->apply_one(*k, room.room_id, updates[i].update, updates[i].identity,
                                        std::move(infos[i]))
                     : apply(room, updates[i].update, updates[i].identity);
    }
    out.push_back(std::move(*results[i]));
  }
  return out;
}

HeldUpdates KernelSyncBackend::held() {
  std::lock_guard lock(impl_->mu);
  HeldUpdates out;
  for (const auto& [id, room] : impl_->held) out.updates += room.waiting.size();
  out.bytes = impl_->held_bytes;
  return out;
}

void KernelSyncBackend::drain() {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [this] {
    return impl_->stopping || (impl_->dirty.empty() && !impl_->busy);
  });
}

}  // namespace weft::server
