#!/usr/bin/env bash
# Fleet acceptance (issue 17): one bench over every pair of hosts (--all-pairs), judged by
# `ccbench-report fleet`, which names a FLEET LOW, a SPLIT, a BAD HOST or a BAD LINK; the verdict is the exit code.
#   0. ccbench-report fleet --check: the verdict's options, before any host is used
#   1. BENCH --all-pairs at one size over the hosts of --hostfile (mpirun) or of the allocation (srun)
#   2. ccbench-report fleet OUT/fleet.json --junit OUT/fleet.xml (terminal), fleet.md, fleet.html,
#      fleet-verdict.json (the verdict as JSON: ccbench-drain's input)
#      (a sweep that timed out: the pairs it measured, --partial)
# Exit: 0 nothing named; 1 something named (or the sweep ended without a result);
# 2 bad input (one line); 3 the sweep timed out (after the verdict on what it measured).
set -euo pipefail
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, parse_options, run_logged, launch_cmd, ...

readonly prog=accept-fleet.sh

usage() {
  cat <<EOF
usage: $prog [options]

Runs one bench with --all-pairs over every host (every pair of hosts, local rank l with local
rank l, in rounds of disjoint pairs side by side) and judges it with ccbench-report fleet: each
pair against the fleet's healthy level and an anchor; a level far below the anchor is FLEET LOW,
hosts fine among themselves and slow between are a SPLIT, a host low nearly everywhere is a BAD
HOST, a pair low between two hosts fine elsewhere is a BAD LINK.

options:
  --hostfile FILE       the hosts (mpirun's hostfile: one host per line, "slots=N" allowed);
                        with --launcher srun, the allocation's nodes are the hosts
  --bench NAME          sendrecv (default), or any collective or RDMA bench (ccbench-report
                        benches --kind collective, --kind rdma): allreduce, ib_write_bw, ...
  --size SIZE           bytes per pair, K/M/G binary (default 64M; ib_write_lat 2)
  --ranks-per-host N    ranks on each host, paired by local rank (default 1)
  --threshold PCT       a pair more than PCT% below the reference is LOW (default 20)
  --stat median|best    each pair's median sample (default) or its fastest (ccbench-report fleet --stat)
  --reference X         the anchor: a healthy pair's figure (GB/s; us for ib_write_lat), as
                        ccbench-report fleet --reference (default: the results' spec peak, when known)
  --out DIR             where results go (default: results/fleet-UTCSTAMP); must not hold files
  --bin DIR             bench binaries (default: \$CCBENCH_BIN, else build/bench/apps)
  --report PATH         ccbench-report (default: next to the benches' build, else PATH)
  --launcher L          mpirun (default) or srun (srun --mpi=pmix -n N)
  --mpirun-args "..."   extra arguments for the launcher (split on spaces)
  --timeout S           passed to the bench: seconds without progress before it gives up
  --bind none|auto      passed to the bench (default auto)
  -h, --help            this text

exit: 0 nothing named, 1 something named (or no result), 2 bad input, 3 the sweep timed out
EOF
}

hostfile="" bench=sendrecv size="" per_host=1 threshold=20 out="" bin_dir=${CCBENCH_BIN:-} report=""
launcher=mpirun launcher_args="" timeout="" bind=auto stat=median reference=""
set_option() {  # set_option OPTION VALUE (parse_options)
  case $1 in
    --hostfile) hostfile=$2 ;;
    --bench) bench=$2 ;;
    --size) size=$2 ;;
    --ranks-per-host) per_host=$2 ;;
    --threshold) threshold=$2 ;;
    --stat) stat=$2 ;;
    --reference) reference=$2 ;;
    --out) out=$2 ;;
    --bin) bin_dir=$2 ;;
    --report) report=$2 ;;
    --launcher) launcher=$2 ;;
    --mpirun-args) launcher_args=$2 ;;
    --timeout) timeout=$2 ;;
    --bind) bind=$2 ;;
  esac
}
parse_options --hostfile --bench --size --ranks-per-host --threshold --stat --reference --out --bin --report \
  --launcher --mpirun-args --timeout --bind -- "$@"

bench=${bench%_bench}
[ "$bench" = ib_write_lat ] && size=${size:-2} || size=${size:-64M}
[[ $per_host =~ ^[1-9][0-9]*$ ]] || die "--ranks-per-host '$per_host': expected a whole number, at least 1"
set_launcher "$launcher" "$launcher_args"

# --- the hosts -----------------------------------------------------------------------------------
if [ "$launcher" = srun ]; then
  [ -z "$hostfile" ] || die "--hostfile with --launcher srun: the allocation's nodes are the hosts"
  [ -n "${SLURM_JOB_NUM_NODES:-}" ] || die "--launcher srun outside a Slurm allocation (no SLURM_JOB_NUM_NODES)"
  hosts=$SLURM_JOB_NUM_NODES
  launcher_args_split+=(-N "$hosts" --ntasks-per-node="$per_host")
