// Limits of a Watcher that tests lower to reach rare paths (the inotify
// watch limit, the bound on pending changes) without root or a huge tree.
// Private to source/.
#ifndef WEFT_SRC_SOURCE_WATCHER_INTERNAL_H_
#define WEFT_SRC_SOURCE_WATCHER_INTERNAL_H_

#include <cstddef>
#include <memory>
#include <string>

#include "weft/base/status.h"
#include "weft/source/watcher.h"

namespace weft::source::internal {

struct WatcherLimits {
  // Pending paths (and renames) held before they are dropped for a kRescan.
  size_t max_pending = 100000;
  // When > 0, adding a watch past this many fails as inotify does at its
  // watch limit (ENOSPC).
  size_t max_watches = 0;
};

Result<std::unique_ptr<Watcher>> start_watcher(const std::string& root, WatcherOptions options,
                                              Watcher::Callback callback, WatcherLimits limits);

}  // namespace weft::source::internal

#endif  // WEFT_SRC_SOURCE_WATCHER_INTERNAL_H_
