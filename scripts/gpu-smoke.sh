#!/usr/bin/env bash
# The GPU paths in one command, for a machine with an NVIDIA GPU (CUDA toolkit with nvcc; NCCL and MPI
# when present). Builds what the GPU needs, runs the gpu test tier, then the figures:
#   copy_bench on every local GPU (H2D/D2H vs PCIe generation x width, D2D vs HBM, GPU<->GPU vs NVLink/PCIe)
#   allreduce_bench 8 B on 1 rank: batch, per_op and graph timing side by side (launch overhead, latency floor),
#     on the blocking communicator and again on the non-blocking one (CCBENCH_NCCL_BLOCKING=0), whose per-op
#     helper thread the blocking one keeps out of the timed window
#   allreduce_bench --check for every dtype NCCL has (0 wrong elements expected; FP8 reductions need sm_90+)
#   allreduce_bench --nccl-variants: the sweep as configured and with NCCL_ALGO=Ring, tagged
# Usage: scripts/gpu-smoke.sh [OUT_DIR]   (default gpu-smoke-<UTC>); exit 0 only when everything passed.
set -euo pipefail
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, make_out_dir
readonly prog=gpu-smoke.sh

out=${1:-gpu-smoke-$(date -u +%Y%m%dT%H%M%SZ)}
make_out_dir OUT_DIR "$out"
out=$(cd "$out" && pwd)
dir="${CCBENCH_BUILD:-}-gpu"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L | grep -q "GPU 0"; then
  echo "gpu-smoke: no GPU visible (nvidia-smi -L lists none)" >&2
  exit 2
fi
nvidia-smi -L | tee "$out/gpus.txt"
failed=0
step() {  # step NAME COMMAND...: runs it, output to $out/NAME.txt and the terminal; remembers a failure
  local name=$1
  shift
  echo "== $name: $*"
  if ! "$@" 2>&1 | tee "$out/$name.txt"; then
    echo "== $name FAILED" | tee -a "$out/$name.txt"
    failed=1
  fi
}

if [ "$CCBENCH_INSTALLED" = 1 ]; then  # an install or the bundle: its binaries, nothing to build or test
  apps=$CCBENCH_BIN copy_bench=$CCBENCH_BIN/copy_bench report=$CCBENCH_BIN/ccbench-report
else
  ccbench_configure "$dir" -DCCBENCH_CUDA=ON -DCCBENCH_KERNELS=ON -DCCBENCH_BUILD_PERF=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=native -DCCBENCH_CUDA_ARCHITECTURES=native >"$out/configure.txt"
  cmake --build "$dir" --parallel "$(nproc)" >"$out/build.txt"
  step gpu-tests bash -c "cd '$dir' && ctest -L gpu --output-on-failure -V"
  apps=$dir/bench/apps copy_bench=$dir/bench/copy/copy_bench report=$dir/report/ccbench-report
fi
step versions "$apps/allreduce_bench" --version
if [ -x "$copy_bench" ]; then
  step copy-bench "$copy_bench" --out "$out/copy_bench.json"
else
  echo "== copy-bench: not built (needs the kernels and Google Benchmark)" | tee "$out/copy-bench.txt"
  failed=1
fi

if [ -x "$apps/allreduce_bench" ] && command -v mpirun >/dev/null; then
  for timing in batch per_op graph; do
    step "allreduce-8B-$timing" mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 8 -n 200 \
      --timing "$timing" --out "$out/allreduce-8B-$timing.json"
    step "allreduce-8B-$timing-nonblocking" mpirun -np 1 -x CCBENCH_NCCL_BLOCKING=0 "$apps/allreduce_bench" \
      --backend nccl -b 8 -e 8 -n 200 --timing "$timing" --out "$out/allreduce-8B-$timing-nonblocking.json"
  done
  step allreduce-sweep-graph mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 64M -f 8 --graph 20 \
    --out "$out/allreduce-graph.json"
  for dtype in int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64 float8_e4m3 float8_e5m2; do
    step "check-$dtype" mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 16M -f 64 -c 1 -n 5 \
      -d "$dtype" --out "$out/check-$dtype.json"
  done
  step nccl-variants mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 1M -e 256M -f 16 -c 1 --nccl-variants \
    --out "$out/allreduce-variants.json"
  if [ -x "$report" ]; then
    step table "$report" table "$out"/allreduce-8B-*.json "$out/allreduce-variants.json"
  fi
else
  echo "gpu-smoke: no MPI benches (mpirun or an MPI build missing): NCCL timings and --check not run" \
    | tee "$out/nccl-not-run.txt"
  failed=1
fi
echo "gpu-smoke: figures and logs in $out"
exit "$failed"
