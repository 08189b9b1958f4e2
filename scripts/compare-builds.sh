#!/usr/bin/env bash
# Is a refactor behaviour-preserving? Each bench from two builds' binary folders, run with the same
# small fixed settings (fixed iterations, so both sides have the same cases), and their result JSON
# compared by scripts/lib/result_diff.py: equal up to run-specific values (ids, clocks, measured
# times and rates). With ccbench-report in a folder, the rows of `ccbench-report table` without the
# measured columns (and the file path) are compared too (each side's own reporter, else the other's).
#   compare-builds.sh OLD_BIN_DIR NEW_BIN_DIR [OUT_DIR]
# Exit: 0 no bench differs; 1 a bench differs, failed or is missing; 2 bad arguments (one line).
set -euo pipefail
# shellcheck source=SCRIPTDIR/env.sh
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, make_out_dir

readonly prog=compare-builds.sh
# Small sizes, fixed samples: quick, and the case list does not depend on timing.
readonly sweep=(-b 8 -e 64K -f 4 --iters 5 --warmup-iters 2 -c 1 --samples --timeout 120)
readonly launch=(mpirun -q --oversubscribe --mca mpi_yield_when_idle 1)
# More shapes of a run, each CASE=BENCH NP FLAGS...: groups side by side, a root, odd rank counts, a dtype.
readonly -A variants=(
  [allreduce-pairs-np4]="allreduce 4 --split pairs"
  [sendrecv-pairs-np4]="sendrecv 4 --split pairs"
  [broadcast-root2-np3]="broadcast 3 --root 2 --placement in"
  [alltoall-int8-np3]="alltoall 3 -d int8"
  [reducescatter-max-np3]="reducescatter 3 -o max -d int32"
)
# ccbench-report table --format csv columns left out of the comparison: the file path given, and measured.
readonly left_out_columns=file,p50_us,p95_us,p50_ci95_lo_us,p50_ci95_hi_us,algbw_GBps,busbw_GBps,pct_of_peak

usage() {
  cat <<EOF
usage: $prog OLD_BIN_DIR NEW_BIN_DIR [OUT_DIR]

Runs every collective bench (NAME_bench in each folder; the new build's ccbench-report benches
--kind collective, else the old one's) under
  ${launch[*]} -np 2 BENCH ${sweep[*]} --out OUT_DIR/{old,new}/NAME.json
and the variants ${!variants[*]} (other rank counts, --split pairs, --root, -d, -o)
(--backend mpi for the collectives; the RDMA benches too when ibv_devices lists an RDMA device), then scripts/lib/result_diff.py on each pair. One line per bench: same, DIFFERS (the first
40 differences follow, all of them in OUT_DIR/NAME.diff), FAILED or MISSING.

OUT_DIR   where the results, the benches' output (old/NAME.txt, new/NAME.txt) and the differences
          go (default: a new temporary folder)

exit: 0 no bench differs, 1 a bench differs, failed or is missing, 2 bad arguments
EOF
}

case ${1-} in
  -h | --help) usage; exit 0 ;;
