#!/usr/bin/env python3
"""The fleet verdict's scale: a synthetic --all-pairs sweep of N hosts (tests/tools/synthetic_fleet.py, every pair a
copy of a real result of tests/data/report/runs/fleet-equal.json) judged by ccbench-report fleet, and drawn by
ccbench-report html. A benchmark: it prints figures (the file's size, each command's wall time and peak memory, the
names it gave) and asserts nothing but that the commands ran and named the hosts made bad.

  bench/perf/fleet_scale.py --report build/report/ccbench-report [--hosts 1024] [--bad 3] [--html]
"""
import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent.parent / "tests" / "tools"))
import synthetic_fleet  # noqa: E402


def measured(cmd, cwd):
    """Runs cmd; returns (exit code, stdout, wall seconds, peak RSS in MiB of this child alone)."""
    pid = os.fork()
    if pid == 0:
        out = os.open(os.path.join(cwd, "stdout.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.chdir(cwd)
        os.execv(cmd[0], cmd)
    started = time.monotonic()
    _, status, usage = os.wait4(pid, 0)
    took = time.monotonic() - started
    with open(os.path.join(cwd, "stdout.txt"), encoding="utf-8", errors="replace") as f:
        text = f.read()
    return os.waitstatus_to_exitcode(status), text, took, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True)
    ap.add_argument("--hosts", type=int, default=1024)
    ap.add_argument("--bad", type=int, default=3, help="hosts at half rate (spread over the fleet)")
    ap.add_argument("--html", action="store_true", help="also draw the page")
    ap.add_argument("--keep", help="a folder to keep the sweep in (and to take it from, when it is there)")
    a = ap.parse_args()
    report = os.path.abspath(a.report)
    with tempfile.TemporaryDirectory() as tmp:
        bad = {a.hosts * (i + 1) // (a.bad + 1): 0.5 for i in range(a.bad)}
        sweep = pathlib.Path(a.keep or tmp) / f"fleet-{a.hosts}-bad-{'-'.join(map(str, sorted(bad)))}.json"
        started = time.monotonic()
        if not sweep.exists():
            synthetic_fleet.write_sweep(sweep, a.hosts, bad=bad, hostname_format="node{:04d}")
        size = sweep.stat().st_size
        pairs = a.hosts * (a.hosts - 1) // 2
        print(f"sweep: {a.hosts} hosts, {pairs} pairs, {size / 2**20:.0f} MiB, ready in "
              f"{time.monotonic() - started:.0f} s; bad hosts {sorted(bad)}")
        sweep = sweep.resolve()
        rc, out, took, rss = measured([report, "fleet", str(sweep), "--colour", "never"], tmp)
        named = [line.split(":")[0] for line in out.splitlines() if line.startswith("BAD HOST")]
        print(f"fleet: exit {rc} in {took:.1f} s, peak RSS {rss:.0f} MiB, output {len(out) / 1024:.0f} KiB; "
              f"named {named}")
        expected = [f"BAD HOST node{h:04d}" for h in sorted(bad)]
        if rc != 1 or named != expected:
            print(f"FAIL: expected exit 1 naming {expected}")
            return 1
        rc, out, took, rss = measured([report, "fleet", str(sweep), "--format", "json"], tmp)
        print(f"fleet --format json: exit {rc} in {took:.1f} s, peak RSS {rss:.0f} MiB, "
              f"output {len(out) / 2**20:.0f} MiB")
        if a.html:
            page = os.path.join(tmp, "fleet.html")
            rc, _, took, rss = measured([report, "html", str(sweep), "-o", page, "--max-file-size", "4G"], tmp)
            print(f"html: exit {rc} in {took:.1f} s, peak RSS {rss:.0f} MiB, page "
                  f"{os.path.getsize(page) / 2**20:.1f} MiB" if rc == 0 else f"html: exit {rc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
