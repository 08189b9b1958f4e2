#!/usr/bin/env python3
"""mpi-tier tests of the bench binaries: real mpirun runs on host memory.

  bench_test.py --bin-dir DIR --schema S --mpirun M sweep --bench allreduce_bench --np 4
  bench_test.py ... bad-input --case min_gt_max
  bench_test.py ... sigkill --victim job|writer
  bench_test.py ... sigstop --at setup|sweep|gather
  bench_test.py ... job-end --order writer-first|other-first|writer-slow|fatal-other|fatal-writer|killed-other
  bench_test.py ... stdout-json
  bench_test.py ... straggler           (--per-rank: a rank made late is named; bench_test_straggler.py)
  bench_test.py ... bind                (--bind auto / none: what each rank got, read back, in the JSON)
  bench_test.py ... gpu-nccl            (exit 77 = skipped when no GPU is visible)

Each run happens in a fresh temporary directory. Failures raise AssertionError (exit 1). The sigkill and sigstop
cases are in bench_test_signals.py beside this file.
"""
import argparse
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import validate_result  # noqa: E402
from bench_test_job_end import ORDERS, job_end  # noqa: E402
from bench_test_signals import sigkill, sigstop  # noqa: E402
from bench_test_straggler import straggler  # noqa: E402

SKIP = 77
# The flags of the "Must show" run, with a shorter per-size budget so 14 runs fit CI.
SWEEP_FLAGS = ["-b", "8", "-e", "4M", "-f", "4", "-c", "1", "--time-budget", "0.2"]
BAD_INPUT = {
    "min_gt_max": (["-b", "1M", "-e", "1K"], "--min-bytes 1M is larger than --max-bytes 1K"),
    "factor_one": (["-f", "1"], "--step-factor 1 must be greater than 1"),
    "bad_dtype": (["-d", "float128"], "--dtype 'float128' is not one of"),
    "bad_backend": (["--backend", "foo"], "--backend 'foo' is not one of: auto, mpi, nccl"),
    "negative_iters": (["-n", "-3"], "--iters -3 must be at least 1"),
    "nccl_without_gpu": (["--backend", "nccl"], "--backend nccl: "),
    "root_out_of_range": (["-r", "5"], "--root 5 is not a rank of this job (2 ranks: 0..1)", "broadcast_bench"),
    "nccl_variants_without_gpu": (["--nccl-variants"], "--nccl-variants forces NCCL's ring algorithm: it needs the "
                                  "NCCL backend, and --backend auto chose mpi"),
    "nccl_variants_on_mpi": (["--nccl-variants", "--backend", "mpi"], "it needs --backend nccl, not mpi"),
    "register_on_mpi": (["-R", "2", "--backend", "mpi"], "-R 2 registers NCCL's buffers: it needs --backend nccl, "
                        "not mpi"),
    "register_without_gpu": (["-R", "1"], "-R 1 registers NCCL's buffers: it needs the NCCL backend, and --backend "
                             "auto chose mpi"),
    "register_bad": (["-R", "3"], "-R '3' is not one of: 0 (none), 1 (local), 2 (symmetric)"),
    # (flags, message, bench, ranks): 0 ranks runs the bench without mpirun (an MPI singleton)
    "all_pairs_one_rank": (["--all-pairs"], "--all-pairs over 1 rank: no pair to measure; start it with mpirun -np 2",
                           "sendrecv_bench", 1),
    "all_pairs_no_mpirun": (["--all-pairs"], "--all-pairs over 1 rank: no pair to measure", "allreduce_bench", 0),
    "split_pairs_one_rank": (["--split", "pairs"], "--split pairs over 1 rank: no pair to measure", "allreduce_bench",
                             1),
    "hosts_per_group_sendrecv": (["--hosts-per-group", "2"], "--hosts-per-group is for the collective benches; "
                                 "sendrecv_bench measures between the ranks of pairs: --all-pairs", "sendrecv_bench"),
    "hosts_per_group_one_host": (["--hosts-per-group", "1000000"], "--hosts-per-group 1000000 over 1 host: one group "
                                 "would hold every host (the world)"),
}


