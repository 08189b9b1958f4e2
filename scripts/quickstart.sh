#!/usr/bin/env bash
# First look: install what is missing, build, and run all-reduce on 2 ranks with the default
# sweep (8 B .. 32 MiB, out-of-place and in-place). Prints the table and the JSON path.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CCBENCH_ROOT/scripts/install-deps.sh"
ccbench_configure "$CCBENCH_BUILD" >/dev/null
cmake --build "$CCBENCH_BUILD" --parallel "$(nproc)" >/dev/null
mpirun_flags=(-np 2)
[ "$(nproc)" -lt 2 ] && mpirun_flags+=(--oversubscribe)
echo "\$ mpirun ${mpirun_flags[*]} $CCBENCH_BUILD/bench/apps/allreduce_bench $*"
exec mpirun "${mpirun_flags[@]}" "$CCBENCH_BUILD/bench/apps/allreduce_bench" "$@"
