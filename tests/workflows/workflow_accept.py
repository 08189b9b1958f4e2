"""The accept-node cases of the workflow tests (tests/workflows/workflows_test.py): scripts/accept-node.sh passing,
failing a check made impossible, and refusing bad input."""
import json
import pathlib
import shutil
import subprocess
import tempfile

from workflow_driver import ACCEPT, BENCHES, PROFILE, ROOT, SKIP, summary_of

import validate_result  # noqa: E402  (tests/tools: on sys.path once workflow_driver is imported)


def accept_cmd(env, out, *extra):
    cmd = [ACCEPT, "--np", "2", "--out", out, "--timeout", "120", *env.tools(), *extra]
    if env.args.topo:
        cmd += ["--topo", env.args.topo]
    return cmd


def junit_cases(path):
    """{check id: failure message or None}, after checking the counts add up."""
    from junitparser import JUnitXml
    suites = list(JUnitXml.fromfile(str(path)))
    assert len(suites) == 1, f"{path}: {len(suites)} testsuites"
    suite = suites[0]
    cases = {}
    for case in suite:
        failures = [r for r in case.result if type(r).__name__ == "Failure"]
        cases[case.name] = failures[0].message if failures else None
    assert suite.tests == len(cases), f"{path}: tests={suite.tests}, {len(cases)} testcases"
    assert suite.failures == sum(1 for m in cases.values() if m is not None), f"{path}: failures={suite.failures}"
    return cases


def need_junitparser():
    try:
        import junitparser  # noqa: F401
    except ImportError:
        print("SKIPPED: junitparser is not installed (apt-get install python3-junitparser)")
        return False
    return True


def accept_pass(env, args):
    if not need_junitparser():
        return SKIP
    validator = validate_result.validator(args.schema)
    with tempfile.TemporaryDirectory(prefix="ccbench-accept-") as tmp:
        out = pathlib.Path(tmp) / "acc"
        done, seconds = env.run(accept_cmd(env, out, "--profile", "mpi-host-smoke"), tmp)
        assert done.returncode == 0, f"exit {done.returncode}, expected 0"
        assert "profile mpi-host-smoke" in done.stdout and "chosen by --profile mpi-host-smoke" in done.stdout
        for b in BENCHES:
            assert f"== {b}_bench at 512K" in done.stdout, f"{b}_bench did not run at 512K"
        assert done.stdout.count("#wrong") >= len(BENCHES), "not every bench's table was shown"
        assert "not built: copy_bench" in done.stdout
        assert ("not built: ib_write_bw_bench" in done.stdout or  # without libibverbs-dev
                "not run: ib_write_bw_bench (no RDMA device" in done.stdout), "ib_write_bw_bench ran without a device"

        summary = summary_of(done.stdout)
        text = "\n".join(summary)
        files = [f"{b}_bench.json" for b in BENCHES] + ["accept.xml"] + (["topology.json"] if args.topo else [])
        for name in files:
            assert name in text, f"the summary does not list {name}"
            assert (out / name).is_file(), f"{name} listed but not written"
        assert summary[-1].startswith("verdict: PASS (4 checks: 4 passed, 0 failed)") and summary[-1].endswith(
            "exit 0"), summary[-1]
        for b in BENCHES:
            doc = json.loads((out / f"{b}_bench.json").read_text())
            found = list(validate_result.problems(validator, doc))
            assert not found, f"{b}_bench.json does not validate: {found[0]}"
            sizes = {r["size_bytes"] for r in doc["results"]}
            assert sizes == {512 * 1024}, f"{b}_bench sizes {sizes}"
            binding = doc["environment"]["binding"]  # accept-node.sh's default --bind auto, as applied
            assert binding and all(x["policy"] == "auto" and x["applied"] for x in binding), binding
        cases = junit_cases(out / "accept.xml")
        checks = [c["id"] for c in json.loads(PROFILE.read_text())["checks"]]
        assert sorted(cases) == sorted(checks), sorted(cases)
        assert all(m is None for m in cases.values()), cases
        print(f"PASS: accept-node.sh exit 0 in {seconds:.1f} s; JUnit: {len(cases)} testcases, 0 failures; "
              f"summary lists {len(files)} files")


