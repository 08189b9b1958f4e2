# shellcheck shell=bash
# Sourced by the workflow scripts, scripts/accept-node.sh and scripts/regression.sh, after
# scripts/env.sh (CCBENCH_BUILD): what the two share. The sourcing script sets `prog` (its name in
# messages) and defines `usage` (its --help text) and `set_option OPTION VALUE` (parse_options
# hands it each option). State kept here: bin_dir (check_bin_dir, find_tool), the launcher
# (set_launcher, launch_cmd), child (run_logged, stop_child); launch_cmd sets the caller's array cmd.

die() {  # die MESSAGE...: bad input: one line "PROG: MESSAGE" on stderr, exit 2
  # shellcheck disable=SC2154  # prog is set by the sourcing script
  echo "$prog: $*" >&2
  exit 2
}

# make_out_dir FLAG DIR: the folder a script writes its files into: created (with its parents) or one
# that is there, never a device, a pipe, a symlink or a file; checked writable by writing in it. Dies
# (exit 2, one line) otherwise, before anything runs.
make_out_dir() {
  local flag=$1 dir=$2 probe
  if [ -L "$dir" ]; then
    die "$flag $dir: is a symbolic link; give a folder (only regular files are written, in real folders)"
  fi
  if [ -e "$dir" ] && [ ! -d "$dir" ]; then
    die "$flag $dir: is $(stat -c %F -- "$dir"), not a folder"
  fi
  mkdir -p -- "$dir" 2>/dev/null || die "$flag $dir: cannot create it (is a parent missing, a file, or read-only?)"
  probe=$(mktemp -p "$dir" .ccbench-probe.XXXXXX 2>/dev/null) || die "$flag $dir: is not writable"
  rm -f -- "$probe"
}

join() {  # join SEPARATOR ITEM...: the items with SEPARATOR between them
  local sep=$1 text=${2-} item
  shift 2 || shift $#
  for item; do text+=$sep$item; done
  echo "$text"
}

# parse_options OPTION... -- ARG...: reads the command line ARG... left to right. -h or --help
# prints usage and exits 0; each OPTION (the options that take a value) comes as "OPTION VALUE" or
# "OPTION=VALUE" and is handed to the script's set_option OPTION VALUE; an OPTION written with a
# trailing '!' (--aa!) is a switch that takes no value: given, it is handed as set_option OPTION 1.
# Anything else, an OPTION without its value, or a switch with one, dies (exit 2).
parse_options() {
  local takes_value=() switches=() opt val has_val known o
  while [ "$1" != -- ]; do
    if [[ $1 == *! ]]; then
      switches+=("${1%!}")
    else
      takes_value+=("$1")
    fi
    shift
  done
  shift
  while [ $# -gt 0 ]; do
    opt=$1 val="" has_val=0
    case $opt in
      --*=*) val=${opt#*=} opt=${opt%%=*} has_val=1 ;;
    esac
    case $opt in
      -h | --help) usage; exit 0 ;;
    esac
    known=0
    for o in "${switches[@]}"; do
      [ "$o" != "$opt" ] || known=2
    done
    if [ "$known" = 2 ]; then
      [ "$has_val" = 0 ] || die "$opt takes no value (see --help)"
      shift
      set_option "$opt" 1
      continue
    fi
    for o in "${takes_value[@]}"; do
      [ "$o" != "$opt" ] || known=1
    done
    [ "$known" = 1 ] || die "unknown option '$opt' (see --help)"
    if [ "$has_val" = 0 ]; then
      [ $# -ge 2 ] || die "$opt needs a value (see --help)"
      val=$2
      shift
    fi
    shift
    set_option "$opt" "$val"
  done
}

# check_np N MIN: dies unless --np N, when given (not empty), is a whole number from 1 up; MIN only
# words the message ("at least MIN"): a script that needs more ranks checks that itself.
check_np() {
  [ -z "$1" ] || [[ $1 =~ ^[1-9][0-9]*$ ]] || die "--np '$1': expected a whole number of ranks, at least $2"
}

# set_launcher LAUNCHER ARGS: dies unless --launcher LAUNCHER is mpirun or srun and on PATH; keeps
# it, and --mpirun-args ARGS split on spaces, for launch_cmd. An mpirun that says it is Open MPI
# (launcher_openmpi=1) is told which variables to pass to the ranks (-x NAME, launch_cmd); other
# mpiruns (MPICH's and Intel's hydra) and srun pass the whole environment by default.
set_launcher() {
  case $1 in
    mpirun | srun) command -v "$1" >/dev/null || die "--launcher $1: '$1' is not on PATH" ;;
    *) die "--launcher '$1': expected mpirun or srun" ;;
  esac
  launcher_name=$1
  launcher_openmpi=0
  if [ "$1" = mpirun ]; then
    local says
    says=$(mpirun --version 2>&1 </dev/null || true)  # not piped into grep -q: under pipefail its early exit fails the pipe
    [[ $says != *"Open MPI"* && $says != *OpenRTE* ]] || launcher_openmpi=1
  fi
  read -r -a launcher_args_split <<<"$2"
}

