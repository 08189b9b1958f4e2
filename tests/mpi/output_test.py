#!/usr/bin/env python3
"""Hostile result paths (issue 15, item 1) under mpirun -np 2: --out to a device node, a named pipe, a
symlink, a directory, a missing or read-only folder is refused up front (one line, exit 2, no size measured,
the node left as it was); two runs never share a result (the same explicit --out at once; default names in
the same second); a killed writer's leftovers never trip the next run. Device nodes and pipes are made in the
test's own temporary folder (mknod, mkfifo), never the machine's /dev.

  output_test.py --bin-dir DIR [--mpirun MPIRUN] CASE
"""
import argparse
import datetime
import os
import pathlib
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

SIZE_FLAGS = ["-b", "1K", "-e", "4K", "-n", "20"]


class Env:
    def __init__(self, args):
        self.bin = pathlib.Path(args.bin_dir).resolve() / "allreduce_bench"
        self.mpirun = args.mpirun
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl="self,vader",
                        OMPI_MCA_rmaps_base_oversubscribe="1")

    def cmd(self, flags, np=2):
        return [self.mpirun, "-q", "-np", str(np), "--bind-to", "none", str(self.bin), "--backend", "mpi", *flags]

    def run(self, flags, cwd, np=2, timeout=120):
        cmd = self.cmd(flags, np)
        print("$", " ".join(cmd), flush=True)
        return subprocess.run(cmd, cwd=cwd, env=self.env, capture_output=True, text=True, errors="replace",
                              timeout=timeout)

    def start(self, flags, cwd, np=2):
        cmd = self.cmd(flags, np)
        print("$", " ".join(cmd), "&", flush=True)
        return subprocess.Popen(cmd, cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)


def error_lines(p):
    return [line for line in p.stderr.splitlines() if ": error: " in line]


def measured_rows(p):
    return [line for line in p.stdout.splitlines() if line.strip() and not line.startswith("#")]


def expect_refused(env, tmp, out, want):
    """--out `out` (relative to tmp): exit 2, one error line containing `want`, nothing measured."""
    p = env.run([*SIZE_FLAGS, "--out", out], tmp)
    lines = error_lines(p)
    assert p.returncode == 2, f"--out {out}: exit {p.returncode}, expected 2; stderr: {p.stderr[-800:]}"
    assert len(lines) == 1 and want in lines[0], f"--out {out}: expected one line with '{want}', got {lines}"
    assert not measured_rows(p), f"--out {out}: sizes were measured before the refusal: {measured_rows(p)[:2]}"
    print(f"PASS: --out {out}: exit 2: {lines[0]}")


def device(env):
    with tempfile.TemporaryDirectory() as tmp:
        node = pathlib.Path(tmp, "null")
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the null device, in our own folder
        expect_refused(env, tmp, "null", "is a character device")
        assert stat.S_ISCHR(node.lstat().st_mode), "the device node was replaced"


def fifo(env):
    with tempfile.TemporaryDirectory() as tmp:
        os.mkfifo(pathlib.Path(tmp, "pipe"))
        expect_refused(env, tmp, "pipe", "is a named pipe")
        assert stat.S_ISFIFO(pathlib.Path(tmp, "pipe").lstat().st_mode), "the pipe was replaced"


def symlink(env):
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "target.json").write_text("kept\n")
        os.symlink("target.json", pathlib.Path(tmp, "link.json"))
        expect_refused(env, tmp, "link.json", "is a symbolic link")
        assert pathlib.Path(tmp, "link.json").is_symlink(), "the symlink was replaced"
        assert pathlib.Path(tmp, "target.json").read_text() == "kept\n", "the symlink's target was written"


def directory(env):
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "d").mkdir()
        expect_refused(env, tmp, "d", "is a directory")


def missing_folder(env):
    with tempfile.TemporaryDirectory() as tmp:
        expect_refused(env, tmp, "no/such/r.json", "its folder no/such does not exist")


def read_only_folder(env):
    """chmod 555 does not stop root: as root the folder is made immutable (chattr +i) instead."""
    with tempfile.TemporaryDirectory() as tmp:
        ro = pathlib.Path(tmp, "ro")
        ro.mkdir()
        ro.chmod(0o555)
        immutable = os.geteuid() == 0
        if immutable and subprocess.run(["chattr", "+i", str(ro)], capture_output=True).returncode != 0:
            print("SKIP: running as root and chattr +i is not possible here")
            sys.exit(77)
        try:
            expect_refused(env, tmp, "ro/r.json", "its folder ro is not writable")
            cwd_run = env.run(SIZE_FLAGS, str(ro))  # the default name, in a read-only working folder
            lines = error_lines(cwd_run)
            assert cwd_run.returncode == 2 and len(lines) == 1 and not measured_rows(cwd_run), \
                f"read-only cwd: exit {cwd_run.returncode}, {lines}"
            print(f"PASS: default name in a read-only cwd: exit 2: {lines[0]}")
        finally:
            if immutable:
                subprocess.run(["chattr", "-i", str(ro)], check=True)
            ro.chmod(0o755)


