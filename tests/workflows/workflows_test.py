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
  workflows_test.py ... regression-interleaved  --env-b CCBENCH_DEBUG_LATE=1:20000: REGRESSION with SLOWER
                                           rows; --env-a X=1 --env-b X=2: not REGRESSION; --nccl-a/--nccl-b
                                           plumbed to each side's benches
  workflows_test.py ... out-dirs           --out / --store that are devices, pipes, symlinks, files: exit 2

Each test works in a fresh temporary directory. Failures raise AssertionError (exit 1); exit 77 means
skipped (what the test needs is missing here, and it says what).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ACCEPT = ROOT / "scripts" / "accept-node.sh"
REGRESSION = ROOT / "scripts" / "regression.sh"
PROFILE = ROOT / "profiles" / "mpi-host-smoke.json"
sys.path.insert(0, str(HERE.parent / "tools"))
import reword_shim  # noqa: E402
import validate_result  # noqa: E402

SKIP = 77


def collective_benches():
    """The collective benches of the workload table (model/include/ccbench/workloads.def), read here on their own:
    what accept-node.sh and the smoke suite must run, without asking the tool under test."""
    rows = (ROOT / "model" / "include" / "ccbench" / "workloads.def").read_text()
    found = re.findall(r'^CCBENCH_WORKLOAD\(\s*\w+,\s*"\w+",\s*"(\w+)_bench",\s*Collective,', rows, re.M)
    assert len(found) >= 7, f"workloads.def: {found}"
    return found


BENCHES = collective_benches()


class Env:
    def __init__(self, args):
        self.args = args
        mpirun_dir = str(pathlib.Path(args.mpirun).resolve().parent)
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_btl="self,vader", OMPI_MCA_mpi_yield_when_idle="1",
                        PATH=mpirun_dir + os.pathsep + os.environ.get("PATH", ""))
        self.env.pop("CCBENCH_BIN", None)

    def tools(self):
        """The options that point the scripts at the binaries under test."""
        out = ["--bin", self.args.bin_dir, "--report", self.args.report]
        return out

    def run(self, cmd, cwd, env=None, timeout=240):
        """Runs a script in its own session; on timeout, SIGTERM (the script then ends the bench it
        runs), and in any case nothing of the session outlives the call."""
        cmd = [str(c) for c in cmd]
        print("$", " ".join(cmd), flush=True)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env or self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                stdout, stderr = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                kill_session(proc.pid)
                stdout, stderr = proc.communicate()
            print(stdout, stderr, sep="\n")
            raise AssertionError(f"{cmd[0]} did not finish in {timeout} s")
        finally:
            kill_session(proc.pid)
        done = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
        seconds = time.monotonic() - start
        print(done.stdout, end="")
        print(done.stderr, end="", file=sys.stderr)
        print(f"-> exit {done.returncode} in {seconds:.1f} s", flush=True)
        return done, seconds


def kill_session(sid):
    """SIGKILL every process left in session `sid` (a bench the script could not end)."""
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()  # state ppid pgrp session ...
            if int(fields[3]) == sid and fields[0] != "Z":
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            pass


def accept_cmd(env, out, *extra):
    cmd = [ACCEPT, "--np", "2", "--out", out, "--timeout", "120", *env.tools(), *extra]
    if env.args.topo:
        cmd += ["--topo", env.args.topo]
    return cmd


def summary_of(stdout):
    """The lines from '== summary' on."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("== summary")]
    assert starts, "no '== summary' section in the output"
    return lines[starts[-1]:]


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


def verdict_counts(stdout):
    """Totals of the per-bench compare summaries in regression.sh's final section."""
    totals = dict.fromkeys(["SAME", "FASTER", "SLOWER", "UNSURE", "FAILED"], 0)
    section = stdout.split("== regression:")[-1]
    for line in section.splitlines():
        for verdict in totals:
            m = re.search(rf"(\d+) {verdict}\b", line)
            if m and "rows compared" in line:
                totals[verdict] += int(m.group(1))
    return totals


