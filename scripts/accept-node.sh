#!/usr/bin/env bash
# Node acceptance (DESIGN.md §1): run the acceptance set on this node and give a verdict.
#   1. topology: ccbench-topo (its warnings shown), its JSON saved as topology.json
#   2. every collective at one large size, verified (-c 1): the size the profile gates on
#   3. sendrecv in every pair of local GPUs (MPI backend on host memory: the pairs of --split pairs)
#   4. copy_bench and ib_write_bw_bench, when they are built
#   5. ccbench-report accept RESULTS... --profile P --junit OUT/accept.xml
# Exit: 0 every check passed; 1 a check failed (or a bench ended without a result); 2 bad input
# (one line); 3 a bench timed out. Run it on the node (inside its allocation under Slurm).
set -euo pipefail
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, join, parse_options, run_logged, launch_cmd, ...

readonly prog=accept-node.sh
readonly optional_benches=(copy_bench ib_write_bw_bench)

usage() {
  cat <<EOF
usage: $prog [options]

Runs the node-acceptance set and judges it with an acceptance profile (profiles/README.md):
topology (ccbench-topo), all_reduce, all_gather, reduce_scatter, broadcast, reduce and alltoall
at one size, sendrecv in every pair of local GPUs, copy and RDMA benches when built; then
ccbench-report accept ... --junit OUT/accept.xml.

options:
  --profile NAME|PATH   acceptance profile: a name in profiles/ or a file (default: from the
                        GPU model nvidia-smi reports: H100 SXM -> h100-sxm-8gpu, H800 SXM ->
                        h800-sxm-8gpu; no GPU -> mpi-host-smoke)
  --out DIR             where results go (default: results/accept-HOST-UTCSTAMP); must not
                        already hold results
  --np N                ranks for the collectives (default: the GPU count, else 2)
  --size SIZE           bytes per collective, K/M/G binary (default: the size the profile
                        gates all_reduce at, e.g. 16G for h100-sxm-8gpu, 512K for mpi-host-smoke)
  --backend B           mpi or nccl (default: the backend the profile's checks select)
  --bin DIR             bench binaries (default: \$CCBENCH_BIN, else build/bench/apps)
  --report PATH         ccbench-report (default: next to the benches' build, else PATH)
  --topo PATH           ccbench-topo (default: next to the benches' build, else PATH)
  --launcher L          mpirun (default) or srun (srun --mpi=pmix -n N)
  --mpirun-args "..."   extra arguments for the launcher (split on spaces)
  --timeout S           passed to every bench: seconds without progress before it gives up
  --bind none|auto      passed to every bench (default auto: each rank on its GPU's NUMA node,
                        NCCL on the nearest NIC; recorded per rank in every result file)
  -h, --help            this text

exit: 0 pass, 1 fail, 2 bad input, 3 a bench timed out
EOF
}

# --- options -------------------------------------------------------------------------------------
profile="" out="" np="" size="" backend="" bin_dir=${CCBENCH_BIN:-} report="" topo="" launcher=mpirun
launcher_args="" timeout="" bind=auto
set_option() {  # set_option OPTION VALUE: an option that takes a value (parse_options)
  case $1 in
    --profile) profile=$2 ;;
    --out) out=$2 ;;
    --np) np=$2 ;;
    --size) size=$2 ;;
    --backend) backend=$2 ;;
    --bin) bin_dir=$2 ;;
    --report) report=$2 ;;
    --topo) topo=$2 ;;
    --launcher) launcher=$2 ;;
    --mpirun-args) launcher_args=$2 ;;
    --timeout) timeout=$2 ;;
    --bind) bind=$2 ;;
  esac
}
parse_options --profile --out --np --size --backend --bin --report --topo --launcher --mpirun-args --timeout \
  --bind -- "$@"

check_np "$np" 2
[ -z "$np" ] || [ "$np" -ge 2 ] || die "--np $np: acceptance needs at least 2 ranks"
case $backend in "" | mpi | nccl) ;; *) die "--backend '$backend': expected mpi or nccl" ;; esac
set_launcher "$launcher" "$launcher_args"

