# Small helpers so that each layer's CMakeLists stays a few lines long.

# weft_unity(TARGET BATCH): compile TARGET's sources in unity batches of BATCH
# files, which parse the headers they share (Boost.Asio, nlohmann/json,
# GoogleTest) once per batch: a clean build takes far less time. So two
# sources of one target must not define the same name in their anonymous
# namespaces. GCC's -Wsubobject-linkage is off there: in a batch every source
# counts as an included file, and the warning would flag each private Impl
# that holds a type of its own file's anonymous namespace.
# Off with -DWEFT_UNITY_BUILD=OFF (file by file, as an editor's build likes).
function(weft_unity target batch)
  if(NOT WEFT_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()

# weft_layer(NAME [NO_UNITY] DEPS <layers or imported targets>...)
# Builds library weft_NAME from src/NAME/*.cc (files are globbed, so adding a
# source file needs no CMake edit). Public headers: include/weft/NAME/.
function(weft_layer name)
  cmake_parse_arguments(ARG "NO_UNITY" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(NOT sources)  # a layer whose headers come before its sources
    add_library(weft_${name} INTERFACE)
    target_include_directories(weft_${name} INTERFACE ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(weft_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(weft_${name} STATIC ${sources})
  target_include_directories(weft_${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(weft_${name} PUBLIC ${ARG_DEPS})
  if(NOT ARG_NO_UNITY)
    weft_unity(weft_${name} 6)
  endif()
endfunction()

# weft_test_target(TARGET [NO_UNITY]): how every test executable is compiled.
# Its sources are compiled in unity batches (weft_unity): GoogleTest's and
# RapidCheck's templates cost most of a test file's compile time. Helpers two
# test files share go to tests/support/, or a file keeps its own in a
# namespace of its own, as tests/kernel/ does.
# In the release build the code under test keeps its optimisation and the
# tests' own code is compiled at -O1 (at -O0 the engine's inline functions
# that a test instantiates would run unoptimised: the CRDT suites took 6x as
# long).
function(weft_test_target target)
  cmake_parse_arguments(ARG "NO_UNITY" "" "" ${ARGN})
  if(NOT ARG_NO_UNITY)
    weft_unity(${target} 8)
  endif()
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${target} PRIVATE -O1)
  endif()
endfunction()

# weft_layer_tests(NAME DEPS ... [LABELS ...] [NO_UNITY])
# One test executable per layer (weft_NAME_tests) from tests/NAME/*_test.cc,
# registered with CTest test by test. Tests run from the build directory and
# find ../shared through the WEFT_SHARED_DIR environment variable (set below).
function(weft_layer_tests name)
  cmake_parse_arguments(ARG "NO_UNITY" "" "DEPS;LABELS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(NOT sources)
    return()
  endif()
  add_executable(weft_${name}_tests ${sources})
  target_include_directories(weft_${name}_tests PRIVATE ${PROJECT_SOURCE_DIR}/src
                             ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(weft_${name}_tests PRIVATE ${ARG_DEPS} weft_test_support
                        GTest::gtest GTest::gmock GTest::gtest_main)
  if(ARG_NO_UNITY)
    weft_test_target(weft_${name}_tests NO_UNITY)
  else()
    weft_test_target(weft_${name}_tests)
  endif()
  gtest_discover_tests(weft_${name}_tests
    PROPERTIES ENVIRONMENT "WEFT_SHARED_DIR=${WEFT_SHARED_DIR}"
    DISCOVERY_TIMEOUT 60)
  # Labels go on the directory: a list in gtest_discover_tests' PROPERTIES is
  # split into separate arguments, so a second label was silently dropped.
  set_property(DIRECTORY APPEND PROPERTY LABELS ${name} ${ARG_LABELS})
endfunction()
