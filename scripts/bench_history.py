#!/usr/bin/env python3
"""The history index's figures (docs/history.md): a fleet's history of N result files made from one real run's
document (tests/data/report/runs/fleet-equal.json: a sendrecv --all-pairs sweep of 4 namespace hosts, 6 pairs) with
its hosts and times varied (host group g of G, night n: hosts hG*4.., started n days later, a run id of its own; the
figures are the real run's), then, each as its own process with its wall time and peak memory (ru_maxrss):

  index (cold)    the first update over the N files
  index (warm)    an update with nothing new: every file stat'ed, none read
  trend (warm)    trend --db over the index, nothing new, output to /dev/null
  index +1000     1,000 new result files added, then an update
  trend +1000     trend --db after them

Figures, not a test: exit 2 only on bad arguments.

  scripts/bench_history.py --report build/report/ccbench-report [--results 100000] [--added 1000] [--dir DIR]
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
TEMPLATE = HERE.parent / "tests" / "data" / "report" / "runs" / "fleet-equal.json"
HOSTS_PER_RUN = 4


def generate(template, folder, first, count, groups):
    """Result files first..first+count-1: file i is night i // groups of host group i % groups."""
    hosts = sorted(set(re.findall(r'"(node\d)"', template)))
    assert len(hosts) == HOSTS_PER_RUN, hosts
    run_id = re.search(r'"id": "([0-9a-f]+)"', template).group(1)
    for i in range(first, first + count):
        night, group = divmod(i, groups)
        text = template
        for k, h in enumerate(hosts):
            text = text.replace(f'"{h}"', f'"h{group * HOSTS_PER_RUN + k:04d}"')
        day = night % 28 + 1
        month = night // 28 % 12 + 1
        year = 2026 + night // (28 * 12)
        stamp = f"{year:04d}-{month:02d}-{day:02d}"
        text = re.sub(r'"(started|ended)_utc": "\d{4}-\d\d-\d\d', lambda m: f'"{m.group(1)}_utc": "{stamp}', text)
        text = text.replace(f'"id": "{run_id}"', f'"id": "{i:016x}"', 1)
        out = folder / f"night-{night:05d}" / f"group-{group:04d}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def timed(what, cmd):
    """Runs cmd; prints its wall time and peak resident memory; returns its stdout."""
    start = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=null, text=True)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
    seconds = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    print(f"{what:<16} {seconds:8.2f} s   peak {usage.ru_maxrss / 1024:8.1f} MiB   exit {code}", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", required=True, help="ccbench-report")
    parser.add_argument("--results", type=int, default=100000)
    parser.add_argument("--added", type=int, default=1000)
    parser.add_argument("--groups", type=int, default=250, help="host groups of 4 (250: a fleet of 1,000 hosts)")
    parser.add_argument("--dir", help="where the history goes (kept); default a temporary folder, removed")
    args = parser.parse_args()
    if args.results < 1 or args.added < 1 or args.groups < 1:
        print("bench_history: --results, --added and --groups must be at least 1", file=sys.stderr)
        return 2
    root = pathlib.Path(args.dir) if args.dir else pathlib.Path(tempfile.mkdtemp(prefix="ccbench-bench-history-"))
    try:
        results, db = root / "results", root / "history.sqlite"
        template = TEMPLATE.read_text()
        start = time.monotonic()
        generate(template, results, 0, args.results, args.groups)
        print(f"history: {args.results} result files of {args.groups * HOSTS_PER_RUN} hosts "
              f"({args.results // args.groups} nights), from {TEMPLATE.name}, made in "
              f"{time.monotonic() - start:.1f} s", flush=True)
        report = [args.report]
        print(timed("index (cold)", report + ["index", str(results), "--db", str(db)]).strip())
        print(timed("index (warm)", report + ["index", str(results), "--db", str(db)]).strip())
        out = timed("trend (warm)", report + ["trend", "--db", str(db), "--partial"])
        print(out.splitlines()[0][:160] if out else "", out.splitlines()[-1][:200] if out else "", sep="\n")
        generate(template, results, args.results, args.added, args.groups)
        print(timed(f"index +{args.added}", report + ["index", str(results), "--db", str(db)]).strip())
        out = timed(f"trend +{args.added}", report + ["trend", "--db", str(db), "--partial"])
        print(out.splitlines()[-1][:200] if out else "")
        print(f"index file: {db.stat().st_size / 2**20:.1f} MiB")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
