#!/usr/bin/env python3
"""Hostile input to the benches under mpirun -np 2 (issue 15): absurd flags, memory that a size cannot have,
bytes that are not UTF-8, an error every rank meets. Each case runs the real bench and checks what it printed,
its exit code and its result file.

  hostile_test.py --bin-dir DIR --schema SCHEMA [--mpirun MPIRUN] CASE
"""
import argparse
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import validate_result  # noqa: E402

# Flags that once ran for ever, allocated gigabytes or were taken as something else: now one line, exit 2.
ABSURD_FLAGS = [
    (["--time-budget", "inf"], "--time-budget 'inf' is not seconds"),
    (["--time-budget", "1e309"], "--time-budget '1e309' is not seconds"),
    (["--time-budget", "1e20"], "--time-budget must be positive seconds, at most 3600"),
    (["--timeout", "9.3e9"], "--timeout must be positive seconds, at most 86400"),
    (["-n", "1000000000"], "--iters 1000000000 is more than 1000000"),
    (["-n", "99999999999"], "--iters 99999999999 is more than 1000000"),
    (["-n", "300000000"], "--iters 300000000 is more than 1000000"),
    (["-n", "-1"], "--iters -1 must be at least 1"),
    (["-w", "2000000000"], "--warmup-iters 2000000000 is more than 1000000"),
    (["-f", "1.0000001"], "--step-factor 1.0000001 makes"),
    (["-b", "6", "-e", "64"], "--min-bytes 6 is not a whole number of float32 elements (4 B each)"),
    (["--peak-GBps", "inf"], "--peak-GBps inf must be from 0.001 to 1e+06 GB/s"),
    (["--peak-GBps", "1e-300"], "--peak-GBps 1e-300 must be from 0.001"),
]


class Env(validate_result.MpiTestEnv):
    def run(self, flags, cwd, bench="allreduce_bench", extra_env=None, timeout=120):
        cmd = [self.mpirun, "-q", "-np", "2", "--bind-to", "none"]
        for name in (extra_env or {}):
            cmd += ["-x", name]
        cmd += [str(self.bin_dir / bench), "--backend", "mpi", *flags]
        print("$", " ".join(repr(c) if not c.isprintable() else c for c in cmd), flush=True)
        env = dict(self.env, **(extra_env or {}))
        start = time.monotonic()
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=timeout)
        return p, time.monotonic() - start


def error_lines(p):
    return [ln for ln in p.stderr.decode("utf-8", "replace").splitlines() if ": error: " in ln]


def absurd_flags(env):
    with tempfile.TemporaryDirectory() as tmp:
        for flags, says in ABSURD_FLAGS:
            p, wall = env.run([*flags, "--out", f"{tmp}/r.json"], tmp, timeout=60)
            lines = error_lines(p)
            assert p.returncode == 2, f"{flags}: exit {p.returncode}, expected 2: {lines}"
            assert len(lines) == 1 and says in lines[0], f"{flags}: expected one line with {says!r}, got {lines}"
            assert not os.path.exists(f"{tmp}/r.json"), f"{flags}: a result file was written"
            print(f"{' '.join(flags)}: exit 2 in {wall:.2f} s, {lines[0]}")
    print(f"PASS: {len(ABSURD_FLAGS)} absurd flags, each one line and exit 2 before anything ran")


