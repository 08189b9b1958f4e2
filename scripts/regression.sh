#!/usr/bin/env bash
# Regression (DESIGN.md §1): run a suite of benches, store the results under a label, and compare
# them bench by bench with a stored baseline label through ccbench-report regression.
#   regression.sh --suite smoke --label before-upgrade
#   regression.sh --suite smoke --label after-upgrade --baseline before-upgrade
#   regression.sh --suite smoke --label nccl-swap --nccl-a OLD.so --nccl-b NEW.so   (interleaved)
#   regression.sh --suite smoke --label quiet --aa                                    (A/A: a false-alarm check)
# The variation that matters is between launches (a process's placement, its buffers, the machine's
# state), not between the samples of one launch; so the suite runs --launches N times (default 5), launch
# K stored complete in STORE/LABEL/launch-K/ (NAME.json, commands.tsv, logs/NAME.log), and the reporter
# draws each row's interval from the launches. Interleaved (--nccl-a/-b, --env-a/-b, --bin-a/-b, --aa):
# one run stores LABEL.a and LABEL.b, each bench run for side a and side b next to each other, in the
# order a b, b a, a b, ... (ABBA) launch after launch, and the verdict is drawn from the pairs (--paired).
# Exit: 0 no SLOWER, FAILED or MISSING row (or nothing to compare: stored only); 1 a SLOWER or FAILED
# row, a row of the baseline MISSING from the candidate, or a bench that failed; 2 bad input (one line),
# or no verdict (no row in common, or every row UNSURE); 3 a bench timed out. The exit code is the verdict.
set -euo pipefail
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, join, parse_options, run_logged, launch_cmd, ...

readonly prog=regression.sh
readonly suites_dir=$CCBENCH_SUITES

