"""slurm.drain (tests/slurm/slurm_test.py drain): ccbench-drain's cycle on the real Slurm cluster of slurm_cluster.py,
4 nodes, on fleet verdicts of real sweeps.

Every node's link is shaped to LINK_MBIT both ways (tbf on its eth0 and on its port of the bridge, as tests/cluster
does); n3's to SLOW_MBIT. One allocation holds n1, n2 and n3 throughout (salloc --no-shell: a drained node takes no
new job, and the re-run must reach n3; steps of a job already on a node still run there, so each sweep is
scripts/accept-fleet.sh --launcher srun inside that job). In it an admin drains n2 ("admin: fan"), and n4, outside it,
carries a ccbench reason from an earlier verdict. Then:
  1. the sweep with n3 slow: the fleet verdict names n3 a BAD HOST; ccbench-drain prints one DRAIN line (dry run,
     nothing changed), then --apply: n3 DRAIN with the ccbench reason in sinfo -R;
  2. n3's rate restored, the sweep again: nothing named; ccbench-drain --apply resumes n3.
n2 (judged, and passing, both times) keeps "admin: fan" and n4 (not judged) its reason throughout. sinfo -R is
printed before and after each step, and once more when the allocation has ended (n2 drained, n3 idle).
"""
import json
import pathlib
import re
import subprocess
import time

from slurm_host import _ip, net_tag

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DRAIN = ROOT / "scripts/drain.sh"
FLEET = ROOT / "scripts/accept-fleet.sh"
NODES = 4
SWEPT = ["n1", "n2", "n3"]
LINK_MBIT = 50  # one pair at a time (3 hosts: 3 rounds of 1 pair), both ways: well inside what 2 cores carry
SLOW_MBIT = 25  # n3's pairs at half rate: LOW (below 80% of the level n1<->n2 sets)
ADMIN = "admin: fan"
EARLIER = "ccbench: fleet-bad-host sendrecv_bench 0.40 < 0.80 of level, 3/3 pairs low (run earlier)"
# Open MPI over TCP: one connection a peer, so a two-way exchange of large messages runs at half rate unless
# the eager limit holds a message (docs/guide-slurm-containers.md); tests/cluster sets the same.
MPI_ENV = {"OMPI_MCA_btl_tcp_eager_limit": str(32 << 20), "OMPI_MCA_btl_tcp_max_send_size": str(32 << 20),
           "OMPI_MCA_mpi_yield_when_idle": "1"}


def shape(cluster, node, mbit):
    """node's link at `mbit` both ways: a tbf on its eth0 (egress) and on its bridge port (its ingress)."""
    k = cluster.node_names.index(node)
    tbf = ["tbf", "rate", f"{mbit}mbit", "burst", "16kb", "latency", "100ms"]
    _ip("-n", cluster.namespace(node), "link", "show", "eth0")  # the namespace is there
    for tc in (["tc", "-n", cluster.namespace(node)], ["tc"]):
        dev = "eth0" if len(tc) > 1 else f"{net_tag(cluster.dir)}v{k + 1}"
        subprocess.run([*tc, "qdisc", "replace", "dev", dev, "root", *tbf], check=True, capture_output=True)


def sinfo_r(cluster, when):
    """sinfo -R as an admin reads it (the reason's first 20 characters), and wide (the whole reason)."""
    short = cluster.run(["sinfo", "-R"], timeout=15).stdout
    wide = cluster.run(["sinfo", "-R", "-o", "%100E %10T %N"], timeout=15).stdout
    print(f"--- sinfo -R, {when}\n{short.rstrip()}\n--- sinfo -R -o '%100E %10T %N'\n{wide.rstrip()}", flush=True)
    return wide


def node(cluster, name):
    """(State, Reason without Slurm's [user@time]) of a node, from scontrol show node."""
    shown = cluster.run(["scontrol", "show", "node", name], timeout=15).stdout
    state = re.search(r"\bState=(\S+)", shown).group(1)
    reason = re.search(r"^\s*Reason=(.*?)(?: \[[^]]*\])?$", shown, re.M)
    return state, reason.group(1) if reason else ""


def sweep(cluster, args, job, name):
    """accept-fleet.sh --launcher srun in job's allocation; the fleet verdict (JSON) it left."""
    out = cluster.dir / "work" / name
    env = cluster.env({"SLURM_JOB_ID": job, "SLURM_JOB_NUM_NODES": str(len(SWEPT)), **MPI_ENV})
    cmd = [str(FLEET), "--launcher", "srun", "--size", "2M", "--timeout", "60", "--report", args.report,
           "--bin", str(pathlib.Path(args.bin_dir).resolve()), "--out", str(out)]
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=cluster.dir / "work", capture_output=True, text=True, timeout=240)
    print(p.stdout[-3000:], p.stderr[-2000:], sep="", flush=True)
    print(f"{name}: accept-fleet.sh exit {p.returncode} in {time.monotonic() - t0:.1f} s", flush=True)
    verdict = out / "fleet-verdict.json"
    assert verdict.is_file(), f"{name}: no {verdict} (exit {p.returncode})"
    return p.returncode, verdict, json.loads(verdict.read_text())


