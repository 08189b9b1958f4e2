"""The baseline case of the cluster tier (tests/cluster/cluster_test.py): `ccbench-report baseline` learns an
acceptance profile from a fleet of namespace hosts, and `accept` judges each host with it (issue 40, section 3).

  baseline  6 hosts, 1 slot each, every link tbf 200 Mbit/s but node4's at 100. node0 is the partner every host is
            measured against (one rank alone measures no link): each of node1..node5 runs sendrecv_bench with it
            (-b 1M -e 4M), and node0<->node1 an all_reduce beside. baseline over those 6 results names node0,node4 as
            left out, its floor lies below every healthy pair and above node4's, and the all_reduce check (1 pair)
            is not learned and named; 4 of the 5 sendrecv results (too few hosts) and -o over an input are refused
            (exit 2, one line, nothing written). Then every pair runs again and accept with the learned profile,
            unchanged, FAILs node0,node4 (exit 1) and PASSes the other four (exit 0).
"""
import json
import re
import subprocess

import nscluster

FULL_DUPLEX_MCA = nscluster.FULL_DUPLEX_MCA
BASE_MBIT = 200  # below 500: the link, not this 2-core machine's CPUs, sets the rate (cluster.rate)
SLOW_MBIT = 100
SLOW_HOST = 4
HOSTS = 6  # node0 the partner, node1..node5 the fleet: nscluster's most (2 cores)
SWEEP = ["-b", "1M", "-e", "4M", "-f", "2", "-n", "5", "-w", "1", "--placement", "out", "-c", "0"]
LEARNED_SIZE = 4 << 20
# The spread is at least 5% of the median here, not the default 1%: the healthy pairs agree within 0.5% (MAD ~0), and
# on this shared 2-core machine a healthy pair's next run came 1.3% below their median (0.02299 against 0.02330 GB/s)
# with other builds beside it; cluster.rate has seen 10-27% below the link while a neighbour ran. The floor is then
# 85% of the median, and node4, at half the rate, 50% below it either way.
MIN_SPREAD_PCT = 5


def run_pair(env, cluster, k, bench, out, label):
    """`bench` on 2 ranks, node0 and node`k`, over their links; the result file, checked."""
    cmd = cluster.mpirun_prefix() + ["--host", f"node0,node{k}", "-np", "2"]
    cmd += [a for key, value in FULL_DUPLEX_MCA.items() for a in ("--mca", key, str(value))]
    cmd += ["nice", "-n", "19", str(env.bench(bench)), *SWEEP, "--label", label, "--out", str(out)]
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=cluster.tmpdir, env=cluster.env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"{label}: mpirun exit {p.returncode}: {p.stdout}\n{p.stderr}"
    doc = env.validate(out)
    hosts = sorted(h["hostname"] for h in doc["environment"]["hosts"])
    assert hosts == ["node0", f"node{k}"], f"{label}: hosts {hosts}"
    return doc


def fleet_round(env, cluster, folder, name):
    """Each fleet host's sendrecv with node0: {k: document}."""
    folder.mkdir()
    docs = {}
    for k in range(1, HOSTS):
        docs[k] = run_pair(env, cluster, k, "sendrecv_bench", folder / f"sendrecv-node{k}.json", f"{name} node{k}")
        row = [r for r in docs[k]["results"] if r["size_bytes"] == LEARNED_SIZE][0]
        print(f"{name}: node0,node{k} sendrecv 4 MiB busbw {row['busbw_GBps']:.5f} GB/s", flush=True)
    return docs


def report(env, *args):
    cmd = [env.report, *map(str, args)]
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(p.stdout, p.stderr, sep="\n", flush=True)
    return p


def refusals(env, learn, tmp):
    """Too few hosts, and -o over an input: exit 2, one line, nothing written."""
    out = tmp / "few.json"
    few = sorted(learn.glob("sendrecv-node*.json"))[:4]
    p = report(env, "baseline", *few, "-o", out)
    assert p.returncode == 2, f"4 hosts: exit {p.returncode}"
    assert len(p.stderr.strip().splitlines()) == 1 and "at least 5 needed" in p.stderr, p.stderr
    assert not out.exists(), "a refused baseline wrote its profile"
    said = [f"4 hosts: exit 2: {p.stderr.strip()}"]
    victim = few[0]
    before = victim.read_bytes()
    p = report(env, "baseline", learn, "-o", victim)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, f"-o an input: exit {p.returncode}"
    assert victim.read_bytes() == before, "baseline -o INPUT changed the input"
    said.append(f"-o over an input: exit 2: {p.stderr.strip()}")
    return said


