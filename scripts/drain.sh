#!/usr/bin/env bash
# ccbench-drain (issue 39, section 1): Slurm nodes drained on ccbench's verdicts, and resumed only when ccbench
# drained them. Reads `ccbench-report accept --format json` (one node) and `ccbench-report fleet --format json`
# (a host each) through `ccbench-report get`, and runs scontrol:
#   a host the verdict FAILs      scontrol update NodeName=H State=DRAIN Reason="ccbench: ..."
#   a host that now passes        scontrol update NodeName=H State=RESUME, only if its DRAIN reason starts "ccbench:"
# A node drained or down for any other reason is never touched, nor is one the verdicts did not judge. A verdict
# that cannot be read, holds no verdict or has expired changes nothing: exit 2 before any scontrol update.
# Dry run by default (the scontrol lines printed), --apply to run them.
# Exit: 0 done; 1 an scontrol update failed; 2 bad input (one line), nothing changed.
set -euo pipefail
# shellcheck source=SCRIPTDIR/env.sh
source "$(dirname "$0")/env.sh"
# shellcheck source=SCRIPTDIR/lib/workflow.sh
source "$(dirname "$0")/lib/workflow.sh"  # die, parse_options

readonly prog=ccbench-drain
readonly reason_max=255    # bytes: slurmdbd keeps a node's reason in a MySQL tinytext
readonly reason_safe='A-Za-z0-9 ._:/+<,()-'  # what a reason keeps; anything else becomes '_'
readonly ours='ccbench:'   # the prefix of every reason this command writes, and of the only ones it resumes

