# Every dependency is a Debian package (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
find_package(SQLite3 REQUIRED)
find_package(tomlplusplus 3 REQUIRED)  # weft.toml (target tomlplusplus::tomlplusplus)
find_package(ZLIB REQUIRED)  # gzip-compressed trace files; fs snapshot packs
find_package(OpenSSL REQUIRED COMPONENTS Crypto)  # SHA-1 of snapshot objects
find_package(Boost 1.81 CONFIG)  # Beast/Asio for the HTTP and WebSocket servers
if(NOT Boost_FOUND)
  find_package(Boost 1.74 REQUIRED)
endif()

if(WEFT_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  find_package(rapidcheck CONFIG REQUIRED)  # target: rapidcheck (its gtest.h is header-only)
endif()
if(WEFT_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# Where the project's shared test data lives (absent in a user's clone: those tests skip).
get_filename_component(WEFT_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" ABSOLUTE)

if(WEFT_BUILD_PYTHON)
  # Prefer Debian's python3 (pybind11 and pytest come from Debian packages).
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module REQUIRED)
  find_package(pybind11 CONFIG REQUIRED)
endif()
