#!/usr/bin/env bash
# Configures and builds weft with CMake + Ninja.
#   scripts/build.sh                 release build in build/release (weft CLI, Python module, tests)
#   scripts/build.sh asan            clang, AddressSanitizer + UBSan, fuzz targets, in build/asan
#   scripts/build.sh tsan            clang, ThreadSanitizer, in build/tsan
#   scripts/build.sh <kind> TARGET.. builds only the named targets
# WEFT_BUILD_BENCH=OFF leaves the benchmarks out of a release build (the test
# run does: they are not tests); scripts/bench.sh turns them back on.
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:-release}"
shift || true

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

case "$kind" in
  release)
    args=(-DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH="${WEFT_BUILD_BENCH:-ON}") ;;
  debug)
    args=(-DCMAKE_BUILD_TYPE=Debug) ;;
  # The sanitizer builds compile at -O0: half the compile time of -O1 (they
  # are CI's longest steps on 2 cores), for test runs that stay short. The
  # CRDT engine keeps -O1 (src/crdt/CMakeLists.txt). Line tables only: the
  # sanitizers' reports keep file:line, without full debug info's cost.
  asan)
    args=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
          -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DWEFT_SANITIZE=address,undefined
          -DWEFT_BUILD_FUZZ=ON -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_PYTHON=OFF) ;;
  tsan)
    args=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
          -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DWEFT_SANITIZE=thread
          -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_PYTHON=OFF) ;;
  *)
    echo "usage: scripts/build.sh [release|debug|asan|tsan] [TARGET...]" >&2
    exit 2 ;;
esac

# The web page (web/, docs/web.md): esbuild bundles it into build/web, which
# the weft binary embeds. WEFT_BUILD_WEB=OFF (or no node/npm) builds without
# it: `weft serve` then shows a page saying how to build it.
if [ "${WEFT_BUILD_WEB:-ON}" != OFF ]; then
  if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    web/build.sh build/web/weft-web.bundle
  else
    echo "build: node/npm not found: building without the web page (scripts/install-deps.sh)" >&2
  fi
fi

dir="build/$kind"
cmake -S . -B "$dir" -G Ninja "${args[@]}" "${launcher[@]}" >/dev/null
if [ "$#" -gt 0 ]; then
  ninja -C "$dir" "$@"
else
  ninja -C "$dir"
fi
