#!/usr/bin/env bash
# The GPU smoke: what one GPU can show of this code, from the bundle (or an install, or a build) on a bare
# GPU machine. Nothing is built here: the machine needs the driver, nothing else (the bundle brings MPI and
# its libraries; NCCL comes from the system, CUDA's folder or a pip wheel such as PyTorch's
# nvidia-nccl-cu13, which the benches find by themselves).
#
# Steps, each with a time budget (a command over it is stopped and the step fails):
#   env          60 s  the GPUs (nvidia-smi), the driver, NVLink errors (ccbench-topo --links beside
#                      nvidia-smi nvlink -e), every program's --version (the NCCL library found, and from
#                      where), mpirun; needs no GPU
#   copy        150 s  copy_bench: H2D/D2H pinned and pageable, D2D, against the spec of the GPU
#   collectives 200 s  every collective on 1 rank over NCCL with -c 1, 8 B to 32 MiB: plumbing (set-up,
#                      launch, verification), not bandwidth: one rank moves nothing over a link
#   graph       180 s  allreduce 8 B timed as batch, per_op and graph (CUDA graphs), on the blocking
#                      communicator and the non-blocking one; a graph sweep to 64 MiB beside a stream sweep; a
#                      graph sweep over growing sizes with -R 1 -c 1 (registered once for the largest size:
#                      no case on NCCL's registration of freed memory), NCCL's REG log kept
#   dtypes      180 s  allreduce -c 1 for every element type (the verification kernels, 0 wrong expected), and
#                      with -R 1 and -R 2 (buffers registered, symmetric windows: NCCL 2.27+, else refused),
#                      -R 2 again on the non-blocking communicator (each registration waits until it settles)
#   report       30 s  ccbench-report table over every result of the run
# All steps take about 800 s at most: on a machine that allows 10 minutes a command, run it as two,
#   ccbench-gpu-smoke --steps env,copy,graph,report OUT   then   ccbench-gpu-smoke --steps collectives,dtypes,report OUT
# (the same OUT: the second adds to it). Without a GPU the GPU steps are skipped, with the reason.
#
# Usage: scripts/gpu-smoke.sh [--steps LIST] [--bin DIR] [--list] [OUT_DIR]   (default gpu-smoke-<UTC>)
# Each step prints all its output and keeps it in OUT_DIR/STEP.txt, its results in OUT_DIR/STEP*.json and
# a table of them; OUT_DIR/summary.txt lists the steps. Exit 0: every step ran and passed; 1: a step failed;
# 77: none failed, the GPU steps were skipped (no GPU); 2: bad input or a missing program.
set -uo pipefail
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, make_out_dir, join
readonly prog=gpu-smoke.sh
readonly all_steps=(env copy collectives graph dtypes report)
declare -A budget=([env]=60 [copy]=150 [collectives]=200 [graph]=180 [dtypes]=180 [report]=30)
declare -A needs_gpu=([env]=0 [copy]=1 [collectives]=1 [graph]=1 [dtypes]=1 [report]=0)
readonly dtypes=(int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64 float8_e4m3 float8_e5m2)

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
steps_arg=all bin_dir="" list=0 args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --list) list=1; shift ;;
    --steps=*) steps_arg=${1#*=}; shift ;;
    --bin=*) bin_dir=${1#*=}; shift ;;
    --steps | --bin)
      [ $# -ge 2 ] || die "$1 needs a value (see --help)"
      if [ "$1" = --steps ]; then steps_arg=$2; else bin_dir=$2; fi
      shift 2 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ "$list" = 1 ]; then
  for s in "${all_steps[@]}"; do
    printf '%-12s %4d s  %s\n' "$s" "${budget[$s]}" "$([ "${needs_gpu[$s]}" = 1 ] && echo "needs a GPU" || echo "needs no GPU")"
  done
  exit 0