def baseline(env, _args):
    said = []
    rates = [BASE_MBIT] * HOSTS
    rates[SLOW_HOST] = SLOW_MBIT
    with env.cluster(hosts=HOSTS, slots=1, rate_mbit=rates) as c:
        tmp = c.tmpdir
        learn = tmp / "learn"
        fleet_round(env, c, learn, "learn")
        run_pair(env, c, 1, "allreduce_bench", learn / "allreduce-node1.json", "learn node1 all_reduce")
        if env.keep_dir:
            env.keep_dir.mkdir(parents=True, exist_ok=True)
            for f in sorted(learn.iterdir()):
                (env.keep_dir / f.name).write_bytes(f.read_bytes())
        said += refusals(env, learn, tmp)
        profile = tmp / "fleet-learned.json"
        p = report(env, "baseline", learn, "-o", profile, "--min-spread-pct", MIN_SPREAD_PCT)
        assert p.returncode == 0, f"baseline: exit {p.returncode}"
        doc = json.loads(profile.read_text())
        assert doc["profile_version"] == "1.2.0", doc["profile_version"]
        fits = {f["id"]: f for f in doc["baseline"]["checks"]}
        sendrecv = [f for i, f in fits.items() if i.startswith("sendrecv-")]
        assert len(sendrecv) == 1, f"learned checks {sorted(fits)}: expected one sendrecv check"
        fit = sendrecv[0]
        slow = f"node0,node{SLOW_HOST}"
        left = [h["host"] for h in fit["left_out"]]
        assert left == [slow], f"left out {left}, expected [{slow}]"
        assert re.search(rf"^  left out: {slow} at ", p.stdout, re.M), "the summary does not name the slow host"
        healthy = {h["host"]: h["GBps"] for h in fit["hosts"] if h["host"] != slow}
        slow_GBps = [h["GBps"] for h in fit["hosts"] if h["host"] == slow][0]
        assert fit["floor_GBps"] < min(healthy.values()), f"floor {fit['floor_GBps']} above a healthy host {healthy}"
        assert fit["floor_GBps"] > slow_GBps, f"floor {fit['floor_GBps']} not above {slow} ({slow_GBps})"
        not_learned = [n["id"] for n in doc["baseline"]["not_learned"]]
        assert any(n.startswith("allreduce-") for n in not_learned), f"not learned {not_learned}: no all_reduce"
        said.append(f"baseline: floor {fit['floor_GBps']} GB/s, median {fit['centre_GBps']:.5f} of "
                    f"{fit['hosts_kept']} healthy pairs ({min(healthy.values()):.5f}..{max(healthy.values()):.5f}); "
                    f"left out {slow} at {slow_GBps:.5f}; not learned: {', '.join(not_learned)}")
        # the same profile judges each host's next run
        again = fleet_round(env, c, tmp / "judge", "judge")
        for k in again:
            p = report(env, "accept", tmp / "judge" / f"sendrecv-node{k}.json", "--profile", profile)
            want = 1 if k == SLOW_HOST else 0
            assert p.returncode == want, f"accept node0,node{k}: exit {p.returncode}, expected {want}"
            if want:
                assert f"node{k}" in p.stdout and "FAIL" in p.stdout, "the FAIL does not name the slow host"
            verdict = [line for line in p.stdout.splitlines() if re.match(r"^\d+ checks?: ", line)]
            said.append(f"accept node0,node{k}: exit {p.returncode} ({verdict[-1].strip() if verdict else '?'})")
    for line in said:
        print(line)
    print(f"PASS: baseline over {HOSTS - 1} pairs named node0,node{SLOW_HOST} left out, and accept with its profile "
          f"failed that pair alone")


TESTS = {"baseline": baseline}
