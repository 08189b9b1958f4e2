"""The shared driver of the workflow tests (tests/workflows/workflows_test.py and its case modules): the scripts'
and profile under test, the collective benches, Env (the environment and one script run in its own session) and the
readers of the scripts' output."""
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ACCEPT = ROOT / "scripts" / "accept-node.sh"
REGRESSION = ROOT / "scripts" / "regression.sh"
PROFILE = ROOT / "profiles" / "mpi-host-smoke.json"
sys.path.insert(0, str(HERE.parent / "tools"))

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


def summary_of(stdout):
    """The lines from '== summary' on."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("== summary")]
    assert starts, "no '== summary' section in the output"
    return lines[starts[-1]:]



def verdict_line(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("verdict:")]
    return lines[-1] if lines else ""