launch_env=()  # NAME=VALUE assignments for the ranks of the next launch_cmd (empty: the environment as it is)

# launch_cmd NP BENCH ARGS...: sets the array cmd to BENCH ARGS... started on NP ranks by the
# launcher set_launcher kept: srun --mpi=pmix -n NP, or mpirun -np NP (with --oversubscribe when NP
# is more than the cores here), the launcher's extra arguments before BENCH. With assignments in
# the array launch_env, the launcher runs under `env NAME=VALUE...` and Open MPI's mpirun is given
# -x NAME for each, so that they reach ranks on other hosts too (srun exports the environment).
# shellcheck disable=SC2034  # cmd is the caller's
launch_cmd() {
  local n=$1 a
  shift
  cmd=()
  [ ${#launch_env[@]} = 0 ] || cmd=(env "${launch_env[@]}")
  if [ "$launcher_name" = srun ]; then
    cmd+=(srun --mpi=pmix -n "$n" "${launcher_args_split[@]}" "$@")
  else
    cmd+=(mpirun -np "$n")
    [ "$n" -le "$(nproc)" ] || cmd+=(--oversubscribe)
    if [ "${launcher_openmpi:-0}" = 1 ]; then
      for a in "${launch_env[@]}"; do cmd+=(-x "${a%%=*}"); done
    fi
    cmd+=("${launcher_args_split[@]}" "$@")
  fi
}

# need_data_dir DIR FLAG WHAT: dies unless DIR (the profiles or suites of env.sh) is a folder: an
# install whose share/ccbench was moved away finds nothing by name, and says so in one line.
need_data_dir() {
  [ -d "$1" ] && return 0
  local why=""
  # shellcheck disable=SC2154  # CCBENCH_INSTALLED is env.sh's
  [ "$CCBENCH_INSTALLED" = 1 ] && why=" (was this install's share/ccbench moved away from its bin/?)"
  die "$2: $1 is missing, so no $3 can be found by name$why; give the $3's file instead"
}

# check_bin_dir: bin_dir (--bin) defaults to the install's bin/ or the build's bench/apps; dies unless
# it is a directory.
check_bin_dir() {
  bin_dir=${bin_dir:-$CCBENCH_BIN}
  [ -d "$bin_dir" ] || die "--bin $bin_dir: no such directory (build first: scripts/quickstart.sh, or give --bin)"
}

# find_tool GIVEN RELATIVE-PATH NAME: the given path, else NAME beside the benches (an install's bin/),
# else RELATIVE-PATH in the build that holds bin_dir (bin_dir/../..), else in CCBENCH_BUILD, else NAME
# on PATH; empty when none is found.
find_tool() {
  local build_dir
  build_dir=$(cd "$bin_dir/../.." && pwd)
  if [ -n "$1" ]; then
    echo "$1"
  elif [ -x "$bin_dir/$3" ]; then
    echo "$bin_dir/$3"
  elif [ -x "$build_dir/$2" ]; then
    echo "$build_dir/$2"
  elif [ -n "${CCBENCH_BUILD:-}" ] && [ -x "$CCBENCH_BUILD/$2" ]; then
    echo "$CCBENCH_BUILD/$2"
  else
    command -v "$3" || true
  fi
}

child=""  # the process group run_logged is running, if any

# run_logged LOG CMD...: CMD's output shown and saved in LOG; returns CMD's exit code. The command
# runs in its own process group, so that a signal to the script ends the whole job (stop_child).
run_logged() {
  local log=$1 rc=0
  shift
  set -m
  (set -o pipefail; "$@" </dev/null 2>&1 | tee -- "$log") &
  child=$!
  set +m
  wait "$child" || rc=$?
  child=""
  return "$rc"
}

# stop_child: for the script's EXIT trap: a command run_logged still runs (a signal arrived) is
# ended, its whole process group, and waited for.
stop_child() {
  if [ -n "$child" ]; then
    kill -TERM -- "-$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
}