def launch_files(store, label):
    """{launch folder: sorted result names} of a stored label, after checking its layout: suite.txt, logs/, and
    in each launch-K/ a commands.tsv and a log for every result."""
    folder = store / label
    assert (folder / "suite.txt").is_file() and (folder / "logs").is_dir(), f"{folder}: no suite.txt or logs/"
    assert not list(folder.glob("*.json")), f"{folder}: results outside the launch folders"
    out = {}
    for launch in sorted(folder.glob("launch-*"), key=lambda d: int(d.name.split("-")[1])):
        names = sorted(p.name for p in launch.glob("*.json"))
        lines = (launch / "commands.tsv").read_text().splitlines()
        assert sorted(line.split("\t")[0] + ".json" for line in lines) == names, f"{launch}: commands.tsv {lines}"
        for n in names:
            assert (launch / "logs" / n.replace(".json", ".log")).is_file(), f"{launch}: no log for {n}"
        out[launch.name] = names
    return out


def verdict_line(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("verdict:")]
    return lines[-1] if lines else ""


def regression(env, args):
    taskset = shutil.which("taskset")
    if not taskset or (os.cpu_count() or 1) < 2:
        print("SKIPPED: needs taskset and at least 2 CPUs to make a really slower candidate")
        return SKIP
    # Busy-polling ranks (no yield): two of them on one core take turns by the scheduler's time slice.
    busy = dict(env.env, OMPI_MCA_mpi_yield_when_idle="0")
    with tempfile.TemporaryDirectory(prefix="ccbench-regression-") as tmp:
        store = pathlib.Path(tmp) / "store"
        # --bind-to none: Open MPI's default binding (one core per rank) would undo taskset.
        common = ["--suite", "smoke", "--store", store, "--np", "2", "--timeout", "120", "--launches", "2",
                  "--mpirun-args", "--bind-to none", *env.tools()]

        # 1. No baseline: store only, launch by launch.
        done, t_base = env.run([REGRESSION, "--label", "base", *common], tmp, env=busy)
        assert done.returncode == 0, f"exit {done.returncode}, expected 0"
        assert f"stored: 2 launch(es) of the {len(BENCHES)} benches of suite smoke as label(s) base" in done.stdout
        assert "no --baseline: nothing compared" in done.stdout
        assert "== launch 1 of 2" in done.stdout and "== launch 2 of 2" in done.stdout
        want = sorted(f"{b}_bench.json" for b in BENCHES)
        stored = launch_files(store, "base")
        assert stored == {"launch-1": want, "launch-2": want}, stored

        # 2. A baseline that does not exist: exit 2, one line naming the labels there are; nothing run.
        done, _ = env.run([REGRESSION, "--label", "cand", "--baseline", "nosuch", *common], tmp, env=busy, timeout=60)
        assert done.returncode == 2, f"exit {done.returncode}, expected 2"
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "--baseline nosuch: no such label in" in lines[0], lines
        assert "(labels: base)" in lines[0], lines[0]
        assert sorted(p.name for p in store.iterdir()) == ["base"], list(store.iterdir())

        # 3. The candidate with both ranks on one core: really slower.
        done, t_cand = env.run([taskset, "-c", "0", REGRESSION, "--label", "cand", "--baseline", "base", *common],
                               tmp, env=busy)
        totals = verdict_counts(done.stdout)
        cand_verdict = verdict_line(done.stdout)
        assert done.returncode == 1, f"exit {done.returncode}, expected 1 ({totals}; {cand_verdict})"
        assert totals["SLOWER"] > 0, f"no SLOWER row: {totals}"
        assert re.search(r"^verdict: REGRESSION \(\d+ SLOWER, \d+ FAILED, \d+ MISSING rows\); exit 1$", done.stdout, re.M)
        assert launch_files(store, "cand") == {"launch-1": want, "launch-2": want}
        rows = sum(totals.values())
        assert "SLOWER" in done.stdout.split("== regression:")[0], "no verdict table with SLOWER rows was printed"

        # 4. A baseline without one of the suite's benches: reported, not ignored.
        suite = pathlib.Path(tmp) / "mini.suite"
        suite.write_text("allreduce_bench --backend mpi -b 1K -e 8K -f 8 -n 10 --samples\n"
                         "sendrecv_bench --backend mpi -b 1K -e 8K -f 8 -n 10 --samples\n")
        mini = ["--suite", suite, "--store", store, "--np", "2", "--launches", "2", *env.tools()]
        done, _ = env.run([REGRESSION, "--label", "mini-a", *mini], tmp)
        assert done.returncode == 0, f"exit {done.returncode}"
        for k in (1, 2):
            (store / "mini-a" / f"launch-{k}" / "sendrecv_bench.json").unlink()
        done, _ = env.run([REGRESSION, "--label", "mini-b", "--baseline", "mini-a", *mini], tmp)
        # any of 0, 1, 2: two real runs are never SAME for sure, and allreduce alone may be UNSURE throughout
        assert done.returncode in (0, 1, 2), f"exit {done.returncode}"
        assert re.search(r"sendrecv_bench +MISSING in mini-a", done.stdout), "the missing bench is not reported"
        assert "baseline mini-a lacks 1 bench(es) of the suite: sendrecv_bench" in done.stdout
        print(f"PASS: base stored, 2 launches (exit 0, {t_base:.1f} s); --baseline nosuch: exit 2 naming 'base'; "
              f"candidate on one core, 2 launches: exit 1, {totals['SLOWER']} SLOWER of {rows} rows ({totals}) in "
              f"{t_cand:.1f} s: {cand_verdict}; a bench missing from the baseline reported")