def memory(env):
    """Sizes whose buffers cannot fit this host's memory are skipped with the reason before anything is allocated:
    no bad_alloc, no OOM killer. 8 GiB of float64 per rank on two ranks asks 32-48 GiB; 64 GiB far more."""
    with open("/proc/meminfo", encoding="ascii") as f:
        available = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
    if available >= 32 << 30:  # the in-place 8 GiB case needs 2 x 16 GiB: on this host it would run
        print(f"SKIPPED: {available / 2**30:.0f} GiB available here; the 8 GiB float64 case needs less than that "
              "host (sized for a machine of 24 GiB)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        p, wall = env.run(["-d", "float64", "-b", "8G", "-e", "64G", "-f", "8", "-n", "3", "--out", str(out)], tmp)
        print(p.stdout.decode()[-1500:], p.stderr.decode()[-1500:])
        assert p.returncode == 0, f"exit {p.returncode}"
        doc = env.validate(out)
        rows = [(r["size_bytes"], r["in_place"], r["status"], r["reason"]) for r in doc["results"]]
        memory_skips = [r for r in rows if r[2] == "skipped" and "of host memory" in r[3]]
        assert all(r[2] == "skipped" for r in rows) and len(memory_skips) == 2, rows
        assert all("skipped before allocating" in r[3] for r in memory_skips), memory_skips
        assert wall < 60, f"{wall:.1f} s: something was allocated"
        print(f"PASS: {len(rows)} rows skipped in {wall:.2f} s, e.g. {memory_skips[0][3]}")


def not_utf8(env):
    """Bytes that are not UTF-8 in --label, in --out and in a recorded variable: the run completes, exit 0,
    each bad byte written as U+FFFD."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp.encode(), b"r\xff.json")
        label = b"lab\xfe\xffel"
        cmd_env = {"NCCL_HOSTILE": "x\udcffy"}  # surrogateescape: the byte 0xff in the environment
        cmd = [env.mpirun, "-q", "-np", "2", "--bind-to", "none", "-x", "NCCL_HOSTILE",
               os.fsencode(env.bin_dir / "allreduce_bench"), b"--backend", b"mpi", b"-b", b"8", b"-e", b"64",
               b"-n", b"3", b"--label", label, b"--out", out]
        print("$", cmd, flush=True)
        p = subprocess.run(cmd, cwd=tmp, env=dict(env.env, **cmd_env), capture_output=True, timeout=120)
        print(p.stderr.decode("utf-8", "replace")[-1500:])
        assert p.returncode == 0, f"exit {p.returncode}"
        doc = env.validate(out)
        assert doc["run"]["label"] == "lab\ufffd\ufffdel", doc["run"]["label"]
        variables = doc["environment"]["variables"]
        assert variables.get("NCCL_HOSTILE") == "x\ufffdy", variables
        print(f"PASS: label {doc['run']['label']!r}, NCCL_HOSTILE {variables['NCCL_HOSTILE']!r}, "
              f"{len(doc['results'])} rows in a valid file named {out!r}")


def fractional_factor(env):
    """-f 1.1 from 8 B of float32: sizes rounded down to whole elements, each measured once (8, 12, 16, ...), and
    ccbench-report reads the file (it refused one whose sizes repeated)."""
    report = env.bin_dir.parent.parent / "report" / "ccbench-report"
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        p, _ = env.run(["-b", "8", "-e", "64", "-f", "1.1", "-n", "3", "--placement", "out", "--out", str(out)], tmp)
        assert p.returncode == 0, f"exit {p.returncode}: {p.stderr.decode()[-800:]}"
        sizes = [r["size_bytes"] for r in env.validate(out)["results"]]
        assert sizes == sorted(set(sizes)) and all(s % 4 == 0 for s in sizes), sizes
        t = subprocess.run([str(report), "table", str(out)], capture_output=True, text=True, timeout=60)
        assert t.returncode == 0, f"ccbench-report table: exit {t.returncode}: {t.stderr}"
        print(f"PASS: -f 1.1 measured {sizes}; ccbench-report table exit 0")


def rank_pids(tag):
    """The pids of the bench processes whose argv holds `tag`."""
    return [pid for pid, argv in validate_result.process_argvs()
            if tag.encode() in argv and argv[0].endswith(b"allreduce_bench")]


def stopped_mpirun(env):
    """mpirun stopped (SIGSTOP) while its ranks run: they finish, write the result and leave within 30 s of
    MPI_Finalize waiting on the launcher, instead of lingering for as long as mpirun stays stopped."""
    tag = f"stopped-mpirun-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        cmd = [env.mpirun, "-q", "-np", "2", "--bind-to", "none", str(env.bin_dir / "allreduce_bench"), "--backend",
               "mpi", "-b", "8", "-e", "1M", "-f", "4", "-n", "20", "--label", tag, "--out", str(out)]
        launcher = subprocess.Popen(cmd, cwd=tmp, env=env.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while not out.exists() and time.monotonic() < deadline:  # the first size is written: set-up is over
                time.sleep(0.05)
            assert out.exists(), "the run wrote no result within 60 s"
            os.kill(launcher.pid, signal.SIGSTOP)
            stopped = time.monotonic()
            while rank_pids(tag) and time.monotonic() - stopped < 90:
                time.sleep(0.2)
            left = rank_pids(tag)
            gone_s = time.monotonic() - stopped
            assert not left, f"ranks {left} still there {gone_s:.0f} s after mpirun was stopped"
            doc = env.validate(out)
            assert doc["run"]["ended_utc"] and len(doc["results"]) == 18, [r["size_bytes"] for r in doc["results"]]
        finally:
            os.kill(launcher.pid, signal.SIGCONT)
            launcher.kill()
            _, err = launcher.communicate(timeout=60)
        print(err.decode("utf-8", "replace")[-600:])
        print(f"PASS: mpirun stopped after the first size; both ranks finished the sweep, wrote all "
              f"{len(doc['results'])} rows and were gone {gone_s:.1f} s after the stop")


def one_voice(env):
    """An error every rank meets is said once, not once per rank."""
    with tempfile.TemporaryDirectory() as tmp:
        p, _ = env.run(["--timing", "graph", "-n", "2", "--out", f"{tmp}/r.json"], tmp, bench="broadcast_bench")
        lines = error_lines(p)
        assert p.returncode == 2 and len(lines) == 1, f"exit {p.returncode}, {len(lines)} error line(s): {lines}"
        print(f"PASS: --timing graph on host memory, 2 ranks: exit 2, one line: {lines[0]}")


CASES = {"absurd-flags": absurd_flags, "memory": memory, "not-utf8": not_utf8, "one-voice": one_voice,
         "fractional-factor": fractional_factor, "stopped-mpirun": stopped_mpirun}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    return CASES[args.case](Env(args)) or 0


if __name__ == "__main__":
    sys.exit(main())
