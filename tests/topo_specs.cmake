# topo/specs tests (unit tier): the spec database and the expected-peak model.
# Included from tests/CMakeLists.txt, which provides GTest and include(GoogleTest).
add_executable(ccbench_topo_specs_tests unit/specs/specs_test.cpp unit/specs/peak_test.cpp)
target_link_libraries(ccbench_topo_specs_tests
  PRIVATE ccbench::specs nlohmann_json::nlohmann_json fmt::fmt GTest::gtest_main ccbench::warnings)
gtest_discover_tests(ccbench_topo_specs_tests TEST_PREFIX "unit." PROPERTIES LABELS unit
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
