#!/usr/bin/env python3
"""compare's interval bounds against an independent computation (scipy, numpy) on fixed inputs.

  compare_scipy_test.py --report CCBENCH_REPORT --data tests/data/report

The fixed inputs are two real runs of the same sweep (runs/allreduce-np4-{a,b}.json, raw samples
kept). For every row of ccbench-report compare --format json:
  - each side's median interval in the file is the pair of order statistics that
    scipy.stats.binom gives (largest j with P(j <= B <= n - j) >= 95%, B ~ binomial(n, 1/2));
  - with raw samples: the Hodges-Lehmann shift of log time and its distribution-free interval,
    the k-th smallest and largest of the m x n differences with
    k = floor(mn/2 - z(0.975) sqrt(mn(m+n+1)/12)) (z from scipy.stats.norm), as a change of busbw;
  - without raw samples (the same files, samples removed): the medians' intervals combined on the
    log scale, estimate +- hypot of each side's wider half-width.
Exit 77 (skipped) without scipy.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from scipy.stats import binom, norm
except ImportError:
    print("SKIP: python3-scipy is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)

REL = 1e-9


def median_ranks(n):
    best = None
    for j in range(1, n // 2 + 1):
        if binom.cdf(n - j, n, 0.5) - binom.cdf(j - 1, n, 0.5) >= 0.95:
            best = j
    return None if best is None else (best, n + 1 - best)


def hodges_lehmann(x, y):
    """Shift of y against x with its 95% interval, or None when the interval has no rank."""
    m, n = len(x), len(y)
    k = math.floor(m * n / 2 - norm.ppf(0.975) * math.sqrt(m * n * (m + n + 1) / 12))
    if k < 1:
        return None
    d = np.sort(np.subtract.outer(np.asarray(y), np.asarray(x)).ravel())
    return float(np.median(d)), float(d[k - 1]), float(d[len(d) - k])


def key(case):
    return (case["size_bytes"], case["in_place"])


def compare_json(report, a, b):
    p = subprocess.run([report, "compare", a, b, "--format", "json"], capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        sys.exit(f"FAIL: compare {a} {b}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)["rows"]


def close(got, want):
    return got is not None and abs(got - want) <= REL * max(1.0, abs(want))


def check_file_intervals(doc, name):
    bad = []
    for c in doc["results"]:
        if c["status"] != "ok":
            continue
        s = sorted(c["samples_us"])
        r = median_ranks(len(s))
        want = (None, None) if r is None else (s[r[0] - 1], s[r[1] - 1])
        got = (c["time"]["p50_ci95_lo_us"], c["time"]["p50_ci95_hi_us"])
        if got != want:
            bad.append(f"{name} {key(c)}: median interval {got}, scipy ranks {r} give {want}")
    return bad


def check_rows(rows, base, cand, raw):
    bad = []
    for row in rows:
        b, c = base[key(row)], cand[key(row)]
        if raw:
            shift = hodges_lehmann([math.log(t / 1e6) for t in b["samples_us"]],
                                   [math.log(t / 1e6) for t in c["samples_us"]])
        else:
            def half(t):
                return max(math.log(t["p50_us"] / t["p50_ci95_lo_us"]), math.log(t["p50_ci95_hi_us"] / t["p50_us"]))
            est = math.log(c["time"]["p50_us"] / b["time"]["p50_us"])
            h = math.hypot(half(b["time"]), half(c["time"]))
            shift = (est, est - h, est + h)
        est, lo, hi = shift
        want = (math.exp(-est) - 1, math.exp(-hi) - 1, math.exp(-lo) - 1)  # busbw ~ 1/time
        got = (row["change"], row["change_ci95_lo"], row["change_ci95_hi"])
        if not all(close(g, w) for g, w in zip(got, want)):
            bad.append(f"{'raw' if raw else 'medians'} {key(row)}: change {got}, want {want}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    paths = [os.path.join(args.data, "runs", f"allreduce-np4-{s}.json") for s in "ab"]
    docs = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            docs.append(json.load(f))
    bad = check_file_intervals(docs[0], "a") + check_file_intervals(docs[1], "b")
    base = {key(c): c for c in docs[0]["results"] if c["status"] == "ok"}
    cand = {key(c): c for c in docs[1]["results"] if c["status"] == "ok"}
    rows = compare_json(args.report, *paths)
    bad += check_rows(rows, base, cand, raw=True)
    with tempfile.TemporaryDirectory() as tmp:
        stripped = []
        for i, doc in enumerate(docs):
            doc = json.loads(json.dumps(doc))
            for c in doc["results"]:
                c["samples_us"] = []
            stripped.append(os.path.join(tmp, f"{'ab'[i]}.json"))
            with open(stripped[-1], "w", encoding="utf-8") as f:
                json.dump(doc, f)
        medians_rows = compare_json(args.report, *stripped)
    bad += check_rows(medians_rows, base, cand, raw=False)
    if not rows or not medians_rows:
        bad.append("compare gave no rows")
    if bad:
        print("FAIL:\n" + "\n".join(bad))
        sys.exit(1)
    print(f"ok   {len(rows)} rows: median intervals match scipy.stats.binom; Hodges-Lehmann and medians' "
          "change intervals match the independent computation")


if __name__ == "__main__":
    main()