# "A/A (the same software on both sides): K false alarm(s) (SLOWER or FASTER) in R rows compared: rate X%; ..."
AA_LINE = re.compile(r"^A/A\b.*?(\d+) false alarm\(s\).*? in (\d+) rows.*$", re.M)


def side_order(stdout, launch):
    """The sides in the order their benches ran in launch `launch` ("== NAME, launch K, side S: ..." lines)."""
    return [m.group(2) for m in re.finditer(rf"^== (\S+), launch {launch}, side ([ab]):", stdout, re.M)]


def regression_aa(env, args):
    """--aa --launches 3 on the smoke suite: the same software on both sides, interleaved a b / b a / a b, and judged
    pair by pair: never REGRESSION (exit 0, or 2 when too little is known), and the A/A line says how many false
    alarms the verdict raised."""
    with tempfile.TemporaryDirectory(prefix="ccbench-regression-aa-") as tmp:
        store = pathlib.Path(tmp) / "store"
        cmd = [REGRESSION, "--suite", "smoke", "--label", "same", "--aa", "--launches", "3", "--store", store,
               "--np", "2", "--timeout", "120", *env.tools()]
        done, seconds = env.run(cmd, tmp, timeout=900)
        verdict = verdict_line(done.stdout)
        assert done.returncode in (0, 2), f"A/A: exit {done.returncode} ({verdict}): a false REGRESSION"
        aa = AA_LINE.search(done.stdout)
        assert aa, "no 'A/A ... K false alarm(s) ... in R rows' line"
        want = sorted(f"{b}_bench.json" for b in BENCHES)
        for side in ("a", "b"):
            assert launch_files(store, f"same.{side}") == {f"launch-{k}": want for k in (1, 2, 3)}
            assert "(A/A)" in (store / f"same.{side}" / "side.txt").read_text()
        assert not (store / "same").exists(), "an interleaved run stored LABEL itself"
        for k, first in ((1, "a"), (2, "b"), (3, "a")):
            order = side_order(done.stdout, k)
            assert len(order) == 2 * len(BENCHES), f"launch {k}: {order}"
            assert order == [first, "b" if first == "a" else "a"] * len(BENCHES), f"launch {k}: order {order}"
            assert re.search(rf"^== launch {k} of 3 \(order: {first} ", done.stdout, re.M), f"no '== launch {k} of 3'"
        doc = json.loads((store / "same.b" / "logs" / "regression.json").read_text())
        assert doc["exit"] == done.returncode, doc
        print(f"PASS: A/A, smoke suite, 3 launches a side interleaved (ABBA), {seconds:.0f} s: exit {done.returncode}; "
              f"{aa.group(0)}; {verdict}")


