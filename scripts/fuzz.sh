#!/usr/bin/env bash
# Fuzzes the result reader (and the printers behind it) with libFuzzer for a bounded time, then the importer
# of other tools' logs (ccbench-report import) for half as long.
#   scripts/fuzz.sh [SECONDS [BUILD_DIR]]   default 60 s (and 30 s) in $CCBENCH_BUILD-fuzz
# Builds report/fuzz/reader_fuzz.cpp with clang, -fsanitize=fuzzer,address,undefined, seeded with
# the real result files under tests/data/report/runs (the importer: the real logs under tests/data/import). A crash, a sanitizer report, an uncaught
# exception or a hang of more than 10 s on one input fails the run and leaves the input in
# BUILD_DIR/artifacts/. A BUILD_DIR given is used as configured (clang, -DCCBENCH_FUZZ=ON and the
# sanitizers in its flags): CI's sanitizer stage passes its own, so the libraries are built once.
set -euo pipefail
source "$(dirname "$0")/env.sh"
seconds=${1:-60}
dir=${2:-}
if [ -z "$dir" ]; then
  dir="$CCBENCH_BUILD-fuzz"
  CXX=clang++ ccbench_configure "$dir" -DCCBENCH_MPI=OFF -DCCBENCH_CUDA=OFF -DCCBENCH_NCCL=OFF -DCCBENCH_VERBS=OFF \
    -DCCBENCH_BUILD_TESTS=OFF -DCCBENCH_BUILD_PERF=OFF -DCCBENCH_FUZZ=ON -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
    >/dev/null
fi
cmake --build "$dir" --target ccbench_reader_fuzz ccbench_import_fuzz --parallel "$(nproc)"

# fuzz NAME TARGET SECONDS SEED...: TARGET from a corpus seeded with the SEED files; exit 1 on a finding
fuzz() {
  local name=$1 target=$2 secs=$3 corpus="$dir/corpus-$1" status
  shift 3
  mkdir -p "$corpus" "$dir/artifacts"
  cp "$@" "$corpus/"
  echo "== fuzzing the $name for ${secs} s"
  set +e  # the fuzzer's own exit status decides, read below (pipefail would end the script first)
  "$dir/report/$target" "$corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" 2>&1 | grep -E "^(stat::|#[0-9]+ +DONE|==|SUMMARY)" |
    tail -n 12
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -ne 0 ]; then
    echo "fuzz: the $name FAILED (exit $status); the input is in $dir/artifacts/" >&2
    exit 1
  fi
}
fuzz reader ccbench_reader_fuzz "$seconds" "$CCBENCH_ROOT"/tests/data/report/runs/*.json
fuzz importer ccbench_import_fuzz $((seconds / 2)) "$CCBENCH_ROOT"/tests/data/import/nccl-tests/* \
  "$CCBENCH_ROOT"/tests/data/import/perftest/*
echo "fuzz: no crash in ${seconds} s (reader) and $((seconds / 2)) s (importer)"
