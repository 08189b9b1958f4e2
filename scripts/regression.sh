#!/usr/bin/env bash
# Regression (DESIGN.md §1): run a suite of benches, store the results under a label, and compare
# them bench by bench with a stored baseline label through ccbench-report regression.
#   regression.sh --suite smoke --label before-upgrade
#   regression.sh --suite smoke --label after-upgrade --baseline before-upgrade
# Exit: 0 no SLOWER, FAILED or MISSING row (or nothing to compare: stored only); 1 a SLOWER or FAILED
# row, a row of the baseline MISSING from the candidate, or a bench that failed; 2 bad input (one line),
# or no verdict (compare found no row in common); 3 a bench timed out. The exit code is the verdict.
set -euo pipefail
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, join, parse_options, run_logged, launch_cmd, ...

readonly prog=regression.sh
readonly suites_dir=$CCBENCH_SUITES

usage() {
  cat <<EOF
usage: $prog --suite NAME --label LABEL [--baseline LABEL] [options]

Runs the benches of a suite (scripts/suites/NAME.suite: one bench command line per line), stores
their results in STORE/LABEL/, and with --baseline compares each bench's result with the one in
STORE/BASELINE/ (ccbench-report regression STORE/BASELINE STORE/LABEL), printing the verdict
tables: SLOWER / FASTER / SAME / UNSURE / FAILED per size and placement, and one verdict for the
suite (also in STORE/LABEL/logs/regression.json).

options:
  --suite NAME|PATH     a suite in scripts/suites/ ($(suite_names)), or a file
  --label LABEL         name of this run (letters, digits, . _ -); STORE/LABEL must not exist
  --baseline LABEL      a stored label to compare with (without it: only store)
  --store DIR           where labels are stored (default: results/regression)
  --threshold PCT       a change smaller than this is SAME (default 5, ccbench-report's default)
  --np N                ranks per bench (default: the GPU count, else 2)
  --bin DIR             bench binaries (default: \$CCBENCH_BIN, else build/bench/apps)
  --report PATH         ccbench-report (default: next to the benches' build, else PATH)
  --launcher L          mpirun (default) or srun (srun --mpi=pmix -n N)
  --mpirun-args "..."   extra arguments for the launcher (split on spaces)
  --timeout S           passed to every bench: seconds without progress before it gives up
  -h, --help            this text

exit: 0 no regression, 1 SLOWER, FAILED or MISSING rows, 2 bad input or no verdict, 3 a bench timed out
EOF
}

suite_names() {
  local names=()
  local f
  for f in "$suites_dir"/*.suite; do
    [ -e "$f" ] && names+=("$(basename "$f" .suite)")
  done
  [ ${#names[@]} -gt 0 ] || names=(none)
  join ", " "${names[@]}"
}

labels_in() {  # labels_in STORE: "a, b" or "none"
  local names=()
  local d
  for d in "$1"/*/; do
    [ -d "$d" ] && names+=("$(basename "$d")")
  done
  [ ${#names[@]} -gt 0 ] || names=(none)
  join ", " "${names[@]}"
}

# --- options -------------------------------------------------------------------------------------
suite="" label="" baseline="" store=results/regression threshold=5 np="" bin_dir=${CCBENCH_BIN:-} report=""
launcher=mpirun launcher_args="" timeout=""
set_option() {  # set_option OPTION VALUE: an option that takes a value (parse_options)
  case $1 in
    --suite) suite=$2 ;;
    --label) label=$2 ;;
    --baseline) baseline=$2 ;;
    --store) store=$2 ;;
    --threshold) threshold=$2 ;;
    --np) np=$2 ;;
    --bin) bin_dir=$2 ;;
    --report) report=$2 ;;
    --launcher) launcher=$2 ;;
    --mpirun-args) launcher_args=$2 ;;
    --timeout) timeout=$2 ;;
  esac
}
parse_options --suite --label --baseline --store --threshold --np --bin --report --launcher --mpirun-args \
  --timeout -- "$@"

