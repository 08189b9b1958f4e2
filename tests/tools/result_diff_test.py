#!/usr/bin/env python3
"""scripts/lib/result_diff.py, the before/after comparison of compare-builds.sh, on real result files:
a file against itself and against copies where only run-specific values changed gives exit 0; a changed
size, status, key set or key order gives exit 1 with the path of the difference; bad input gives exit 2."""
import copy
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIFF = ROOT / "scripts" / "lib" / "result_diff.py"
RUNS = ROOT / "tests" / "data" / "report" / "runs"


def run(a, b):
    p = subprocess.run([sys.executable, str(DIFF), str(a), str(b)], capture_output=True, text=True, check=False)
    return p.returncode, p.stdout + p.stderr


def main():
    base = json.loads((RUNS / "allreduce-np4-a.json").read_text())
    ok = base["results"][0]
    with_fabric = copy.deepcopy(base)
    with_fabric["fabric"] = [{"host": "vm", "seconds": 1.0, "counters_read": 3, "links": [], "warnings": [],
                              "moved": [{"source": "net", "device": "lo", "port": 0, "name": "tx_bytes", "delta": 104,
                                         "kind": "traffic"}]}]
    same = {
        "itself": lambda d: None,
        "fabric moved otherwise": lambda d: d.update(fabric=[dict(with_fabric["fabric"][0], moved=[], seconds=2.0)]),
        "run-specific": lambda d: (d["run"].update(id="ffff", started_utc="2030-01-01T00:00:00.000Z"),
                                   d["results"][0].update(busbw_GBps=ok["busbw_GBps"] * 2, elapsed_s=9.5),
                                   d["results"][0]["time"].update(p50_us=1e6)),
    }
    differ = {
        "size": (lambda d: d["results"][1].update(size_bytes=d["results"][1]["size_bytes"] * 2), "results[1].size_bytes"),
        "status": (lambda d: d["results"][2].update(status="failed"), "results[2].status"),
        "new key": (lambda d: d["results"][0].update(zz=1), "results[0].zz"),
        "lost case": (lambda d: d["results"].pop(), "results"),
        "key order": (lambda d: d.update(run=dict(reversed(list(d["run"].items())))), "run"),
        "integer as float": (lambda d: d["results"][0].update(ranks=float(ok["ranks"])), "results[0].ranks"),
        "fabric on one side": (lambda d: d.pop("fabric"), "fabric"),
    }
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        before = pathlib.Path(tmp) / "before.json"
        before.write_text(json.dumps(with_fabric))
        for name, change in same.items():
            doc = copy.deepcopy(with_fabric)
            change(doc)
            after = pathlib.Path(tmp) / "after.json"
            after.write_text(json.dumps(doc))
            rc, out = run(before, after)
            print(f"{'ok  ' if rc == 0 else 'FAIL'} {name}: exit {rc}: {out.strip().splitlines()[-1]}")
            if rc != 0:
                bad.append(name)
        for name, (change, path) in differ.items():
            doc = copy.deepcopy(with_fabric)
            change(doc)
            after = pathlib.Path(tmp) / "after.json"
            after.write_text(json.dumps(doc))
            rc, out = run(before, after)
            found = any(line.startswith(path + ":") for line in out.splitlines())
            print(f"{'ok  ' if rc == 1 and found else 'FAIL'} {name}: exit {rc}: "
                  f"{next((line for line in out.splitlines() if line.startswith(path + ':')), out.strip()[:200])}")
            if rc != 1 or not found:
                bad.append(name)
        for name, args in (("missing file", [before, pathlib.Path(tmp) / "nope.json"]),
                           ("not a result", [before, ROOT / "profiles" / "mpi-host-smoke.json"])):
            rc, out = run(*args)
            print(f"{'ok  ' if rc == 2 else 'FAIL'} {name}: exit {rc}: {out.strip()[:200]}")
            if rc != 2:
                bad.append(name)
    if bad:
        print("FAIL: " + ", ".join(bad))
        return 1
    print("ok: result_diff.py tells run-specific values from real differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