usage() {
  cat <<EOF
usage: $prog --suite NAME --label LABEL [--baseline LABEL] [options]
       $prog --suite NAME --label LABEL --nccl-a|--env-a|--bin-a ... --nccl-b|--env-b|--bin-b ... [options]
       $prog --suite NAME --label LABEL --aa [options]

Runs the benches of a suite (scripts/suites/NAME.suite: one bench command line per line) --launches
times, stores each launch's results in STORE/LABEL/launch-K/, and with --baseline compares each
bench's results with those in STORE/BASELINE/ (ccbench-report regression STORE/BASELINE STORE/LABEL),
printing the verdict tables: SLOWER / FASTER / SAME / UNSURE / FAILED per size and placement, and
one verdict for the suite (also in STORE/LABEL/logs/regression.json).

Why launches: two runs of an unchanged machine differ by more than the samples of one run vary
(placement, buffers, the machine's state), so a verdict from one launch a side calls noise a
regression. Each row's interval is drawn from the spread of its median between launches: that needs
several launches on each side (5 a side: 8 degrees of freedom). With one launch a side the rows are
UNSURE (NO VERDICT, exit 2) unless --launch-noise says how much a launch varies.

Interleaved: --nccl-a/--nccl-b, --env-a/--env-b or --bin-a/--bin-b run two setups in one go and store
them as LABEL.a and LABEL.b: in each launch every bench runs for side a and side b next to each other,
a then b on odd launches and b then a on even ones (ABBA: a drift or an order effect falls on both
sides alike), and the verdict is drawn from the launch pairs (ccbench-report regression --paired). No
--baseline then. --aa runs the same software on both sides (an A/A test): any SLOWER row is a false
alarm, and the reporter counts them.

options:
  --suite NAME|PATH     a suite in scripts/suites/ ($(suite_names)), or a file
  --label LABEL         name of this run (letters, digits, . _ -); STORE/LABEL (interleaved: STORE/LABEL.a
                        and STORE/LABEL.b) must not exist
  --baseline LABEL      a stored label to compare with (without it: only store)
  --history DB          instead of --baseline: each bench's own latest runs in a history index (ccbench-report
                        index; the same hosts and software), as ccbench-report regression --history DB
  --launches N          passes over the whole suite, 1 to 100 (default 5); launch K in LABEL/launch-K/
  --store DIR           where labels are stored (default: results/regression)
  --threshold PCT       a change smaller than this is SAME (default 5, ccbench-report's default)
  --launch-noise PCT    the between-launch variation of a row's median (relative sd, percent), if known:
                        passed to the reporter; lets a verdict be drawn from one launch a side
  --alarm-rate PCT      the false-alarm rate allowed over all the suite's rows together (default 5)
  --nccl-a PATH, --nccl-b PATH
                        interleaved: the NCCL library of side a / b (CCBENCH_NCCL_LIBRARY=PATH for its benches)
  --env-a "K=V ...", --env-b "K=V ..."
                        interleaved: environment assignments for side a / b's benches (split on spaces;
                        passed to every rank: Open MPI's mpirun gets -x K, srun exports the environment)
  --bin-a DIR, --bin-b DIR
                        interleaved: the bench binaries of side a / b (default: --bin)
  --aa                  interleaved, both sides the same: an A/A test of the verdict (reporter --aa)
  --np N                ranks per bench (default: the GPU count, else 2)
  --bin DIR             bench binaries (default: \$CCBENCH_BIN, else build/bench/apps)
  --report PATH         ccbench-report (default: next to the benches' build, else PATH)
  --launcher L          mpirun (default) or srun (srun --mpi=pmix -n N)
  --mpirun-args "..."   extra arguments for the launcher (split on spaces)
  --timeout S           passed to every bench: seconds without progress before it gives up
  -h, --help            this text

exit: 0 no regression, 1 SLOWER, FAILED or MISSING rows, 2 bad input or no verdict (no row in common, or
every row UNSURE), 3 a bench timed out
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
launcher=mpirun launcher_args="" timeout="" launches=5 launch_noise="" alarm_rate=5 aa=0
nccl_a="" nccl_b="" env_a="" env_b="" bin_a="" bin_b="" history=""
set_option() {  # set_option OPTION VALUE: an option that takes a value, or a switch and 1 (parse_options)
  case $1 in
    --suite) suite=$2 ;;
    --label) label=$2 ;;
    --baseline) baseline=$2 ;;
    --history) history=$2 ;;
    --launches) launches=$2 ;;
    --launch-noise) launch_noise=$2 ;;
    --alarm-rate) alarm_rate=$2 ;;
    --nccl-a) nccl_a=$2 ;;
    --nccl-b) nccl_b=$2 ;;
    --env-a) env_a=$2 ;;
    --env-b) env_b=$2 ;;
    --bin-a) bin_a=$2 ;;
    --bin-b) bin_b=$2 ;;
    --aa) aa=$2 ;;
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
parse_options --suite --label --baseline --history --store --threshold --np --bin --report --launcher --mpirun-args \
  --timeout --launches --launch-noise --alarm-rate --nccl-a --nccl-b --env-a --env-b --bin-a --bin-b --aa! -- "$@"

label_ok() { [[ $1 =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]]; }
[ -n "$suite" ] || die "--suite is required (suites: $(suite_names))"
[ -n "$label" ] || die "--label is required: a name for this run, like before-upgrade"
label_ok "$label" || die "--label '$label': use letters, digits, '.', '_' and '-' (not first)"
[ -z "$baseline" ] || label_ok "$baseline" || die "--baseline '$baseline': not a label (letters, digits, . _ -)"
[ "$baseline" != "$label" ] || die "--baseline $baseline is the label of this run: give another label"
[ -z "$history" ] || [ -z "$baseline" ] ||
  die "--history $history: the baseline is the history (each bench's latest runs in the index) or --baseline, not both"
[ -z "$history" ] || [ -f "$history" ] || die "--history $history: no such index (make it: ccbench-report index RESULTS --db $history)"
if ! [[ $launches =~ ^[1-9][0-9]{0,2}$ ]] || [ "$launches" -gt 100 ]; then
  die "--launches '$launches': expected a whole number of passes over the suite, 1 to 100"
fi
check_np "$np" 1
set_launcher "$launcher" "$launcher_args"

