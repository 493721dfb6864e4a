#include "backends.h"

#include "fs/host_io.h"

namespace weft::fs::testing {

HostFallbackBackend::HostFallbackBackend() { internal::RootDir::force_fallback_for_testing(true); }
HostFallbackBackend::~HostFallbackBackend() {
  internal::RootDir::force_fallback_for_testing(false);
}

}  // namespace weft::fs::testing
