#!/usr/bin/env bash
# Every test: install what is missing, check clang-format over the sources, then
#   1. the default build (CUDA/NCCL/verbs AUTO, warnings as errors): every tier — unit, mpi,
#      cluster (network namespaces), slurm (a local two-node Slurm), install (the install moved away,
#      the .deb, the bundle, the container and the quickstart in fresh Debian root filesystems), gpu
#      (*skipped* where no GPU is visible);
#   2. a build with CUDA, NCCL and verbs OFF: it must configure, build and pass its unit tests
#      and one mpirun of every bench (the other tiers do not depend on the build options);
#   3. every CUDA target built against CUDA 12.4 as well (scripts/build-cuda12.sh: Debian 13's toolkit in
#      an mmdebstrap root filesystem; root only, as the install tier);
#   4. the unit tests under AddressSanitizer and UndefinedBehaviorSanitizer (clang), and in the same build
#      the result reader under libFuzzer for 60 s (scripts/fuzz.sh).
# With CI=true a skipped test fails the run (scripts/lib/ci_skips.py names its tier), except a gpu test's
# for having no GPU and, in the builds that leave CUDA and NCCL out, a test that needs them.
# CCBENCH_CTEST_ARGS (e.g. "-R ^rdma") narrows the default stage's tests, to rehearse one tier.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CCBENCH_ROOT/scripts/install-deps.sh"
jobs=$(nproc)
stage_start=$SECONDS
stage() {  # prints how long the previous stage took, then the next one's title
  echo "== (previous stage: $((SECONDS - stage_start)) s)"
  stage_start=$SECONDS
  echo "== $1"
}

# First, as it takes seconds and the rest takes minutes.
stage "clang-format"
(cd "$CCBENCH_ROOT" && git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror)
echo "clang-format: clean"

stage "default build ($CCBENCH_BUILD)"
ccbench_configure "$CCBENCH_BUILD" -DCCBENCH_WERROR=ON -DCCBENCH_BUILD_TESTS=ON -DCCBENCH_BUILD_PERF=ON
cmake --build "$CCBENCH_BUILD" --parallel "$jobs"
ctest_log=$(mktemp)
# shellcheck disable=SC2086  # CCBENCH_CTEST_ARGS is a list of ctest arguments
(cd "$CCBENCH_BUILD" && ctest --output-on-failure --timeout 600 ${CCBENCH_CTEST_ARGS:-}) | tee "$ctest_log"
"$CCBENCH_ROOT/scripts/lib/ci_skips.py" "$ctest_log" "$CCBENCH_BUILD/Testing/Temporary/LastTest.log"
# The figures the multi-host, RDMA and GPU tiers print (rates, times to exit, ours beside perftest), into this log.
echo "== figures printed by the cluster, slurm, rdma, gpu and docs tests"
awk '/^[0-9]+\/[0-9]+ Test: (cluster|slurm|rdma|gpu|docs)\./ {name = $3; keep = 1; next}
     keep && /^<end of output>/ {keep = 0}
     keep && /^(PASS|SKIPPED|doc (cluster )?examples:|caught:|from the stop|bad input|peer killed|--mem|--all-pairs|standalone| *Mbit\/s| +[0-9]+ +[0-9.]+ +[0-9]+Ki| +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.-]+| +bytes |ib_write_(bw|lat) over|ib_write_(bw|lat) +[0-9]+ B: median)/ {
       print name ": " $0}' "$CCBENCH_BUILD/Testing/Temporary/LastTest.log"

stage "build with CUDA, NCCL and verbs OFF ($CCBENCH_BUILD-minimal)"
ccbench_configure "$CCBENCH_BUILD-minimal" -DCCBENCH_WERROR=ON -DCCBENCH_CUDA=OFF -DCCBENCH_NCCL=OFF \
  -DCCBENCH_VERBS=OFF >/dev/null
# The benches, topology and their tests: report/ does not depend on CUDA, NCCL or verbs (the default build
# built and tested it), so it is left out here to keep CI within 30 minutes.
present_targets() {  # present_targets DIR NAME...: the NAMEs the build in DIR defines
  local dir=$1 t
  shift
  local all
  all=$(cmake --build "$dir" --target help)
  for t; do grep -q "^$t:" <<<"$all" && echo "$t"; done
  return 0
}
mapfile -t minimal_benches < <(cmake --build "$CCBENCH_BUILD-minimal" --target help |
  sed -n 's/^\([a-z_]*_bench\): phony$/\1/p')
