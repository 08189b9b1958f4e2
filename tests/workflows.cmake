# Workflow tests (mpi tier): scripts/accept-node.sh and scripts/regression.sh end to end, through
# mpirun on host memory. Included from tests/CMakeLists.txt; needs MPI (the benches) and
# ccbench-report. Exit 77 = skipped (the test prints what is missing).
if(NOT CCBENCH_MPI_FOUND OR NOT TARGET ccbench-report)
  return()
endif()

set(_workflows_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/workflows/workflows_test.py
    --bin-dir ${PROJECT_BINARY_DIR}/bench/apps --report $<TARGET_FILE:ccbench-report>
    --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json --mpirun ${MPIEXEC_EXECUTABLE})
if(TARGET ccbench-topo)
  list(APPEND _workflows_driver --topo $<TARGET_FILE:ccbench-topo>)
endif()

# name -> seconds allowed. Measured on the 2-core VM: accept_* about 6 s each (9 s under load),
# regression about 33 s (two runs of the smoke suite, 2 launches each, one with both ranks on one core),
# regression_aa 39 s (--aa --launches 3 of the smoke suite: 6 passes), regression_interleaved 100 s (85 s of it the
# smoke suite 3 launches a side with side b's rank 1 late by 20 ms to every sample).
foreach(_case accept_pass:180 accept_fail:180 accept_bad_input:60 regression:300 regression_incomplete:180 out_dirs:120
              reworded:300 regression_aa:300 regression_interleaved:600 regression_history:300)
  string(REPLACE ":" ";" _case ${_case})
  list(GET _case 0 _name)
  list(GET _case 1 _timeout)
  string(REPLACE "_" "-" _sub ${_name})
  add_test(NAME workflows.${_name} COMMAND ${_workflows_driver} ${_sub})
  set_tests_properties(workflows.${_name} PROPERTIES LABELS mpi RESOURCE_LOCK cpu TIMEOUT ${_timeout}
                       SKIP_RETURN_CODE 77)
endforeach()
