# slurm tier: the sbatch scripts of scripts/slurm/ submitted to a real Slurm cluster of two nodes
# (n1, n2) that tests/slurm/slurm_cluster.py brings up on this machine and tears down; MPI backend
# on host memory. Each node's slurmd runs in a network namespace of its own (own address on a
# bridge in 10.78.N.0/24, where slurmctld runs) and UTS namespace (hostname n1, n2). Needs root,
# iproute2 and slurm-wlm + munge (scripts/install-deps.sh); elsewhere each test prints one line
# and exits 77 (skipped). Each brings up its own cluster, so they run alone.
# Included from tests/CMakeLists.txt (Python3 provided).
if(NOT CCBENCH_MPI_FOUND)
  return()
endif()

set(_slurm_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_test.py
    --bin-dir ${PROJECT_BINARY_DIR}/bench/apps --report $<TARGET_FILE:ccbench-report>
    --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json)
foreach(_case sweep accept_pass accept_fail)
  add_test(NAME slurm.${_case} COMMAND ${_slurm_driver} ${_case})
  # The test cancels a job after 120 s and tears the cluster down; TIMEOUT is the backstop.
  set_tests_properties(slurm.${_case} PROPERTIES LABELS slurm SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 240)
endforeach()
