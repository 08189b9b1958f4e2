# slurm tier: the sbatch scripts of scripts/slurm/ submitted to a real Slurm cluster of two nodes (n1,
# n2; four for drain, ccbench-drain's cycle on fleet verdicts) that tests/slurm/slurm_cluster.py
# brings up on this machine and tears down; MPI backend on host memory. Each node's slurmd runs in a
# network namespace of its own (own address on a bridge in 10.78.N.0/24, where slurmctld runs) and UTS
# namespace (hostname n1, n2). Needs root, iproute2 and slurm-wlm + munge (scripts/install-deps.sh);
# elsewhere each test prints one line and exits 77 (skipped). Each brings up its own cluster, so they
# run alone.
# Included from tests/CMakeLists.txt (Python3 provided).
if(NOT CCBENCH_MPI_FOUND)
  return()
endif()

set(_slurm_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_test.py
    --bin-dir ${PROJECT_BINARY_DIR}/bench/apps --report $<TARGET_FILE:ccbench-report>
    --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json)
# name:seconds. The tests cancel a job after 120 s and tear the cluster down; TIMEOUT is the backstop. drain (4 nodes,
# two fleet sweeps of 3 hosts on 50 and 25 Mbit/s links, each within 240 s) took 61 s here, cluster included.
foreach(_case sweep:240 accept_pass:240 accept_fail:240 drain:600)
  string(REPLACE ":" ";" _case ${_case})
  list(GET _case 0 _name)
  list(GET _case 1 _timeout)
  add_test(NAME slurm.${_name} COMMAND ${_slurm_driver} ${_name})
  set_tests_properties(slurm.${_name} PROPERTIES LABELS slurm SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT ${_timeout})
endforeach()