label_ok() { [[ $1 =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]]; }
[ -n "$suite" ] || die "--suite is required (suites: $(suite_names))"
[ -n "$label" ] || die "--label is required: a name for this run, like before-upgrade"
label_ok "$label" || die "--label '$label': use letters, digits, '.', '_' and '-' (not first)"
[ -z "$baseline" ] || label_ok "$baseline" || die "--baseline '$baseline': not a label (letters, digits, . _ -)"
[ "$baseline" != "$label" ] || die "--baseline $baseline is the label of this run: give another label"
check_np "$np" 1
set_launcher "$launcher" "$launcher_args"

# --- the suite -----------------------------------------------------------------------------------
if [[ $suite == */* || $suite == *.suite ]]; then
  suite_file=$suite
  [ -f "$suite_file" ] || die "--suite $suite: no such file"
else
  need_data_dir "$suites_dir" "--suite $suite" suite
  suite_file=$suites_dir/$suite.suite
  [ -f "$suite_file" ] || die "--suite $suite: no such suite (suites: $(suite_names))"
fi
suite_name=$(basename "$suite_file" .suite)

check_bin_dir

report=$(find_tool "$report" report/ccbench-report ccbench-report)
have_report() { [ -n "$report" ] && [ -x "$report" ]; }

# suite_benches SELECTOR WHERE: the benches an '@KIND[/groups|/pairwise]' line stands for, a line each, from
# the workload table (ccbench-report benches), so that a suite runs every bench of a kind without a list.
suite_benches() {
  local kind=${1#@} flags=() listed
  case $kind in
    */groups) flags=(--groups) kind=${kind%/groups} ;;
    */pairwise) flags=(--pairwise) kind=${kind%/pairwise} ;;
  esac
  have_report || die "$2: '$1' needs ccbench-report (not built: give --report PATH)"
  listed=$("$report" benches --kind "$kind" "${flags[@]}" 2>&1) ||
    die "$2: '$1': ${listed#ccbench-report: } (expected @collective, @rdma or @copy, optionally /groups or /pairwise)"
  [ -n "$listed" ] || die "$2: '$1' stands for no bench"
  echo "$listed"
}