def regression_interleaved(env, args):
    """Interleaved sides: rank 1 late by 20 ms to every sample on side b (--env-b CCBENCH_DEBUG_LATE=1:20000, so
    the variable reaches the ranks): REGRESSION with SLOWER rows; X=1 against X=2 (no difference): not REGRESSION;
    --nccl-a/--nccl-b with two files: each side's benches run with its CCBENCH_NCCL_LIBRARY (the MPI backend loads
    no NCCL: this proves the plumbing), and a verdict is written."""
    with tempfile.TemporaryDirectory(prefix="ccbench-regression-ab-") as tmp:
        tmp = pathlib.Path(tmp)
        store = tmp / "store"
        suite = tmp / "mini.suite"
        suite.write_text("allreduce_bench --backend mpi -b 1K -e 64K -f 8 -c 1 --time-budget 0.2 --samples\n"
                         "sendrecv_bench --backend mpi -b 1K -e 64K -f 8 -c 1 --time-budget 0.2 --samples\n")
        common = ["--store", store, "--np", "2", "--timeout", "120", "--launches", "3", *env.tools()]
        said = []

        # 1. side b really slower: rank 1 late to every sample
        done, seconds = env.run([REGRESSION, "--suite", "smoke", "--label", "late", "--env-b",
                                 "CCBENCH_DEBUG_LATE=1:20000", *common], tmp, timeout=900)
        totals = verdict_counts(done.stdout)
        verdict = verdict_line(done.stdout)
        assert done.returncode == 1, f"late side b: exit {done.returncode}, expected 1 ({verdict}; {totals})"
        assert totals["SLOWER"] > 0 and verdict.startswith("verdict: REGRESSION"), (verdict, totals)
        assert re.search(r"^\$ env CCBENCH_DEBUG_LATE=1:20000 mpirun -np 2 .*-x CCBENCH_DEBUG_LATE ", done.stdout,
                         re.M), "side b's bench was not started with its variable passed to the ranks"
        assert "CCBENCH_DEBUG_LATE" in (store / "late.b" / "side.txt").read_text()
        assert "CCBENCH_DEBUG_LATE" not in (store / "late.a" / "side.txt").read_text()
        said.append(f"late side b: exit 1 in {seconds:.0f} s, {totals['SLOWER']} SLOWER rows: {verdict}")

        # 2. two sides that differ in nothing that matters
        done, seconds = env.run([REGRESSION, "--suite", suite, "--label", "x", "--env-a", "X=1", "--env-b", "X=2",
                                 *common], tmp, timeout=600)
        verdict = verdict_line(done.stdout)
        assert verdict, f"X=1 vs X=2: exit {done.returncode} without a verdict"
        assert done.returncode in (0, 2), f"X=1 vs X=2: exit {done.returncode} ({verdict}): a false REGRESSION"
        assert re.search(r"^\$ env X=2 mpirun .*-x X ", done.stdout, re.M), "side b's X was not passed"
        said.append(f"X=1 vs X=2: exit {done.returncode} in {seconds:.0f} s: {verdict}")

        # 3. --nccl-a/--nccl-b: two library files (real ones where NCCL is installed)
        real = nccl_library()
        libs = [tmp / "nccl-a" / "libnccl.so.2", tmp / "nccl-b" / "libnccl.so.2"]
        for lib in libs:
            lib.parent.mkdir()
            if real:
                shutil.copyfile(real, lib)
            else:
                lib.write_text("not a library: the MPI backend never opens it\n")
        # one missing: refused, one line, nothing run
        bad, _ = env.run([REGRESSION, "--suite", suite, "--label", "nc", "--nccl-a", libs[0], "--nccl-b",
                          tmp / "nosuch.so", *common], tmp, timeout=60)
        assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1 and "--nccl-b" in bad.stderr, bad.stderr
        done, seconds = env.run([REGRESSION, "--suite", suite, "--label", "nc", "--nccl-a", libs[0], "--nccl-b", libs[1],
                                 *common], tmp, timeout=600)
        verdict = verdict_line(done.stdout)
        assert done.returncode in (0, 1, 2), f"--nccl-a/-b: exit {done.returncode}"
        assert verdict, "no verdict"
        for side, lib in zip("ab", libs):
            assert f"CCBENCH_NCCL_LIBRARY={lib}" in (store / f"nc.{side}" / "side.txt").read_text()
            runs = re.findall(rf"^\$ env CCBENCH_NCCL_LIBRARY={re.escape(str(lib))} mpirun .*-x CCBENCH_NCCL_LIBRARY "
                              rf".*--label nc\.{side} ", done.stdout, re.M)
            assert len(runs) == 2 * 3, f"side {side}: {len(runs)} bench runs with its library, expected 6"
            assert launch_files(store, f"nc.{side}") == {f"launch-{k}": ["allreduce_bench.json", "sendrecv_bench.json"]
                                                          for k in (1, 2, 3)}
        doc = json.loads((store / "nc.b" / "logs" / "regression.json").read_text())
        assert doc["exit"] == done.returncode, doc
        said.append(f"--nccl-a/--nccl-b ({'copies of ' + str(real) if real else 'two placeholder files'}): exit "
                    f"{done.returncode} in {seconds:.0f} s: {verdict}")
        print("PASS: " + "; ".join(said))