fi
[ ${#args[@]} -le 1 ] || die "one OUT_DIR at most, got ${#args[@]} (see --help)"

steps=()
if [ "$steps_arg" = all ]; then
  steps=("${all_steps[@]}")
else
  IFS=, read -r -a asked <<<"$steps_arg"
  [ ${#asked[@]} -gt 0 ] || die "--steps '': name at least one of: $(join , "${all_steps[@]}")"
  for s in "${asked[@]}"; do
    [ -n "$s" ] || die "--steps '$steps_arg': an empty step name; the steps: $(join , "${all_steps[@]}")"
    [ -n "${budget[$s]:-}" ] || die "--steps: '$s' is not a step; the steps: $(join , "${all_steps[@]}")"
    steps+=("$s")
  done
fi

# The programs: an install's (the bundle's) bin/, or a build's folders.
if [ -n "$bin_dir" ]; then
  [ -d "$bin_dir" ] || die "--bin $bin_dir: no such folder"
  apps=$bin_dir copy_bench=$bin_dir/copy_bench report=$bin_dir/ccbench-report topo=$bin_dir/ccbench-topo
elif [ "$CCBENCH_INSTALLED" = 1 ]; then
  apps=$CCBENCH_BIN copy_bench=$CCBENCH_BIN/copy_bench report=$CCBENCH_BIN/ccbench-report topo=$CCBENCH_BIN/ccbench-topo
else
  apps=$CCBENCH_BUILD/bench/apps copy_bench=$CCBENCH_BUILD/bench/copy/copy_bench
  report=$CCBENCH_BUILD/report/ccbench-report topo=$CCBENCH_BUILD/topo/discovery/ccbench-topo
fi
[ -x "$report" ] || die "$report is missing: run the bundle's bin/ccbench-gpu-smoke (scripts/make-bundle.sh makes it), or give --bin, or build $CCBENCH_BUILD first"
# Every bench NCCL runs: the workload table's, as ccbench-report lists them.
mapfile -t benches < <("$report" benches --backend nccl)
[ ${#benches[@]} -gt 0 ] || die "$report benches --backend nccl listed no bench"
for p in "${benches[@]/#/$apps/}"; do
  [ -x "$p" ] || die "$p is missing: run the bundle's bin/ccbench-gpu-smoke (scripts/make-bundle.sh makes it), or give --bin, or build $CCBENCH_BUILD first"
done
command -v mpirun >/dev/null || die "mpirun is not on PATH: the bundle brings its own (bin/mpirun); elsewhere install an MPI"
command -v timeout >/dev/null || die "timeout (coreutils) is not installed"

# NCCL: the benches look in the system's folders, CUDA's and pip wheels under $VIRTUAL_ENV, $CONDA_PREFIX,
# /usr/local, /usr and ~/.local; where they find none, the python3 on PATH may know its wheel (a venv not
# activated, a conda elsewhere): CCBENCH_NCCL_LIBRARY then names it.
# A bench's --version line for a loaded NCCL ("  nccl 2.28.3 loaded from ..."), not "nccl none loaded: ...".
readonly nccl_loaded_re='^ +nccl +[0-9.]+ loaded'
if [ -z "${CCBENCH_NCCL_LIBRARY:-}" ] &&
  ! timeout -k 5 30 "$apps/allreduce_bench" --version 2>/dev/null | grep -qE "$nccl_loaded_re" &&
  command -v python3 >/dev/null; then
  wheel_nccl=$(timeout -k 5 30 python3 -c \
    'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
  if [ -n "$wheel_nccl" ] && [ -f "$wheel_nccl" ]; then
    export CCBENCH_NCCL_LIBRARY=$wheel_nccl
    echo "gpu-smoke: NCCL from python3's nvidia.nccl package: CCBENCH_NCCL_LIBRARY=$wheel_nccl"
  fi
fi

out=${args[0]:-gpu-smoke-$(date -u +%Y%m%dT%H%M%SZ)}
make_out_dir OUT_DIR "$out"
out=$(cd "$out" && pwd)

gpu_reason=""
if command -v nvidia-smi >/dev/null && timeout -k 5 30 nvidia-smi -L 2>/dev/null | grep -q "^GPU 0"; then
  :
elif [ -e /dev/nvidiactl ]; then
  :  # the kernel driver is there: the benches say what CUDA answers, and the GPU steps run (and fail loudly)
else
  gpu_reason="no GPU here (nvidia-smi lists none and /dev/nvidiactl is absent)"
fi

step_left=0 step_end=0
run() {  # run COMMAND...: prints it, runs it within what is left of the step's budget; its exit code
  local left=$((step_end - $(date +%s)))
  if [ "$left" -le 0 ]; then
    echo "-- over the step's budget before: $*"
    return 124
  fi
  echo "\$ $*"
  timeout -k 5 "$left" "$@"
  local rc=$?
  if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$(date +%s)" -ge "$step_end" ]; }; then
    echo "-- stopped: over the step's budget of ${step_left} s"
  fi
  return "$rc"
}
table() {  # table FILE...: ccbench-report's table of the results that exist
  local files=()
  for f in "$@"; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -eq 0 ] || run "$report" table --colour never "${files[@]}"
}

step_env() {
  local rc=0
  if command -v nvidia-smi >/dev/null; then
    run nvidia-smi -L || rc=1
    run nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.max.sm --format=csv || rc=1
  else
    echo "nvidia-smi: not installed"
  fi
  # NVLink errors, ours beside the driver's: ccbench-topo --links (and the counters NVML does not support here)
  # and nvidia-smi nvlink -e (Hopper: replay, recovery, crc_flit, ecc). Shown, not judged: an idle GPU's PCIe
  # speed reads low, and a machine without NVLink answers nothing.
  if [ -x "$topo" ]; then run "$topo" --links || true; else echo "ccbench-topo: not in this build"; fi
  if command -v nvidia-smi >/dev/null; then run nvidia-smi nvlink -e || true; fi
  echo "mpirun: $(command -v mpirun)"
  run "$apps/allreduce_bench" --version || rc=1
  # the MPI the GPU steps start their one rank with, on host memory: it must run here
  run mpirun -np 1 "$apps/allreduce_bench" --backend mpi -b 8 -e 1K -f 32 -n 3 -c 1 --out "$out/env-mpi.json" || rc=1
  local nccl
  nccl=$(timeout -k 5 30 "$apps/allreduce_bench" --version 2>&1 | grep -iE '^ *nccl' || true)
  if [ -z "$gpu_reason" ] && ! grep -qE "$nccl_loaded_re" <<<"$nccl"; then
    echo "gpu-smoke: a GPU is here but no NCCL library was loaded ($nccl): install NCCL (libnccl2, or pip install nvidia-nccl-cu13) or set CCBENCH_NCCL_LIBRARY"
    rc=1
  fi
  if [ -x "$copy_bench" ]; then run "$copy_bench" --version || rc=1; else echo "copy_bench: not in this build (needs CUDA, the kernels and Google Benchmark)"; fi
  run "$report" --version || rc=1
  return "$rc"
}

step_copy() {
  if [ ! -x "$copy_bench" ]; then
    echo "gpu-smoke: $copy_bench is missing: this build has no copy_bench (CUDA, the kernels, Google Benchmark)"
    return 1
  fi
  local rc=0
  run "$copy_bench" --out "$out/copy.json" || rc=$?
  table "$out/copy.json"
  return "$rc"
}

step_collectives() {
  echo "one rank: NCCL's set-up, launch and -c verification of each collective, not bandwidth (nothing crosses a link)"
  local rc=0 b
  for b in "${benches[@]}"; do
    run mpirun -np 1 "$apps/$b" --backend nccl -b 8 -e 32M -f 16 -c 1 -n 5 --out "$out/collectives-$b.json" || rc=1
  done
  table "$out"/collectives-*.json
  return "$rc"
}

step_graph() {
  echo "8 B allreduce: batch (k ops per sample), per_op and graph (k ops in one CUDA graph launch) timing"
  local rc=0 timing mode
  for timing in batch per_op graph; do
    for mode in 1 0; do  # CCBENCH_NCCL_BLOCKING: the blocking communicator, then the non-blocking one
      run mpirun -np 1 env CCBENCH_NCCL_BLOCKING=$mode "$apps/allreduce_bench" --backend nccl -b 8 -e 8 -n 200 \
        --timing "$timing" --out "$out/graph-8B-$timing-blocking$mode.json" || rc=1
    done
  done
  run mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 64M -f 8 --timing graph --out "$out/graph-sweep.json" || rc=1
  run mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 64M -f 8 --timing batch --out "$out/graph-stream-sweep.json" || rc=1
  # -R 1 under graphs over growing sizes (issue 38, section 1): NCCL registers a graph's buffers and keeps that
  # registration past ncclCommDeregister; -c 1 finds a case that ran on a stale one. REG: what NCCL registered.
  run mpirun -np 1 env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=REG "$apps/allreduce_bench" --backend nccl -b 8 -e 64M \
    -f 8 -n 5 -c 1 -R 1 --timing graph --out "$out/graph-register1-sweep.json" || rc=1
  table "$out"/graph-*.json
  return "$rc"
}

step_dtypes() {
  local rc=0 d
  for d in "${dtypes[@]}"; do
    run mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 16M -f 64 -c 1 -n 5 -d "$d" \
      --out "$out/dtypes-$d.json" || rc=1
  done
  for d in 1 2; do  # -R: ncclMemAlloc + ncclCommRegister, then symmetric windows
    run mpirun -np 1 "$apps/allreduce_bench" --backend nccl -b 8 -e 64M -f 64 -c 1 -n 5 -R "$d" \
      --out "$out/dtypes-register$d.json" || rc=1
  done
  # -R 2 on the non-blocking communicator (issue 38, section 2): out of place, the receive buffer's window is
  # registered after the send buffer's, which must have settled first
  run mpirun -np 1 env CCBENCH_NCCL_BLOCKING=0 "$apps/allreduce_bench" --backend nccl -b 8 -e 1M -f 32 -c 1 -n 5 \
    -R 2 --out "$out/dtypes-register2-nonblocking.json" || rc=1
  table "$out"/dtypes-*.json
  return "$rc"
}

step_report() {
  local files=("$out"/*.json)
  if [ ! -f "${files[0]}" ]; then
    echo "no results in $out (the GPU steps were skipped or wrote none)"
    return 0
  fi
  run "$report" table --colour never --format markdown "${files[@]}"
}

failed=0 skipped=0
summary="$out/summary.txt"
[ -f "$summary" ] || printf '%-12s %-8s %8s %8s  %s\n' step status seconds budget note >"$summary"
for s in "${steps[@]}"; do
  echo "== $s (budget ${budget[$s]} s)"
  start=$(date +%s)
  if [ "${needs_gpu[$s]}" = 1 ] && [ -n "$gpu_reason" ]; then
    echo "skipped: $gpu_reason" | tee "$out/$s.txt"
    status=skipped note=$gpu_reason
    skipped=$((skipped + 1))
  else
    step_left=${budget[$s]} step_end=$((start + budget[$s]))
    "step_$s" 2>&1 | tee "$out/$s.txt"
    rc=${PIPESTATUS[0]}
    if [ "$rc" = 0 ]; then
      status=ok note=""
    else
      status=FAILED note="exit $rc; see $s.txt"
      failed=$((failed + 1))
    fi
  fi
  took=$(($(date +%s) - start))
  echo "== $s: $status in $took s${note:+ ($note)}"
  printf '%-12s %-8s %8d %8d  %s\n' "$s" "$status" "$took" "${budget[$s]}" "$note" >>"$summary"
done
echo "== summary ($summary):"
cat "$summary"
echo "gpu-smoke: figures and logs in $out"
[ "$failed" = 0 ] || exit 1
[ "$skipped" = 0 ] || exit 77
exit 0
