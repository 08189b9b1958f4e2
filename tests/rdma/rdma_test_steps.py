"""Building blocks shared by the rdma-tier tests (rdma_test.py, rdma_test_verbs.py, fidelity_rdma.py): perftest
runs as guest steps and their tables parsed, mpirun inside the guest, the check that every step of a guest run
completed, and the timings printed after one.
"""
import math
import pathlib
import re

import rdma_vm

PERFTEST_FLAGS = "-d rxe0 -x 1 -F"  # GID index 1 = ::ffff:127.0.0.1 (RoCE v2); -F: no CPU-frequency check
BASE_PORT = 18515  # perftest's default; each run gets its own port
STEP_TIMEOUT_S = 40
COLUMNS = {"#bytes": "bytes", "#iterations": "iterations", "BW peak[MB/sec]": "bw_peak_MBps",
           "BW average[MB/sec]": "bw_average_MBps", "MsgRate[Mpps]": "msg_rate_Mpps", "t_min[usec]": "t_min_us",
           "t_max[usec]": "t_max_us", "t_typical[usec]": "t_typical_us", "t_avg[usec]": "t_avg_us",
           "t_stdev[usec]": "t_stdev_us", "99% percentile[usec]": "p99_us", "99.9% percentile[usec]": "p99_9_us"}
HEADER_TOKEN = re.compile(r"#\w+|[\w.%]+(?: \w+)?\[[^\]]*\]")
# Open MPI in the guest: mpirun/orted, the MCA and PMIx plugins with their help files and defaults.
MPI_FILES = ["/usr/bin/mpirun", "/usr/bin/orted", "/usr/lib/x86_64-linux-gnu/openmpi/lib",
             "/usr/lib/x86_64-linux-gnu/pmix2", "/usr/share/openmpi", "/etc/openmpi"]
# No network and no ssh in the guest: plm isolated launches the local ranks itself; shared memory only.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_plm": "isolated",
           "OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1", "OMPI_MCA_mpi_yield_when_idle": "1"}
# The paired latency runs, ours and perftest alike, put the two sides on the guest's two CPUs, as latency runs are
# usually pinned: unpinned, two spinning sides sometimes share one vCPU and each round trip waits a scheduler tick
# (4 ms), for either program, whenever this host is busy.
PIN_SERVER = "taskset -c 0 "
PIN_CLIENT = "taskset -c 1 "


def loadavg():
    return pathlib.Path("/proc/loadavg").read_text().split(" ", 3)[:3]


def number(text):
    value = float(text)
    return value if math.isfinite(value) else None  # perftest prints inf/-nan when a clock went wrong


def parse_perftest(output):
    """The table rows of perftest output (the client's part: up to the server's marker) as dicts."""
    client = output.split("== server exit", 1)[0]
    rows, columns = [], None
    for line in client.splitlines():
        if line.strip().startswith("#bytes"):
            columns = [COLUMNS.get(t, re.sub(r"\W+", "_", t).strip("_").lower()) for t in HEADER_TOKEN.findall(line)]
            continue
        fields = line.split()
        if columns and len(fields) == len(columns) and fields[0].isdigit():
            try:
                row = {c: number(f) for c, f in zip(columns, fields)}
            except ValueError:
                continue
            row["bytes"], row["iterations"] = int(fields[0]), int(fields[1])
            rows.append(row)
    return rows


def perftest_step(program, size, iters, port, pin=False):
    """PIN: server on the guest's CPU 0, client on CPU 1 (see PIN_SERVER)."""
    server = f"{program} {PERFTEST_FLAGS} -p {port} -s {size} -n {iters}"
    first, second = (PIN_SERVER, PIN_CLIENT) if pin else ("", "")
    return rdma_vm.Step(f"{program}-{size}", f"server_client {port} '{first}{server}' '{second}{server} 127.0.0.1'",
                        STEP_TIMEOUT_S)


def fmt(value, spec):
    return format(value, spec) if value is not None else format("-", spec.split(".")[0].rstrip("f"))

def print_timings(result, wall_s):
    t = result.timings
    steps = ", ".join(f"{s.name} {s.elapsed_s:.1f}" for s in result.steps.values())
    print(f"timings: image build {t.get('image_s', float('nan')):.1f} s ({t.get('image_MiB', 0):.1f} MiB), "
          f"boot {t.get('boot_s', float('nan')):.1f} s, boot+run {t.get('run_s', float('nan')):.1f} s, "
          f"total {wall_s:.1f} s{'; the first boot stalled and the guest was booted once more' if t.get('boot_retries') else ''}; "
          f"in the guest (s): {steps}")


def report_failure(result, why):
    for step in result.steps.values():
        if step.rc != 0:
            print(f"--- step {step.name}: exit {step.rc}{' (timed out)' if step.rc == 137 else ''}\n{step.output}")
    print("--- console (last 3000 characters):\n" + result.console[-3000:])
    raise AssertionError(why)


def check_steps(result, steps):
    if result.exit_code is None or result.errors:
        report_failure(result, f"the guest did not boot and run cleanly: {result.errors or 'no exit code reported'}")
    missing = [s.name for s in steps if s.name not in result.steps]
    failed = [f"{s.name} (exit {s.rc})" for s in result.steps.values() if s.rc != 0]
    if missing or failed:
        report_failure(result, f"steps failed: {failed}; never reported: {missing}")


def mpirun_command(np, program):
    exports = " ".join(f"{k}={v}" for k, v in MPI_ENV.items())
    return f"export {exports}; mpirun -np {np} --oversubscribe --bind-to none {program}"