class Env(validate_result.MpiTestEnv):
    def command(self, bench, np, flags, bind_to="none"):
        return [self.mpirun, "-q", "-np", str(np), "--bind-to", bind_to, str(self.bin_dir / bench), *flags]

    def run(self, bench, np, flags, cwd, timeout=240, bind_to="none"):
        cmd = self.command(bench, np, flags, bind_to)
        print("$", " ".join(cmd), flush=True)
        return subprocess.run(cmd, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=timeout)


def check_results(doc, bench, np, expect_sizes):
    results = doc["results"]
    assert results, "no results"
    sizes = sorted({r["size_bytes"] for r in results if r["status"] != "skipped" or r["count"] > 0})
    for r in results:
        assert r["benchmark"] == bench and r["ranks"] == np and r["backend"] == "mpi", r
        if r["status"] == "skipped":
            assert r["reason"], f"skipped without a reason: {r}"
            continue
        assert r["status"] == "ok", f"{r['size_bytes']} B in_place={r['in_place']}: {r['status']} {r['reason']}"
        assert r["wrong_elements"] == 0, f"{r['size_bytes']} B: {r['wrong_elements']} wrong elements"
        assert r["time"]["n"] >= 1 and r["busbw_GBps"] > 0
    assert len(results) == expect_sizes * 2, f"{len(results)} results, expected {expect_sizes} sizes x 2 placements"
    return sizes


