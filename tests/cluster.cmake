# cluster tier (DESIGN §8): hosts made of Linux network namespaces on this machine, joined by veth
# links shaped with tc, Open MPI across them (tests/cluster/nscluster.py). Needs root, iproute2 and
# util-linux; each test exits 77 (skipped) where network namespaces cannot be made. Included from
# tests/CMakeLists.txt (CCBENCH_SCHEMA, Python3, MPIEXEC_EXECUTABLE provided).
if(NOT CCBENCH_MPI_FOUND)
  return()
endif()

set(_cluster_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cluster/cluster_test.py
    --bin-dir ${PROJECT_BINARY_DIR}/bench/apps --schema ${CCBENCH_SCHEMA} --mpirun ${MPIEXEC_EXECUTABLE}
    --report $<TARGET_FILE:ccbench-report>)
foreach(_case rate split fabric sigkill sigstop-sweep sigstop-setup fleet fleet-evidence fleet-lanes fleet-majority
              fleet-fast-pair fleet-alias fleet-installed fleet-bundle fleet-timeout regression baseline trend)
  string(REPLACE "-" "_" _name ${_case})
  add_test(NAME cluster.${_name} COMMAND ${_cluster_driver} ${_case})
  # RUN_SERIAL: the links are shaped to be measured, and namespaces, bridge and ports are root-wide.
  set_tests_properties(cluster.${_name} PROPERTIES LABELS cluster SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 150)
endforeach()
set_tests_properties(cluster.fleet cluster.fleet_lanes cluster.fleet_majority cluster.fleet_fast_pair
                     cluster.fleet_installed cluster.fleet_bundle cluster.fleet_timeout
                     PROPERTIES TIMEOUT 300)  # 4 sweeps over 4 hosts at 50 Mbit/s: ~90 s here
# fleet_bundle: scripts/make-bundle.sh (~18 s here) with the Open MPI 5.0.11 wheel cached in BUILD/_bundle (the
# install tier's make-bundle.sh downloads it there once; without it the test is skipped, 77), one sweep: ~65 s in all
# regression.sh --launches 3 over 2 hosts: an A/A pair, a base, then 3 rounds of a link at 1/4 rate and restored
# and an interleaved run with side b's rank 1 late (measured here: 86 s, a build running beside it; A/A 9-10 s, base
# 4-5 s, each slowed run 14-15 s, each restored one 4-5 s, the late interleaved one 12 s)
set_tests_properties(cluster.regression PROPERTIES TIMEOUT 300)
# baseline: 11 sendrecv runs (5 to learn, 5 to judge) and an all_reduce over pairs of 6 hosts: 43-45 s here
# trend: 40 sendrecv --all-pairs sweeps of 3 hosts (16 at 100 Mbit/s, 8 with node2 lowered step by step, 16 at 70)
set_tests_properties(cluster.trend PROPERTIES TIMEOUT 600)
# The bundle needs the Open MPI wheel that install.bundle downloads into BUILD/_bundle once (pip): run after it, where
# both run (fleet_bundle skips, saying so, without the wheel; with CI=true a skip fails the run).
if(TEST install.bundle)
  set_tests_properties(cluster.fleet_bundle PROPERTIES DEPENDS install.bundle)
endif()
