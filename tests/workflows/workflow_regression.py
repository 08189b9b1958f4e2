"""The regression cases of the workflow tests (tests/workflows/workflows_test.py): scripts/regression.sh storing
launches, judging a really slower candidate, an incomplete one, an A/A pair and interleaved sides."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from workflow_driver import BENCHES, REGRESSION, SKIP, verdict_line


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




def one_core(env):
    """How to make a really slower candidate: (taskset, the environment of busy-polling ranks), or None where this
    machine cannot (no taskset, one CPU). Busy-polling ranks (no yield) on one core take turns by the scheduler's
    time slice."""
    taskset = shutil.which("taskset")
    if not taskset or (os.cpu_count() or 1) < 2:
        print("SKIPPED: needs taskset and at least 2 CPUs to make a really slower candidate")
        return None
    return taskset, dict(env.env, OMPI_MCA_mpi_yield_when_idle="0")


def regression(env, args):
    slower = one_core(env)
    if slower is None:
        return SKIP
    taskset, busy = slower
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


def regression_history(env, args):
    """regression.sh --history (issue 40, section 4): a label stored, indexed, and a candidate judged against the
    index's latest runs of its benches instead of a baseline label; a missing index refused before any bench runs."""
    slower = one_core(env)
    if slower is None:
        return SKIP
    taskset, busy = slower
    with tempfile.TemporaryDirectory(prefix="ccbench-regression-history-") as tmp:
        store, db = pathlib.Path(tmp) / "store", pathlib.Path(tmp) / "history.sqlite"
        suite = pathlib.Path(tmp) / "mini.suite"
        suite.write_text("allreduce_bench --backend mpi -b 1K -e 8K -f 8 -n 10 --samples\n"
                         "sendrecv_bench --backend mpi -b 1K -e 8K -f 8 -n 10 --samples\n")
        common = ["--suite", suite, "--store", store, "--np", "2", "--timeout", "120", "--launches", "3",
                  "--mpirun-args", "--bind-to none", *env.tools()]
        done, _ = env.run([REGRESSION, "--label", "nosuch", "--history", db, *common], tmp, env=busy, timeout=60)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "no such index" in done.stderr, \
            f"exit {done.returncode}: {done.stderr}"
        assert not store.exists() or not list(store.iterdir()), "a bench ran before the index was checked"
        done, _ = env.run([REGRESSION, "--label", "base", *common], tmp, env=busy)
        assert done.returncode == 0, f"exit {done.returncode}"
        index = subprocess.run([str(args.report), "index", str(store), "--db", str(db)], capture_output=True, text=True)
        print(index.stdout, index.stderr)
        assert index.returncode == 0 and "6 added" in index.stdout, index.stdout
        done, t_cand = env.run([taskset, "-c", "0", REGRESSION, "--label", "cand", "--history", db, *common], tmp,
                               env=busy)
        totals = verdict_counts(done.stdout)
        verdict = verdict_line(done.stdout)
        assert "history (latest 5 runs, same software)" in done.stdout, "the baseline is not the history"
        assert done.returncode == 1 and totals["SLOWER"] > 0, f"exit {done.returncode}, {totals}: {verdict}"
        print(f"PASS: --history with no index: exit 2 before any bench; a candidate on one core against the 3 runs of "
              f"its history: exit 1, {totals['SLOWER']} SLOWER ({t_cand:.1f} s): {verdict}")


TESTS = {"regression": regression, "regression-history": regression_history, "regression-incomplete": regression_incomplete, "regression-aa": regression_aa,
         "regression-interleaved": regression_interleaved}