usage() {
  cat <<EOF
usage: $prog --verdict FILE [--verdict FILE]... [options]
       $prog --this-node [--verdict FILE]... [options]     (HealthCheckProgram, epilog)

Drains the Slurm nodes that ccbench's verdicts FAIL and resumes the ones that now pass, if ccbench
drained them. Verdicts are the JSON of \`ccbench-report accept --format json\` (one node: the host
of the results in the verdict's folder, as accept-node.sh leaves them, or --host) and of
\`ccbench-report fleet --format json\` (every host of the sweep: a BAD HOST fails; a host whose
rows are all ok, with no BAD LINK, CANNOT TELL or SUSPICIOUS pair, in a sweep that is complete,
not FLEET LOW and not SPLIT, passes; any other host is left as it is).
accept: FAIL drains; PASS and WARNING (warning-level misses alone, each on its evidence) pass; a WARNING for
evidence a check lacked, and WAIVED, are left as they are.

  drain   a failing host whose node is not drained or down:
          scontrol update NodeName=N State=DRAIN Reason="ccbench: CHECK FIGURE < THRESHOLD (run ID)"
  resume  a passing host whose node is drained with a reason that starts "$ours":
          scontrol update NodeName=N State=RESUME
A node drained or down for another reason, a node no verdict judged, and a host that is no Slurm
node (NodeName, NodeHostName, or the short name of either) are never touched.

options:
  --verdict FILE   a verdict (repeat for several); with --this-node, default \$CCBENCH_DRAIN_VERDICT
                   (paths separated by ':')
  --apply          run the scontrol updates (default: print them, change nothing)
  --log FILE       append each action, with the verdict that caused it, to FILE
  --this-node      judge this node only: \$SLURMD_NODENAME, else \`hostname -s\`
  --host NAME      the host an accept verdict judged (default: the results beside it)
  --report PATH    ccbench-report (default: the install's or the build's, else PATH)
  -h, --help       this text

exit: 0 done, 1 an scontrol update failed, 2 bad input (nothing changed)
EOF
}

verdicts=() apply=0 log="" this_node=0 accept_host="" report=""
set_option() {  # set_option OPTION VALUE (parse_options)
  case $1 in
    --verdict) verdicts+=("$2") ;;
    --apply) apply=1 ;;
    --log) log=$2 ;;
    --this-node) this_node=1 ;;
    --host) accept_host=$2 ;;
    --report) report=$2 ;;
  esac
}
parse_options --verdict --apply! --log --this-node! --host --report -- "$@"

if [ "$this_node" = 1 ] && [ ${#verdicts[@]} = 0 ] && [ -n "${CCBENCH_DRAIN_VERDICT:-}" ]; then
  IFS=: read -r -a verdicts <<<"$CCBENCH_DRAIN_VERDICT"
fi
[ ${#verdicts[@]} -gt 0 ] || die "--verdict FILE: which verdict to act on (see --help)"
if [ -z "$report" ]; then
  # shellcheck disable=SC2154  # CCBENCH_BIN, CCBENCH_BUILD are env.sh's
  for r in "$CCBENCH_BIN/ccbench-report" "${CCBENCH_BUILD:-/nonexistent}/report/ccbench-report"; do
    [ -x "$r" ] && report=$r && break
  done
  report=${report:-$(command -v ccbench-report || true)}
fi
if [ -z "$report" ] || [ ! -x "$report" ]; then
  die "not found: ccbench-report (give --report PATH)"
fi
command -v scontrol >/dev/null || die "scontrol is not on PATH: this runs where Slurm's clients do"
if [ -n "$log" ]; then
  { : >>"$log"; } 2>/dev/null || die "--log $log: cannot append to it"
fi
[ -z "$accept_host" ] || [[ $accept_host =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
  die "--host '$accept_host': not a host name"

get() {  # get FILE POINTER [get options]: ccbench-report get, the file's values a line each; dies if unreadable
  local out
  out=$("$report" get "$@" --max-file-size 16G 2>&1) || die "unreadable: ${out#ccbench-report: }; nothing changed"
  [ -z "$out" ] || printf '%s\n' "$out"
}

# reason TEXT... TAIL: the words as one Slurm reason, "ccbench: " first and TAIL (the run) last, whatever is cut to
# fit reason_max bytes cut from the middle; tabs and newlines as spaces, bytes outside reason_safe as '_', spaces
# squeezed. Whatever a file held, the reason is one argv element that neither a shell nor Slurm reads as more.
reason() {
  local body tail=${!#}
  body=$(safe_text "$ours" "${@:1:$#-1}")
  tail=$(safe_text "$tail")
  tail=${tail:0:$((reason_max / 2))}
  body=${body:0:$((reason_max - ${#tail} - 1))}
  printf '%s %s' "${body% }" "$tail"
}

safe_text() {  # safe_text WORD...: the words, a space between, in reason_safe's bytes
  local text
  text=$(printf '%s ' "$@" | LC_ALL=C tr '\t\n\r' '   ' | LC_ALL=C tr -c "$reason_safe" '_' | tr -s ' ')
  printf '%s' "${text% }"
}

sane_host() {  # sane_host NAME: a name a host can have (and no hostlist expression)
  [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]]
}

# --- the verdicts, each read in full before anything is done -----------------------------------------
# judged[HOST]=fail|pass|unclear, why[HOST]=the reason of its first failure (or why it is left), cause[HOST]=the
# verdict's file. A host several verdicts judge fails if one fails, passes if all pass, else is left as it is.
declare -A judged=() why=() cause=()
judge() {  # judge HOST OUTCOME WHY FILE
  local old=${judged[$1]:-}
  if [ -z "$old" ] || { [ "$old" != fail ] && [ "$2" = fail ]; }; then
    judged[$1]=$2 why[$1]=$3 cause[$1]=$4
  elif [ "$old" = pass ] && [ "$2" = unclear ]; then
    judged[$1]=unclear why[$1]=$3 cause[$1]=$4
  fi
}

lines_of() {  # lines_of TEXT: how many lines TEXT holds (0 when empty)
  if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l; fi
}

run_ids() {  # run_ids FILE...: "run ID" of the first result that holds one, "+N" for the others
  local f id first="" n=0
  for f; do
    id=$("$report" get "$f" /run/id --missing-ok 2>/dev/null | head -1 || true)
    [ -n "$id" ] || continue
    n=$((n + 1))
    [ -n "$first" ] || first=$id
  done
  [ -n "$first" ] || return 0
  printf 'run %s%s' "$first" "$([ "$n" -le 1 ] || echo " +$((n - 1))")"
}

read_fleet() {  # read_fleet FILE
  local f=$1 verdict rows n host v score low pairs threshold bench run partial bad lows
  verdict=$(get "$f" /verdict --missing-ok)
  case $verdict in
    pass | fail) ;;
    *) die "$f: holds no fleet verdict ('$verdict'): NO VERDICT changes nothing" ;;
  esac
  rows=$(get "$f" '/hosts/*' --fields host,verdict,median_of_reference,low,pairs --missing-ok)
  n=$(get "$f" /hosts --count)
  # A host name that holds a newline or a tab would read as two rows or more fields: the verdict is unreadable.
  if [ "$(lines_of "$rows")" != "$n" ] || awk -F'\t' 'NF != 5 {bad = 1} END {exit !bad}' <<<"$rows"; then
    die "$f: a host name holds a newline or a tab: unreadable, nothing changed"
  fi
  threshold=$(get "$f" /threshold)
  bench=$(get "$f" /benchmark)
  partial=$(get "$f" /partial)
  lows=$(get "$f" '/fleet_low/*' --missing-ok | grep -c true || true)
  # The hosts that a pair names without the data saying which end is wrong.
  bad=$(get "$f" '/bad_links/*/hosts/*' --missing-ok; get "$f" '/cannot_tell/*/hosts/*' --missing-ok
        get "$f" '/suspicious_pairs/*/hosts/*' --missing-ok)
  local files=() file
  while IFS= read -r file; do
    [ -n "$file" ] || continue
    [[ $file == /* ]] || [ -f "$file" ] || file=$(dirname "$f")/$file
    files+=("$file")
  done < <(get "$f" '/files/*' --missing-ok)
  run=$(run_ids "${files[@]}")
  run=${run:-$(basename "$f")}
  local -A worst=() state=()
  while IFS=$'\t' read -r host v score low pairs; do
    [ -n "$host" ] || continue
    if [ "$v" = bad_host ]; then
      # The worst lane of a host that has several (one per local rank).
      if [ "${state[$host]:-}" != bad ] || awk -v a="$score" -v b="${worst[$host]%% *}" 'BEGIN {exit !(a < b)}'; then
        worst[$host]="$score $low $pairs"
      fi
      state[$host]=bad
    elif [ "$v" = ok ]; then
      state[$host]=${state[$host]:-ok}
    elif [ "${state[$host]:-}" != bad ]; then
      state[$host]=other  # a row neither ok nor bad_host (none yet): not a pass
    fi
  done <<<"$rows"
  for host in "${!state[@]}"; do
    if [ "${state[$host]}" = bad ]; then
      read -r score low pairs <<<"${worst[$host]}"
      judge "$host" fail "$(reason "fleet-bad-host $bench $(awk -v s="$score" -v t="$threshold" \
        'BEGIN {printf "%.2f < %.2f of level", s, 1 - t}'), $low/$pairs pairs low" "($run)")" "$f"
    elif [ "${state[$host]}" != ok ]; then
      judge "$host" unclear "fleet: its row is neither ok nor bad_host" "$f"
    elif grep -qxF -- "$host" <<<"$bad"; then
      judge "$host" unclear "fleet: a pair of it is BAD LINK, CANNOT TELL or SUSPICIOUS" "$f"
    elif [ "$partial" = true ]; then
      judge "$host" unclear "fleet: the sweep is partial (--partial)" "$f"
    elif [ "$lows" != 0 ] || [ "$(get "$f" /splits --count --missing-ok)" != 0 ]; then
      judge "$host" unclear "fleet: FLEET LOW or a SPLIT (the data cannot say which host)" "$f"
    else
      judge "$host" pass "fleet: ok" "$f"
    fi
  done
}

read_accept() {  # read_accept FILE
  local f=$1 verdict until dir hosts=() results=() r h names n i id measured threshold figure
  verdict=$(get "$f" /verdict --missing-ok)
  case $verdict in
    pass | fail | warning | waived) ;;
    *) die "$f: holds no accept verdict ('$verdict'): NO VERDICT changes nothing" ;;
  esac
  until=$(get "$f" /valid_until --missing-ok)
  if [ -n "$until" ] && [ "$until" != null ]; then
    local t
    t=$(date -u -d "$until" +%s 2>/dev/null) || die "$f: valid_until '$until' is no time"
    [ "$t" -ge "$(date -u +%s)" ] || die "$f: expired at $until: judge the node again; nothing changed"
  fi
  dir=$(dirname "$f")
  for r in "$dir"/*.json; do
    if [ ! -f "$r" ] || [ "$r" = "$f" ]; then continue; fi
    names=$("$report" get "$r" '/environment/hosts/*/hostname' --missing-ok 2>/dev/null) || continue
    [ -n "$names" ] || continue
    n=$(get "$r" /environment/hosts --count)
    [ "$(lines_of "$names")" = "$n" ] || die "$r: a host name holds a newline: unreadable, nothing changed"
    results+=("$r")
    while IFS= read -r h; do hosts+=("$h"); done <<<"$names"
  done
  if [ -n "$accept_host" ]; then
    hosts=("$accept_host")
  else
    mapfile -t hosts < <(printf '%s\n' "${hosts[@]}" | sort -u)
    [ ${#hosts[@]} = 1 ] ||
      die "$f: the results beside it name ${#hosts[@]} hosts (an accept verdict is of one node): give --host NAME"
  fi
  case $verdict in
    pass) judge "${hosts[0]}" pass "accept: $verdict" "$f" ;;
    warning)  # warning-level misses alone pass, unless one was for evidence the check lacked: never a pass
      if get "$f" '/checks/*/lacked_evidence' --missing-ok | grep -qx true; then
        judge "${hosts[0]}" unclear "accept: warning on evidence a check lacked (never a pass)" "$f"
      else
        judge "${hosts[0]}" pass "accept: $verdict" "$f"
      fi ;;
    waived) judge "${hosts[0]}" unclear "accept: waived (--waive-unjudged: never a pass)" "$f" ;;
    fail)
      # The first check that failed: its index read from the verdicts alone (one word each), then its texts.
      i=$(get "$f" '/checks/*/verdict' | awk '$0 == "fail" {print NR - 1; exit}')
      [ -n "$i" ] || die "$f: verdict fail without a failing check: unreadable, nothing changed"
      id=$(get "$f" "/checks/$i/id")
      measured=$(get "$f" "/checks/$i/measured" --missing-ok)
      threshold=$(get "$f" "/checks/$i/threshold" --missing-ok)
      [ -n "$measured" ] || measured=$(get "$f" "/checks/$i/detail" --missing-ok)
      case $threshold in
        ">="*) figure="$measured < ${threshold#>=}" ;;
        "<="*) figure="$measured > ${threshold#<=}" ;;
        *) figure="$measured, not $threshold" ;;
      esac
      r=$(run_ids "${results[@]}")
      judge "${hosts[0]}" fail "$(reason "$id" "$figure" "(${r:-$(basename "$f")})")" "$f" ;;
  esac
}

for f in "${verdicts[@]}"; do
  if [ ! -f "$f" ] || [ ! -r "$f" ]; then die "--verdict $f: not a readable file; nothing changed"; fi
  get "$f" /verdict --missing-ok >/dev/null  # parsed once here, where a failure ends the script (not in a test)
  if [ -n "$(get "$f" /profile/id --missing-ok)" ] && [ "$(get "$f" /checks --missing-ok --count)" != 0 ]; then
    read_accept "$f"
  elif [ -n "$(get "$f" /benchmark --missing-ok)" ] && [ "$(get "$f" /hosts --missing-ok --count)" != 0 ]; then
    read_fleet "$f"
  else
    die "$f: neither an accept nor a fleet verdict (ccbench-report accept|fleet --format json); nothing changed"
  fi
done

# --- the nodes, as Slurm has them -------------------------------------------------------------------
me=""
if [ "$this_node" = 1 ]; then
  me=${SLURMD_NODENAME:-$(hostname -s)}
  sane_host "$me" || die "this node's name '$me' is not a host name"
fi
shown=$(scontrol show node ${me:+"$me"} 2>&1) || die "scontrol show node${me:+ $me}: ${shown##*error: }; nothing changed"
# One row per node: name, NodeHostName, State (IDLE+DRAIN, DOWN+NOT_RESPONDING, ...), Reason without Slurm's
# " [user@time]". The Reason line is read first and alone: its text is anyone's, and may hold "State=".
nodes=$(awk '
  function row() { if (name != "") printf "%s\t%s\t%s\t%s\n", name, host, state, reason }
  /^NodeName=/ { row(); name = substr($1, 10); host = ""; state = ""; reason = ""; next }
  /^ *Reason=/ { sub(/^ *Reason=/, ""); sub(/ \[[^]]*\]$/, ""); gsub(/[\t\r]/, " "); reason = $0; next }
  { for (i = 1; i <= NF; i++) {
      if ($i ~ /^NodeHostName=/) host = substr($i, 14)
      if ($i ~ /^State=/) state = substr($i, 7) } }
  END { row() }' <<<"$shown")
declare -A node_state=() node_reason=() alias=()
add_alias() {  # add_alias KEY NODE: KEY names NODE, unless it names another too ("?": ambiguous)
  [ -n "$1" ] || return 0
  if [ -z "${alias[$1]:-}" ] || [ "${alias[$1]}" = "$2" ]; then alias[$1]=$2; else alias[$1]="?"; fi
}
while IFS=$'\t' read -r name host state why_down; do
  [ -n "$name" ] || continue
  node_state[$name]=$state node_reason[$name]=$why_down
done <<<"$nodes"
# A host is the node of that NodeName, else of that NodeHostName, else of that short name (either's).
node_of() {  # node_of HOST: the node's name, or nothing
  local h=$1 n
  [ -z "${node_state[$h]+x}" ] || { echo "$h"; return; }
  n=${alias[host:$h]:-${alias[short:${h%%.*}]:-}}
  [ -z "$n" ] || [ "$n" = "?" ] || echo "$n"
}
for name in "${!node_state[@]}"; do
  host=$(awk -F'\t' -v n="$name" '$1 == n {print $2; exit}' <<<"$nodes")
  add_alias "host:$host" "$name"
  add_alias "short:${name%%.*}" "$name"
  add_alias "short:${host%%.*}" "$name"
done

# --- the actions ---------------------------------------------------------------------------------
quoted() {  # quoted ARG...: the command as a shell line (each argument one word when read back)
  local a out=()
  for a; do
    if [[ $a =~ ^[A-Za-z0-9=_.,:/+@%-]+$ ]]; then
      out+=("$a")
    elif [[ $a != *"'"* ]]; then
      out+=("'$a'")
    else
      out+=("$(printf '%q' "$a")")
    fi
  done
  echo "${out[*]}"
}

note() {  # note TEXT: a comment line of the output (the output reads as a shell script)
  printf '# %s\n' "$*" | LC_ALL=C tr -d '\000-\011\013-\037'
}

logged() {  # logged TEXT: appended to --log, with the time
  [ -z "$log" ] || printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" | LC_ALL=C tr -d '\000-\011\013-\037' >>"$log"
}

failed=0 acted=0
act() {  # act NODE HOST STATE [REASON]: scontrol update NodeName=NODE State=STATE [Reason=REASON], or its line
  local node=$1 host=$2 cmd out rc=0
  cmd=(scontrol update "NodeName=$node" "State=$3")
  [ $# -lt 4 ] || cmd+=("Reason=$4")
  acted=$((acted + 1))
  quoted "${cmd[@]}"
  if [ "$apply" = 0 ]; then
    logged "dry-run $node: $(quoted "${cmd[@]}") (host $host, verdict ${cause[$host]}: ${why[$host]})"
    return
  fi
  out=$("${cmd[@]}" 2>&1) || rc=$?
  if [ "$rc" = 0 ]; then
    note "done"
  else
    failed=1
    note "FAILED (exit $rc): $out"
  fi
  logged "$([ "$rc" = 0 ] && echo applied || echo "FAILED exit $rc") $node: $(quoted "${cmd[@]}") (host $host," \
    "verdict ${cause[$host]}: ${why[$host]})${out:+: $out}"
}

mode=$([ "$apply" = 1 ] && echo "applying" || echo "dry run: these lines, nothing changed; --apply runs them")
note "$prog: ${#judged[@]} host(s) judged by ${#verdicts[@]} verdict(s)${me:+, this node only: $me}; $mode"
mapfile -t hosts < <(printf '%s\n' "${!judged[@]}" | LC_ALL=C sort)
for host in "${hosts[@]}"; do
  outcome=${judged[$host]} reason_now=""
  if ! sane_host "$host"; then
    note "host $(printf '%q' "$host"): not a name a Slurm node has: left alone"
    continue
  fi
  node=$(node_of "$host")
  if [ -z "$node" ]; then
    [ -n "$me" ] || note "$host: no Slurm node of that name (NodeName, NodeHostName, short name): left alone"
    continue
  fi
  state=${node_state[$node]} reason_now=${node_reason[$node]}
  drained=0 down=0
  [[ +$state+ != *+DRAIN* ]] || drained=1
  [[ +$state+ != *+DOWN* && +$state+ != *+FAIL* ]] || down=1
  label="$node$([ "$node" = "$host" ] || echo " (host $host)")"
  case $outcome in
    fail)
      if [ "$down" = 1 ] || { [ "$drained" = 1 ] && [[ $reason_now != "$ours"* ]]; }; then
        note "$label: FAIL (${why[$host]}), but $state for '$reason_now', not ccbench's: left alone"
      elif [ "$drained" = 1 ] && [ "$reason_now" = "${why[$host]}" ]; then
        note "$label: FAIL, already drained for it: nothing to do"
      else
        note "$label: FAIL by ${cause[$host]}"
        act "$node" "$host" DRAIN "${why[$host]}"
      fi ;;
    pass)
      if [ "$drained" = 1 ] && [ "$down" = 0 ] && [[ $reason_now == "$ours"* ]]; then
        note "$label: passes (${why[$host]}) by ${cause[$host]}, drained by ccbench ('$reason_now')"
        act "$node" "$host" RESUME
      elif [ "$drained" = 1 ] || [ "$down" = 1 ]; then
        note "$label: passes, but $state for '$reason_now'$([[ $reason_now == "$ours"* ]] && echo " (down: not" \
          "ccbench's to resume)" || echo ", not ccbench's"): left alone"
      else
        note "$label: passes, $state: nothing to do"
      fi ;;
    *) note "$label: ${why[$host]}: left as it is ($state)" ;;
  esac
done
note "$prog: $acted $([ "$apply" = 1 ] && echo "update(s) run" || echo "update(s) to run with --apply")$(
  [ "$failed" = 0 ] || echo ", one or more FAILED")"
exit "$failed"
