#!/usr/bin/env python3
"""End-to-end test of `ccbench-report accept` on real result files, read back with junitparser.

  accept_junit_test.py --report BIN --data tests/data/report --profiles profiles

1. The MPI host-memory smoke profile on a verified all_reduce run: exit 0, a PASS line per check,
   and JUnit XML with no failure.
2. The same profile on a run whose op timed out: exit 1, the failing check ids printed, and JUnit
   XML whose failures are exactly those checks (JSON output agrees).
3. A malformed profile: exit 2, one line on stderr naming the file and the JSON pointer.

Exit 77 (skipped) when junitparser is not installed (Debian: python3-junitparser).
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

SKIP = 77
PROFILE = "mpi-host-smoke.json"

try:
    from junitparser import JUnitXml
except ImportError:  # pragma: no cover - depends on the machine
    print("junitparser is not installed (apt-get install python3-junitparser): skipped")
    sys.exit(SKIP)


def run(cmd):
    print("$", " ".join(str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120)
    print(done.stdout, end="")
    print(done.stderr, end="", file=sys.stderr)
    return done


def junit_cases(path):
    """{check id: (classname, failure message or None)}, after checking the counts add up."""
    ElementTree.parse(path)  # well-formed XML
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1, f"{path}: {len(suites)} testsuites, expected 1"
    suite = suites[0]
    cases = {}
    for case in suite:
        failures = [r for r in case.result if type(r).__name__ == "Failure"]
        assert len(failures) == len(case.result), f"{path}: {case.name}: results other than failures"
        cases[case.name] = (case.classname, failures[0].message if failures else None)
    failed = sum(1 for _, message in cases.values() if message is not None)
    assert suite.tests == len(cases), f"{path}: tests={suite.tests}, {len(cases)} testcases"
    assert suite.failures == failed, f"{path}: failures={suite.failures}, {failed} failing testcases"
    assert (suite.errors, suite.skipped) == (0, 0), f"{path}: errors={suite.errors} skipped={suite.skipped}"
    assert suite.name.startswith("ccbench accept: "), suite.name
    return cases


def check_pass(args, tmp, check_ids):
    xml = tmp / "pass.xml"
    done = run([args.report, "accept", args.data / "runs" / "allreduce-np4-a.json",
                "--profile", args.profiles / PROFILE, "--junit", xml])
    assert done.returncode == 0, f"exit {done.returncode}, expected 0"
    lines = done.stdout.splitlines()
    for check in check_ids:
        assert any(line.split()[:2] == [check, "PASS"] for line in lines), f"no PASS line for {check}"
    assert lines[-1] == f"{len(check_ids)} checks: {len(check_ids)} passed, 0 failed", lines[-1]
    cases = junit_cases(xml)
    assert sorted(cases) == sorted(check_ids), sorted(cases)
    assert all(message is None for _, message in cases.values())
    assert {classname for classname, _ in cases.values()} == {"ccbench.accept.mpi-host-smoke"}


def check_fail(args, tmp, check_ids):
    xml = tmp / "fail.xml"
    files = [args.data / "runs" / "timed-out.json", "--profile", args.profiles / PROFILE]
    done = run([args.report, "accept", *files, "--junit", xml])
    assert done.returncode == 1, f"exit {done.returncode}, expected 1"
    failing = {line.split()[0] for line in done.stdout.splitlines() if line.split()[1:2] == ["FAIL"]}
    assert "no-timed-out" in failing, failing
    timed_out = next(line for line in done.stdout.splitlines() if line.startswith("no-timed-out "))
    for what in ("all_reduce", "256 MiB", "group world (ranks 0,1 on vm)", "--timeout 0.3"):
        assert what in timed_out, f"'{what}' not in: {timed_out}"
    cases = junit_cases(xml)
    assert sorted(cases) == sorted(check_ids), sorted(cases)
    assert {name for name, (_, message) in cases.items() if message is not None} == failing
    assert cases["no-timed-out"][1].startswith("no-timed-out: all_reduce float32 256 MiB"), cases["no-timed-out"]
    # The JSON printer gives the same verdicts.
    done = run([args.report, "accept", *files, "--format", "json"])
    assert done.returncode == 1
    verdicts = {c["id"]: c["verdict"] for c in json.loads(done.stdout)["checks"]}
    assert {k for k, v in verdicts.items() if v == "fail"} == failing, verdicts


def check_malformed(args, tmp):
    profile = json.loads((args.profiles / PROFILE).read_text())
    profile["checks"][1]["kind"] = "foo"
    bad = tmp / "bad.json"
    bad.write_text(json.dumps(profile))
    xml = tmp / "bad.xml"
    done = run([args.report, "accept", args.data / "runs" / "allreduce-np4-a.json", "--profile", bad, "--junit", xml])
    assert done.returncode == 2, f"exit {done.returncode}, expected 2"
    assert done.stdout == "", "nothing on stdout for bad input"
    lines = done.stderr.splitlines()
    assert len(lines) == 1, f"{len(lines)} lines on stderr, expected 1"
    assert f'{bad}: /checks/1/kind: expected one of "busbw", ' in lines[0], lines[0]
    assert not xml.exists(), "no JUnit XML for bad input"
    # A result file given as the profile.
    result = args.data / "runs" / "timed-out.json"
    done = run([args.report, "accept", result, "--profile", result])
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"{result}: /profile: missing" in done.stderr, done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=pathlib.Path, required=True)
    parser.add_argument("--data", type=pathlib.Path, required=True)
    parser.add_argument("--profiles", type=pathlib.Path, required=True)
    args = parser.parse_args()
    check_ids = [c["id"] for c in json.loads((args.profiles / PROFILE).read_text())["checks"]]
    with tempfile.TemporaryDirectory(prefix="ccbench-accept-") as tmp:
        check_pass(args, pathlib.Path(tmp), check_ids)
        check_fail(args, pathlib.Path(tmp), check_ids)
        check_malformed(args, pathlib.Path(tmp))
    print("accept_junit_test: ok")


if __name__ == "__main__":
    main()
