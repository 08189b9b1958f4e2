#!/usr/bin/env python3
"""End-to-end tests of ccbench-report on the real result files under tests/data/report/runs.

  golden          every format of table, compare, accept and html against tests/data/report/golden
                  (--update rewrites the golden files; read the diff before committing)
  malformed       truncated file, wrong types, unknown major version, empty results, ...: one line, exit 2
  fleet_input     ccbench-report fleet on bad input derived from the real fleet sweeps (another bench, other
                  sizes, one host, a pair missing, a pair twice): one line, exit 2, nothing on stdout
  compare_scaled  candidates derived from a real run: samples scaled by 0.8 busbw (SLOWER, exit 1), the same
                  samples resampled with fresh noise (SAME), only 3 samples (UNSURE)
"""
import argparse
import copy
import json
import math
import os
import random
import subprocess
import sys
import tempfile

US = 1e6


def run(report, args, cwd):
    p = subprocess.run([report] + args, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=120)
    return p.returncode, p.stdout, p.stderr


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


# ---------------------------------------------------------------- golden

def golden_cases(profiles_rel):
    smoke = os.path.join(profiles_rel, "mpi-host-smoke.json")
    h100 = os.path.join(profiles_rel, "h100-sxm-8gpu.json")
    tables = ["allreduce-np4-a.json", "sendrecv-pairs-np4.json", "timed-out.json", "allreduce-np2-v1.0.0.json",
              "hostile-names.json"]
    cases = []
    for fmt, ext in (("terminal", "txt"), ("markdown", "md"), ("csv", "csv"), ("json", "json")):
        cases.append((f"table.{ext}", ["table", *tables, "--format", fmt, "--colour", "never"], 0))
        cases.append((f"compare.{ext}", ["compare", "allreduce-np4-a.json", "allreduce-np4-b.json", "--format", fmt,
                                         "--colour", "never"], 1))
        cases.append((f"compare-platforms.{ext}", ["compare", "allreduce-np2-peak20.json", "allreduce-np2-peak10.json",
                                                   "--label-a", "A (peak 20)", "--label-b", "B (peak 10)",
                                                   "--format", fmt, "--colour", "never"], None))
        cases.append((f"accept-pass.{ext}", ["accept", "allreduce-np4-a.json", "sendrecv-pairs-np4.json",
                                             "--profile", smoke, "--format", fmt, "--colour", "never"], 0))
        cases.append((f"accept-fail.{ext}", ["accept", "timed-out.json", "--profile", smoke, "--format", fmt,
                                             "--colour", "never"], 1))
        cases.append((f"fleet-host.{ext}", ["fleet", "fleet-host.json", "--format", fmt, "--colour", "never"], 1))
    cases.append(("fleet-link.txt", ["fleet", "fleet-link.json", "--colour", "never"], 1))
    cases.append(("fleet-link-best.txt", ["fleet", "fleet-link.json", "--stat", "best", "--colour", "never"], 1))
    cases.append(("fleet-groups.txt", ["fleet", "fleet-groups.json", "--stat", "best", "--colour", "never"], 1))
    cases.append(("fleet-groups.json", ["fleet", "fleet-groups.json", "--stat", "best", "--format", "json"], 1))
    cases.append(("fleet-lanes.txt", ["fleet", "fleet-lanes.json", "--colour", "never"], 1))
    cases.append(("fleet-equal.txt", ["fleet", "fleet-equal.json", "--colour", "never"], 0))
    cases.append(("fleet-link.junit.xml", ["fleet", "fleet-link.json", "--junit", "@OUT@"], 1))
    cases.append(("fleet.html", ["html", "fleet-host.json", "-o", "@OUT@"], 0))
    cases.append(("accept-h100-on-host.txt", ["accept", "allreduce-np4-a.json", "--profile", h100,
                                              "--colour", "never"], 1))
    cases.append(("accept-fail.junit.xml", ["accept", "timed-out.json", "--profile", smoke, "--junit", "@OUT@"], 1))
    cases.append(("report.html", ["html", "allreduce-np4-a.json", "allreduce-np4-b.json", "allreduce-np2-peak20.json",
                                  "timed-out.json", "hostile-names.json", "-o", "@OUT@"], 0))
    return cases