else
  [ -n "$hostfile" ] || die "--hostfile FILE: which hosts to sweep (or --launcher srun inside an allocation)"
  [ -f "$hostfile" ] && [ -r "$hostfile" ] || die "--hostfile $hostfile: not a readable file"
  hosts=$(grep -cvE '^[[:space:]]*(#|$)' "$hostfile" || true)
  launcher_args_split+=(--hostfile "$hostfile" --map-by "ppr:$per_host:node")
fi
[ "$hosts" -ge 3 ] || die "$hosts host(s): a fleet verdict needs 3 hosts or more"

check_bin_dir
report=$(find_tool "$report" report/ccbench-report ccbench-report)
[ -n "$report" ] && [ -x "$report" ] || die "not built: ccbench-report (give --report PATH)"
# Every collective and RDMA bench of the workload table (as ccbench-report lists them) can sweep a fleet.
collectives=$("$report" benches --kind collective) && rdma=$("$report" benches --kind rdma) ||
  die "$report benches failed: not a ccbench-report of this version"
sweepable=$collectives$'\n'$rdma
grep -qx -- "${bench}_bench" <<<"$sweepable" ||
  die "--bench '$bench': expected one of $(sed 's/_bench$//' <<<"$sweepable" | paste -sd' ')"
exe=$bin_dir/${bench}_bench
[ -x "$exe" ] || die "not built: ${bench}_bench (not in $bin_dir; build it, or give --bin DIR)"
# The verdict's options are the reporter's to judge (one rule, one message), and before the sweep, not after it.
verdict_flags=(--threshold "$threshold" --stat "$stat")
[ -z "$reference" ] || verdict_flags+=(--reference "$reference")
"$report" fleet --check "${verdict_flags[@]}" || exit 2
# The sweep's flags (--size, --bind, --timeout): the bench's to judge, as its run will (--check-args).
bench_flags=(--all-pairs --bind "$bind")
if grep -qx -- "${bench}_bench" <<<"$rdma"; then
  bench_flags+=(-s "$size" -n 20)
else
  bench_flags+=(-b "$size" -e "$size" -n 10 --placement out)
fi
[ -z "$timeout" ] || bench_flags+=(--timeout "$timeout")
msg=$("$exe" --check-args "${bench_flags[@]}" 2>&1) ||
  die "${msg#"${bench}_bench: error: "} (${bench}_bench ${bench_flags[*]})"

out=${out:-results/fleet-$(date -u +%Y%m%dT%H%M%SZ)}
[ ! -d "$out" ] || [ -z "$(ls -A -- "$out")" ] || die "--out $out already holds files: give a new directory"
make_out_dir --out "$out"
out=$(cd "$out" && pwd)
trap stop_child EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the sweep, then the verdict -----------------------------------------------------------------
flags=("${bench_flags[@]}" --out "$out/fleet.json" --label "fleet: $hosts hosts x $per_host")
launch_cmd $((hosts * per_host)) "$exe" "${flags[@]}"
echo "$prog: $hosts hosts x $per_host rank(s), ${bench}_bench at $size, results in $out"
echo "\$ ${cmd[*]}"
rc=0
run_logged "$out/sweep.log" "${cmd[@]}" || rc=$?
[ "$rc" != 2 ] || die "${bench}_bench rejected its arguments (exit 2, its message is above)"
if [ ! -f "$out/fleet.json" ]; then
  echo "$prog: the sweep ended (exit $rc) without a result file: see $out/sweep.log" >&2
  [ "$rc" = 3 ] && exit 3
  exit 1
fi
# A sweep that timed out is judged on the pairs it measured (the timed-out ones count as LOW: they did not measure).
[ "$rc" != 3 ] || verdict_flags+=(--partial)
verdict=0
"$report" fleet "$out/fleet.json" "${verdict_flags[@]}" --junit "$out/fleet.xml" | tee "$out/fleet.txt" ||
  verdict=${PIPESTATUS[0]}
"$report" fleet "$out/fleet.json" "${verdict_flags[@]}" --format markdown >"$out/fleet.md" || true
# The verdict as JSON, for what acts on it (ccbench-drain --verdict OUT/fleet-verdict.json).
"$report" fleet "$out/fleet.json" "${verdict_flags[@]}" --format json >"$out/fleet-verdict.json" || true
# The page holds every result in memory (the verdict streams them): 4 GiB of results is 1,024 hosts and more.
"$report" html "$out/fleet.json" -o "$out/fleet.html" --title "ccbench fleet: $hosts hosts" --max-file-size 4G \
  2>/dev/null || true
[ "$verdict" != 2 ] || exit 2
if [ "$rc" = 3 ]; then
  echo "$prog: the sweep timed out (exit 3); the pairs it measured are judged above (verdict exit $verdict)" >&2
  exit 3
fi
echo "$prog: verdict $([ "$verdict" = 0 ] && echo "nothing named" || echo "something named") (exit $verdict); $out/fleet.{txt,md,xml,html}, $out/fleet-verdict.json"
exit "$verdict"
