"""The regression case of the cluster tier (tests/cluster/cluster_test.py): scripts/regression.sh with launches,
over 2 namespace hosts (1 rank each) joined by a tc-shaped link, judged by `ccbench-report regression`.

  regression  an A/A pair (--aa --launches 3) is never REGRESSION; then, --repeat times (default 3): node1's link
              slowed to a quarter of its rate, `slow --baseline base` is REGRESSION (exit 1) with the large sizes
              SLOWER; the rate restored, `same --baseline base` is not REGRESSION. Then interleaved, side b's rank 1
              (node1) late by 20 ms to every sample (--env-b CCBENCH_DEBUG_LATE=1:20000): REGRESSION. Each verdict
              line is printed.
"""
import json
import os
import pathlib
import re
import subprocess
import tempfile
import time

import nscluster

HERE = pathlib.Path(__file__).resolve().parent
REGRESSION = HERE.parent.parent / "scripts" / "regression.sh"
FULL_DUPLEX_MCA = nscluster.FULL_DUPLEX_MCA
REG_MBIT = 200  # below 500: the link, not this 2-core machine's CPUs, sets the rate (cluster.rate)
REG_SLOW_MBIT = REG_MBIT // 4
# 64K..1M: at 200 Mbit/s a 1 MiB all_reduce of 2 ranks takes ~45 ms (both directions at once), 4x that on the
# slowed link; 64K ~2.8 ms, where the 16 kB burst and the per-message costs weigh more. (4M, ~180 ms and 4x that
# slowed, made a slowed launch take 20 s here: too long for 3 rounds of 3 launches.)
REG_SUITE = "allreduce_bench --backend mpi -b 64K -e 1M -f 4 -n 5 -w 1 -c 1 --samples\n"
REG_LAUNCHES = 3
REG_MUST_BE_SLOWER = ["256K", "1M"]  # the sizes where the link's rate is nearly all of the time


def regression_cmd(env, cluster, store, suite, label, *extra):
    """scripts/regression.sh over the cluster: mpirun with the cluster's hostfile, launch agent and MCA settings."""
    prefix = cluster.mpirun_prefix()
    launcher_args = prefix[1:] + [a for k, v in FULL_DUPLEX_MCA.items() for a in ("--mca", k, str(v))]
    return [REGRESSION, "--suite", suite, "--label", label, "--store", store, "--np", "2", "--launches",
            str(REG_LAUNCHES), "--timeout", "60", "--bin", env.bin_dir.resolve(), "--report", env.report,
            "--mpirun-args", " ".join(map(str, launcher_args)), *extra]


def run_regression(env, cluster, store, suite, label, *extra, timeout=240):
    cmd = regression_cmd(env, cluster, store, suite, label, *extra)
    print("$", " ".join(map(str, cmd)), flush=True)
    run_env = cluster.env()
    run_env["PATH"] = str(pathlib.Path(env.mpirun).resolve().parent) + os.pathsep + run_env.get("PATH", "")
    start = time.monotonic()
    p = subprocess.run(list(map(str, cmd)), cwd=cluster.tmpdir, env=run_env, capture_output=True, text=True,
                       timeout=timeout)
    seconds = time.monotonic() - start
    print(p.stdout, p.stderr, sep="\n", flush=True)
    verdicts = [line for line in p.stdout.splitlines() if line.startswith("verdict:")]
    return p, (verdicts[-1] if verdicts else "(no verdict line)"), seconds


def slower_rows(stdout):
    """The rows the verdict tables call SLOWER, as (size, "SIZE PLACEMENT CHANGE"): size as "256K", from table
    lines like "256 KiB  out-of-place  0.02  0.01  -71.1%  -72.6%..-69.5%  SLOWER ..."."""
    found = []
    for line in stdout.split("== regression:")[0].splitlines():
        m = re.match(r"^\s*(\d+) ([KMG]?)i?B\s+(\S+)\s.*?\s([-+]?\d+(?:\.\d+)?%)\s+\S+\s+SLOWER\b", line)
        if m:
            found.append((m.group(1) + m.group(2), f"{m.group(1)}{m.group(2)} {m.group(3)} {m.group(4)}"))
    return found


