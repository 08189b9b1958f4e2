# topo/discovery tests (unit tier): discovery against a fake sysfs tree and an hwloc XML, the
# connection matrix and warnings on fixtures from public topologies (tests/data/topo/README.md),
# the JSON round trip, and the ccbench-topo tool on this machine.
if(NOT TARGET ccbench::topo_discovery)
  return()
endif()
# A stand-in libnvidia-ml (two H100s on an NVSwitch) that query_nvml() loads by path.
add_library(ccbench_fake_nvml MODULE unit/topo/fake_nvml.cpp)
target_link_libraries(ccbench_fake_nvml PRIVATE ccbench::warnings)
# Kept loaded after dlclose, as the real libnvidia-ml keeps its state in the driver: its NVLink error counters
# (static) must grow from one reading to the next.
target_link_options(ccbench_fake_nvml PRIVATE -Wl,-z,nodelete)
# The real libnvidia-ml is C: its functions carry no C++ type for clang's -fsanitize=function to check
# against the ABI mirror in nvml.cpp. Compile the stand-in the same way, or a sanitizer build sees a
# mismatch (NVML's nvmlDevice_t against the mirror's own opaque type) that no real NVML can produce.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(ccbench_fake_nvml PRIVATE -fno-sanitize=function)
endif()

add_executable(ccbench_topo_discovery_tests
  unit/topo/cli_test.cpp
  unit/topo/discover_test.cpp
  unit/topo/fabric_test.cpp
  unit/topo/matrix_test.cpp
  unit/topo/report_test.cpp
  unit/topo/topology_json_test.cpp)
target_link_libraries(ccbench_topo_discovery_tests PRIVATE ccbench::topo_discovery GTest::gtest_main
                      ccbench::warnings)
target_compile_definitions(ccbench_topo_discovery_tests PRIVATE
  CCBENCH_TOPO_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data/topo"
  CCBENCH_FABRIC_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data/fabric"
  CCBENCH_TOPO_BIN="$<TARGET_FILE:ccbench-topo>"
  CCBENCH_FAKE_NVML="$<TARGET_FILE:ccbench_fake_nvml>")
add_dependencies(ccbench_topo_discovery_tests ccbench-topo ccbench_fake_nvml)
gtest_discover_tests(ccbench_topo_discovery_tests TEST_PREFIX "unit.topo." PROPERTIES LABELS unit
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# Expected peak per split on the same fixtures (discovery's JSON reader, the spec
# database, and the model's plan_groups together).
add_executable(ccbench_peak_on_fixtures_tests unit/peak_on_fixtures_test.cpp)
target_link_libraries(ccbench_peak_on_fixtures_tests PRIVATE ccbench::topo_discovery ccbench::specs ccbench::model
                      GTest::gtest_main ccbench::warnings)
target_compile_definitions(ccbench_peak_on_fixtures_tests PRIVATE
                           CCBENCH_TOPO_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data/topo")
gtest_discover_tests(ccbench_peak_on_fixtures_tests TEST_PREFIX "unit." PROPERTIES LABELS unit)
