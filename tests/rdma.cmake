# rdma tier (DESIGN §8): RDMA programs over Soft-RoCE (rdma_rxe on lo) inside a small QEMU guest booted from
# Debian's own kernel package (tests/rdma/rdma_vm.py); software emulation unless CCBENCH_RDMA_VM_ACCEL=kvm.
# Needs qemu-system-x86, busybox-static, perftest, kmod and the kernel package (downloaded once into
# ~/.cache/ccbench/rdma-vm); each test exits 77 (skipped) where these are missing. Included from
# tests/CMakeLists.txt (Python3 provided).
set(_rdma_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/rdma/rdma_test.py)

# perftest's ib_write_bw (4 sizes) and ib_write_lat (2 sizes) between two processes in the guest: ~30 s here.
add_test(NAME rdma.perftest COMMAND ${_rdma_driver} perftest)
# RUN_SERIAL: the guest's two vCPUs busy-poll; anything beside them turns microseconds into milliseconds.
set_tests_properties(rdma.perftest PROPERTIES LABELS rdma SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 270)

# Open MPI inside the guest (plm isolated, shared memory): allreduce_bench --backend mpi under mpirun -np 2,
# verified, its JSON validated: ~40 s here, most of the image being libnccl when the benches link it.
if(TARGET allreduce_bench)
  add_test(NAME rdma.mpi_smoke COMMAND ${_rdma_driver} --bin-dir $<TARGET_FILE_DIR:allreduce_bench>
           --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json mpi-smoke)
  set_tests_properties(rdma.mpi_smoke PROPERTIES LABELS rdma SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 270)
endif()

# Our ib_write_bw_bench / ib_write_lat_bench under mpirun -np 2 on rxe0, verified, JSON validated, printed beside
# perftest at the same sizes; --all-pairs on 4 ranks; bad device / GID / port / rank count exit 2; --mem cuda:0
# skipped with its reason (no GPU in the guest); a peer SIGKILLed mid-sweep (mpirun and standalone); ours/perftest
# for ib_write_bw at 64 KiB and 1 MiB over 5 interleaved pairs, the median inside 0.7-1.4 (~50 s of the run).
if(TARGET ib_write_bw_bench AND CCBENCH_VERBS_FOUND)
  if(CCBENCH_CUDA_FOUND)
    set(_rdma_cuda 1)
  else()
    set(_rdma_cuda 0)
  endif()
  add_test(NAME rdma.verbs COMMAND ${_rdma_driver} --bin-dir $<TARGET_FILE_DIR:ib_write_bw_bench> --cuda ${_rdma_cuda}
           --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json verbs)
  set_tests_properties(rdma.verbs PROPERTIES LABELS rdma SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 360)
  # The fabric's evidence (issue 26): one ib_write_bw_bench run whose result holds rxe0's counter deltas, equal to
  # sysfs's around it, and whose packets account for the bytes written (within 1%); ccbench-topo --links in the
  # guest: ~30 s here.
  if(TARGET ccbench-topo)
    add_test(NAME rdma.fabric COMMAND ${_rdma_driver} --bin-dir $<TARGET_FILE_DIR:ib_write_bw_bench>
             --topo-bin $<TARGET_FILE:ccbench-topo>
             --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json fabric)
    set_tests_properties(rdma.fabric PROPERTIES LABELS rdma SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 240)
  endif()
  # Import (issue 27): 12 perftest ib_write_bw logs from the guest read by ccbench-report import (schema valid) and
  # compared with a ccbench run of the same writes: SAME (another boot, up to 3, when a slow spell of the emulated
  # NIC leaves it UNSURE); a cut log refused (exit 2): ~40 s a boot here.
  add_test(NAME rdma.import COMMAND ${_rdma_driver} --bin-dir $<TARGET_FILE_DIR:ib_write_bw_bench>
           --report-bin $<TARGET_FILE:ccbench-report>
           --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json import)
  set_tests_properties(rdma.import PROPERTIES LABELS rdma SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 420)
endif()