def regression(env, args):
    repeat = getattr(args, "repeat", 3) or 3
    said = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ccbench-cluster-regression-") as tmp:
        tmp = pathlib.Path(tmp)
        suite = tmp / "link.suite"
        suite.write_text(REG_SUITE)
        store = tmp / "store"
        with env.cluster(hosts=2, slots=1, rate_mbit=REG_MBIT) as c:
            # (i) A/A: the same software both sides, interleaved
            p, verdict, seconds = run_regression(env, c, store, suite, "aa", "--aa")
            aa = re.search(r"^A/A\b.*\d+ false alarm\(s\).*$", p.stdout, re.M)
            assert verdict.startswith("verdict:"), f"A/A: exit {p.returncode} without a verdict: {p.stderr.strip()}"
            assert p.returncode in (0, 2), f"A/A: exit {p.returncode}: {verdict} (a false alarm)"
            assert aa, "A/A: no 'A/A ... false alarm(s)' line"
            said.append(f"A/A at {REG_MBIT} Mbit/s: exit {p.returncode} in {seconds:.0f} s: {verdict}; {aa.group(0)}")
            # the baseline
            p, _, seconds = run_regression(env, c, store, suite, "base")
            assert p.returncode == 0, f"base: exit {p.returncode}"
            said.append(f"base at {REG_MBIT} Mbit/s stored in {seconds:.0f} s")
            for k in range(1, repeat + 1):
                # (ii) node1's link at a quarter of the rate
                c.shape(1, REG_SLOW_MBIT)
                try:
                    p, verdict, seconds = run_regression(env, c, store, suite, f"slow{k}", "--baseline", "base")
                finally:
                    c.shape(1, REG_MBIT)
                rows = slower_rows(p.stdout)
                assert p.returncode == 1, f"slow{k} (node1 at {REG_SLOW_MBIT} Mbit/s): exit {p.returncode}: {verdict}"
                missing = [s for s in REG_MUST_BE_SLOWER if s not in {size for size, _ in rows}]
                assert not missing, f"slow{k}: {missing} not SLOWER (SLOWER rows: {[row for _, row in rows]})"
                said.append(f"slow{k} (node1 at {REG_SLOW_MBIT} Mbit/s): exit 1 in {seconds:.0f} s: {verdict}; "
                            f"SLOWER: {', '.join(row for _, row in rows)}")
                # (iii) the rate restored
                p, verdict, seconds = run_regression(env, c, store, suite, f"same{k}", "--baseline", "base")
                assert verdict.startswith("verdict:"), f"same{k}: exit {p.returncode} without a verdict: {p.stderr}"
                assert p.returncode in (0, 2), f"same{k} (rate restored): exit {p.returncode}: {verdict}"
                said.append(f"same{k} (back at {REG_MBIT} Mbit/s): exit {p.returncode} in {seconds:.0f} s: {verdict}")
            doc = json.loads((store / f"slow{repeat}" / "logs" / "regression.json").read_text())
            assert doc["exit"] == 1, doc
            # (iv) interleaved, side b's rank 1 (on node1) late by 20 ms to every sample: --env-b reaches a rank on
            # the other host (mpirun -x; here the launch agent would pass mpirun's environment on anyway)
            p, verdict, seconds = run_regression(env, c, store, suite, "late", "--env-b", "CCBENCH_DEBUG_LATE=1:20000")
            assert p.returncode == 1, f"late (interleaved, side b's rank 1 late): exit {p.returncode}: {verdict}"
            assert slower_rows(p.stdout), "late: no SLOWER row"
            said.append(f"late (interleaved, --env-b CCBENCH_DEBUG_LATE=1:20000, rank 1 on node1): exit 1 in "
                        f"{seconds:.0f} s: {verdict}")
    for line in said:
        print(line)
    print(f"PASS: regression.sh over 2 hosts, {REG_LAUNCHES} launches a side: A/A not REGRESSION; {repeat} times "
          f"a link at 1/4 rate REGRESSION and the rate restored not, in {time.monotonic() - started:.0f} s")


TESTS = {"regression": regression}