def sweep(env, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        p = env.run(args.bench, args.np, SWEEP_FLAGS + ["--out", str(out)], tmp)
        print(p.stdout, p.stderr, sep="\n")
        assert p.returncode == 0, f"exit code {p.returncode}"
        assert "#wrong" in p.stdout and f"ranks {args.np}" in p.stdout, "no table header"
        doc = env.validate(out)
        assert doc["run"]["ended_utc"] is not None
        ok = [r for r in doc["results"] if r["status"] == "ok"]
        assert ok, "nothing was measured"
        check_results(doc, args.bench, args.np, expect_sizes=10)
        print(f"PASS: {len(ok)} cases measured, {len(doc['results']) - len(ok)} skipped with a reason, 0 wrong")


def gpu_visible():
    """A GPU machine: the kernel driver's device nodes, or nvidia-smi listing a GPU. Only where neither is there do
    the GPU tests skip; on a GPU machine whose CUDA cannot start they run, and fail."""
    if os.path.exists("/dev/nvidiactl"):
        return True
    smi = shutil.which("nvidia-smi")
    return smi is not None and "GPU 0" in subprocess.run([smi, "-L"], capture_output=True, text=True).stdout


def cuda_cannot_start(env, args):
    """--backend auto where the driver is older than the CUDA runtime: it runs on MPI, and says why in one line on
    stderr, in the table header and in the result; --backend nccl refuses with CUDA's error (exit 2)."""
    if gpu_visible():
        print("SKIPPED: a GPU machine: LD_LIBRARY_PATH would not override its real driver library reliably")
        return SKIP
    env.env["LD_LIBRARY_PATH"] = args.fake_libcuda_dir + ":" + env.env.get("LD_LIBRARY_PATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        p = env.run("allreduce_bench", 2, ["-b", "8", "-e", "64", "-n", "3", "--out", str(out)], tmp, timeout=60)
        print(p.stdout, p.stderr, sep="\n")
        assert p.returncode == 0, f"exit code {p.returncode}"
        ours = [line for line in p.stderr.splitlines() if line.startswith("allreduce_bench:")]
        why = "--backend auto chose mpi because CUDA cannot start: cudaErrorInsufficientDriver"
        assert len(ours) == 1 and why in ours[0] and "R580" in ours[0], f"expected one warning line, got {ours}"
        header = [line for line in p.stdout.splitlines() if line.startswith("# backend mpi")]
        assert header and why in header[0], f"the table header does not say why: {header}"
        doc = env.validate(out)
        recorded = doc["environment"]["libraries"].get("backend_choice", "")
        assert why in recorded and "12.4" in recorded, f"the result does not say why: {recorded!r}"
        assert all(r["backend"] == "mpi" for r in doc["results"])
        p = env.run("allreduce_bench", 2, ["--backend", "nccl"], tmp, timeout=60)
        refusal = [line for line in p.stderr.splitlines() if line.startswith("allreduce_bench:")]
        assert p.returncode == 2 and len(refusal) == 1 and "cudaErrorInsufficientDriver" in refusal[0], \
            (p.returncode, p.stderr)
        print(f"PASS: --backend auto: {ours[0]}\n--backend nccl: exit 2, {refusal[0]}")


def auto_disagree(env, args):
    """--backend auto where the ranks split: rank 0 is told it has a GPU (CCBENCH_DEBUG_GPUS=1), rank 1 meets a
    driver older than CUDA 13 (the fake libcuda.so.1). Before, rank 0 chose NCCL and rank 1 MPI and the job hung
    to --timeout; now one line from rank 0 names rank 1, its host and CUDA's error, exit 2, at once."""
    if gpu_visible():
        print("SKIPPED: a GPU machine: LD_LIBRARY_PATH would not override its real driver library reliably")
        return SKIP
    timeout_s = 30
    flags = ["-b", "8", "-e", "64", "-n", "3", "--timeout", str(timeout_s)]
    fake = f"LD_LIBRARY_PATH={args.fake_libcuda_dir}:{env.env.get('LD_LIBRARY_PATH', '')}"
    bench = str(env.bin_dir / "allreduce_bench")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        cmd = [env.mpirun, "-q", "--bind-to", "none", "-np", "1", "env", "CCBENCH_DEBUG_GPUS=1", bench, *flags,
               "--out", str(out), ":", "-np", "1", "env", fake, bench, *flags, "--out", str(out)]
        print("$", " ".join(cmd), flush=True)
        start = time.monotonic()
        p = subprocess.run(cmd, cwd=tmp, env=env.env, capture_output=True, text=True, timeout=timeout_s * 3)
        took = time.monotonic() - start
        print(p.stdout, p.stderr, sep="\n")
        ours = [line for line in p.stderr.splitlines() if line.startswith("allreduce_bench:")]
        assert p.returncode == 2, f"exit code {p.returncode} after {took:.1f} s, expected 2"
        host = socket.gethostname()
        says = ["--backend auto: the ranks disagree: rank 1 on " + host, "cudaErrorInsufficientDriver",
                "rank 0 on " + host + " (1 CUDA GPU(s) visible) can"]
        assert len(ours) == 1 and all(s in ours[0] for s in says), f"expected one line with {says}, got {ours}"
        assert took < timeout_s, f"it took {took:.1f} s: as long as the --timeout of a hang"
        left = sorted(f.name for f in pathlib.Path(tmp).iterdir())
        assert not left, f"left in the run folder: {left}"
        print(f"PASS: exit 2 after {took:.1f} s (--timeout {timeout_s} s), one line: {ours[0]}")


def bad_input(env, args):
    flags, message, *rest = BAD_INPUT[args.case]
    if args.case.endswith("_without_gpu") and gpu_visible():
        print("SKIPPED: a GPU is visible, so this input is not bad here")
        return SKIP
    bench = rest[0] if rest else "allreduce_bench"
    ranks = rest[1] if len(rest) > 1 else 2
    with tempfile.TemporaryDirectory() as tmp:
        if ranks == 0:
            cmd = [str(env.bin_dir / bench), *flags]
            print("$", " ".join(cmd), flush=True)
            p = subprocess.run(cmd, cwd=tmp, env=env.env, capture_output=True, text=True, timeout=60)
        else:
            p = env.run(bench, ranks, flags, tmp, timeout=60)
        print(p.stdout, p.stderr, sep="\n")
        ours = [line for line in p.stderr.splitlines() if line.startswith(bench + ":")]
        assert p.returncode == 2, f"exit code {p.returncode}, expected 2"
        assert len(ours) == 1, f"expected one line from the bench, got {ours}"
        assert message in ours[0], f"{ours[0]!r} does not say {message!r}"
        assert p.stdout == "", f"nothing on stdout expected, got {p.stdout!r}"
        left = list(pathlib.Path(tmp).rglob("*"))
        assert not left, f"bad input left files behind: {left}"
        print(f"PASS: exit 2, one line: {ours[0]}")


def rdma_no_device(env, args):
    """On a host without an RDMA device (or a build without verbs) the RDMA benches say so: one line, exit 2."""
    if pathlib.Path("/sys/class/infiniband").is_dir() and any(pathlib.Path("/sys/class/infiniband").iterdir()):
        print("SKIPPED: this host has an RDMA device")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for bench in table_benches(args, "--kind", "rdma"):
            p = env.run(bench, 2, ["-s", "64", "-n", "2"], tmp, timeout=60)
            ours = [line for line in p.stderr.splitlines() if line.startswith(bench + ":")]
            assert p.returncode == 2 and len(ours) == 1, (p.returncode, p.stderr)
            assert "no RDMA device here" in ours[0] or "this build has no verbs backend" in ours[0], ours[0]
            assert not list(pathlib.Path(tmp).rglob("*.json")), "a result file was written"
            print(f"{bench}: exit 2, {ours[0]}")
    print("PASS: without an RDMA device every RDMA bench exits 2 with one line and write nothing")


def stdout_json(env, args):
    with tempfile.TemporaryDirectory() as tmp:
        p = env.run("sendrecv_bench", 2, ["-b", "1K", "-e", "4K", "-f", "2", "-n", "3", "-c", "1", "--out", "-"], tmp)
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        path = pathlib.Path(tmp) / "stdout.json"
        path.write_text(p.stdout)
        env.validate(path)
        assert "#wrong" in p.stderr, "with --out - the table goes to stderr"
        assert not (pathlib.Path(tmp) / "results").exists()
        print(f"PASS: {len(doc['results'])} results on stdout, table on stderr")


# On one host with 4 ranks: the groups each split must form (id -> ranks), and whether they
# measure (one-rank groups are skipped: no link to measure).
SPLITS = {
    "world": ({"world": [0, 1, 2, 3]}, True),
    "node": ({"node:{host}": [0, 1, 2, 3]}, True),
    "cross-node": ({"cross-node": [0]}, False),
    "rail": ({"rail:0": [0], "rail:1": [1], "rail:2": [2], "rail:3": [3]}, False),
    "pairs": ({"pair:0-1": [0, 1], "pair:2-3": [2, 3]}, True),
}


def split(env, args):
    expected, measures = SPLITS[args.split]
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        p = env.run("allreduce_bench", 4, ["-b", "1K", "-e", "64K", "-f", "8", "-n", "5", "-c", "1", "--split",
                                           args.split, "--out", str(out)], tmp)
        print(p.stdout, p.stderr, sep="\n")
        assert p.returncode == 0, f"exit code {p.returncode}"
        doc = env.validate(out)
        host = doc["environment"]["hosts"][0]["hostname"]
        want = {k.format(host=host): v for k, v in expected.items()}
        got = {}
        for r in doc["results"]:
            got[r["group_id"]] = r["group_ranks"]
            assert r["group"] == args.split.rstrip("s") or r["group"] == args.split, r["group"]
            assert r["ranks"] == len(r["group_ranks"]) and r["group_hosts"] == [host]
            if measures:
                assert r["status"] == "ok" and r["wrong_elements"] == 0, r
            else:
                assert r["status"] == "skipped" and "one rank" in r["reason"], r
        assert got == want, f"groups {got}, expected {want}"
        assert len(doc["results"]) == len(want) * 3 * 2, "every group, size and placement"
        print(f"PASS: --split {args.split}: groups {sorted(got)}")


def cpulist(cpus):
    """[0, 1, 2, 5] -> "0-2,5", the kernel's cpulist format."""
    spans = []
    for cpu in sorted(cpus):
        if spans and cpu == spans[-1][1] + 1:
            spans[-1][1] = cpu
        else:
            spans.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def parse_cpulist(text):
    cpus = set()
    for item in filter(None, text.split(",")):
        a, _, b = item.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def bind_run(env, tmp, policy, launcher):
    """allreduce_bench -np 2 --bind POLICY under mpirun --bind-to LAUNCHER; the validated binding entries."""
    out = pathlib.Path(tmp) / f"{policy}-{launcher}.json"
    p = env.run("allreduce_bench", 2, ["-b", "1K", "-e", "4K", "-f", "4", "-n", "3", "-c", "1", "--bind", policy,
                                       "--out", str(out)], tmp, bind_to=launcher)
    assert p.returncode == 0, f"exit code {p.returncode}: {p.stderr}"
    doc = env.validate(out)
    version = tuple(int(x) for x in doc["schema_version"].split("."))
    assert version >= (1, 2, 0), f"schema {doc['schema_version']}: environment.binding came in 1.2.0"
    binding = doc["environment"]["binding"]
    assert [b["rank"] for b in binding] == [0, 1], binding
    host = doc["environment"]["hosts"][0]["hostname"]
    print(f"--bind {policy} under mpirun --bind-to {launcher}:")
    for b in binding:
        print(f"  rank {b['rank']}: applied {b['applied']} numa_node {b['numa_node']} cpus {b['cpus']} "
              f"memory {b['memory']!r} gpu {b['gpu']} nic {b['nic']} nic_applied {b['nic_applied']} note {b['note']!r}")
        assert b["policy"] == policy and b["host"] == host and b["gpu"] is None and b["nic_applied"] is None, b
    return binding


def bind(env, args):
    node0 = pathlib.Path("/sys/devices/system/node/node0/cpulist").read_text().strip()
    launcher = cpulist(os.sched_getaffinity(0))  # mpirun --bind-to none passes on its own affinity
    print(f"this machine: node0 cpulist {node0}; this process's affinity {launcher}")
    with tempfile.TemporaryDirectory() as tmp:
        # auto replaces whatever the launcher did: mpirun binds each rank to one core here
        for b in bind_run(env, tmp, "auto", "core"):
            assert b["applied"] is True and b["numa_node"] == 0 and b["cpus"] == node0, b
            # set_mempolicy needs CAP_SYS_NICE inside a container; without it the note says so
            assert b["memory"] == "preferred node 0" or "set_mempolicy" in b["note"], b
            assert b["nic"] is None or "not applied" in b["note"], b  # MPI picked its NICs in MPI_Init
        for b in bind_run(env, tmp, "none", "none"):
            assert b["applied"] is False and b["cpus"] == launcher and b["memory"] == "unchanged", b
            assert b["nic"] is None and b["note"].startswith("--bind auto would use NUMA node 0"), b
        cores = bind_run(env, tmp, "none", "core")  # recorded as found: one core each
        sets = [parse_cpulist(b["cpus"]) for b in cores]
        assert all(s and s <= parse_cpulist(launcher) for s in sets) and not sets[0] & sets[1], sets
        p = env.run("allreduce_bench", 2, ["--bind", "numa"], tmp, timeout=60)
        ours = [line for line in p.stderr.splitlines() if line.startswith("allreduce_bench:")]
        assert p.returncode == 2 and ours == ["allreduce_bench: error: --bind 'numa' is not none or auto"], \
            (p.returncode, p.stderr)
        print(f"--bind numa: exit 2, one line: {ours[0]}")
    print(f"PASS: --bind auto put both ranks on node 0 ({node0}); --bind none recorded the launcher's binding")


def gpu_nccl(env, args):
    if not gpu_visible():
        print("SKIPPED: no GPU visible (nvidia-smi -L lists none); the NCCL path did not run")
        return SKIP
    failures = []

    def not_ok(doc, allowed_skips=("NCCL has no in-place",)):
        """Rows that are neither ok nor a skip NCCL documents (in-place all-to-all and send/recv)."""
        return [f"{r['size_bytes']} B in_place={r['in_place']}: {r['status']} {r['reason']}" for r in doc["results"]
                if r["status"] != "ok" and not (r["status"] == "skipped" and r["reason"].startswith(allowed_skips))]

    def nccl_run(bench, flags):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "r.json"
            p = env.run(bench, 1, ["--backend", "nccl", *flags, "--out", str(out)], tmp)
            print(p.stdout[-2000:], p.stderr[-2000:])
            if p.returncode != 0:
                failures.append(f"{bench} {' '.join(flags)}: exit {p.returncode}")
                return None
            doc = env.validate(out)
            if any(r["backend"] != "nccl" for r in doc["results"]):
                failures.append(f"{bench} {' '.join(flags)}: not every row ran on nccl")
            return doc

    every = table_benches(args, "--backend", "nccl")
    for bench in every:  # every bench NCCL runs, checked
        doc = nccl_run(bench, ["-b", "8", "-e", "16M", "-f", "8", "-c", "1"])
        if doc is not None and not_ok(doc):
            failures.append(f"{bench}: {not_ok(doc)}")
    for dtype in ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64", "float8_e4m3",
                  "float8_e5m2"]:
        for bench in ["allreduce_bench", "allgather_bench", "broadcast_bench", "reducescatter_bench"]:
            doc = nccl_run(bench, ["-b", "8", "-e", "1M", "-f", "8", "-c", "1", "-n", "5", "-d", dtype])
            if doc is not None and not_ok(doc):
                failures.append(f"{bench} {dtype}: {not_ok(doc)}")
    doc = nccl_run("allreduce_bench", ["-b", "1", "-e", "1", "-d", "float32", "-n", "3"])  # below one element
    if doc is not None and any(r["status"] != "skipped" or "below one element per rank" not in r["reason"]
                               for r in doc["results"]):
        failures.append(f"1 B of float32: {[(r['status'], r['reason']) for r in doc['results']]}, expected skipped")
    with tempfile.TemporaryDirectory() as tmp:  # --nccl-variants: both sweeps, tagged, each verified
        out = pathlib.Path(tmp) / "r.json"
        p = env.run("allreduce_bench", 1, ["--backend", "nccl", "-b", "8", "-e", "1M", "-f", "8", "-c", "1", "-n", "5",
                                           "--nccl-variants", "--out", str(out)], tmp)
        print(p.stdout[-3000:], p.stderr[-2000:])
        if p.returncode != 0:
            failures.append(f"--nccl-variants: exit {p.returncode}")
        else:
            doc = env.validate(out)
            variants = [r.get("variant") for r in doc["results"]]
            wrong = sum(r["wrong_elements"] or 0 for r in doc["results"])
            if variants.count("configured") != variants.count("ring") or not variants.count("ring") or wrong:
                failures.append(f"--nccl-variants: variants {variants}, {wrong} wrong")
    assert not failures, failures
    print(f"PASS: NCCL backend, 1 rank: all {len(every)} benches and every dtype verified, every row ok; 1 B skipped "
          "below one element; --nccl-variants tagged both sweeps")


def table_benches(args, *flags):
    """The benches of the workload table that `ccbench-report benches FLAGS` lists: the tests' one list."""
    listed = subprocess.run([args.report, "benches", *flags], check=True, capture_output=True, text=True).stdout
    assert listed.split(), f"ccbench-report benches {' '.join(flags)}: nothing listed"
    return listed.split()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--report", required=True, help="ccbench-report: the list of benches (ccbench-report benches)")
    parser.add_argument("--schema", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sweep")
    s.add_argument("--bench", required=True)
    s.add_argument("--np", type=int, required=True)
    b = sub.add_parser("bad-input")
    b.add_argument("--case", required=True, choices=sorted(BAD_INPUT))
    k = sub.add_parser("sigkill")
    k.add_argument("--victim", choices=["job", "writer"], required=True)
    st = sub.add_parser("sigstop")
    st.add_argument("--at", choices=["setup", "sweep", "gather"], required=True)
    je = sub.add_parser("job-end")
    je.add_argument("--order", choices=sorted(ORDERS), required=True)
    sub.add_parser("stdout-json")
    sp = sub.add_parser("split")
    sp.add_argument("--split", required=True, choices=sorted(SPLITS))
    sub.add_parser("gpu-nccl")
    cc = sub.add_parser("cuda-cannot-start")
    cc.add_argument("--fake-libcuda-dir", required=True)
    ad = sub.add_parser("auto-disagree")
    ad.add_argument("--fake-libcuda-dir", required=True)
    sub.add_parser("bind")
    sub.add_parser("rdma-no-device")
    sub.add_parser("straggler")
    args = parser.parse_args()
    env = Env(args)
    handler = {"sweep": sweep, "bad-input": bad_input, "sigkill": sigkill, "sigstop": sigstop, "job-end": job_end,
               "stdout-json": stdout_json, "split": split, "gpu-nccl": gpu_nccl, "cuda-cannot-start": cuda_cannot_start,
               "auto-disagree": auto_disagree, "bind": bind, "rdma-no-device": rdma_no_device,
               "straggler": straggler}[args.what]
    return handler(env, args) or 0


if __name__ == "__main__":
    sys.exit(main())
