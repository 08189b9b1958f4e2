# gpu tier (DESIGN §8): the CUDA kernels on a real GPU; every test skips (GTest skip, CTest "skipped")
# where no CUDA device is visible. Included from tests/CMakeLists.txt when the kernels were built.
add_executable(ccbench_gpu_tests gpu/kernels_test.cpp)
target_link_libraries(ccbench_gpu_tests PRIVATE ccbench::kernels ccbench::cuda GTest::gtest_main ccbench::warnings)
gtest_discover_tests(ccbench_gpu_tests TEST_PREFIX "gpu." PROPERTIES LABELS gpu
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# copy_bench: bad input anywhere (exit 2 before a GPU is looked for); every path on a GPU (skipped without one).
if(TARGET copy_bench)
  set(_copy_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/copy_bench_test.py
      --bin $<TARGET_FILE:copy_bench> --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json)
  add_test(NAME unit.copy_bench_bad_input COMMAND ${_copy_driver} bad-input)
  set_tests_properties(unit.copy_bench_bad_input PROPERTIES LABELS unit)
  add_test(NAME gpu.copy_bench COMMAND ${_copy_driver} gpu)
  set_tests_properties(gpu.copy_bench PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