def same_out(env):
    """A second run on the --out a live run holds is refused; once that run is killed, the next one runs."""
    with tempfile.TemporaryDirectory() as tmp:
        slow = ["-b", "1K", "-e", "4K", "--target-ci", "0.000001", "--time-budget", "3", "--out", "r.json"]
        first = env.start(slow, tmp)
        lock = pathlib.Path(tmp, "r.json.lock")
        deadline = time.monotonic() + 4  # it measures for about 12 s (2 sizes x 2 placements x 3 s)
        while not lock.exists() and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.1)
        second = env.run([*SIZE_FLAGS, "--out", "r.json"], tmp)
        lines = error_lines(second)
        alive = first.poll() is None
        try:
            assert alive, "the first run ended before the second started: make it slower"
            assert second.returncode == 2 and len(lines) == 1 and "another run" in lines[0], \
                f"second run on the same --out: exit {second.returncode}, {lines or second.stderr[-600:]}"
            print(f"PASS: the same --out while a run holds it: exit 2: {lines[0]}")
        finally:
            holder = lock.read_text().split() if lock.exists() else []  # "pid N": world rank 0, the writer
            if len(holder) == 2 and holder[1].isdigit():
                os.kill(int(holder[1]), signal.SIGKILL)  # a killed holder: the kernel lets go of its lock
            try:
                first.communicate(timeout=60)  # mpirun ends the job once a rank died
            except subprocess.TimeoutExpired:
                os.killpg(first.pid, signal.SIGKILL)
                first.communicate()
        assert len(holder) == 2 and holder[1].isdigit(), f"the lock file names no holder to kill: {holder}"
        third = env.run([*SIZE_FLAGS, "--out", "r.json"], tmp)
        assert third.returncode == 0, f"after the holder was killed: exit {third.returncode}: {third.stderr[-600:]}"
        print("PASS: after the holder was killed, the next run on its --out ran (exit 0)")


def default_names(env):
    """Runs started in the same second with the default name each keep their own result file; a run whose
    default name another file has takes the next suffix and leaves that file alone."""
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(5):
            runs = [env.start(SIZE_FLAGS, tmp, np=1) for _ in range(3)]
            for r in runs:
                r.communicate(timeout=120)
            codes = [r.returncode for r in runs]
            files = sorted(p.name for p in pathlib.Path(tmp, "results").glob("*.json"))
            stems = {name.split("Z")[0] for name in files}
            assert codes == [0, 0, 0], f"exit codes {codes}"
            if len(stems) == 1 or attempt == 4:
                break
            for f in pathlib.Path(tmp, "results").iterdir():  # a second boundary fell between them: again
                f.unlink()
        assert len(files) == 3, f"3 runs of one second left {len(files)} result file(s): {files}"
        print(f"PASS: 3 runs with the default name in the same second: exit 0 each, files {files}")
    # The same rule without a race: the names of the next 30 seconds are taken, so the run must add -2.
    with tempfile.TemporaryDirectory() as tmp:
        results = pathlib.Path(tmp, "results")
        results.mkdir()
        now = datetime.datetime.now(datetime.timezone.utc)
        stamps = [now + datetime.timedelta(seconds=s) for s in range(30)]
        taken = [results / f"allreduce_bench-{socket.gethostname()}-{t:%Y%m%dT%H%M%S}Z.json" for t in stamps]
        for path in taken:
            path.write_text("taken\n")
        run = env.run(SIZE_FLAGS, tmp, np=1)
        assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-600:]}"
        mine = sorted(p.name for p in results.glob("*.json") if p not in taken)
        assert len(mine) == 1 and mine[0].endswith("Z-2.json"), f"the run's own file: {mine}"
        assert all(p.read_text() == "taken\n" for p in taken), "a file the run did not own was written"
        print(f"PASS: with the default name of its second taken, the run wrote {mine[0]} and left the other untouched")


def killed_writer(env):
    """What a writer killed mid-write left beside the result (a temporary file) is gone after the next run,
    and a run killed while holding its --out leaves nothing that stops the next."""
    with tempfile.TemporaryDirectory() as tmp:
        stale = pathlib.Path(tmp, "r.json.tmp.999999")
        stale.write_text('{"schema": "ccbench.result", "trunc')
        p = env.run([*SIZE_FLAGS, "--out", "r.json"], tmp)
        assert p.returncode == 0, f"exit {p.returncode}: {p.stderr[-600:]}"
        left = sorted(x.name for x in pathlib.Path(tmp).iterdir() if x.name != "r.json")
        assert left == [], f"left beside the result: {left}"
        print("PASS: a dead writer's r.json.tmp.999999 was removed by the next run on r.json; nothing else left")


CASES = {"device": device, "fifo": fifo, "symlink": symlink, "directory": directory,
         "missing-folder": missing_folder, "read-only-folder": read_only_folder, "same-out": same_out,
         "default-names": default_names, "killed-writer": killed_writer}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    CASES[args.case](Env(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
