#!/usr/bin/env python3
"""Hosts made of Linux network namespaces on one machine, joined by tc-shaped veth links, with
Open MPI launched across them: the cluster test tier (DESIGN.md section 8). Needs root.

  with nscluster.Cluster(hosts=2, slots=1, rate_mbit=500) as c:
      subprocess.run(c.mpirun(2, [bench, ...]), env=c.env())

Host K is the namespace TAG-nodeK (eth0 = .K+1 of the cluster's /24) on the bridge TAGbr (.254),
where mpirun runs. Every link has a tbf on both ends (node egress and the bridge-side port).
mpirun starts each daemon through a launch agent that enters the host's network namespace and a
UTS namespace of its own named nodeK, so hostnames, session directories and results match
hosts. Every name carries the cluster's tag (PREFIX + random hex) and every process started in
it the environment variable CCBENCH_CLUSTER=TAG, so a cluster never touches what it did not
create and check-clean can prove nothing of it is left.

  nscluster.py up --hosts 2 --rate 500 [--slots 2] [--delay-ms D] [--flavour ompi5]  bring one up, print its
                                         mpirun prefix (for Open MPI 4.1's mpirun, or 5's: the bundle's)
  nscluster.py down [--tag TAG]          tear one down (default: every cluster of ours)
  nscluster.py check-clean [--tag TAG]   exit 1, listing them, when anything of ours is left
"""
import argparse
import atexit
import ipaddress
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

PREFIX = "ccbc"
TAG_VARIABLE = "CCBENCH_CLUSTER"
BURST = "16kb"  # a larger burst lets medium messages through at line rate (recipe)
GATEWAY_HOST = 254
TEARDOWN_GRACE_S = 10.0
AGENT = """#!/bin/sh
# mpirun's rsh agent for cluster {tag}: "HOST command..." runs the command on HOST, i.e. in
# the network namespace {tag}-HOST and in a UTS namespace of its own whose hostname is HOST.
host=$1
shift
ns=$host
case "$host" in
  {hosts}) ;;
{aliases}  *) echo "$0: unknown host '$host'" >&2; exit 1 ;;
esac
export {variable}={tag}
exec ip netns exec "{tag}-$ns" unshare --uts sh -c 'hostname "$1" && exec sh -c "$2"' sh "$host" "$*"
"""

# With one TCP connection per peer, ob1's rendezvous reply to the peer's message queues behind this rank's
# own bulk data, so the two directions of an exchange often run one after the other: half the link's
# rate. Sending up to 32 MiB eagerly (no reply needed) keeps both directions busy, as on a real link.
FULL_DUPLEX_MCA = {"btl_tcp_eager_limit": 32 << 20, "btl_tcp_max_send_size": 32 << 20}

# What each mpirun calls the launch options of mpirun_prefix: (the option that sets them, their names, the
# shared-memory BTL). Open MPI 4.1's ORTE reads them as MCA parameters; Open MPI 5's PRRTE as its own (--prtemca),
# its ssh launcher's agent parameter is plm_ssh_agent, and the shared-memory BTL vader is called sm.
MPIRUN_FLAVOURS = {
    "ompi4": ("--mca", {"agent": "plm_rsh_agent", "no_tree_spawn": "plm_rsh_no_tree_spawn",
                        "tmpdir": "orte_tmpdir_base", "oob_if": "oob_tcp_if_include"}, "vader"),
    "ompi5": ("--prtemca", {"agent": "plm_ssh_agent", "no_tree_spawn": "plm_ssh_no_tree_spawn",
                            "tmpdir": "prte_tmpdir_base", "oob_if": "oob_tcp_if_include"}, "sm"),
}


class Proc(NamedTuple):
    pid: int
    state: str
    cmdline: list
    environ: list

    def __str__(self):
        return f"pid {self.pid} ({self.state}) {' '.join(self.cmdline)[:160]}"


