#!/usr/bin/env bash
# The issue's end-to-end check, as written: each collective bench (ccbench-report benches) through
#   mpirun -np 4 --oversubscribe BENCH -b 8 -e 4M -f 4 -c 1
# on the MPI backend (host memory); then the wrong-element total and schema validation of
# every JSON. Extra arguments go to every bench. Exit 0 only when all pass.
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=$(mktemp -d)
status=0
mapfile -t benches < <("$CCBENCH_BUILD/report/ccbench-report" benches --kind collective | sed 's/_bench$//')
[ ${#benches[@]} -gt 0 ] || { echo "check-benches.sh: ccbench-report benches listed nothing: build first" >&2; exit 2; }
for b in "${benches[@]}"; do
  mpirun -q -np 4 --oversubscribe --mca mpi_yield_when_idle 1 "$CCBENCH_BUILD/bench/apps/${b}_bench" \
    --backend mpi -b 8 -e 4M -f 4 -c 1 --out "$out/$b.json" "$@" >"$out/$b.txt" || status=1
  /usr/bin/python3 - "$out/$b.json" "$b" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"]
ok = [x for x in r if x["status"] == "ok"]
skipped = [x for x in r if x["status"] == "skipped"]
wrong = sum(x["wrong_elements"] or 0 for x in ok)
big = max(ok, key=lambda x: x["size_bytes"])
print(f"{sys.argv[2] + '_bench':20} {len(ok):2} cases ok, {len(skipped):2} skipped, wrong elements {wrong}, "
      f"largest {big['size_bytes']} B: busbw {big['busbw_GBps']:.2f} GB/s (median {big['time']['p50_us']:.1f} us)")
sys.exit(1 if wrong or len(ok) + len(skipped) != len(r) else 0)
PY
done
/usr/bin/python3 "$CCBENCH_ROOT/tests/tools/validate_result.py" --schema "$CCBENCH_ROOT/report/schema/ccbench.result.schema.json" "$out"/*.json || status=1
echo "tables and JSON in $out"
exit $status
