#!/usr/bin/env python3
"""slurm-tier tests: the sbatch scripts of scripts/slurm/ submitted to a real Slurm cluster of two
nodes (n1, n2) brought up on this machine by slurm_cluster.py, with the MPI backend on host memory.

  slurm_test.py --bin-dir DIR --report PATH --schema S sweep        sweep.sbatch, 2 nodes x 2 tasks
  slurm_test.py ... accept_pass    accept-node.sbatch, 1 node, profile mpi-host-smoke: ExitCode 0:0
  slurm_test.py ... accept_fail    the same with an impossible busbw threshold: ExitCode 1:0
  slurm_test.py ... drain          ccbench-drain on fleet verdicts, 4 nodes: n3's link slow -> DRAIN with ccbench's
                                   reason; restored -> RESUME; an admin's drain and an unjudged node untouched
                                   (slurm_drain.py)

The scripts are submitted as users submit them: their #SBATCH lines ask for 8 GPUs per node, and
the command line overrides that (--gpus-per-node=0, --ntasks-per-node=2), as on a cluster without
GPUs; CCBENCH_ROOT is not set, so the scripts find the checkout themselves. Exit 77 (skipped, one
line) without root or without slurm-wlm and munge. Failures raise AssertionError (exit 1).
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tools"))
import slurm_cluster  # noqa: E402
import slurm_drain  # noqa: E402
import validate_result  # noqa: E402

SKIP = 77
JOB_TIMEOUT_S = 120  # a job that has not ended by then is cancelled and the test fails
NO_GPU = ["--gpus-per-node=0", "--ntasks-per-node=2"]  # overrides of the scripts' #SBATCH lines
# sweep.sbatch's default splits, 3 steps a bench, each an MPI start-up across both nodes. The sweep ran two of them
# while Open MPI 4.1.4 crashed in MPI_Init now and then here (SIGSEGV at address 0 in btl/tcp); the cause was
# Slurm's PMIx barrier, which was none on this 2-node cluster (slurm_cluster.py: mpi.conf), not the shared address.
SWEEP_SPLITS = ["world", "node", "rail"]


class Job:
    def __init__(self, job_id, state, exit_code, seconds, output):
        self.id, self.state, self.exit_code, self.seconds, self.output = job_id, state, exit_code, seconds, output

    def __str__(self):
        return f"job {self.id} {self.state} ExitCode {self.exit_code} after {self.seconds:.1f} s"


def job_env(cluster, args, extra):
    """The submitting shell's environment: the cluster's, no CCBENCH_* from outside, our settings."""
    env = {k: v for k, v in cluster.env().items() if not k.startswith("CCBENCH_") or k == slurm_cluster.MARKER}
    env.update(CCBENCH_BIN=str(pathlib.Path(args.bin_dir).resolve()), CCBENCH_REPORT=args.report,
               OMPI_MCA_mpi_yield_when_idle="1")  # 2-4 ranks share 2 cores: do not spin
    env.update(extra)
    return env


def submit_and_wait(cluster, script, sbatch_args, env):
    """sbatch SCRIPT, poll squeue until the job has left the queue, read its end from scontrol."""
    work = cluster.dir / "work"
    cmd = ["timeout", "30", "sbatch", "--parsable", f"--output={work}/%x-%j.out", *sbatch_args, str(script)]
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=40)
    assert p.returncode == 0, f"sbatch: exit {p.returncode}: {p.stderr.strip()}"
    job_id = p.stdout.strip().split(";")[0]
    deadline = t0 + JOB_TIMEOUT_S
    while True:
        q = cluster.run(["squeue", "-h", "-j", job_id, "-o", "%T"], timeout=15, check=False, env=env)
        if q.returncode == 0 and not q.stdout.strip():
            break
        if time.monotonic() > deadline:
            cluster.run(["scancel", job_id], timeout=15, check=False, env=env)
            raise AssertionError(f"job {job_id} still {q.stdout.strip()} after {JOB_TIMEOUT_S} s: cancelled\n"
                                 f"{output_of(work, job_id)}\n{cluster.logs()}")
        time.sleep(0.25)
    seconds = time.monotonic() - t0
    show = cluster.run(["scontrol", "show", "job", "-o", job_id], timeout=15, env=env).stdout
    fields = dict(re.findall(r"(\w+)=(\S*)", show))
    job = Job(job_id, fields.get("JobState"), fields.get("ExitCode"), seconds, output_of(work, job_id))
    print(job.output)
    print(f"{job} (submit to end, polled with squeue)")
    return job


def output_of(work, job_id):
    files = list(work.glob(f"*-{job_id}.out"))
    return files[0].read_text(errors="replace") if files else f"(no output file for job {job_id} in {work})"


def sweep_dry_run(cluster, args, benches):
    """sweep.sbatch's defaults (every collective, splits world node rail) and its checks, in dry runs: the benches
    check the sizes and flags themselves (--check-args), one line and exit 2 before anything runs."""
    script = str(ROOT / "scripts/slurm/sweep.sbatch")
    work = cluster.dir / "work"
    env = job_env(cluster, args, {"CCBENCH_DRY_RUN": "1", "CCBENCH_OUT": str(work / "dry"), "CCBENCH_ROOT": str(ROOT)})
    p = subprocess.run(["bash", script], env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"dry run: exit {p.returncode}: {p.stderr}"
    said = f"benches {' '.join(benches)}; splits world node rail;"
    assert said in p.stdout, f"dry run did not say '{said}':\n{p.stdout[:1500]}"
    steps = [line for line in p.stdout.splitlines() if line.startswith("$ srun --mpi=pmix")]
    assert len(steps) == 3 * len(benches), f"{len(steps)} srun steps, expected {3 * len(benches)}"
    bad = {"CCBENCH_SIZES": ("8:1X", "--max-bytes '1X' is not a size"),
           "CCBENCH_SPLITS": ("world bogus", "--split 'bogus' is not world"),
           "CCBENCH_BENCHES": ("allreduce nosuch", "'nosuch' is not one of allreduce"),
           "CCBENCH_BENCH_ARGS": ("-d float99", "float99")}
    for variable, (value, expect) in bad.items():
        p = subprocess.run(["bash", script], env=dict(env, **{variable: value}), cwd=work, capture_output=True,
                           text=True, timeout=120)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and expect in lines[0], \
            f"{variable}={value}: exit {p.returncode}, {p.stderr.strip()!r}; expected exit 2 and one line with {expect!r}"
        assert not (work / "dry").exists(), f"{variable}={value}: the output directory was made"
        print(f"{variable}={value}: exit 2, {lines[0]}")
    print(f"dry runs: {len(steps)} steps by default ({len(benches)} benches x 3 splits), bad input refused")


def sweep(cluster, args):
    work = cluster.dir / "work"
    out = work / "sweep-results"
    # sweep.sbatch's default: every collective of the workload table, as ccbench-report lists them
    benches = subprocess.run([args.report, "benches", "--kind", "collective"], check=True, capture_output=True,
                             text=True).stdout.split()
    assert "allreduce_bench" in benches and "sendrecv_bench" in benches, f"ccbench-report benches: {benches}"
    sweep_dry_run(cluster, args, benches)
    env = job_env(cluster, args, {"CCBENCH_BACKEND": "mpi", "CCBENCH_SIZES": "1K:64K:8",
                                  "CCBENCH_SPLITS": " ".join(SWEEP_SPLITS),
                                  "CCBENCH_BENCH_ARGS": "-c 1 -n 5", "CCBENCH_TIMEOUT": "60",
                                  "CCBENCH_OUT": str(out)})
    job = submit_and_wait(cluster, ROOT / "scripts/slurm/sweep.sbatch", ["--nodes=2", *NO_GPU], env)
    assert job.state == "COMPLETED" and job.exit_code == "0:0", f"{job}, expected COMPLETED 0:0"
    assert "verdict: PASS, exit 0" in job.output, "no PASS verdict in the job's output"
    expected = sorted(f"{b}-{s}.json" for b in benches for s in SWEEP_SPLITS)
    found = sorted(p.name for p in out.glob("*.json"))
    assert found == expected, f"result files {found}, expected {expected}"
    v = validate_result.validator(args.schema)
    for name in found:
        doc = json.loads((out / name).read_text())
        problems = list(validate_result.problems(v, doc))
        assert not problems, f"{name} does not validate: {problems[0]}"
        hosts = sorted(h["hostname"] for h in doc["environment"]["hosts"])
        assert hosts == ["n1", "n2"], f"{name}: hosts {hosts}, expected n1 and n2 (one slurmd per node)"
        for r in doc["results"]:
            assert r["backend"] == "mpi" and r["status"] in ("ok", "skipped"), f"{name}: {r['status']} {r['reason']}"
            assert r["status"] == "skipped" or r["wrong_elements"] == 0, f"{name}: {r['wrong_elements']} wrong"
        world = [r for r in doc["results"] if r["group"] == "world"]
        assert all(r["ranks"] == 4 and r["nodes"] == 2 for r in world), f"{name}: world is not 4 ranks on 2 nodes"
    print(f"PASS: {job}; {len(found)} result files ({len(benches)} benches x --split "
          f"{','.join(SWEEP_SPLITS)}) validate, hosts n1 and n2")


def accept(cluster, args, profile, expect_exit):
    work = cluster.dir / "work"
    out = work / "accept-results"
    env = job_env(cluster, args, {"CCBENCH_PROFILE": str(profile), "CCBENCH_OUT": str(out),
                                  "CCBENCH_TIMEOUT": "60"})
    job = submit_and_wait(cluster, ROOT / "scripts/slurm/accept-node.sbatch", NO_GPU, env)
    assert job.state == ("COMPLETED" if expect_exit == 0 else "FAILED"), f"{job}"
    assert job.exit_code == f"{expect_exit}:0", f"{job}, expected ExitCode {expect_exit}:0"
    junit = out / "accept.xml"
    assert junit.is_file(), f"no JUnit XML at {junit}"
    return job, junit.read_text()


def accept_pass(cluster, args):
    job, junit = accept(cluster, args, "mpi-host-smoke", 0)
    assert "<failure" not in junit, "a check failed in accept.xml"
    print(f"PASS: accept-node.sbatch, profile mpi-host-smoke: {job}")


def accept_fail(cluster, args):
    profile = json.loads((ROOT / "profiles/mpi-host-smoke.json").read_text())
    profile["id"] = "mpi-host-smoke-impossible"
    gate = next(c for c in profile["checks"] if c["kind"] == "busbw")
    gate["min_GBps"] = 1e9  # 1 EB/s: no host reaches it
    gate["description"] = "an impossible threshold: this check must fail"
    path = cluster.dir / "work/impossible.json"
    path.write_text(json.dumps(profile, indent=2))
    job, junit = accept(cluster, args, path, 1)
    assert "<failure" in junit and gate["id"] in junit, f"accept.xml does not fail check {gate['id']}"
    assert re.search(rf"{re.escape(gate['id'])}\s+FAIL", job.output), f"no FAIL of {gate['id']} in the job output"
    print(f"PASS: accept-node.sbatch, impossible profile: {job}; check {gate['id']} FAIL")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("what", choices=["sweep", "accept_pass", "accept_fail", "drain"])
    args = parser.parse_args()
    problem = slurm_cluster.missing_prerequisites()
    if problem:
        print(f"SKIPPED: {problem}")
        return SKIP
    handler = {"sweep": sweep, "accept_pass": accept_pass, "accept_fail": accept_fail,
               "drain": slurm_drain.drain}[args.what]
    slurm_cluster.raise_on_sigterm()
    t0 = time.monotonic()
    with slurm_cluster.SlurmCluster(nodes=slurm_drain.NODES if args.what == "drain" else 2) as cluster:
        try:
            handler(cluster, args)
        except AssertionError:
            print(cluster.logs(tail=25), file=sys.stderr)
            raise
    print(f"{args.what}: {time.monotonic() - t0:.1f} s in all, cluster up and down included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