def check_golden(report, data, profiles, update):
    runs = os.path.join(data, "runs")
    golden = os.path.join(data, "golden")
    os.makedirs(golden, exist_ok=True)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args, want_rc in golden_cases(os.path.relpath(profiles, runs)):
            out_file = os.path.join(tmp, name)
            writes_file = "@OUT@" in args
            args = [out_file if a == "@OUT@" else a for a in args]
            rc, out, err = run(report, args, runs)
            if writes_file and os.path.exists(out_file):
                with open(out_file, encoding="utf-8") as f:
                    out = f.read()
            if want_rc is not None and rc != want_rc:
                bad.append(f"{name}: exit {rc}, expected {want_rc}; stderr: {err.strip()}")
                continue
            if rc not in (0, 1):
                bad.append(f"{name}: exit {rc}; stderr: {err.strip()}")
                continue
            path = os.path.join(golden, name)
            if update:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(out)
                continue
            if not os.path.exists(path):
                bad.append(f"{name}: no golden file {path} (run with --update)")
                continue
            with open(path, encoding="utf-8") as f:
                want = f.read()
            if out != want:
                lines = [(i, a, b) for i, (a, b) in enumerate(zip(want.splitlines(), out.splitlines())) if a != b]
                first = lines[0] if lines else (min(len(want.splitlines()), len(out.splitlines())), "", "")
                bad.append(f"{name}: differs from {path} at line {first[0] + 1}:\n  golden: {first[1]!r}\n"
                           f"  now:    {first[2]!r}")
            else:
                print(f"ok   {name} ({len(out.splitlines())} lines, exit {rc})")
        # Colour only on a terminal: a pipe gets none unless asked for.
        for flag, want in (([], False), (["--colour", "always"], True)):
            rc, out, err = run(report, ["table", "timed-out.json", *flag], runs)
            if ("\x1b[" in out) != want:
                bad.append(f"table {' '.join(flag) or '(to a pipe)'}: colour {'missing' if want else 'on a pipe'}")
            else:
                print(f"ok   table {' '.join(flag) or 'to a pipe'}: {'colour' if want else 'no colour'}")
    if bad:
        fail("\n".join(bad))


# ---------------------------------------------------------------- malformed

