// The kernel behind live sync's %LOR rooms: a room id is a block id (file,
// conversation or memory block) and its document is the block's CRDT doc.
//
//   join   -> Kernel::sync_join: the person's permission (rules, the block's
//             permission), the updates the client lacks, the block's version.
//   apply  -> Kernel::sync_apply_tracked: a change by human:<identity>
//             ("live sync"), stored and written to the file like any change.
//             SyncRooms relays the client's own bytes to the other members;
//             the room's publishing waits for the apply and then skips what
//             the update covered, so that nobody gets it twice. An update
//             that depends on changes the block lacks (another editor's,
//             still in flight on another connection) is held in the room with
//             what it needs (crdt::inspect_loro_update), bounded in count,
//             bytes and time (HeldUpdateLimits); once an apply brings the
//             block's version to its needs it is retried, and published if it
//             applies. Held updates the block's version does not cover are
//             not tried; one whose changes the block already has is dropped.
//   every change from any source (agents, the disk, rollbacks, approvals,
//   other editors) fires the kernel's change listener, which marks the room;
//   a publisher thread then exports what the room's members lack since the
//   version last published for it and calls SyncRooms::publish().
//
// The kernel is looked up on each call: a `weft serve` whose kernel runs in
// another weft process refuses joins (kUnavailable) until it takes over.
//
// Thread safety: join and apply may be called from any thread (SyncRooms
// serialises one room's calls). The change listener only queues; publishing
// runs on the backend's own thread, outside every kernel and room lock.
#ifndef WEFT_SERVER_SYNC_KERNEL_BACKEND_H_
#define WEFT_SERVER_SYNC_KERNEL_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "weft/kernel/kernel.h"
#include "weft/server/sync_rooms.h"

namespace weft::server {

// Bounds on the updates held for their dependencies. Past a bound the update
// is refused (kInvalidArgument: the client gets UpdateError invalid_update and
// should rejoin); a held update older than `held_for` is dropped.
struct HeldUpdateLimits {
  size_t per_room = 4096;              // updates
  size_t bytes_per_room = 16u << 20;   // their bytes
  size_t bytes_total = 64u << 20;      // of every room
  std::chrono::milliseconds held_for{10'000};
};

// What is held now (KernelSyncBackend::held).
struct HeldUpdates {
  size_t updates = 0;
  size_t bytes = 0;
};

class KernelSyncBackend : public sync::SyncBackend {
 public:
  // `kernel` returns this process's kernel, or null when another process runs it.
  explicit KernelSyncBackend(std::function<kernel::Kernel*()> kernel);
  KernelSyncBackend(std::function<kernel::Kernel*()> kernel, HeldUpdateLimits limits);
  ~KernelSyncBackend() override;  // stops the publisher
  KernelSyncBackend(const KernelSyncBackend&) = delete;
  KernelSyncBackend& operator=(const KernelSyncBackend&) = delete;

  // Where changes are published (held weakly). Call once, before serving.
  void set_rooms(std::weak_ptr<sync::SyncRooms> rooms);

  Result<sync::JoinGrant> join(const sync::RoomKey& room, std::string_view identity,
                               std::string_view client_version) override;
  Result<bool> apply(const sync::RoomKey& room, std::string_view update,
                     std::string_view identity) override;
  // Consecutive updates of one person go in as one import (one replay of
  // the changes they are concurrent with); when that import cannot take them
  // all (one is malformed, refused, or waits for changes the block lacks)
  // they are applied one by one, as apply does.
  std::vector<Result<bool>> apply_batch(const sync::RoomKey& room,
                                        const std::vector<Incoming>& updates) override;

  // Blocks until every change marked so far is published (tests).
  void drain();

  // The updates held for their dependencies, over every room (the publisher
  // drops expired ones within a quarter of HeldUpdateLimits::held_for).
  HeldUpdates held();

  // The history origin of a sync identity: "human:<identity>".
  static std::string origin_of(std::string_view identity);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace weft::server

#endif  // WEFT_SERVER_SYNC_KERNEL_BACKEND_H_
