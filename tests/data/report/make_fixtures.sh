#!/usr/bin/env bash
# Regenerates tests/data/report/runs/*.json from real runs of the benches on this machine
# (host memory, MPI backend). Numbers are never edited by hand; rerun this script instead and
# then regenerate the golden outputs (tests/report/report_test.py --update).
#
# usage: tests/data/report/make_fixtures.sh BUILD_DIR [V100_BUILD_DIR]
#   BUILD_DIR       a build of this tree (bench/apps/*_bench)
#   V100_BUILD_DIR  a build of revision 6a08662, the last that wrote schema 1.0.0 (optional)
set -euo pipefail
build=$(realpath "$1")
old=${2:+$(realpath "$2")}
cd "$(dirname "$0")/runs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun -q --oversubscribe --mca mpi_yield_when_idle 1)
common=(--samples -c 1 --time-budget 0.2)
b=$build/bench/apps

# Two runs of the same configuration, one after the other: base and a real candidate.
"${mpirun[@]}" -np 4 "$b/allreduce_bench" -b 8 -e 1M -f 4 "${common[@]}" --label base --out allreduce-np4-a.json
"${mpirun[@]}" -np 4 "$b/allreduce_bench" -b 8 -e 1M -f 4 "${common[@]}" --label rerun --out allreduce-np4-b.json
# More benches for tables and plots; sendrecv split into pairs for the every-pair check.
"${mpirun[@]}" -np 4 "$b/allgather_bench" -b 64 -e 1M -f 4 "${common[@]}" --out allgather-np4.json
"${mpirun[@]}" -np 4 "$b/sendrecv_bench" -b 8 -e 1M -f 4 --split pairs "${common[@]}" --out sendrecv-pairs-np4.json
# The same bench with two user-given peaks, standing in for two platforms (--peak-GBps is real input).
"${mpirun[@]}" -np 2 "$b/allreduce_bench" -b 1K -e 1M -f 4 "${common[@]}" --peak-GBps 20 --label "platform A (peak 20)" \
  --out allreduce-np2-peak20.json
"${mpirun[@]}" -np 2 "$b/allreduce_bench" -b 1K -e 1M -f 4 "${common[@]}" --peak-GBps 10 --label "platform B (peak 10)" \
  --out allreduce-np2-peak10.json
# Hostile strings: a hostname and a label with markup, from a UTS namespace (root only). Open MPI's
# mpirun refuses such a hostname, so this is a singleton run (one rank, started without mpirun).
if [[ $(id -u) == 0 ]]; then
  unshare --uts bash -c "python3 -c 'import socket; socket.sethostname(\"<script>document.title=1</script>\")' && \
    '$b/sendrecv_bench' -b 1K -e 1M -f 4 ${common[*]} \
    --label '<img src=x onerror=alert(1)> & \"quotes\"' --out hostile-names.json"
fi
# A run that timed out: 256 MiB all_reduce with --timeout 0.3 s (on this 2-core machine one op takes
# longer than that). The bench exits 3 and leaves the timed_out case in the file.
"${mpirun[@]}" -np 2 "$b/allreduce_bench" -b 256M -e 256M -c 1 --timeout 0.3 --label timeout --out timed-out.json || \
  [[ $? == 3 ]]
# Schema 1.0.0, written by the revision before 1.1.0.
if [[ -n $old ]]; then
  "${mpirun[@]}" -np 2 "$old/bench/apps/allreduce_bench" -b 8 -e 64K -f 8 "${common[@]}" --label v1.0 \
    --out allreduce-np2-v1.0.0.json
fi
ls -l