def accept_fail(env, args):
    if not need_junitparser():
        return SKIP
    with tempfile.TemporaryDirectory(prefix="ccbench-accept-") as tmp:
        profile = json.loads(PROFILE.read_text())
        profile["id"] = "impossible-busbw"
        busbw = [c for c in profile["checks"] if c["kind"] == "busbw"]
        assert busbw, "mpi-host-smoke has no busbw check"
        for c in busbw:
            c["min_GBps"] = 1e6  # 10^6 GB/s: no host memory reaches it
        path = pathlib.Path(tmp) / "impossible.json"
        path.write_text(json.dumps(profile))
        out = pathlib.Path(tmp) / "acc"
        done, seconds = env.run(accept_cmd(env, out, "--profile", path), tmp)
        assert done.returncode == 1, f"exit {done.returncode}, expected 1"
        ids = [c["id"] for c in busbw]
        for check in ids:
            line = next((l for l in done.stdout.splitlines() if l.split()[:2] == [check, "FAIL"]), None)
            assert line, f"no FAIL line for {check}"
            assert "< 1000000 GB/s" in line and "group world (ranks 0,1 on" in line, line
        summary = summary_of(done.stdout)
        assert f"failed checks: {', '.join(ids)}" in summary, summary
        assert summary[-1].startswith(f"verdict: FAIL (4 checks: {4 - len(ids)} passed, {len(ids)} failed)"), summary
        cases = junit_cases(out / "accept.xml")
        assert {k for k, m in cases.items() if m is not None} == set(ids), cases
        print(f"PASS: accept-node.sh exit 1 in {seconds:.1f} s; failing check named: {', '.join(ids)}; "
              f"JUnit: {len(ids)} failure(s) of {len(cases)}")


def accept_bad_input(env, args):
    cases = [
        (["--profile", "nosuch"], ["--profile nosuch: no such profile", "mpi-host-smoke"]),
        (["--profile", "mpi-host-smoke", "--np", "0"], ["--np '0'"]),
        (["--profile", "mpi-host-smoke", "--np", "two"], ["--np 'two'"]),
        (["--profile", "mpi-host-smoke", "--size", "12Q"], ["--size '12Q'"]),
        (["--profile", "mpi-host-smoke", "--launcher", "ssh"], ["--launcher 'ssh'"]),
        (["--profile", "mpi-host-smoke", "--bind", "numa"], ["--bind 'numa'"]),
        (["--profile", str(ROOT / "README.md")], ["README.md: not valid JSON"]),
    ]
    smi = shutil.which("nvidia-smi")
    if not smi or "GPU 0" not in subprocess.run([smi, "-L"], capture_output=True, text=True).stdout:
        cases.append((["--profile", "h100-sxm-8gpu"], ["needs GPUs"]))
    with tempfile.TemporaryDirectory(prefix="ccbench-accept-") as tmp:
        out = pathlib.Path(tmp) / "acc"
        for flags, says in cases:
            done, _ = env.run([ACCEPT, "--out", out, *env.tools(), *flags], tmp, timeout=60)
            lines = done.stderr.splitlines()
            assert done.returncode == 2, f"{flags}: exit {done.returncode}, expected 2"
            assert len(lines) == 1 and lines[0].startswith("accept-node.sh: "), f"{flags}: stderr {lines}"
            for what in says:
                assert what in lines[0], f"{flags}: '{what}' not in {lines[0]!r}"
            assert done.stdout == "", f"{flags}: nothing on stdout expected"
            left = list(pathlib.Path(tmp).iterdir())
            assert not left, f"{flags}: bad input left {left}"
        print(f"PASS: {len(cases)} bad inputs: exit 2, one line each, nothing written")


TESTS = {"accept-pass": accept_pass, "accept-fail": accept_fail, "accept-bad-input": accept_bad_input}
