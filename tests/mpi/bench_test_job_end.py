"""The end of a job, in every order (tests/mpi/bench_test.py job-end --order ...): whichever rank ends it, for
whatever reason, only the result is left in its folder (no PATH.lock, no PATH.tmp.*).

World rank 0 (the writer) holds PATH.lock. A job ended by another rank kills the writer, so the rank that ends it
tells the writer first and waits until it has let go (HangGuard); a writer that cannot answer in time is ended by
mpirun's SIGTERM, which removes the lock too (OutputClaim); a writer SIGKILLed before it ran that handler (mpirun
4.1 sends SIGKILL a few ms after SIGTERM once any local rank has died) has its lock removed by its helper process
(runtime/src/lock_reaper.hpp). Test hooks force each order (bench/apps/debug_hooks.hpp):
  writer-first  rank 3 stopped mid-sweep; the writer's --timeout ends first (CCBENCH_DEBUG_EXPIRE_FIRST=0)
  other-first   the same, but rank 2 gives up first and tells the writer (CCBENCH_DEBUG_EXPIRE_FIRST=2)
  writer-slow   rank 2 first, and the writer takes 6 s to record the hang, longer than rank 2 waits
                (CCBENCH_DEBUG_SLOW_RECORD=6): mpirun ends the writer with SIGTERM
  fatal-other   rank 2 alone meets a fatal error after two sizes (CCBENCH_DEBUG_FAIL=sweep:2)
  fatal-writer  the writer alone meets it (CCBENCH_DEBUG_FAIL=sweep:0)
  killed-other  rank 2 is SIGKILLed mid-sweep: mpirun ends the others with SIGTERM
"""
import os
import pathlib
import signal
import socket
import subprocess
import tempfile
import time

from bench_test_signals import completed_results, kill_session, left_beside, rank0_pid, session_pids

TIMEOUT_S = 4
ORDERS = {
    # order: (environment, rank to SIGSTOP or SIGKILL mid-sweep, the signal, exit code)
    "writer-first": ({"CCBENCH_DEBUG_EXPIRE_FIRST": "0"}, 3, signal.SIGSTOP, 3),
    "other-first": ({"CCBENCH_DEBUG_EXPIRE_FIRST": "2"}, 3, signal.SIGSTOP, 3),
    "writer-slow": ({"CCBENCH_DEBUG_EXPIRE_FIRST": "2", "CCBENCH_DEBUG_SLOW_RECORD": "6"}, 3, signal.SIGSTOP, 3),
    "fatal-other": ({"CCBENCH_DEBUG_FAIL": "sweep:2"}, None, None, 1),
    "fatal-writer": ({"CCBENCH_DEBUG_FAIL": "sweep:0"}, None, None, 1),
    "killed-other": ({}, 2, signal.SIGKILL, None),
}


def job_end(env, args):
    extra, victim, sig, expected_code = ORDERS[args.order]
    host = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "ended.json"
        flags = ["-b", "1K", "-e", "1G", "-f", "4", "-n", "20", "--timeout", str(TIMEOUT_S), "--out", str(out)]
        cmd = env.command("allreduce_bench", 4, flags)
        print("$", " ".join(f"{k}={v}" for k, v in extra.items()), " ".join(cmd), flush=True)
        started = time.time()
        proc = subprocess.Popen(cmd, cwd=tmp, env=dict(env.env, **extra), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        if victim is not None:
            while len(completed_results(out)) < 3 and time.time() < started + 120:
                time.sleep(0.05)
            pid = rank0_pid(str(out), rank=victim)
            assert pid, f"rank {victim} not found"
            os.kill(pid, sig)
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S + 60)
        finally:
            kill_session(proc.pid)
        left = session_pids(proc.pid)
        print(stdout, stderr, sep="\n")
        at_exit = sorted(p.name for p in pathlib.Path(tmp).iterdir() if p.name != out.name)
        beside = left_beside(tmp, out.name)
        print(f"FIGURE: {args.order}: exit {proc.returncode}; beside the result as mpirun ended: "
              f"{at_exit or 'nothing'}; once the lock-file helper was done: {beside or 'nothing'}")
        assert not left, f"processes left after the job ended: {left}"
        assert not beside, f"left beside the result by a job that ended ({args.order}): {beside}"
        if expected_code is not None:
            assert proc.returncode == expected_code, f"exit code {proc.returncode}, expected {expected_code}"
        else:
            assert proc.returncode != 0, "a job with a killed rank must not exit 0"
        doc = env.validate(out)
        statuses = [r["status"] for r in doc["results"]]
        ok = [s for s in statuses if s == "ok"]
        assert len(ok) >= 2, f"the completed sizes are kept: {statuses}"
        if args.order in ("writer-first", "other-first"):
            assert statuses[-1] == "timed_out" and statuses.count("timed_out") == 1, statuses
            reason = doc["results"][-1]["reason"]
            assert f"rank 3 ({host})" in reason, f"the reason {reason!r} does not name rank 3"
            lines = [line for line in stderr.splitlines() if "error: timeout:" in line]
            reporter = "rank 0" if args.order == "writer-first" else "rank 2"
            assert lines and all(f"on {reporter} ({host})" in line for line in lines), \
                f"the timeout was not reported by {reporter}: {lines}"
        elif args.order == "writer-slow":
            # Rank 2 stops waiting for the writer after 2 s: the hang is not recorded, the completed sizes are.
            assert "timed_out" not in statuses, statuses
        elif args.order.startswith("fatal"):
            rank = args.order == "fatal-other" and "rank 2: " or ""
            assert f"error: {rank}CCBENCH_DEBUG_FAIL" in stderr, f"no one-line fatal error naming {rank or 'rank 0'}"
            assert all(s == "ok" for s in statuses) and len(statuses) == 4, statuses  # two sizes, both placements
        print(f"PASS: {args.order}: exit {proc.returncode} after {time.time() - started:.1f} s; the result "
              f"({len(statuses)} cases: {', '.join(sorted(set(statuses)))}) and nothing beside it")