# --- binaries ------------------------------------------------------------------------------------
check_bin_dir
report=$(find_tool "$report" report/ccbench-report ccbench-report)
[ -n "$report" ] && [ -x "$report" ] || die "not built: ccbench-report (give --report PATH)"
# Every collective of the workload table: those measured in groups at one size, those between pairs (sendrecv)
# in every pair of GPUs.
mapfile -t group_benches < <("$report" benches --kind collective --groups)
mapfile -t pair_benches < <("$report" benches --kind collective --pairwise)
[ ${#group_benches[@]} -gt 0 ] || die "$report benches listed no collective: not a ccbench-report of this version"
for b in "${group_benches[@]}" "${pair_benches[@]}"; do
  [ -x "$bin_dir/$b" ] || die "not built: $b (not in $bin_dir; build it, or give --bin DIR)"
done
topo_given=$topo
topo=$(find_tool "$topo" topo/discovery/ccbench-topo ccbench-topo)
[ -z "$topo_given" ] || [ -x "$topo" ] || die "--topo $topo: not an executable"

# --- GPUs and the profile ------------------------------------------------------------------------
gpu_models=()
if command -v nvidia-smi >/dev/null; then
  mapfile -t gpu_models < <(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null |
    sed 's/ *$//' | grep . || true)
fi
gpus=${#gpu_models[@]}
gpu_model=""
if [ "$gpus" -gt 0 ]; then
  distinct=$(printf '%s\n' "${gpu_models[@]}" | sort -u)
  gpu_model=$(head -n 1 <<<"$distinct")
  [ "$(wc -l <<<"$distinct")" -eq 1 ] || gpu_model="mixed: $(paste -sd, <<<"$distinct")"
fi

profile_names() {
  local names=() f
  for f in "$CCBENCH_PROFILES"/*.json; do
    [ -e "$f" ] && names+=("$(basename "$f" .json)")
  done
  join ", " "${names[@]}"
}
if [ -z "$profile" ]; then
  if [ "$gpus" -eq 0 ]; then
    profile=mpi-host-smoke
    why="no GPU visible (nvidia-smi $(command -v nvidia-smi >/dev/null && echo "lists none" || echo "not found"))"
  else
    why="nvidia-smi: $gpus x $gpu_model"
    case $gpu_model in
      mixed:*) die "GPUs of several models ($gpu_model): give --profile NAME|PATH" ;;
      *PCIe* | *NVL*) profile="" ;;
      *H100*) profile=h100-sxm-8gpu ;;
      *H800*) profile=h800-sxm-8gpu ;;
    esac
    [ -n "$profile" ] ||
      die "no shipped profile for '$gpu_model' (profiles: $(profile_names)): give --profile NAME|PATH"
  fi
else
  why="--profile $profile"
fi
# The profile: a name or a path, found and read by ccbench-report as its verdict will read it (one rule, one
# message), before anything runs; its path comes back for the facts read below.
profile_path=$("$report" accept --check --profile "$profile" 2>&1) || die "${profile_path#ccbench-report: }"

# What the profile checks, read by ccbench-report get (no interpreter needed): its id, the backends its checks
# select, and the size of each busbw check by bench.
profile_id=$("$report" get "$profile_path" /id --missing-ok)
profile_id=${profile_id:-?}
profile_checks=$("$report" get "$profile_path" '/checks/*' --fields kind,select/benchmark,size,select/backend) ||
  die "$profile_path: /checks: not a ccbench.accept profile"
profile_backends=$(awk -F'\t' '$4 != "" {print $4}' <<<"$profile_checks" | sort -u | paste -sd' ')
profile_size() { awk -F'\t' -v b="$1" '$1 == "busbw" && $2 == b && $3 != "" {print $3; exit}' <<<"$profile_checks"; }

if [ -z "$backend" ]; then
  case $profile_backends in
    mpi | nccl) backend=$profile_backends ;;
    *) backend=$([ "$gpus" -gt 0 ] && echo nccl || echo mpi) ;;
  esac
fi
if [ "$backend" = nccl ]; then
  [ "$gpus" -gt 0 ] ||
    die "backend nccl (profile $profile_id) needs GPUs, and nvidia-smi lists none: give --profile mpi-host-smoke"
  np=${np:-$gpus}
  [ "$np" -le "$gpus" ] || die "--np $np: this node has $gpus GPUs (one rank per GPU)"
  [ "$np" -ge 2 ] || die "this node has $gpus GPU: acceptance needs at least 2 ranks"
else
  np=${np:-2}
fi

# Sizes: --size, else the size the profile gates that bench (or all_reduce) at, else a default.
default_size=$(profile_size allreduce_bench)
default_size=${default_size:-$([ "$backend" = nccl ] && echo 16G || echo 512K)}
size_of() {  # size_of BENCH
  local gated
  gated=$(profile_size "$1")
  if [ -n "$size" ] && [[ " ${pair_benches[*]} " != *" $1 "* ]]; then
    [ -z "$gated" ] || [ "$gated" = "$size" ] ||
      echo "note: profile $profile_id gates $1 at $gated; at --size $size that check fails (no result at $gated)" >&2
    echo "$size"
  else
    echo "${gated:-${size:-$default_size}}"
  fi
}

# The sizes, --bind and --timeout: each bench checks them as its run will (--check-args), before anything runs.
check_bench() {  # check_bench BENCH ARGS...: the size as size_of says it (its notes come with the run)
  local msg s
  s=$(size_of "$1" 2>/dev/null)
  msg=$("$bin_dir/$1" --check-args -b "$s" -e "$s" -c 1 "${@:2}" --bind "$bind" ${timeout:+--timeout "$timeout"} 2>&1) ||
    die "${size:+--size '$size': }$1 at $s: ${msg#"$1: error: "}"
}
for b in "${group_benches[@]}"; do
  check_bench "$b" --backend "$backend"
done
for b in "${pair_benches[@]}"; do
  check_bench "$b" --backend "$backend" --split pairs
done
for b in "${optional_benches[@]}"; do
  [ ! -x "$bin_dir/$b" ] || check_bench "$b"
done

# --- output directory ----------------------------------------------------------------------------
host=$(hostname -s 2>/dev/null || hostname)
out=${out:-results/accept-$host-$(date -u +%Y%m%dT%H%M%SZ)}
if [ -d "$out" ] && [ -n "$(ls -A -- "$out")" ]; then
  die "--out $out already holds files: give a new directory"
fi
created_out=""
[ -e "$out" ] || [ -L "$out" ] || created_out=$out
make_out_dir --out "$out"
mkdir -p -- "$out/logs"
out=$(cd "$out" && pwd)

# --- running things ------------------------------------------------------------------------------
finished=0
bench_rejected=0
cleanup() {
  stop_child  # a bench still running (a signal arrived): end its whole process group
  if [ "$finished" = 0 ] && [ -n "$created_out" ] &&
    { [ "$bench_rejected" = 1 ] || [ -z "$(ls -A -- "$out/logs" 2>/dev/null)" ]; }; then
    rm -rf -- "$out"  # nothing was judged: leave nothing behind
  elif [ "$finished" = 0 ]; then
    echo "$prog: stopped before the verdict; what was measured is in $out" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

runs=()      # "NAME|RC|DESCRIPTION" per bench run
results=()   # result files to judge
timed_out=0
broken=()    # benches that ended without a result file, or crashed
# run_bench NAME NP ENV DESCRIPTION BENCH ARGS...: one bench through the launcher, its result in
# OUT/NAME.json; ENV is one VAR=VALUE put in front of the launcher, or -.
# NP 0: one process, not through the launcher (copy_bench: every local GPU from one process; under --timeout S
# the whole run is given 4 S, and its end by `timeout` counts as a bench that timed out).
run_bench() {
  local name=$1 n=$2 envs=$3 what=$4 bench=$5 rc=0
  shift 5
  local file=$out/$name.json
  if [ "$n" = 0 ]; then
    cmd=("$bin_dir/$bench" "$@" --out "$file")
    [ -z "$timeout" ] || cmd=(timeout --kill-after=10 "$((4 * timeout))" "${cmd[@]}")
  else
    launch_cmd "$n" "$bin_dir/$bench" "$@" --bind "$bind" --out "$file" ${timeout:+--timeout "$timeout"}
  fi
  [ "$envs" = - ] || cmd=(env "$envs" "${cmd[@]}")
  echo
  echo "== $what"
  echo "\$ ${cmd[*]}"
  run_logged "$out/logs/$name.log" "${cmd[@]}" || rc=$?
  [ "$n" != 0 ] || [ "$rc" != 124 ] || rc=3  # ended by timeout(1)
  runs+=("$name|$rc|$what")
  if [ "$rc" = 2 ]; then
    bench_rejected=1
    die "$bench rejected its arguments (exit 2, its message is above); nothing judged"
  fi
  [ "$rc" != 3 ] || timed_out=1
  if [ ! -f "$file" ]; then
    broken+=("$name (exit $rc, no result file)")
  else
    results+=("$file")
    [ "$rc" -le 3 ] || broken+=("$name (exit $rc)")
  fi
}

echo "$prog: profile $profile_id ($profile_path), chosen by $why"
echo "$prog: backend $backend, $np ranks, launcher $launcher, --bind $bind, results in $out"
if [ "$backend" = nccl ] && [ "${CUDA_DEVICE_ORDER:-PCI_BUS_ID}" != PCI_BUS_ID ]; then
  echo "$prog: note: CUDA_DEVICE_ORDER=$CUDA_DEVICE_ORDER: a failing GPU may be misnamed (PCI_BUS_ID: by bus id)"
fi
[ "$backend" != nccl ] || export CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER:-PCI_BUS_ID}

# 1. topology
topo_note="not built: ccbench-topo (topology not checked)"
if [ -n "$topo" ]; then
  echo
  echo "== topology ($topo)"
  if run_logged "$out/logs/topology.log" "$topo" && "$topo" --json >"$out/topology.json"; then
    warnings=$("$report" get "$out/topology.json" /warnings --missing-ok --count 2>/dev/null || echo "?")
    topo_note="topology.json: ccbench-topo --json ($warnings warnings, shown above)"
  else
    topo_note="ccbench-topo failed (see logs/topology.log); topology not checked"
    rm -f -- "$out/topology.json"
  fi
else
  echo "$topo_note"
fi

# 2. the collectives measured in groups, each at one size
for b in "${group_benches[@]}"; do
  s=$(size_of "$b")
  run_bench "$b" "$np" - "$b at $s, $np ranks" "$b" --backend "$backend" -b "$s" -e "$s" -c 1
done

# 3. those measured between pairs (sendrecv) in every pair: one job with --split pairs (0-1, 2-3, ...: the
# groups the profile counts); with NCCL, then every other pair of GPUs alone (CUDA_VISIBLE_DEVICES=i,j),
# labelled gpuI-gpuJ.
for b in "${pair_benches[@]}"; do
  s=$(size_of "$b")
  run_bench "$b" "$np" - "$b at $s, --split pairs of $np ranks" "$b" \
    --backend "$backend" --split pairs -b "$s" -e "$s" -c 1
  [ "$backend" = nccl ] || continue
  for ((i = 0; i < np; i++)); do
    for ((j = i + 1; j < np; j++)); do
      [ $((i % 2)) = 1 ] || [ "$j" != $((i + 1)) ] || continue  # measured by the --split pairs job
      run_bench "$b-gpu$i-gpu$j" 2 "CUDA_VISIBLE_DEVICES=$i,$j" "$b at $s, GPUs $i and $j" \
        "$b" --backend "$backend" --split pairs -b "$s" -e "$s" -c 1 --label "gpu$i-gpu$j"
    done
  done
done

# 4. copy and RDMA benches, when built (same flags as every bench)
not_built=()
for b in "${optional_benches[@]}"; do
  if [ "$b" = ib_write_bw_bench ] && [ -x "$bin_dir/$b" ] && [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
    echo "not run: $b (no RDMA device in /sys/class/infiniband)"
    not_built+=("$b (no RDMA device)")
  elif [ "$b" = copy_bench ] && [ -x "$bin_dir/$b" ] && [ "$backend" != nccl ]; then
    echo "not run: $b (backend $backend: host memory, no GPU copies to measure)"
    not_built+=("$b (backend $backend)")
  elif [ "$b" = copy_bench ] && [ -x "$bin_dir/$b" ]; then
    s=$(size_of "$b")
    run_bench "$b" 0 - "$b at $s" "$b" -b "$s" -e "$s" -c 1
  elif [ -x "$bin_dir/$b" ]; then
    s=$(size_of "$b")
    run_bench "$b" "$np" - "$b at $s" "$b" -b "$s" -e "$s" -c 1
  else
    echo "not built: $b"
    not_built+=("$b")
  fi
done

# 5. the verdict
echo
echo "== verdict: ccbench-report accept ... --profile $profile_path --junit $out/accept.xml"
report_rc=0
if [ ${#results[@]} -gt 0 ]; then
  run_logged "$out/accept.txt" "$report" accept "${results[@]}" --profile "$profile_path" \
    --junit "$out/accept.xml" || report_rc=$?
else
  echo "no result files: nothing to judge" | tee "$out/accept.txt"
  report_rc=1
fi
# the verdict's figures from its JSON (accept.json), never from the table's wording
failed_checks="" checks_line=""
if [ "$report_rc" -le 1 ] && [ ${#results[@]} -gt 0 ]; then  # exit 1 is a verdict (a check failed)
  "$report" accept "${results[@]}" --profile "$profile_path" --format json >"$out/accept.json" 2>/dev/null || true
fi
if [ -s "$out/accept.json" ]; then
  failed_checks=$("$report" get "$out/accept.json" '/checks/*' --fields id,verdict | awk -F'\t' '$2 == "fail" {print $1}' |
    paste -sd, | sed 's/,/, /g')
  n_checks=$("$report" get "$out/accept.json" /checks --count)
  checks_line="$n_checks check$([ "$n_checks" = 1 ] || echo s): $("$report" get "$out/accept.json" /passed) passed, $(
    "$report" get "$out/accept.json" /failed) failed"
else
  rm -f -- "$out/accept.json"
fi

if [ "$timed_out" = 1 ]; then
  verdict="TIMED OUT" status=3
elif [ "$report_rc" = 2 ]; then
  verdict="NO VERDICT (ccbench-report rejected its input, above)" status=2
elif [ "$report_rc" != 0 ] || [ ${#broken[@]} -gt 0 ]; then
  verdict=FAIL status=1
else
  verdict=PASS status=0
fi

echo
echo "== summary: $prog on $host, profile $profile_id, backend $backend, $np ranks"
echo "results in $out/"
echo "  $topo_note"
for r in "${runs[@]}"; do
  IFS='|' read -r name rc what <<<"$r"
  file="$name.json"
  [ -f "$out/$file" ] || file="(no result file)"
  printf '  %-36s %s, exit %s\n' "$file" "$what" "$rc"
done
[ ! -f "$out/accept.xml" ] || echo "  accept.xml: JUnit XML (one testcase per check)"
echo "  accept.txt: the verdict table; $([ -f "$out/accept.json" ] && echo "accept.json: the verdict as JSON; ")logs/: every command's output"
[ ${#not_built[@]} = 0 ] || echo "not built or not run: $(join ", " "${not_built[@]}")"
[ ${#broken[@]} = 0 ] || echo "benches that crashed or wrote no result: $(join "; " "${broken[@]}")"
[ -z "$failed_checks" ] || echo "failed checks: $failed_checks"
[ "$timed_out" = 0 ] || echo "a bench timed out (exit 3): see its table above and its JSON"
echo "verdict: $verdict${checks_line:+ ($checks_line)}, exit $status"
finished=1
exit "$status"