def malformed_cases(base_text):
    base = json.loads(base_text)

    def edited(change):
        doc = copy.deepcopy(base)
        change(doc)
        return json.dumps(doc)

    def set_key(path, value):
        def change(doc):
            node = doc
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        return change

    return [
        ("truncated", base_text[: len(base_text) // 2], "not valid JSON (truncated?)"),
        ("empty_file", "", "empty file"),
        ("not_json", "this is not json\n", "not valid JSON"),
        ("array", "[1, 2, 3]", "expected a JSON object"),
        ("foreign", json.dumps({"schema": "nccl-tests", "results": []}), "/schema: not a ccbench result document"),
        ("wrong_type_busbw", edited(set_key(["results", 3, "busbw_GBps"], "fast")),
         "/results/3/busbw_GBps: expected number, got string"),
        ("wrong_type_ranks", edited(set_key(["results", 0, "ranks"], 2.5)), "/results/0/ranks: expected integer"),
        ("negative_size", edited(set_key(["results", 1, "size_bytes"], -8)), "/results/1/size_bytes: expected a number >= 0"),
        ("unknown_status", edited(set_key(["results", 2, "status"], "great")), "/results/2/status: expected one of"),
        ("missing_key", edited(lambda d: d["run"].pop("argv")), "/run: missing required key \"argv\""),
        ("unknown_major", edited(set_key(["schema_version"], "2.0.0")),
         "/schema_version: schema version 2.0.0 is not supported"),
        ("bad_version", edited(set_key(["schema_version"], "one")), "/schema_version: expected a version"),
        ("empty_results", edited(set_key(["results"], [])), "/results: no results"),
        # A newer minor is refused by its version, whether or not it uses a key this reader does not know.
        ("newer_minor_unknown_key", edited(lambda d: (d.update({"schema_version": "1.98.0", "extra": 1}))),
         "/schema_version: schema version 1.98.0 is newer than this reader's"),
        ("newer_minor", edited(set_key(["schema_version"], "1.99.0")),
         "/schema_version: schema version 1.99.0 is newer than this reader's"),
        # Results are checked as they stream by; the document's first problem in key order is still the one named.
        ("problems_before_and_after_results",
         edited(lambda d: (d["environment"].pop("hosts"), d["results"][0].update({"ranks": "two"}),
                           d["run"].pop("argv"))), "/environment: missing required key \"hosts\""),
        ("problems_in_results_and_after",
         edited(lambda d: (d["results"][1].update({"ranks": "two"}), d["run"].pop("argv"))),
         "/results/1/ranks: expected integer"),
        ("duplicate_row", edited(lambda d: d["results"].append(copy.deepcopy(d["results"][0]))),
         "repeats /results/0 (same op, dtype, group, size, placement and variant)"),
        ("number_overflow", base_text.replace('"bus_factor": 1.5', '"bus_factor": 1.5E99999', 1),
         "not valid JSON: number overflow parsing '1.5E99999'"),
        ("deep_nesting", "[" * 100000 + "]" * 100000, "nested deeper than 64 levels"),
        ("bad_utf8", base_text.replace('"vm"', '"v\udcff"', 1).encode("utf-8", "surrogateescape").decode(
            "latin-1"), None),
    ]


def check_malformed(report, data, profiles_dir):
    runs = os.path.join(data, "runs")
    with open(os.path.join(runs, "allreduce-np4-a.json"), encoding="utf-8") as f:
        base_text = f.read()
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, expect in malformed_cases(base_text):
            path = os.path.join(tmp, name + ".json")
            with open(path, "w", encoding="latin-1" if name == "bad_utf8" else "utf-8") as f:
                f.write(text)
            for sub in (["table"], ["html", "-o", os.path.join(tmp, "x.html")]):
                rc, out, err = run(report, sub + [path], tmp)
                lines = err.strip().splitlines()
                problem = None
                if rc != 2:
                    problem = f"exit {rc}, expected 2"
                elif len(lines) != 1:
                    problem = f"{len(lines)} lines on stderr, expected one"
                elif path not in lines[0]:
                    problem = "the message does not name the file"
                elif expect is not None and expect not in lines[0]:
                    problem = f"message lacks {expect!r}"
                elif out:
                    problem = "printed output for bad input"
                if problem:
                    bad.append(f"{name} ({sub[0]}): {problem}: {err.strip()[:300]!r}")
                elif sub[0] == "table":
                    print(f"ok   {name}: {lines[0].replace(tmp + '/', '')}")
        # Not malformed: an older minor version is read; a missing file and a directory without results are not.
        rc, out, err = run(report, ["table", os.path.join(runs, "allreduce-np2-v1.0.0.json")], tmp)
        if rc != 0 or "schema 1.0.0" not in out:
            bad.append(f"schema 1.0.0 document: exit {rc}: {err.strip()}")
        else:
            print("ok   schema 1.0.0 document read")
        for name, arg in (("missing_file", os.path.join(tmp, "nope.json")), ("empty_dir", tmp + "/empty")):
            os.makedirs(tmp + "/empty", exist_ok=True)
            rc, out, err = run(report, ["table", arg], tmp)
            if rc != 2 or len(err.strip().splitlines()) != 1:
                bad.append(f"{name}: exit {rc}: {err.strip()!r}")
            else:
                print(f"ok   {name}: {err.strip()}")
        # accept --max-age (issue 39): a result older than that is not judged (one line, exit 2); a bad age is
        # refused; a young enough one is judged as without the flag. (Every result has a time: the schema requires
        # started_utc, and import takes a log's modification time; the unit tests cover a run without one.)
        profiles = os.path.join(profiles_dir, "mpi-host-smoke.json")
        result = os.path.join(runs, "allreduce-np4-a.json")
        for name, args, rc_want, want in (
                ("max_age_old", [result, "--max-age", "1h"], 2, "too old to judge"),
                ("max_age_bad", [result, "--max-age", "1 day"], 2, "expected a number and s, m, h or d"),
                ("max_age_young", [result, "--max-age", "100000d"], 0, "passed")):
            rc, out, err = run(report, ["accept", *args, "--profile", profiles], tmp)
            said = err.strip() if rc_want == 2 else out
            if rc != rc_want or want not in said or (rc_want == 2 and (out or len(said.splitlines()) != 1)):
                bad.append(f"{name}: exit {rc} (expected {rc_want}): {err.strip()[:300]!r}")
            else:
                print(f"ok   {name}: exit {rc}: {said.splitlines()[-1 if rc_want == 0 else 0].replace(tmp + '/', '')}")
    if bad:
        fail("\n".join(bad))


# ---------------------------------------------------------------- fleet_input

def fleet_input_cases(runs):
    with open(os.path.join(runs, "fleet-host.json"), encoding="utf-8") as f:
        base = json.load(f)

    def edited(change):
        doc = copy.deepcopy(base)
        change(doc)
        return doc

    def other_bench(doc):
        doc["run"]["benchmark"] = "allreduce_bench"
        for r in doc["results"]:
            r["benchmark"], r["op"], r["redop"] = "allreduce_bench", "all_reduce", "sum"

    def other_size(doc):
        for r in doc["results"]:
            r["size_bytes"] //= 2
            r["count"] //= 2

    def drop(doc):
        doc["results"] = [r for r in doc["results"] if r["group_hosts"] != ["node1", "node3"]]

    def one_host(doc):
        for r in doc["results"]:
            r["group_hosts"] = ["node0"]
        doc["environment"]["hosts"] = [{"hostname": "node0", "ranks": [0, 1, 2, 3]}]

    host = os.path.join(runs, "fleet-host.json")
    return [  # (name, {file name: document} written to a temp dir, extra args, what the one line says)
        ("other_bench", {"b.json": edited(other_bench)}, [host], "sendrecv_bench results beside other_bench-b.json's allreduce_bench"),
        ("other_sizes", {"b.json": edited(other_size)}, [host], "sizes 2097152 differ from other_sizes-b.json's 1048576"),
        ("one_host", {"a.json": edited(one_host)}, [], "1 host (node0): a fleet verdict needs 3 hosts or more"),
        ("missing_pair", {"a.json": edited(drop)}, [],
         "1 of the 6 pairs of 4 hosts are missing from the sweep (node1<->node3)"),
        ("pair_twice", {}, [host, host], "is measured twice (here and in fleet-host.json)"),
        ("pairs_and_groups", {}, [host, os.path.join(runs, "fleet-groups.json")],
         "hosts results beside fleet-host.json's pair results: one sweep at a time"),
        ("no_pairs", {}, [os.path.join(runs, "allreduce-np4-a.json")], "no pair results"),
        ("bad_size", {}, [host, "--size", "3M"], "--size 3145728: the sweep measured 2097152"),
    ]


def check_fleet_input(report, data):
    runs = os.path.join(data, "runs")
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, docs, extra, expect in fleet_input_cases(runs):
            paths = []
            for file_name, doc in docs.items():
                path = os.path.join(tmp, f"{name}-{file_name}")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
                paths.append(path)
            rc, out, err = run(report, ["fleet", *paths, *extra], tmp)
            lines = err.strip().replace(tmp + "/", "").replace(runs + "/", "").splitlines()
            if rc != 2 or len(lines) != 1 or expect not in lines[0] or out:
                bad.append(f"{name}: exit {rc} (expected 2), stderr {lines!r}, expected {expect!r}, "
                           f"stdout {len(out)} chars")
            else:
                print(f"ok   {name}: {lines[0]}")
    if bad:
        fail("\n".join(bad))


# ---------------------------------------------------------------- compare_scaled

def percentile(sorted_values, p):
    """numpy's default (R type 7), as model/src/statistics.cpp."""
    n = len(sorted_values)
    h = (n - 1) * p / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def median_ci_ranks(n):
    """1-based (j, k) with P(X(j) <= median <= X(k)) >= 0.95 from binomial(n, 1/2); None below n = 6."""
    if n < 6:
        return None
    cdf = 0.0
    j = 0
    while True:
        nxt = cdf + math.comb(n, j) / 2.0 ** n
        if nxt > 0.025:
            break
        cdf = nxt
        j += 1
    return max(j, 1), n - max(j, 1) + 1


def resummarize(case, samples_us):
    """Replaces a case's samples and recomputes its summary and rates from them."""
    s = sorted(samples_us)
    n = len(s)
    mean = sum(s) / n
    ranks = median_ci_ranks(n)
    old_p50 = case["time"]["p50_us"]
    case["samples_us"] = samples_us
    case["time"] = {"n": n, "min_us": s[0], "p50_us": percentile(s, 50), "mean_us": mean,
                    "p95_us": percentile(s, 95), "p99_us": percentile(s, 99), "max_us": s[-1],
                    "stdev_us": math.sqrt(sum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0,
                    "p50_ci95_lo_us": s[ranks[0] - 1] if ranks else None,
                    "p50_ci95_hi_us": s[ranks[1] - 1] if ranks else None}
    ratio = old_p50 / case["time"]["p50_us"]
    for key in ("algbw_GBps", "busbw_GBps", "busbw_mean_GBps"):
        case[key] *= ratio
    if case["pct_of_peak"] is not None:
        case["pct_of_peak"] *= ratio


def derive(base, how, rng):
    doc = copy.deepcopy(base)
    doc["run"]["label"] = how
    for case in doc["results"]:
        if case["status"] != "ok":
            continue
        samples = case["samples_us"]
        if how == "scaled-0.8":
            new = [x / 0.8 for x in samples]  # busbw x 0.8 = time / 0.8
        elif how == "fresh-noise":
            new = [rng.choice(samples) for _ in samples]  # a bootstrap resample: same distribution, new draw
        else:
            new = samples[:3]
        resummarize(case, new)
    return doc


def verdicts(report, base_path, cand_path, extra=()):
    rc, out, err = run(report, ["compare", base_path, cand_path, "--format", "json", *extra], None)
    if rc not in (0, 1):
        fail(f"compare exit {rc}: {err.strip()}")
    return rc, json.loads(out)


def check_compare_scaled(report, data):
    base_path = os.path.join(data, "runs", "allreduce-np4-a.json")
    with open(base_path, encoding="utf-8") as f:
        base = json.load(f)
    rng = random.Random(20261122)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for how, want_rc, want_verdict, extra in (("scaled-0.8", 1, "SLOWER", ()),
                                                   ("fresh-noise", 0, "SAME", ()),
                                                   ("too-few", 0, "UNSURE", ()),
                                                   ("scaled-0.8", 0, "SAME", ("--threshold", "25"))):
            cand_path = os.path.join(tmp, how + ".json")
            with open(cand_path, "w", encoding="utf-8") as f:
                json.dump(derive(base, how, rng), f)
            rc, doc = verdicts(report, base_path, cand_path, extra)
            got = [r["verdict"] for r in doc["rows"]]
            odd = [f'{r["size_bytes"]} B {"in" if r["in_place"] else "out"}: {r["verdict"]} ({r["why"]})'
                   for r in doc["rows"] if r["verdict"] != want_verdict]
            if rc != want_rc or odd or not got:
                bad.append(f"{how} {' '.join(extra)}: exit {rc} (want {want_rc}); rows not {want_verdict}: {odd}")
                continue
            changes = [r["change"] for r in doc["rows"] if r["change"] is not None]
            if how == "scaled-0.8" and any(abs(c + 0.2) > 0.005 for c in changes):
                bad.append(f"scaled-0.8: changes {changes} are not -20%")
                continue
            span = f"changes {min(changes):+.1%}..{max(changes):+.1%}" if changes else "no change estimated"
            print(f"ok   {how} {' '.join(extra)}: {len(got)} rows {want_verdict}, exit {rc}; {span}")
    if bad:
        fail("\n".join(bad))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--profiles", required=True)
    ap.add_argument("--update", action="store_true", help="rewrite the golden files")
    ap.add_argument("case", choices=["golden", "malformed", "fleet_input", "compare_scaled"])
    a = ap.parse_args()
    report = os.path.abspath(a.report)
    if a.case == "golden":
        check_golden(report, os.path.abspath(a.data), os.path.abspath(a.profiles), a.update)
    elif a.case == "malformed":
        check_malformed(report, os.path.abspath(a.data), os.path.abspath(a.profiles))
    elif a.case == "fleet_input":
        check_fleet_input(report, os.path.abspath(a.data))
    else:
        check_compare_scaled(report, os.path.abspath(a.data))
    print("PASS")


if __name__ == "__main__":
    main()
