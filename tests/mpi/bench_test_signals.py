"""The signal cases of tests/mpi/bench_test.py: a job SIGKILLed mid-sweep (sigkill) and a rank SIGSTOPped in
set-up or mid-sweep (sigstop), with the /proc helpers that find a run's ranks and end its whole session.

Each case takes bench_test's Env and its parsed arguments; failures raise AssertionError.
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import validate_result  # tests/tools, on the path bench_test.py sets


def rank0_pid(tag, rank=0):
    """The pid of world rank `rank` of the run whose argv contains `tag`."""
    return validate_result.world_rank_pids(tag).get(rank)


def session_pids(sid):
    """Every live process of session `sid` (mpirun's ranks are in their own process groups)."""
    pids = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # fields: state ppid pgrp session ...
            pids.append(int(proc.name))
    return pids


def kill_session(sid, timeout=30):
    """SIGKILL every process of the session and wait until none is left."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        pids = session_pids(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"processes of session {sid} survive SIGKILL: {session_pids(sid)}")


def helpers_of(folder):
    """Live lock-file helpers (runtime/src/lock_reaper.hpp) of result paths in `folder`: each runs in a session
    of its own, so session_pids() does not see it."""
    prefix = os.fsencode(folder)
    return [pid for pid, argv in validate_result.process_argvs()
            if len(argv) > 3 and argv[1] == b"--ccbench-lock-reaper" and argv[3].startswith(prefix)]


def left_beside(folder, result_name, timeout=30):
    """What is left in `folder` beside the result once the job has ended. A world rank 0 killed with SIGKILL
    (Open MPI 4.1's mpirun sends it a few ms after SIGTERM) leaves its .lock for its helper to remove as
    soon as it sees rank 0 gone: waits (at most `timeout` s) for every helper to finish first."""
    deadline = time.time() + timeout
    while helpers_of(folder) and time.time() < deadline:
        time.sleep(0.02)
    assert not helpers_of(folder), f"lock-file helpers still running {timeout} s after the job: {helpers_of(folder)}"
    return sorted(p.name for p in pathlib.Path(folder).iterdir() if p.name != result_name)


def dump_hung_job(sid, tag):
    """Prints each process of a job that did not end: its state and wait channel, and every thread's stack where
    gdb is installed (one hung round of 30 once left nothing to read)."""
    for pid in session_pids(sid):
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = pathlib.Path(f"/proc/{pid}/wchan").read_text()
            argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ranks = {v: k for k, v in validate_result.world_rank_pids(tag).items()}
        print(f"== hung: pid {pid} rank {ranks.get(pid, '-')} state {state} wchan {wchan or '-'}: {argv[:120]}",
              flush=True)
        if shutil.which("gdb") and state != "T":
            subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 15"], stderr=subprocess.DEVNULL,
                           timeout=60, check=False)


def sigkill(env, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "killed.json"
        flags = ["-b", "1K", "-e", "1G", "-f", "2", "-n", "20", "--placement", "out", "--out", str(out)]
        cmd = env.command("allreduce_bench", 2, flags)
        print("$", " ".join(cmd), flush=True)
        proc = subprocess.Popen(cmd, cwd=tmp, env=env.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        deadline = time.time() + 120
        completed = 0
        while time.time() < deadline and completed < 8:
            time.sleep(0.05)
            try:
                completed = len(json.loads(out.read_text())["results"])
            except (OSError, ValueError):  # not written yet; a partial file would be a failure below
                pass
        assert completed >= 8, f"only {completed} sizes completed before the deadline"
        if args.victim == "job":  # every process of the job at once, as the OOM killer or scancel would
            kill_session(proc.pid)
        else:
            pid = rank0_pid(str(out))
            assert pid, "rank 0 not found"
            os.kill(pid, signal.SIGKILL)
        try:
            proc.wait(timeout=60)
        finally:
            kill_session(proc.pid)  # nothing may write into the directory after this
        print(proc.stdout.read().decode(errors="replace"))
        assert proc.returncode != 0, "a killed run must not exit 0"
        doc = env.validate(out)
        sizes = [r["size_bytes"] for r in doc["results"]]
        expected = [1024 << i for i in range(len(sizes))]
        assert sizes == expected, f"sizes {sizes} are not the completed prefix {expected}"
        assert all(r["status"] == "ok" for r in doc["results"])
        assert doc["run"]["ended_utc"] is None, "a killed run cannot have ended"
        leftovers = left_beside(tmp, out.name)  # SIGKILL: the lock file's helper removes it (lock_reaper.hpp)
        assert not leftovers, f"left beside the result of a killed run ({args.victim}): {leftovers}"
        print(f"PASS: killed ({args.victim}) after >= {completed} sizes; file holds {len(sizes)} complete sizes "
              f"({sizes[0]}..{sizes[-1]} B), validates; nothing left beside it")


STOP_TIMEOUT_S = 4


def completed_results(path):
    try:
        return json.loads(path.read_text())["results"]
    except (OSError, ValueError):  # not written yet
        return []


def sigstop(env, args):
    """Rank 3 of 4 stops (SIGSTOP) in set-up, in the middle of a sweep, or between an op and the gather of its
    results: every rank must be gone within --timeout + 10 s, exit code 3, the message names the op and rank 3,
    the JSON keeps the completed sizes and marks the op timed_out."""
    host = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "stopped.json"
        flags = ["-b", "1K", "-e", "1G", "-f", "4", "-n", "20", "--timeout", str(STOP_TIMEOUT_S), "--out", str(out)]
        cmd = env.command("allreduce_bench", 4, flags)
        # setup and gather: the bench stops itself (in set-up; between the third size's op and its gather)
        hook = f"{args.at}:3" if args.at in ("setup", "gather") else None
        run_env = dict(env.env, CCBENCH_DEBUG_STOP=hook) if hook else env.env
        print("$", f"CCBENCH_DEBUG_STOP={hook}" if hook else "", " ".join(cmd), flush=True)
        started = time.time()
        proc = subprocess.Popen(cmd, cwd=tmp, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        stopped_at = started
        if args.at == "sweep":
            while len(completed_results(out)) < 3 and time.time() < started + 120:
                time.sleep(0.05)
            pid = rank0_pid(str(out), rank=3)
            assert pid, "rank 3 not found"
            os.kill(pid, signal.SIGSTOP)
            stopped_at = time.time()
        try:
            stdout, stderr = proc.communicate(timeout=STOP_TIMEOUT_S + 60)
            ended = time.time()
        except subprocess.TimeoutExpired:
            dump_hung_job(proc.pid, str(out))  # what each process was doing: the clue a hang leaves
            raise
        finally:
            kill_session(proc.pid)
        left = session_pids(proc.pid)
        print(stdout, stderr, sep="\n")
        took = ended - stopped_at
        print(f"FIGURE: {args.at}: --timeout {STOP_TIMEOUT_S} s; every rank out {took:.1f} s after the "
              f"{'SIGSTOP' if args.at == 'sweep' else 'launch'}")
        assert proc.returncode == 3, f"exit code {proc.returncode}, expected 3 (timeout)"
        assert not left, f"processes left after the job ended: {left}"
        leftovers = left_beside(tmp, out.name)
        assert not leftovers, f"left beside the result by a job that timed out: {leftovers}"
        # In set-up the clock runs from the launch, which adds MPI's start-up (~1 s here).
        assert took <= STOP_TIMEOUT_S + 10, f"ranks took {took:.1f} s to go, more than --timeout + 10 s"
        lines = [line for line in stderr.splitlines() if "error: timeout:" in line]
        assert lines, "no timeout message"
        who = f"rank 3 ({host})"
        assert all(who in line for line in lines), f"a timeout message does not name {who}: {lines}"
        if args.at == "setup":
            assert all("set-up" in line for line in lines), f"the message does not say set-up: {lines}"
            assert not out.exists(), "a run that hung in set-up wrote a result file"
            print(f"PASS: stopped in set-up; exit 3 after {took:.1f} s; {lines[0]}")
            return
        doc = env.validate(out)
        timed_out = [r for r in doc["results"] if r["status"] == "timed_out"]
        assert len(timed_out) == 1, f"{len(timed_out)} timed-out results, expected 1"
        ok = doc["results"][:-1]
        assert ok and all(r["status"] == "ok" for r in ok), "the completed sizes before the hang must be ok"
        case = timed_out[0]
        assert doc["results"][-1] is case or doc["results"][-1] == case, "the timed-out case must come last"
        assert who in case["reason"], f"the reason {case['reason']!r} does not name {who}"
        size = f"{case['size_bytes']} B" if case["size_bytes"] else None
        assert any("all_reduce" in line and (size is None or size in line) for line in lines), \
            f"no message names all_reduce at {size}: {lines}"
        assert doc["run"]["ended_utc"], "a timed-out run has ended"
        print(f"PASS: stopped after {len(ok)} completed cases; exit 3 {took:.1f} s after the "
              f"{'SIGSTOP' if args.at == 'sweep' else 'launch'}; "
              f"JSON: {case['size_bytes']} B timed_out, reason: {case['reason']}")
