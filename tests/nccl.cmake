# The NCCL backend's unit tests (unit tier, no GPU): its communicator and its -R buffers against a recording
# stand-in libnccl (unit/nccl/fake_nccl.hpp says what it models), loaded by path as the real one is.
if(NOT TARGET ccbench::nccl)
  return()
endif()
add_library(ccbench_fake_nccl MODULE unit/nccl/fake_nccl.cpp)
target_link_libraries(ccbench_fake_nccl PRIVATE NCCL::headers CUDA::toolkit ccbench::warnings)
set_target_properties(ccbench_fake_nccl PROPERTIES CXX_VISIBILITY_PRESET default)
# Loaded once per process by the backend, as the real one: kept after a test's dlclose, its log with it.
target_link_options(ccbench_fake_nccl PRIVATE -Wl,-z,nodelete)
# The real libnccl is C: see topo_discovery.cmake on clang's -fsanitize=function.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(ccbench_fake_nccl PRIVATE -fno-sanitize=function)
endif()

add_executable(ccbench_nccl_unit_tests unit/nccl/communicator_test.cpp unit/nccl/nccl_memory_test.cpp)
target_include_directories(ccbench_nccl_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/bench/backends/nccl/src)
target_link_libraries(ccbench_nccl_unit_tests PRIVATE ccbench::nccl ccbench::cuda NCCL::headers ${CMAKE_DL_LIBS}
                      GTest::gtest_main ccbench::warnings)
target_compile_definitions(ccbench_nccl_unit_tests PRIVATE CCBENCH_FAKE_NCCL="$<TARGET_FILE:ccbench_fake_nccl>")
add_dependencies(ccbench_nccl_unit_tests ccbench_fake_nccl)
gtest_discover_tests(ccbench_nccl_unit_tests TEST_PREFIX "unit.nccl." PROPERTIES LABELS unit
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