def sh(*cmd, check=True):
    """Run an ip/tc command; raise with its stderr when it fails and `check` is set."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{' '.join(map(str, cmd))}` failed ({p.returncode}): {p.stderr.strip()}")
    return p


def read_proc(pid):
    """The process `pid` as a Proc, or None when it is gone or a zombie."""
    base = pathlib.Path("/proc") / str(pid)
    try:
        state = (base / "stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = (base / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
        environ = (base / "environ").read_bytes().decode(errors="replace").split("\0")
    except (OSError, IndexError):
        return None
    return None if state in ("Z", "X") else Proc(pid, state, cmdline, environ)


def all_pids():
    return [int(p.name) for p in pathlib.Path("/proc").iterdir() if p.name.isdigit()]


def namespaces(prefix):
    names = sh("ip", "netns", "list").stdout.split()
    return [n for n in names if n.startswith(prefix)]


def links(prefix):
    """Interfaces of the root namespace whose name starts with `prefix` (bridges, veth ports)."""
    lines = sh("ip", "-o", "link", "show").stdout.splitlines()
    names = [line.split(":")[1].strip().split("@")[0] for line in lines]
    return [n for n in names if n.startswith(prefix)]


def nft_tables(prefix):
    """nftables tables of the root namespace's bridge family whose name starts with `prefix` (Cluster.lose)."""
    p = sh("nft", "list", "tables", "bridge", check=False)
    names = [line.split()[-1] for line in p.stdout.splitlines() if line.startswith("table bridge ")]
    return [n for n in names if n.startswith(prefix)]


def temp_dirs(prefix):
    return sorted(str(p) for p in pathlib.Path(tempfile.gettempdir()).glob(prefix + "*") if p.is_dir())


def processes(prefix):
    """Live processes of our clusters: inside their namespaces or marked with CCBENCH_CLUSTER."""
    pids = set()
    for ns in namespaces(prefix):
        pids.update(int(p) for p in sh("ip", "netns", "pids", ns, check=False).stdout.split())
    marker = f"{TAG_VARIABLE}={prefix}"
    found = {}
    for pid in pids.union(all_pids()):
        proc = read_proc(pid)
        if proc and (pid in pids or any(e.startswith(marker) for e in proc.environ)):
            found[pid] = proc
    return sorted(found.values())


def leftovers(prefix=PREFIX):
    """Everything of ours still there: namespaces, links, processes, temporary directories."""
    return ([f"network namespace {n}" for n in namespaces(prefix)] + [f"link {n}" for n in links(prefix)] +
            [f"process {p}" for p in processes(prefix)] + [f"directory {d}" for d in temp_dirs(prefix)] +
            [f"nftables table bridge {t}" for t in nft_tables(prefix)])


def kill_all(prefix):
    """SIGKILL every process of ours (stopped ones too) until none is left; return what was killed."""
    killed = {}
    deadline = time.monotonic() + TEARDOWN_GRACE_S
    while procs := processes(prefix):
        if time.monotonic() > deadline:
            raise RuntimeError("processes survive SIGKILL: " + "; ".join(map(str, procs)))
        for proc in procs:
            killed.setdefault(proc.pid, proc)
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return list(killed.values())


def teardown(prefix):
    """Remove everything whose name starts with `prefix`; return the processes that had to be killed."""
    killed = kill_all(prefix)
    for ns in namespaces(prefix):
        sh("ip", "netns", "del", ns)  # takes eth0, its qdiscs and the veth peer with it
    for link in links(prefix):
        sh("ip", "link", "del", link, check=False)  # a veth may vanish with its peer meanwhile
    deadline = time.monotonic() + TEARDOWN_GRACE_S
    while links(prefix):  # veth deletion is asynchronous
        if time.monotonic() > deadline:
            raise RuntimeError(f"links still there {TEARDOWN_GRACE_S:g} s after teardown: {links(prefix)}")
        time.sleep(0.05)
    for table in nft_tables(prefix):
        sh("nft", "delete", "table", "bridge", table)
    for d in temp_dirs(prefix):
        shutil.rmtree(d, ignore_errors=True)
    return killed


def free_subnet():
    """10.77.0.0/24, or the next 10.77.N.0/24 that no address or route of this machine overlaps."""
    taken = []
    for line in sh("ip", "-4", "-o", "route", "show", "table", "all").stdout.splitlines():
        dest = line.split()[0]
        if dest[0].isdigit():
            taken.append(ipaddress.ip_network(dest, strict=False))
    for line in sh("ip", "-4", "-o", "addr", "show").stdout.splitlines():
        taken.append(ipaddress.ip_interface(line.split()[3]).network)
    for n in range(256):
        net = ipaddress.ip_network(f"10.77.{n}.0/24")
        if not any(net.overlaps(t) for t in taken):
            return net
    raise RuntimeError("no free /24 in 10.77.0.0/16")