# One entry per bench a line of the suite names: "NAME|BENCH ARGS...". NAME is the bench, -2, -3, ... when a
# bench comes again, so that a label's files match the baseline's line by line.
entries=()
declare -A seen=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  line=${line%%#*}
  read -r -a words <<<"$line"
  [ ${#words[@]} -gt 0 ] || continue
  where="suite $suite_file line $lineno"
  for w in "${words[@]:1}"; do
    case $w in
      --out | --out=* | --label | --label=*) die "$where: ${w%%=*} is set by $prog (it names the result)" ;;
    esac
  done
  if [[ ${words[0]} == @* ]]; then
    listed=$(suite_benches "${words[0]}" "$where") || exit 2  # suite_benches said why
    mapfile -t line_benches <<<"$listed"
  else
    line_benches=("${words[0]}")
  fi
  for bench in "${line_benches[@]}"; do
    [[ $bench =~ ^[A-Za-z0-9_]+_bench$ ]] ||
      die "$where: '$bench' is not a bench (expected NAME_bench ARGS... or @KIND ARGS...)"
    [ -x "$bin_dir/$bench" ] || die "not built: $bench ($where; not in $bin_dir; build it, or give --bin DIR)"
    seen[$bench]=$((${seen[$bench]:-0} + 1))
    name=$bench
    [ "${seen[$bench]}" = 1 ] || name=$bench-${seen[$bench]}
    entries+=("$name|$bench ${words[*]:1}")
  done
done <"$suite_file"
[ ${#entries[@]} -gt 0 ] || die "$suite_file: no bench lines (one 'NAME_bench ARGS...' or '@KIND ARGS...' per line)"

if [ -n "$baseline" ] && ! have_report; then
  die "not built: ccbench-report (give --report PATH)"
fi
# The rules are the binaries': compare's --threshold, and each bench's command line (the suite's flags and
# --timeout) as its run will check it, before the first bench runs rather than in the middle of the suite.
if have_report; then
  "$report" compare --check --threshold "$threshold" || exit 2
fi
for e in "${entries[@]}"; do
  read -r -a words <<<"${e#*|}"
  msg=$("$bin_dir/${words[0]}" --check-args "${words[@]:1}" ${timeout:+--timeout "$timeout"} 2>&1) ||
    die "suite $suite_file: ${words[*]}${timeout:+ --timeout $timeout}: ${msg#"${words[0]}: error: "}"
done

# --- the store -----------------------------------------------------------------------------------
if [ -n "$baseline" ] && [ ! -d "$store/$baseline" ]; then
  die "--baseline $baseline: no such label in $store (labels: $(labels_in "$store"))"
fi
[ ! -e "$store/$label" ] ||
  die "--label $label: already stored in $store/$label (labels: $(labels_in "$store")): give a new label, or remove it"

if [ -z "$np" ]; then
  gpus=0
  if command -v nvidia-smi >/dev/null; then
    gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c . || true)
  fi
  np=$([ "$gpus" -gt 0 ] && echo "$gpus" || echo 2)
fi

make_out_dir --store "$store"
store=$(cd "$store" && pwd)
# The run is written into a hidden directory and renamed to STORE/LABEL once every bench has run, so
# an interrupted or rejected run never leaves a label that looks complete.
partial=$(mktemp -d "$store/.$label.partial.XXXXXX")
mkdir "$partial/logs"
cleanup() {
  stop_child  # a bench still running (a signal arrived): end its whole process group
  [ -z "$partial" ] || rm -rf -- "$partial"
  [ -z "$signalled" ] || echo "$prog: stopped by SIG$signalled; nothing stored as $label" >&2
}
signalled=""
trap cleanup EXIT
trap 'signalled=INT; exit 130' INT
trap 'signalled=TERM; exit 143' TERM
trap 'signalled=HUP; exit 129' HUP

# --- run the suite -------------------------------------------------------------------------------
echo "$prog: suite $suite_name ($suite_file, ${#entries[@]} benches), label $label, $np ranks, launcher $launcher"
echo "$prog: results in $store/$label${baseline:+, compared with $store/$baseline}"
cp -- "$suite_file" "$partial/suite.txt"
timed_out=() failed=() cmd=()  # cmd: set by launch_cmd
for e in "${entries[@]}"; do
  name=${e%%|*}
  read -r -a words <<<"${e#*|}"
  launch_cmd "$np" "$bin_dir/${words[0]}" "${words[@]:1}" --label "$label" --out "$partial/$name.json" \
    ${timeout:+--timeout "$timeout"}
  echo
  echo "== $name: ${words[*]}"
  echo "\$ ${cmd[*]}"
  rc=0
  run_logged "$partial/logs/$name.log" "${cmd[@]}" || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "${words[*]}" >>"$partial/commands.tsv"
  case $rc in
    0) ;;
    2) die "$name rejected its arguments (exit 2, its message is above; $suite_file): nothing stored" ;;
    3) timed_out+=("$name") ;;
    *) failed+=("$name (exit $rc)") ;;
  esac
done
mv -T -- "$partial" "$store/$label" || die "--label $label: $store/$label appeared while the suite ran; nothing stored"
partial=""
echo
echo "stored: ${#entries[@]} results of suite $suite_name as label $label in $store/$label"

# --- compare with the baseline -------------------------------------------------------------------
status=0
[ ${#failed[@]} = 0 ] || status=1
if [ -z "$baseline" ]; then
  [ ${#failed[@]} = 0 ] || echo "benches that failed: $(join ", " "${failed[@]}")"
  [ ${#timed_out[@]} = 0 ] || { echo "benches that timed out: $(join ", " "${timed_out[@]}")"; status=3; }
  echo "no --baseline: nothing compared (labels in $store: $(labels_in "$store")); exit $status"
  exit "$status"
fi

# The comparison and its verdict are ccbench-report's (regression: bench by bench from the two folders'
# results and commands.tsv); its exit code is this script's.
echo
rc=0
run_logged "$store/$label/logs/regression.txt" "$report" regression "$store/$baseline" "$store/$label" \
  --label-a "$baseline" --label-b "$label" --threshold "${threshold%\%}" || rc=$?
"$report" regression "$store/$baseline" "$store/$label" --label-a "$baseline" --label-b "$label" \
  --threshold "${threshold%\%}" --format json >"$store/$label/logs/regression.json" 2>/dev/null || true
exit "$rc"