esac
[ $# -eq 2 ] || [ $# -eq 3 ] || die "expected OLD_BIN_DIR NEW_BIN_DIR [OUT_DIR] (see --help)"
old_dir=$1 new_dir=$2
[ -d "$old_dir" ] || die "OLD_BIN_DIR $old_dir: no such folder"
[ -d "$new_dir" ] || die "NEW_BIN_DIR $new_dir: no such folder"
command -v mpirun >/dev/null || die "mpirun is not on PATH"
out=${3:-$(mktemp -d "${TMPDIR:-/tmp}/ccbench-compare.XXXXXX")}
make_out_dir OUT_DIR "$out"
mkdir -p -- "$out/old" "$out/new"
differ=$CCBENCH_ROOT/scripts/lib/result_diff.py

# The reporter of each side: its own, else the other side's; empty when neither folder has one.
report_old="" report_new=""
[ -x "$old_dir/ccbench-report" ] && report_old=$old_dir/ccbench-report
[ -x "$new_dir/ccbench-report" ] && report_new=$new_dir/ccbench-report
report_old=${report_old:-$report_new} report_new=${report_new:-$report_old}

table_rows() {  # table_rows REPORT FILE: ccbench-report table's CSV rows, without left_out_columns
  "$1" table --format csv "$2" | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
keep = [i for i, h in enumerate(rows[0] if rows else []) if h not in sys.argv[1].split(",")]
writer = csv.writer(sys.stdout, lineterminator="\n")
for row in rows:
    writer.writerow([row[i] for i in keep if i < len(row)])' "$left_out_columns"
}

# The benches: the workload table's, as the new side's reporter lists them (a bench new in NEW_BIN_DIR shows
# as missing in the old); RDMA benches only where there is a device to run them on.
lister=${report_new:-$report_old}
[ -n "$lister" ] || die "no ccbench-report in $old_dir or $new_dir: it lists the benches (ccbench-report benches)"
mapfile -t benches < <("$lister" benches --kind collective | sed 's/_bench$//')
mapfile -t rdma_benches < <("$lister" benches --kind rdma | sed 's/_bench$//')
[ ${#benches[@]} -gt 0 ] || die "$lister benches listed no collective"
names=("${benches[@]}" "${!variants[@]}")
rdma_skip=""
if ! command -v ibv_devices >/dev/null; then
  rdma_skip="ibv_devices is not installed (no rdma-core)"
else
  listing=$(ibv_devices 2>&1) || true
  if [ -n "$(awk 'NR > 2 && NF' <<<"$listing")" ]; then
    names+=("${rdma_benches[@]}")
  else
    rdma_skip="ibv_devices lists no RDMA device ($(head -n 1 <<<"$listing" | sed 's/^ *//'))"
  fi
fi

bench_of() {  # bench_of NAME: the bench a case runs (a variant's first word, else the name itself)
  local spec=${variants[$1]-$1}
  echo "${spec%% *}"
}

run_side() {  # run_side SIDE DIR NAME: the case NAME with DIR's bench, into OUT_DIR/SIDE/NAME.json; its exit code
  local side=$1 dir=$2 name=$3 np=2 args=("${sweep[@]}") extra=()
  if [ -n "${variants[$name]-}" ]; then
    read -r -a extra <<<"${variants[$name]}"
    np=${extra[1]}
    extra=("${extra[@]:2}")
  fi
  [[ " ${rdma_benches[*]} " == *" $name "* ]] || args=(--backend mpi "${args[@]}")
  rm -f -- "$out/$side/$name.json"
  "${launch[@]}" -np "$np" "$dir/$(bench_of "$name")_bench" "${args[@]}" "${extra[@]}" \
    --out "$out/$side/$name.json" </dev/null >"$out/$side/$name.txt" 2>&1
}

status=0 same=0 bad=0
for name in "${names[@]}"; do
  label=$name
  [ -n "${variants[$name]-}" ] || label=${name}_bench
  missing=()
  for dir in "$old_dir" "$new_dir"; do
    [ -x "$dir/$(bench_of "$name")_bench" ] || missing+=("$dir/$(bench_of "$name")_bench")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    printf '%-20s MISSING: %s\n' "$label" "$(join ", " "${missing[@]}")"
    status=1 bad=$((bad + 1))
    continue
  fi
  rc_old=0 rc_new=0
  run_side old "$old_dir" "$name" || rc_old=$?
  run_side new "$new_dir" "$name" || rc_new=$?
  if [ "$rc_old" != 0 ] || [ "$rc_new" != 0 ]; then
    printf '%-20s FAILED: old exit %s, new exit %s (output in %s/{old,new}/%s.txt)\n' \
      "$label" "$rc_old" "$rc_new" "$out" "$name"
    status=1 bad=$((bad + 1))
    continue
  fi
  rc=0
  python3 "$differ" "$out/old/$name.json" "$out/new/$name.json" >"$out/$name.diff" 2>&1 || rc=$?
  verdict=same
  [ "$rc" = 0 ] || verdict=DIFFERS
  table=""
  if [ -n "$report_new" ]; then
    if table_rows "$report_old" "$out/old/$name.json" >"$out/old/$name.table.csv" &&
      table_rows "$report_new" "$out/new/$name.json" >"$out/new/$name.table.csv"; then
      if diff -u "$out/old/$name.table.csv" "$out/new/$name.table.csv" >"$out/$name.table.diff"; then
        table="; table rows same"
      else
        table="; table rows DIFFER ($out/$name.table.diff)" verdict=DIFFERS
      fi
    else
      table="; ccbench-report table failed" verdict=DIFFERS
    fi
  fi
  printf '%-22s %s: %s%s\n' "$label" "$verdict" "$(tail -n 1 "$out/$name.diff")" "$table"
  if [ "$verdict" = same ]; then
    same=$((same + 1))
  else
    lines=$(($(wc -l <"$out/$name.diff") - 1))
    sed '$d' "$out/$name.diff" | head -n 40 | sed 's/^/    /'
    [ "$lines" -le 40 ] || echo "    ... $((lines - 40)) more in $out/$name.diff"
    status=1 bad=$((bad + 1))
  fi
done

[ -z "$rdma_skip" ] || printf '%-20s skipped: %s\n' "$(join ", " "${rdma_benches[@]/%/_bench}")" "$rdma_skip"
[ -n "$report_new" ] || echo "table: not compared (no ccbench-report in $old_dir or $new_dir)"
echo "$prog: ${#names[@]} cases, $same same, $bad differ, failed or missing; results in $out"
exit $status