def unavailable_reason():
    """Why this machine cannot host a cluster (one line), or None when it can."""
    if os.geteuid() != 0:
        return "not root: network namespaces and tc need root"
    missing = [tool for tool in ("ip", "tc", "unshare") if not shutil.which(tool)]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install iproute2 util-linux)"
    probe = f"{PREFIX}probe{os.getpid()}"
    made = sh("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    sh("ip", "netns", "del", probe)
    return None


def qdisc_commands(tc, dev, rate_mbit, delay_ms):
    """tc commands putting a tbf (and, with a delay, a netem in front of it) on `dev`'s egress."""
    tbf = ["tbf", "rate", f"{rate_mbit}mbit", "burst", BURST, "latency", "100ms"]
    if not delay_ms:
        return [tc + ["qdisc", "add", "dev", dev, "root", *tbf]]
    return [tc + ["qdisc", "add", "dev", dev, "root", "handle", "1:", "netem", "delay", f"{delay_ms}ms"],
            tc + ["qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *tbf]]


class Cluster:
    """`hosts` namespace hosts with `slots` MPI slots each; rate_mbit is one rate or one per host."""

    _live = {}  # tag -> Cluster entered with `with`, torn down at exit or on a signal

    def __init__(self, hosts, slots, rate_mbit, delay_ms=0, mpirun="mpirun", aliases=None, flavour="ompi4"):
        assert 2 <= hosts <= 6, f"{hosts} hosts: a cluster has 2 to 6 (2 cores: more crowd them)"
        self.hosts = [f"node{k}" for k in range(hosts)]
        # a name the hostfile lists beside its host's own: the same network namespace under another hostname, as
        # one machine listed twice under two names (its own UTS namespace, so MPI takes it for another host)
        self.aliases = dict(aliases or {})
        self.slots = slots
        self.rates_mbit = list(rate_mbit) if isinstance(rate_mbit, (list, tuple)) else [rate_mbit] * hosts
        self.delay_ms = delay_ms
        self.mpirun_path = mpirun
        assert flavour in MPIRUN_FLAVOURS, f"flavour {flavour!r}: expected one of {sorted(MPIRUN_FLAVOURS)}"
        self.flavour = flavour  # which mpirun's options mpirun_prefix gives (MPIRUN_FLAVOURS)
        self.tag = PREFIX + secrets.token_hex(3)
        self.bridge = self.tag + "br"
        self.subnet = None
        self.tmpdir = None
        self.netem = None
        self.notes = []

    def describe(self):
        delay = f"delay {self.delay_ms:g} ms on receive" if self.delay_ms else "no delay"
        netem = "" if self.netem else " (no sch_netem in this kernel: delay unavailable)"
        return (f"cluster {self.tag}: {', '.join(self.hosts)} ({self.slots} slots each) on {self.subnet}, tbf "
                f"{'/'.join(map(str, self.rates_mbit))} Mbit/s burst {BURST}, {delay}{netem}")

    def namespace(self, k):
        return f"{self.tag}-{self.hosts[k]}"

    def port(self, k):
        return f"{self.tag}v{k}"

    def address(self, k):
        return self.subnet.network_address + (k + 1)

    def up(self):
        self.tmpdir = pathlib.Path(tempfile.mkdtemp(prefix=self.tag + "-"))
        self.subnet = free_subnet()
        gateway = f"{self.subnet.network_address + GATEWAY_HOST}/{self.subnet.prefixlen}"
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        sh("ip", "addr", "add", gateway, "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for k in range(len(self.hosts)):
            self.add_host(k)
        self.netem = self.probe_netem()
        if self.delay_ms and not self.netem:
            self.notes.append(f"delay {self.delay_ms} ms unavailable: this kernel has no sch_netem; links not delayed")
            self.delay_ms = 0
        for k, rate in enumerate(self.rates_mbit):
            self.shape(k, rate, self.delay_ms)
        self.write_launch_files()
        return self

    def add_host(self, k):
        ns = self.namespace(k)
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", self.port(k), "type", "veth", "peer", "name", "eth0", "netns", ns)
        sh("ip", "link", "set", self.port(k), "master", self.bridge, "up")
        sh("ip", "-n", ns, "addr", "add", f"{self.address(k)}/{self.subnet.prefixlen}", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")

    def probe_netem(self):
        tc = ["tc", "-n", self.namespace(0), "qdisc"]
        if sh(*tc, "add", "dev", "lo", "root", "netem", "delay", "1ms", check=False).returncode != 0:
            return False
        sh(*tc, "del", "dev", "lo", "root")
        return True

    def shape(self, k, rate_mbit, delay_ms=0):
        """(Re)shape host k's link: `rate_mbit` both ways; `delay_ms` on the bridge side, i.e. on receive."""
        assert not delay_ms or self.netem, "delay needs sch_netem, which this kernel lacks"
        ends = [(["tc", "-n", self.namespace(k)], "eth0", 0), (["tc"], self.port(k), delay_ms)]
        for tc, dev, delay in ends:
            sh(*tc, "qdisc", "del", "dev", dev, "root", check=False)  # none yet on a fresh link
            for cmd in qdisc_commands(tc, dev, rate_mbit, delay):
                sh(*cmd)
        self.rates_mbit[k] = rate_mbit

    def lose(self, k, percent):
        """Drop `percent` of host k's outgoing TCP packets where they reach the bridge (its cable's far end), after
        its TCP stack sent them: TCP retransmits them, as over a lossy cable. An nftables table of the bridge
        family, named after the cluster, removed with it. (A netfilter DROP in k's own OUTPUT chain does not do
        that: TCP gets the refusal back and sends the segment again without counting a retransmission: 321
        packets dropped, RetransSegs +1, in one run here; and this kernel has no sch_netem or act_gact.)"""
        table = self.tag + "loss"
        sh("nft", "add", "table", "bridge", table)
        sh("nft", "add", "chain", "bridge", table, "forward", "{ type filter hook forward priority 0 ; }")
        sh("nft", "add", "rule", "bridge", table, "forward", "iifname", self.port(k), "ip", "protocol", "tcp",
           "numgen", "random", "mod", str(round(100 / percent)), "0", "drop")

    def shape_path(self, k, j, rate_mbit):
        """Slow only the path between hosts k and j to `rate_mbit`, both ways: on k's egress an htb class for
        packets to j, on the bridge port towards k one for packets from j; all else keeps k's rate."""
        peer = str(self.address(j))
        ends = [(["tc", "-n", self.namespace(k)], "eth0", "dst"), (["tc"], self.port(k), "src")]
        for tc, dev, direction in ends:
            sh(*tc, "qdisc", "del", "dev", dev, "root", check=False)
            sh(*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10", "r2q", "100")
            for classid, rate in (("1:10", self.rates_mbit[k]), ("1:20", rate_mbit)):
                sh(*tc, "class", "add", "dev", dev, "parent", "1:", "classid", classid, "htb", "rate", f"{rate}mbit",
                   "ceil", f"{rate}mbit", "burst", BURST)
            sh(*tc, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip",
               direction, f"{peer}/32", "flowid", "1:20")

    def shape_all(self, rate_mbit, delay_ms=0):
        for k in range(len(self.hosts)):
            self.shape(k, rate_mbit, delay_ms)

    def write_launch_files(self):
        agent = self.tmpdir / "launch-agent"
        aliases = "".join(f"  {alias}) ns={host} ;;\n" for alias, host in self.aliases.items())
        agent.write_text(AGENT.format(tag=self.tag, hosts="|".join(self.hosts), aliases=aliases, variable=TAG_VARIABLE))
        agent.chmod(0o755)
        (self.tmpdir / "hostfile").write_text("".join(f"{h} slots={self.slots}\n" for h in [*self.hosts, *self.aliases]))
        (self.tmpdir / "orte").mkdir()

    def mpirun_prefix(self, flavour=None):
        """mpirun and the options that launch across this cluster; append -np, -x, the program. `flavour` (default:
        the cluster's): "ompi4", Open MPI 4.1's mpirun (ORTE, as Debian ships it); "ompi5", Open MPI 5's (PRRTE:
        the launch options are PRRTE's, given with --prtemca; the bundle's, scripts/make-bundle.sh)."""
        flavour = flavour or self.flavour
        launch = {  # the daemons: started through the agent, all from the root namespace, talking on the cluster
            "agent": self.tmpdir / "launch-agent",
            "no_tree_spawn": 1,  # mpirun launches every daemon from the root namespace
            "tmpdir": self.tmpdir / "orte",
            "oob_if": self.subnet,
        }
        option, names, shm = MPIRUN_FLAVOURS[flavour]
        mpi = {  # the ranks
            "btl_tcp_if_include": self.subnet,
            "btl": f"tcp,{shm},self",
            "pml": "ob1",
            "mpi_yield_when_idle": 1,
        }
        cmd = [self.mpirun_path, "--hostfile", str(self.tmpdir / "hostfile"), "--bind-to", "none"]
        for key, value in launch.items():
            cmd += [option, names[key], str(value)]
        for key, value in mpi.items():
            cmd += ["--mca", key, str(value)]
        return cmd

    def mpirun(self, np, program, exports=(), mca=None):
        """The full command: `np` ranks (by slot: node0 first) of `program`, each under nice -n 19, with the
        environment variables `exports` passed on and the extra MCA parameters `mca`."""
        options = [arg for name in exports for arg in ("-x", name)]
        options += [arg for key, value in (mca or {}).items() for arg in ("--mca", key, str(value))]
        return self.mpirun_prefix() + ["-np", str(np), *options, "nice", "-n", "19", *map(str, program)]

    def env(self, **extra):
        return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    **{TAG_VARIABLE: self.tag}, **extra)

    def processes(self):
        return processes(self.tag)

    def down(self):
        """Tear everything down (idempotent); return the processes that were still running."""
        Cluster._live.pop(self.tag, None)
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
        try:
            return teardown(self.tag)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def __enter__(self):
        install_guards()
        Cluster._live[self.tag] = self
        try:
            return self.up()
        except BaseException:
            self.down()
            raise

    def __exit__(self, *exc):
        self.down()


def down_live_clusters():
    for cluster in list(Cluster._live.values()):
        cluster.down()


def exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)  # unwinds through the `with` blocks, which tear down


def install_guards():
    """Tear clusters down at interpreter exit and turn SIGTERM/SIGHUP into an unwinding exit."""
    if getattr(install_guards, "done", False):
        return
    atexit.register(down_live_clusters)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    install_guards.done = True


def cli_up(args):
    rates = [int(r) for r in args.rate.split(",")]
    cluster = Cluster(args.hosts, args.slots, rates if len(rates) > 1 else rates[0], args.delay_ms, args.mpirun,
                      flavour=args.flavour)
    try:
        cluster.up()
    except BaseException:
        cluster.down()
        raise
    for note in cluster.notes:
        print(f"note: {note}")
    print(cluster.describe())
    print(f"run as: env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 {TAG_VARIABLE}={cluster.tag} "
          + " ".join(cluster.mpirun_prefix()) + " -np N PROGRAM")
    print(f"remove with: {sys.argv[0]} down --tag {cluster.tag}")
    return 0


def cli_down(args):
    for proc in teardown(args.tag):
        print(f"killed {proc}")
    return 0


def cli_check_clean(args):
    left = leftovers(args.tag)
    for item in left:
        print(f"left behind: {item}")
    if not left:
        print(f"clean: nothing named {args.tag}* is left")
    return 1 if left else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    up = sub.add_parser("up")
    up.add_argument("--hosts", type=int, default=2)
    up.add_argument("--slots", type=int, default=1)
    up.add_argument("--rate", default="500", help="Mbit/s, one for every host or a comma-separated list")
    up.add_argument("--delay-ms", type=float, default=0)
    up.add_argument("--mpirun", default="mpirun")
    up.add_argument("--flavour", choices=sorted(MPIRUN_FLAVOURS), default="ompi4",
                    help="whose options the printed prefix has: Open MPI 4.1's (ompi4, default) or 5's (ompi5, PRRTE)")
    for name in ("down", "check-clean"):
        sub.add_parser(name).add_argument("--tag", default=PREFIX, help=f"a cluster's tag (default: all, {PREFIX}*)")
    args = parser.parse_args()
    if args.what == "up" and (reason := unavailable_reason()):
        print(f"cannot bring a cluster up: {reason}", file=sys.stderr)
        return 1
    return {"up": cli_up, "down": cli_down, "check-clean": cli_check_clean}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