mapfile -t minimal_targets < <(present_targets "$CCBENCH_BUILD-minimal" ccbench-topo ccbench_unit_tests \
  ccbench_app_tests ccbench_topo_discovery_tests ccbench_topo_specs_tests ccbench_peak_on_fixtures_tests ccbench_schema_check \
  "${minimal_benches[@]}")
cmake --build "$CCBENCH_BUILD-minimal" --parallel "$jobs" --target "${minimal_targets[@]}"
minimal_ctest() {  # minimal_ctest CTEST_ARGS...: run, then judge its skips (each run writes its own LastTest.log)
  (cd "$CCBENCH_BUILD-minimal" && ctest --output-on-failure --timeout 600 "$@") | tee "$ctest_log"
  "$CCBENCH_ROOT/scripts/lib/ci_skips.py" "$ctest_log" "$CCBENCH_BUILD-minimal/Testing/Temporary/LastTest.log" \
    --allow 'built without NCCL'
}
minimal_ctest -L unit -E '^report\.|^drain\.|^unit\.Report|NOT_BUILT'  # report. and drain. run ccbench-report, built in the other stages
minimal_ctest -R '^mpi\.[a-z]+\.np2$' --no-tests=error

stage "CUDA 12: every CUDA target against CUDA 12.4 and NCCL 2.32 for CUDA 12 ($CCBENCH_BUILD-cuda12)"
if [ "$(id -u)" -eq 0 ]; then
  "$CCBENCH_ROOT/scripts/build-cuda12.sh" "$CCBENCH_BUILD-cuda12"
elif [ "${CI:-}" = true ]; then
  echo "test.sh: the CUDA 12 build needs root (mmdebstrap, chroot); CI runs as root" >&2
  exit 1
else
  echo "skipped: the CUDA 12 build needs root (mmdebstrap, chroot)"
fi

stage "unit tests and the reader's fuzzing under -fsanitize=address,undefined ($CCBENCH_BUILD-asan)"
# clang, so that the same build also holds the libFuzzer target (scripts/fuzz.sh): the libraries are built
# once for both. -O0 with line tables only: ASan's stacks keep file:line. Measured on this 2-core box: the
# unit targets and the fuzz target build in 274 s; gcc at -O0 took 342 s for the unit targets alone, at -O1
# 566 s, and the fuzz target's own configuration another 120 s.
# A folder configured by an older script with gcc keeps gcc whatever CXX says: start it again.
if [ -f "$CCBENCH_BUILD-asan/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' "$CCBENCH_BUILD-asan/CMakeCache.txt"; then
  rm -rf "$CCBENCH_BUILD-asan"
fi
CXX=clang++ ccbench_configure "$CCBENCH_BUILD-asan" -DCCBENCH_CUDA=OFF -DCCBENCH_NCCL=OFF -DCCBENCH_BUILD_PERF=OFF \
  -DCCBENCH_FUZZ=ON -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O0 -gline-tables-only -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
  >/dev/null
# Only what the unit tests run (not the bench binaries, which the default build's tiers run).
mapfile -t asan_targets < <(present_targets "$CCBENCH_BUILD-asan" ccbench_unit_tests ccbench_app_tests \
  ccbench_topo_specs_tests ccbench_peak_on_fixtures_tests ccbench_topo_discovery_tests ccbench_report_tests \
  ccbench-report ccbench_reader_fuzz ccbench_import_fuzz ccbench_schema_check)
cmake --build "$CCBENCH_BUILD-asan" --parallel "$jobs" --target "${asan_targets[@]}"
(cd "$CCBENCH_BUILD-asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -L unit) | tee "$ctest_log"
"$CCBENCH_ROOT/scripts/lib/ci_skips.py" "$ctest_log" "$CCBENCH_BUILD-asan/Testing/Temporary/LastTest.log" \
  --allow 'built without NCCL'
"$CCBENCH_ROOT/scripts/fuzz.sh" "${CCBENCH_FUZZ_SECONDS:-60}" "$CCBENCH_BUILD-asan"
echo "== (previous stage: $((SECONDS - stage_start)) s; all stages: $SECONDS s)"
