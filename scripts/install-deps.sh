#!/usr/bin/env bash
# Installs everything weft needs to build, test and benchmark, from Debian packages
# (and npm for the JavaScript test harnesses). Idempotent: safe to run again.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang libclang-rt-14-dev lld
  # test and benchmark frameworks
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  # libraries
  libcli11-dev nlohmann-json3-dev libzstd-dev libre2-dev libgit2-dev libsqlite3-dev
  libboost1.81-dev libxxhash-dev zlib1g-dev libssl-dev libtomlplusplus-dev
  # Python module
  python3-dev pybind11-dev python3-pytest
  # sandbox and benchmark peers
  bubblewrap ripgrep fd-find valgrind ccache
  # JavaScript harnesses (interop tests, benchmark peers) and the web page's
  # build (esbuild from npm); chromium drives the page's browser test
  nodejs npm chromium
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# node and npm may come from outside Debian (a newer Node already on the machine): keep it.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
