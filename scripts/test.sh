#!/usr/bin/env bash
# Installs the dependencies, builds weft and runs the whole test suite:
#   1. release build: every GoogleTest/RapidCheck suite (CTest), the CLI checks
#   2. AddressSanitizer + UBSan build (clang): the same suites again
#   3. ThreadSanitizer build: the concurrent suites (CTest label "concurrent")
#   4. libFuzzer smoke run of every fuzz target (fuzz/)
#   5. the Python module's pytest suite
#   6. the adversarial suite (tests/adversarial/): the release `weft` driven as a
#      hostile client on loopback, every server's RSS held under 256 MB
#   7. the Node interop suites in tests/interop/ (npm ci, node --test)
#   8. the web page's browser test (tests/web/: headless Debian chromium through
#      puppeteer-core, axe-core; screenshots in build/web-test/)
# WEFT_TEST_STAGES="release asan" runs a subset (the default is all of them).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

stages="${WEFT_TEST_STAGES:-release asan tsan fuzz python adversarial interop web}"
has_stage() { [[ " $stages " == *" $1 "* ]]; }
jobs="$(nproc)"
start=$SECONDS
step() { printf '\n=== %s (%ds elapsed)\n' "$*" "$((SECONDS - start))"; }

step "install dependencies"
scripts/install-deps.sh

if has_stage release || has_stage python || has_stage adversarial || has_stage interop ||
  has_stage web; then
  step "release build"
  WEFT_BUILD_BENCH=OFF scripts/build.sh release
fi

if has_stage release; then
  step "tests: release build"
  ctest --test-dir build/release --output-on-failure -j "$jobs" --timeout 600
fi

if has_stage asan || has_stage fuzz; then
  step "AddressSanitizer + UBSan build"
  scripts/build.sh asan
fi

if has_stage asan; then
  step "tests: AddressSanitizer + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build/asan --output-on-failure -j "$jobs" --timeout 900 -LE no-asan
fi

if has_stage tsan; then
  step "ThreadSanitizer build and concurrent tests"
  # Only the executables that hold tests labelled "concurrent" (see tests/*/CMakeLists.txt).
  tsan_targets=(weft_doc_tests weft_fs_tests weft_server_tests weft_store_concurrent_tests
                weft_kernel_tests)
  scripts/build.sh tsan "${tsan_targets[@]}"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build/tsan --output-on-failure -j "$jobs" --timeout 900 -L concurrent \
    --no-tests=ignore
fi

if has_stage fuzz; then
  step "fuzz smoke run"
  secs="${WEFT_FUZZ_SECONDS:-10}"
  # Runs one fuzz target on a fresh corpus (plus its committed seeds) and
  # prints its summary in one piece; returns the fuzzer's status.
  run_fuzzer() {
    local fuzzer="$1" name corpus rc=0 seeds=()
    name="$(basename "$fuzzer")"
    corpus="$(mktemp -d)"
    [ -d "fuzz/corpus/$name" ] && seeds=("fuzz/corpus/$name")
    ASAN_OPTIONS=detect_leaks=1 "$fuzzer" -max_total_time="$secs" -print_final_stats=0 \
      -rss_limit_mb=2048 -timeout=10 "$corpus" "${seeds[@]}" >"$corpus.log" 2>&1 || rc=$?
    local lines=2
    [ "$rc" -eq 0 ] || lines=60
    printf -- '--- %s (%ss, exit %s)\n%s\n' "$name" "$secs" "$rc" "$(tail -n "$lines" "$corpus.log")"
    rm -rf "$corpus" "$corpus.log"
    return "$rc"
  }
  # One target per core at a time: the smoke run's wall time is secs × targets / cores.
  shopt -s nullglob
  pids=()
  fuzz_failed=0
  for fuzzer in build/asan/fuzz/*_fuzz; do
    run_fuzzer "$fuzzer" &
    pids+=("$!")
    if [ "${#pids[@]}" -ge "$jobs" ]; then
      wait "${pids[0]}" || fuzz_failed=1
      pids=("${pids[@]:1}")
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid" || fuzz_failed=1; done
  if [ "$fuzz_failed" -ne 0 ]; then
    echo "a fuzz target failed: its output is above" >&2
    exit 1
  fi
fi

if has_stage python && [ -d tests/python ]; then
  step "Python module tests"
  PYTHONPATH="$root/build/release/python" /usr/bin/python3 -m pytest -q tests/python
fi

if has_stage adversarial && [ -d tests/adversarial ]; then
  step "adversarial tests (hostile client, RSS bound)"
  WEFT_BIN="$root/build/release/weft" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    tests/adversarial
fi

if has_stage interop && [ -f tests/interop/package.json ]; then
  step "interop tests (Node)"
  (cd tests/interop && npm ci --no-audit --no-fund --loglevel=error &&
    WEFT_BIN="$root/build/release/weft" WEFT_BUILD="$root/build/release" node --test)
fi

if has_stage web && [ -f tests/web/package.json ]; then
  step "web page browser test (chromium)"
  chromium="${CHROMIUM:-/usr/bin/chromium}"
  if [ ! -x "$chromium" ]; then
    echo "web: SKIPPED: no chromium at $chromium (scripts/install-deps.sh installs Debian's;" \
      "CHROMIUM=PATH names another)"
  else
    (cd tests/web && npm ci --no-audit --no-fund --loglevel=error &&
      CHROMIUM="$chromium" WEFT_BIN="$root/build/release/weft" \
      WEFT_WEB_SHOTS="$root/build/web-test" node --test)
  fi
fi

step "all test stages passed: $stages"
