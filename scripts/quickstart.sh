#!/usr/bin/env bash
# First look: install what building needs (not the test tiers' tools), build the benches and
# ccbench-report (not the tests), and run all-reduce on 2 ranks with the default sweep (8 B .. 32 MiB,
# out-of-place and in-place). Prints the table and the JSON path. scripts/test.sh builds the rest.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CCBENCH_ROOT/scripts/install-deps.sh" --build-only
ccbench_configure "$CCBENCH_BUILD" -DCCBENCH_BUILD_TESTS=OFF -DCCBENCH_BUILD_PERF=OFF >/dev/null
cmake --build "$CCBENCH_BUILD" --parallel "$(nproc)" >/dev/null
mpirun_flags=(-np 2)
[ "$(nproc)" -lt 2 ] && mpirun_flags+=(--oversubscribe)
echo "\$ mpirun ${mpirun_flags[*]} $CCBENCH_BUILD/bench/apps/allreduce_bench $*"
exec mpirun "${mpirun_flags[@]}" "$CCBENCH_BUILD/bench/apps/allreduce_bench" "$@"