# Interleaved mode: two sides, a and b, stored as LABEL.a and LABEL.b and compared pair by pair.
sides=(-)  # one side, stored as LABEL; interleaved: a b
differ=()  # the options that make the sides differ
[ -z "$nccl_a$nccl_b" ] || differ+=(--nccl-a/--nccl-b)
[ -z "$env_a$env_b" ] || differ+=(--env-a/--env-b)
[ -z "$bin_a$bin_b" ] || differ+=(--bin-a/--bin-b)
if [ "$aa" = 1 ]; then
  [ ${#differ[@]} = 0 ] ||
    die "--aa runs the same software on both sides: it takes no $(join ", " "${differ[@]}") (drop --aa to compare two setups)"
  [ -z "$baseline" ] || die "--aa compares two sides of one run: it takes no --baseline"
fi
if [ "$aa" = 1 ] || [ ${#differ[@]} -gt 0 ]; then
  [ -z "$history" ] || die "--history: an interleaved run compares its own two sides, LABEL.a and LABEL.b; drop --history"
  [ -z "$baseline" ] ||
    die "--baseline $baseline: an interleaved run ($(join ", " "${differ[@]}")) compares its own two sides, LABEL.a and LABEL.b; drop --baseline"
  sides=(a b)
fi
for s in a b; do
  v=nccl_$s
  [ -z "${!v}" ] || [ -f "${!v}" ] || die "--nccl-$s ${!v}: no such file (give the NCCL library, libnccl.so.2, of side $s)"
done
env_ok() {  # env_ok FLAG "K=V ...": dies unless every word is an assignment NAME=VALUE
  local w words=()
  read -r -a words <<<"$2"
  for w in "${words[@]}"; do
    [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "$1 '$2': '$w' is not an assignment NAME=VALUE (separate them with spaces)"
  done
}
env_ok --env-a "$env_a"
env_ok --env-b "$env_b"
for s in a b; do
  v=bin_$s
  [ -z "${!v}" ] || [ -d "${!v}" ] || die "--bin-$s ${!v}: no such directory"
done
# Both sides given and no --bin: the candidate's tree finds ccbench-report (one side given: the other is --bin's default)
[ -n "$bin_dir" ] || [ -z "$bin_a" ] || [ -z "$bin_b" ] || bin_dir=$bin_b

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
bin_a=${bin_a:-$bin_dir} bin_b=${bin_b:-$bin_dir}
side_bin() {  # side_bin SIDE: the bench binaries of side a, b, or - (one side: --bin)
  case $1 in
    a) echo "$bin_a" ;;
    b) echo "$bin_b" ;;
    *) echo "$bin_dir" ;;
  esac
}

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
    for s in "${sides[@]}"; do
      b=$(side_bin "$s")
      [ -x "$b/$bench" ] || die "not built: $bench ($where; not in $b; build it, or give --bin DIR)"
    done
    seen[$bench]=$((${seen[$bench]:-0} + 1))
    name=$bench
    [ "${seen[$bench]}" = 1 ] || name=$bench-${seen[$bench]}
    entries+=("$name|$bench ${words[*]:1}")
  done
done <"$suite_file"
[ ${#entries[@]} -gt 0 ] || die "$suite_file: no bench lines (one 'NAME_bench ARGS...' or '@KIND ARGS...' per line)"

if { [ -n "$baseline$history" ] || [ ${#sides[@]} = 2 ]; } && ! have_report; then
  die "not built: ccbench-report (give --report PATH)"
fi
# The rules are the binaries': compare's --threshold, and each bench's command line (the suite's flags and
# --timeout) as its run will check it, before the first bench runs rather than in the middle of the suite.
if have_report; then
  "$report" regression --check --threshold "$threshold" ${launch_noise:+--launch-noise "$launch_noise"} \
    --alarm-rate "$alarm_rate" || exit 2
fi
for e in "${entries[@]}"; do
  read -r -a words <<<"${e#*|}"
  for s in "${sides[@]}"; do
    b=$(side_bin "$s")
    msg=$("$b/${words[0]}" --check-args "${words[@]:1}" ${timeout:+--timeout "$timeout"} 2>&1) ||
      die "suite $suite_file: ${words[*]}${timeout:+ --timeout $timeout}: ${msg#"${words[0]}: error: "}"
  done
done

# --- the store -----------------------------------------------------------------------------------
# side_label SIDE: the label side a, b or - (one side) is stored as
side_label() {
  case $1 in
    -) echo "$label" ;;
    *) echo "$label.$1" ;;
  esac
}
if [ -n "$baseline" ] && [ ! -d "$store/$baseline" ]; then
  die "--baseline $baseline: no such label in $store (labels: $(labels_in "$store"))"
fi
for s in "${sides[@]}"; do
  l=$(side_label "$s")
  [ ! -e "$store/$l" ] ||
    die "--label $label: already stored in $store/$l (labels: $(labels_in "$store")): give a new label, or remove it"
done

if [ -z "$np" ]; then
  gpus=0
  if command -v nvidia-smi >/dev/null; then
    gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c . || true)
  fi
  np=$([ "$gpus" -gt 0 ] && echo "$gpus" || echo 2)
fi

make_out_dir --store "$store"
store=$(cd "$store" && pwd)
# The run is written into hidden directories (one a side) and renamed to STORE/LABEL (LABEL.a, LABEL.b)
# once every launch of every bench has run, so an interrupted or rejected run never leaves a label that
# looks complete.
declare -A partial=()
cleanup() {
  local s
  stop_child  # a bench still running (a signal arrived): end its whole process group
  for s in "${!partial[@]}"; do
    [ -z "${partial[$s]}" ] || rm -rf -- "${partial[$s]}"
  done
  [ -z "$signalled" ] || echo "$prog: stopped by SIG$signalled; nothing stored as $label" >&2
}
signalled=""
trap cleanup EXIT
trap 'signalled=INT; exit 130' INT
trap 'signalled=TERM; exit 143' TERM
trap 'signalled=HUP; exit 129' HUP
for s in "${sides[@]}"; do
  partial[$s]=$(mktemp -d "$store/.$(side_label "$s").partial.XXXXXX")
  mkdir "${partial[$s]}/logs"
  cp -- "$suite_file" "${partial[$s]}/suite.txt"
done

# side_env SIDE: sets launch_env (workflow.sh) to the assignments of side a or b, none for - (one side)
side_env() {
  local words=() v
  launch_env=()
  case $1 in
    a) read -r -a words <<<"$env_a"; v=$nccl_a ;;
    b) read -r -a words <<<"$env_b"; v=$nccl_b ;;
    *) return 0 ;;
  esac
  [ -z "$v" ] || launch_env+=("CCBENCH_NCCL_LIBRARY=$v")
  launch_env+=("${words[@]}")
}

# --- run the suite -------------------------------------------------------------------------------
stored_as=()
for s in "${sides[@]}"; do stored_as+=("$store/$(side_label "$s")"); done
echo "$prog: suite $suite_name ($suite_file, ${#entries[@]} benches), label $label, $np ranks, launcher $launcher, $launches launch(es)"
if [ ${#sides[@]} = 2 ]; then
  for s in a b; do
    side_env "$s"
    desc="bin $(side_bin "$s")${launch_env[*]:+, env ${launch_env[*]}}"
    echo "$prog: side $s ($(side_label "$s")): $desc"
    # What the side was, for whoever reads the store later (the results record their own environment).
    printf 'side %s of an interleaved run%s\nbin %s\nenv %s\n' "$s" "$([ "$aa" = 1 ] && echo " (A/A)")" \
      "$(side_bin "$s")" "${launch_env[*]:-(none: the environment as it was)}" >"${partial[$s]}/side.txt"
  done
  echo "$prog: interleaved: each bench for side a and side b in turn, a b on odd launches, b a on even ones"
fi
echo "$prog: results in $(join ", " "${stored_as[@]}")${baseline:+, compared with $store/$baseline}"
# One launch here and one in the baseline (a label stored before launches is one): no spread between launches to
# draw an interval from. A baseline of several launches gives one (pooled), so it is not said then.
base_launches=1
if [ -n "$baseline" ]; then
  base_launches=$(find "$store/$baseline" -mindepth 1 -maxdepth 1 -type d -name 'launch-*' | grep -c . || true)
  [ "$base_launches" -gt 0 ] || base_launches=1
fi
if [ "$launches" = 1 ] && [ "$base_launches" = 1 ] && [ -z "$launch_noise" ] &&
  { [ -n "$baseline" ] || [ ${#sides[@]} = 2 ]; }; then
  echo "$prog: note: one launch a side gives no between-launch spread: every row UNSURE (NO VERDICT) unless --launch-noise"
fi
timed_out=() failed=() cmd=()  # cmd: set by launch_cmd
for ((k = 1; k <= launches; k++)); do
  order=("${sides[@]}")
  [ ${#sides[@]} = 1 ] || [ $((k % 2)) = 1 ] || order=(b a)
  echo
  echo "== launch $k of $launches${order[1]:+ (order: ${order[*]})}"
  for s in "${sides[@]}"; do
    mkdir -p "${partial[$s]}/launch-$k/logs"
  done
  for e in "${entries[@]}"; do
    name=${e%%|*}
    read -r -a words <<<"${e#*|}"
    for s in "${order[@]}"; do
      dir=${partial[$s]}/launch-$k
      side_env "$s"
      launch_cmd "$np" "$(side_bin "$s")/${words[0]}" "${words[@]:1}" --label "$(side_label "$s")" \
        --out "$dir/$name.json" ${timeout:+--timeout "$timeout"}
      tag="$name, launch $k"
      [ "$s" = - ] || tag+=", side $s"
      echo
      echo "== $tag: ${words[*]}"
      echo "\$ ${cmd[*]}"
      rc=0
      run_logged "$dir/logs/$name.log" "${cmd[@]}" || rc=$?
      printf '%s\t%s\t%s\n' "$name" "$rc" "${words[*]}" >>"$dir/commands.tsv"
      case $rc in
        0) ;;
        2) die "$name rejected its arguments (exit 2 in launch $k, its message is above; $suite_file): nothing stored" ;;
        3) timed_out+=("$tag") ;;
        *) failed+=("$tag (exit $rc)") ;;
      esac
    done
  done
done
for s in "${sides[@]}"; do
  l=$(side_label "$s")
  if ! mv -T -- "${partial[$s]}" "$store/$l"; then
    [ "$s" != b ] || rm -rf -- "${store:?}/$label.a"  # half an interleaved run is no run
    die "--label $label: $store/$l appeared while the suite ran; nothing stored"
  fi
  partial[$s]=""
done
echo
echo "stored: $launches launch(es) of the ${#entries[@]} benches of suite $suite_name as label(s) $(join ", " "${stored_as[@]##*/}") in $store"

# --- compare -------------------------------------------------------------------------------------
status=0
[ ${#failed[@]} = 0 ] || status=1
if [ -z "$baseline$history" ] && [ ${#sides[@]} = 1 ]; then
  [ ${#failed[@]} = 0 ] || echo "benches that failed: $(join ", " "${failed[@]}")"
  [ ${#timed_out[@]} = 0 ] || { echo "benches that timed out: $(join ", " "${timed_out[@]}")"; status=3; }
  echo "no --baseline: nothing compared (labels in $store: $(labels_in "$store")); exit $status"
  exit "$status"
fi

# The comparison and its verdict are ccbench-report's (regression: bench by bench from the two folders'
# launches, their results and commands.tsv); its exit code is this script's.
if [ ${#sides[@]} = 2 ]; then
  base=$label.a cand=$label.b
  how=(--paired)
  [ "$aa" = 0 ] || how+=(--aa)
else
  base=$baseline cand=$label
  how=()
fi
how+=(--threshold "${threshold%\%}")
[ -z "$launch_noise" ] || how+=(--launch-noise "${launch_noise%\%}")
how+=(--alarm-rate "${alarm_rate%\%}")
echo
rc=0
if [ -n "$history" ]; then  # the baseline: each bench's latest runs in the index, same hosts and software
  run_logged "$store/$cand/logs/regression.txt" "$report" regression --history "$history" "$store/$cand" \
    --label-b "$cand" "${how[@]}" || rc=$?
  "$report" regression --history "$history" "$store/$cand" --label-b "$cand" "${how[@]}" \
    --format json >"$store/$cand/logs/regression.json" 2>/dev/null || true
  exit "$rc"
fi
run_logged "$store/$cand/logs/regression.txt" "$report" regression "$store/$base" "$store/$cand" \
  --label-a "$base" --label-b "$cand" "${how[@]}" || rc=$?
"$report" regression "$store/$base" "$store/$cand" --label-a "$base" --label-b "$cand" "${how[@]}" \
  --format json >"$store/$cand/logs/regression.json" 2>/dev/null || true
exit "$rc"