def nccl_library():
    """A real libnccl.so.2 on this machine, or None."""
    import glob
    for pattern in ["/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda*/lib*/libnccl.so.2",
                    "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/"
                    "libnccl.so.2"]:
        found = sorted(glob.glob(pattern))
        if found:
            return pathlib.Path(found[0]).resolve()
    return None


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


def regression_incomplete(env, args):
    """A candidate that stopped after 2 of 4 sizes is a regression (exit 1, its rows MISSING); one that shares
    no row with the baseline gives no verdict (exit 2); either way never "no regression"."""
    with tempfile.TemporaryDirectory(prefix="ccbench-regression-") as tmp:
        store = pathlib.Path(tmp) / "store"
        # --threshold 95: noise between two runs on a shared machine never makes a row SLOWER here, so
        # only the missing rows can make the verdict.
        common = ["--store", store, "--np", "2", "--threshold", "95", "--launches", "2", *env.tools()]
        outcomes = []
        for label, sizes in (("full", "-b 1K -e 512K"), ("stopped", "-b 1K -e 8K"), ("other", "-b 2M -e 2M")):
            folder = pathlib.Path(tmp) / label
            folder.mkdir()
            (folder / "mini.suite").write_text(f"allreduce_bench --backend mpi {sizes} -f 8 -n 10 --samples\n")
            baseline = [] if label == "full" else ["--baseline", "full"]
            done, _ = env.run([REGRESSION, "--suite", folder / "mini.suite", "--label", label, *baseline, *common],
                              tmp)
            verdict = [line for line in done.stdout.splitlines() if line.startswith("verdict:")]
            outcomes.append((label, done.returncode, verdict[-1] if verdict else ""))
        print(outcomes)
        assert outcomes[0][1] == 0, outcomes[0]
        label, rc, verdict = outcomes[1]
        assert rc == 1 and re.search(r"REGRESSION \(0 SLOWER, 0 FAILED, 4 MISSING rows\); exit 1", verdict), \
            f"{label}: exit {rc}, {verdict!r}"
        label, rc, verdict = outcomes[2]
        assert rc == 2 and "NO VERDICT" in verdict, f"{label}: exit {rc}, {verdict!r}"
        print(f"PASS: a candidate with 2 of 4 sizes: exit 1, {outcomes[1][2]}; no row in common: exit 2, "
              f"{outcomes[2][2]}")


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
                                         "out-dirs", "reworded"])
    args = parser.parse_args()
    if not shutil.which(args.mpirun):
        print(f"SKIPPED: {args.mpirun} not found")
        return SKIP
    handler = {"accept-pass": accept_pass, "accept-fail": accept_fail, "accept-bad-input": accept_bad_input,
               "regression": regression, "regression-incomplete": regression_incomplete,
               "regression-aa": regression_aa, "regression-interleaved": regression_interleaved,
               "out-dirs": out_dirs, "reworded": reworded}[args.what]
    return handler(Env(args), args) or 0


if __name__ == "__main__":
    sys.exit(main())
