#!/usr/bin/env python3
"""mpi-tier tests of the workflow scripts: scripts/accept-node.sh and scripts/regression.sh, run for real
through mpirun on host memory.

  workflows_test.py --bin-dir DIR --report BIN [--topo BIN] --schema S --mpirun M accept-pass
  workflows_test.py ... accept-fail        a profile made impossible: exit 1, the failing check named
  workflows_test.py ... accept-bad-input   unknown profile, bad --np: exit 2, one line, nothing left
  workflows_test.py ... regression         store (launch-K folders), unknown baseline, a really slower
                                           candidate, a baseline missing a bench
  workflows_test.py ... regression-incomplete  a candidate missing sizes: exit 1; no row in common: exit 2
  workflows_test.py ... regression-aa      --aa --launches 3 on the smoke suite: never REGRESSION, the A/A
                                           line printed, ABBA order, both sides stored
  workflows_test.py ... regression-history  --history DB: no index refused before any bench; a candidate on one core
                                            against its 3 launches in the index: REGRESSION with SLOWER rows
  workflows_test.py ... regression-interleaved  --env-b CCBENCH_DEBUG_LATE=1:20000: REGRESSION with SLOWER
                                           rows; --env-a X=1 --env-b X=2: not REGRESSION; --nccl-a/--nccl-b
                                           plumbed to each side's benches
  workflows_test.py ... out-dirs           --out / --store that are devices, pipes, symlinks, files: exit 2

The accept-node cases are in workflow_accept.py, the regression cases in workflow_regression.py, the driver they
share (Env, the scripts' paths, the readers of their output) in workflow_driver.py; out-dirs and reworded, which
run both scripts, are here.

Each test works in a fresh temporary directory. Failures raise AssertionError (exit 1); exit 77 means
skipped (what the test needs is missing here, and it says what).
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import workflow_accept
import workflow_regression
from workflow_driver import ACCEPT, PROFILE, REGRESSION, SKIP, Env, summary_of

import reword_shim  # noqa: E402  (tests/tools: on sys.path once workflow_driver is imported)


def out_dirs(env, args):
    """The folders the scripts write into (accept-node.sh --out, regression.sh --store): a device node, a pipe,
    a symlink, a file or a read-only place is refused up front, one line, exit 2, the node left as it was."""
    import stat
    with tempfile.TemporaryDirectory(prefix="ccbench-outdirs-") as tmp:
        t = pathlib.Path(tmp)
        os.mknod(t / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the null device, in our own folder
        os.mkfifo(t / "pipe")
        (t / "file").write_text("kept\n")
        (t / "real").mkdir()
        os.symlink("real", t / "link")
        cases = [("null", "is character special file, not a folder"), ("pipe", "is fifo, not a folder"),
                 ("file", "is regular file, not a folder"), ("link", "is a symbolic link"),
                 ("file/sub", "cannot create it")]
        for script, flag, extra in ((ACCEPT, "--out", ["--profile", "mpi-host-smoke"]),
                                    (REGRESSION, "--store", ["--suite", "smoke", "--label", "x"])):
            for name, says in cases:
                done, _ = env.run([script, flag, t / name, *env.tools(), *extra], tmp, timeout=60)
                lines = done.stderr.splitlines()
                assert done.returncode == 2, f"{script.name} {flag} {name}: exit {done.returncode}: {lines}"
                assert len(lines) == 1 and says in lines[0], f"{script.name} {flag} {name}: {lines}"
                print(f"ok   {script.name} {flag} {name}: exit 2: {lines[0]}")
        assert stat.S_ISCHR((t / "null").lstat().st_mode) and stat.S_ISFIFO((t / "pipe").lstat().st_mode)
        assert (t / "file").read_text() == "kept\n" and not list((t / "real").iterdir())
        print("PASS: every folder that is not one refused by accept-node.sh --out and regression.sh --store")


def reworded(env, args):
    """accept-node.sh and regression.sh through a ccbench-report whose tables say other words: the same failed
    checks, the same figures and the same verdicts and exit codes as the report's JSON gives."""
    with tempfile.TemporaryDirectory(prefix="ccbench-reworded-") as tmp:
        tmp = pathlib.Path(tmp)
        shim = reword_shim.write(tmp / "ccbench-report", args.report)
        tools = ["--bin", args.bin_dir, "--report", str(shim)]
        # accept-node.sh: two busbw checks made impossible, so two FAIL rows ("Failed" in the reworded table)
        profile = json.loads(PROFILE.read_text())
        busbw = [c for c in profile["checks"] if c["kind"] == "busbw"]
        for c in busbw:
            c["min_GBps"] = 1e6
        path = tmp / "impossible.json"
        path.write_text(json.dumps(profile))
        out = tmp / "acc"
        done, _ = env.run([ACCEPT, "--np", "2", "--out", out, "--timeout", "120", *tools, "--profile", path], tmp)
        table = (out / "accept.txt").read_text()
        assert " Failed " in table and " FAIL " not in table, "the shim did not reword accept's table"
        ids = [c["id"] for c in busbw]
        n = len(profile["checks"])
        summary = summary_of(done.stdout)
        assert done.returncode == 1, f"exit {done.returncode}, expected 1"
        assert f"failed checks: {', '.join(ids)}" in summary, summary
        assert summary[-1].startswith(f"verdict: FAIL ({n} checks: {n - len(ids)} passed, {len(ids)} failed)"), summary
        # regression.sh: a baseline, then a candidate; its figures must be those of compare's JSON
        suite = tmp / "mini.suite"
        suite.write_text("allreduce_bench --backend mpi -b 1K -e 8K -f 8 -n 10 --samples\n"
                         "sendrecv_bench --backend mpi -b 1K -e 8K -f 8 -n 10 --samples\n")
        store = tmp / "store"
        mini = ["--suite", suite, "--store", store, "--np", "2", "--launches", "2", *tools]
        done, _ = env.run([REGRESSION, "--label", "a", *mini], tmp)
        assert done.returncode == 0, f"exit {done.returncode}"
        done, _ = env.run([REGRESSION, "--label", "b", "--baseline", "a", *mini], tmp)
        log = (store / "b" / "logs" / "regression.txt").read_text()
        assert "comparisons made" in log and "rows compared" not in log, "the shim did not reword the tables"
        verdict = json.loads((store / "b" / "logs" / "regression.json").read_text())
        # the real reporter's JSON on the same two stored labels (their launches): the script's exit and file
        p = subprocess.run([args.report, "regression", store / "a", store / "b", "--label-a", "a", "--label-b", "b",
                            "--threshold", "5", "--format", "json"], capture_output=True, text=True)
        assert p.returncode in (0, 1, 2), p.stderr
        doc = json.loads(p.stdout)
        assert done.returncode == p.returncode == doc["exit"], \
            f"exit {done.returncode}, the reporter's JSON says {doc['exit']} (its exit {p.returncode})"
        assert verdict["exit"] == doc["exit"] and verdict["totals"] == doc["totals"], (verdict, doc)
        assert [b.get("counts") for b in verdict["benches"]] == [b.get("counts") for b in doc["benches"]], \
            (verdict["benches"], doc["benches"])
        want = verdict["verdict"]
        print(f"PASS: through a reworded ccbench-report: accept-node.sh exit 1 naming {', '.join(ids)}; "
              f"regression.sh exit {done.returncode} ({want}), the figures of compare's JSON")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--topo", default="", help="ccbench-topo (absent: the scripts say it is not built)")
    parser.add_argument("--schema", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("what", choices=["accept-pass", "accept-fail", "accept-bad-input", "regression",
                                         "regression-incomplete", "regression-aa", "regression-interleaved",
                                         "regression-history", "out-dirs", "reworded"])
    args = parser.parse_args()
    if not shutil.which(args.mpirun):
        print(f"SKIPPED: {args.mpirun} not found")
        return SKIP
    handler = {**workflow_accept.TESTS, **workflow_regression.TESTS, "out-dirs": out_dirs,
               "reworded": reworded}[args.what]
    return handler(Env(args), args) or 0


if __name__ == "__main__":
    sys.exit(main())