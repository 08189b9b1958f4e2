#!/usr/bin/env bash
# Fidelity: ccbench beside bare peers, run interleaved (A B A B) on the same link, with the
# median ratio ours/peer and its min-max per size. A benchmark of the suite, not a test: it
# prints figures and judges nothing by its exit code.
#   fidelity.sh [--reps N] [--build DIR] [mpi|rdma|all]
# Exit: 0 ran; 2 bad arguments (one line); otherwise the failing part's code.
set -euo pipefail
# shellcheck source=SCRIPTDIR/env.sh
source "$(dirname "$0")/env.sh"

readonly prog=fidelity.sh

usage() {
  cat <<EOF
usage: $prog [--reps N] [--build DIR] [mpi|rdma|all]

  mpi    the MPI backend (np 2) against bare MPI loops timed as OSU does (all_reduce,
         all_gather, sendrecv), then the time to result of a default all-reduce sweep
         against an emulation of IMB-MPI1's default schedule
  rdma   tests/rdma/fidelity_rdma.py (ib_write_bw/lat beside perftest)
  all    both (default)

options:
  --reps N      interleaved repetitions of each side, at least 5 (default 5)
  --build DIR   the build folder (default: build)
  -h, --help    this text
EOF
}

bad() {
  echo "$prog: $*" >&2
  exit 2
}

reps=5
build=$CCBENCH_BUILD
part=all
while [ $# -gt 0 ]; do
  case $1 in
    --reps)
      [ $# -ge 2 ] || bad "--reps needs a number"
      reps=$2
      shift 2
      ;;
    --build)
      [ $# -ge 2 ] || bad "--build needs a folder"
      build=$2
      shift 2
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    mpi | rdma | all)
      part=$1
      shift
      ;;
    *) bad "unknown argument '$1' (try --help)" ;;
  esac
done
if ! [[ $reps =~ ^[0-9]+$ ]] || [ "$reps" -lt 5 ]; then
  bad "--reps $reps: give a whole number, at least 5"
fi
[ -d "$build" ] || bad "--build $build: no such folder"

if [ "$part" = mpi ] || [ "$part" = all ]; then
  python3 "$CCBENCH_ROOT/scripts/lib/fidelity_mpi.py" --build "$build" --reps "$reps"
fi
if [ "$part" = rdma ] || [ "$part" = all ]; then
  if [ -f "$CCBENCH_ROOT/tests/rdma/fidelity_rdma.py" ]; then
    python3 "$CCBENCH_ROOT/tests/rdma/fidelity_rdma.py" --build "$build" --reps "$reps"
  else
    echo "rdma: tests/rdma/fidelity_rdma.py is not in this checkout; skipped"
  fi
fi
