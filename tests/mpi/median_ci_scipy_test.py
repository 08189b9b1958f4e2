#!/usr/bin/env python3
"""The median's 95% interval that a bench writes, against scipy on fixed sample counts.

  median_ci_scipy_test.py --bin-dir DIR --report CCBENCH_REPORT --schema S --mpirun M

Runs allreduce_bench -np 2 on host memory with a fixed number of samples per size (-n N, several
N from 1 to 71) and, for every case of every result file, recomputes the distribution-free
interval of the median from the case's own samples with scipy.stats.binom, independently of
model/src/statistics.cpp: the ranks (j, n + 1 - j) with the largest j whose coverage
P(j <= B <= n - j), B ~ binomial(n, 1/2), is at least 95%. Below 6 samples no j reaches 95%,
and the file must say null (and still validate). Then ccbench-report compare calls the rows of a
5-sample run UNSURE. Exit 77 (skipped) without scipy.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import validate_result  # noqa: E402

try:
    from scipy.stats import binom
except ImportError:
    print("SKIP: python3-scipy is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)

SAMPLE_COUNTS = (1, 3, 5, 6, 7, 10, 23, 71)


def scipy_ranks(n):
    """1-based (j, k) of the 95% interval of the median, or None when no pair reaches 95%."""
    best = None
    for j in range(1, n // 2 + 1):
        coverage = binom.cdf(n - j, n, 0.5) - binom.cdf(j - 1, n, 0.5)
        if coverage >= 0.95:
            best = j
    return None if best is None else (best, n + 1 - best)


def run_bench(args, n, out):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl="self,vader", OMPI_MCA_rmaps_base_oversubscribe="1")
    cmd = [args.mpirun, "-q", "-np", "2", "--bind-to", "none", str(pathlib.Path(args.bin_dir) / "allreduce_bench"),
           "--backend", "mpi", "-b", "8", "-e", "4K", "-f", "8", "-n", str(n), "--samples", "--out", str(out)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")


def check_file(path, n, validator):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    found = list(validate_result.problems(validator, doc))
    if found:
        return [f"-n {n}: {path.name} does not validate: {found[0]}"]
    bad = []
    cases = [c for c in doc["results"] if c["status"] == "ok"]
    if not cases:
        return [f"-n {n}: no measured case"]
    want = scipy_ranks(n)
    for c in cases:
        t = c["time"]
        got = (t["p50_ci95_lo_us"], t["p50_ci95_hi_us"])
        samples = sorted(c["samples_us"])
        where = f"-n {n}, {c['size_bytes']} B {'in-place' if c['in_place'] else 'out-of-place'}"
        if len(samples) != n or t["n"] != n:
            bad.append(f"{where}: {len(samples)} samples in the file, time.n {t['n']}")
        elif want is None:
            if got != (None, None):
                bad.append(f"{where}: interval {got}, want null (no 95% interval below 6 samples)")
        elif got != (samples[want[0] - 1], samples[want[1] - 1]):
            bad.append(f"{where}: interval {got}, want ranks {want} = "
                       f"({samples[want[0] - 1]}, {samples[want[1] - 1]})")
    print(f"{'ok  ' if not bad else 'FAIL'} -n {n}: scipy ranks {want}, {len(cases)} cases")
    return bad


def check_compare_unsure(report, path):
    p = subprocess.run([report, "compare", str(path), str(path), "--format", "json", "--min-samples", "5"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        return [f"compare of the 5-sample run: exit {p.returncode}: {p.stderr.strip()}"]
    rows = json.loads(p.stdout)["rows"]
    odd = [f"{r['size_bytes']} B: {r['verdict']} ({r['why']})" for r in rows
           if r["verdict"] != "UNSURE" or "no 95% CI" not in r["why"]]
    if not rows or odd:
        return [f"compare of the 5-sample run against itself: rows not UNSURE for want of an interval: {odd}"]
    print(f"ok   compare: {len(rows)} rows of the 5-sample run UNSURE")
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--mpirun", required=True)
    args = ap.parse_args()
    validator = validate_result.validator(args.schema)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in SAMPLE_COUNTS:
            out = pathlib.Path(tmp) / f"n{n}.json"
            run_bench(args, n, out)
            bad += check_file(out, n, validator)
        bad += check_compare_unsure(args.report, pathlib.Path(tmp) / "n5.json")
    if bad:
        print("FAIL:\n" + "\n".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