def drain_cmd(cluster, report, *args):
    p = subprocess.run(["bash", str(DRAIN), "--report", report, *map(str, args)], env=cluster.env(), capture_output=True, text=True,
                       timeout=120)
    print(f"$ ccbench-drain {' '.join(map(str, args))}  (exit {p.returncode})\n{p.stdout}{p.stderr}", end="",
          flush=True)
    assert p.returncode == 0, f"ccbench-drain: exit {p.returncode}: {p.stderr}"
    return [line for line in p.stdout.splitlines() if line and not line.startswith("#")]


def drain(cluster, args):
    for n in SWEPT:
        shape(cluster, n, LINK_MBIT)
    shape(cluster, "n3", SLOW_MBIT)
    held = cluster.run(["timeout", "30", "salloc", "--no-shell", f"--nodelist={','.join(SWEPT)}", "-N3",
                        "--ntasks-per-node=1", "--job-name=ccbench-drain-window"], timeout=40)
    job = re.search(r"Granted job allocation (\d+)", held.stderr + held.stdout).group(1)
    print(f"allocation {job}: {','.join(SWEPT)} held for both sweeps", flush=True)
    cluster.run(["scontrol", "update", "NodeName=n2", "State=DRAIN", f"Reason={ADMIN}"])
    cluster.run(["scontrol", "update", "NodeName=n4", "State=DRAIN", f"Reason={EARLIER}"])
    log = cluster.dir / "work/drain.log"
    try:
        sinfo_r(cluster, "before: n2 drained by an admin, n4 by an earlier verdict")

        rc, verdict, doc = sweep(cluster, args, job, "fleet-slow")
        bad = [h["host"] for h in doc["bad_hosts"]]
        assert rc == 1 and bad == ["n3"], f"sweep with n3 at {SLOW_MBIT} Mbit/s: exit {rc}, BAD HOST {bad}"
        lines = drain_cmd(cluster, args.report, "--verdict", verdict)
        assert len(lines) == 1 and lines[0].startswith("scontrol update NodeName=n3 State=DRAIN 'Reason=ccbench: "), \
            f"dry run: {lines}"
        assert not node(cluster, "n3")[0].count("DRAIN"), "the dry run drained n3"
        drain_cmd(cluster, args.report, "--verdict", verdict, "--apply", "--log", log)
        wide = sinfo_r(cluster, "after the verdict on the slow sweep, ccbench-drain --apply")
        state, reason = node(cluster, "n3")
        assert "DRAIN" in state and reason.startswith("ccbench: fleet-bad-host sendrecv_bench "), (state, reason)
        assert re.search(r"^ccbench: fleet-bad-host .* n3$", wide, re.M), "sinfo -R does not show n3's reason"

        shape(cluster, "n3", LINK_MBIT)
        rc, verdict, doc = sweep(cluster, args, job, "fleet-restored")
        assert rc == 0 and not doc["bad_hosts"] and doc["verdict"] == "pass", f"restored: exit {rc}, {doc['verdict']}"
        lines = drain_cmd(cluster, args.report, "--verdict", verdict, "--apply", "--log", log)
        assert lines == ["scontrol update NodeName=n3 State=RESUME"], f"restored: {lines}"
        sinfo_r(cluster, "after the verdict on the restored sweep, ccbench-drain --apply")
        state, reason = node(cluster, "n3")
        assert "DRAIN" not in state and not reason, f"n3 not resumed: {state} {reason!r}"
        for name, why in (("n2", ADMIN), ("n4", EARLIER)):
            state, reason = node(cluster, name)
            assert "DRAIN" in state and reason == why, f"{name} was touched: {state} {reason!r}"
    finally:
        cluster.run(["scancel", job], timeout=15, check=False)
    deadline = time.monotonic() + 30
    while cluster.run(["squeue", "-h", "-j", job], timeout=15, check=False).stdout.strip():
        assert time.monotonic() < deadline, f"job {job} still there 30 s after scancel"
        time.sleep(0.25)
    sinfo_r(cluster, "the allocation ended")
    text = log.read_text()
    print(f"--- {log.name}\n{text}", end="")
    assert text.count("applied n3:") == 2 and "State=DRAIN" in text and "State=RESUME" in text, text
    assert " n2:" not in text and " n4:" not in text, "the log names a node that was not to be touched"
    print("PASS: n3 drained on the slow sweep's verdict (ccbench's reason in sinfo -R) and resumed on the restored "
          "one's; n2 (drained by an admin, judged both times) and n4 (not judged) untouched")
