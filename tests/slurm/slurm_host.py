"""What a Slurm test cluster (tests/slurm/slurm_cluster.py) takes on this machine, and how it is found and removed by
name: its directory /tmp/ccbench-slurm-ID, its network (the namespaces ccbsID-n1, ..., the bridge ccbsIDb and their
10.78.N.0/24), its processes (CCBENCH_SLURM_CLUSTER or its SLURM_CONF in their environment, or in a node's
namespace), and what a test killed without a teardown left (reap_stale); the prerequisites, the daemons' tools, free
ports and their death with the test.
"""
import ctypes
import ipaddress
import os
import pathlib
import random
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

MARKER = "CCBENCH_SLURM_CLUSTER"
DAEMONS = ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo",
           "unshare", "nsenter", "ip"]
DIR_PREFIX = "ccbench-slurm-"  # + the cluster's ID, ID_LEN hex digits
ID_LEN = 8
NET_PREFIX = "ccbs"  # + the ID: namespaces ccbsID-n1, bridge ccbsIDb, veths ccbsIDv1 (the cluster tier's are ccbc*)
SUBNETS = "10.78"  # 10.78.N.0/24, the first free one (the cluster tier takes 10.77.N.0/24)
NET_GRACE_S = 10.0  # veth deletion is asynchronous


class ClusterError(RuntimeError):
    pass


def missing_prerequisites():
    """One line naming what this machine lacks to run a cluster, or None."""
    if os.geteuid() != 0:
        return "not root (slurmd, and the nodes' network and UTS namespaces, need root)"
    missing = [d for d in DAEMONS if shutil.which(d) is None and not os.path.exists(f"/usr/sbin/{d}")]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install --no-install-recommends slurm-wlm munge iproute2)"
    return None


def _tool(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def _ip(*args, check=True):
    p = subprocess.run(["ip", *map(str, args)], capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise ClusterError(f"ip {' '.join(map(str, args))}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def make_dir():
    """A new cluster directory, /tmp/ccbench-slurm-ID (as mkdtemp makes one: mode 0700, never an existing one)."""
    while True:
        d = pathlib.Path(tempfile.gettempdir()) / (DIR_PREFIX + secrets.token_hex(ID_LEN // 2))
        try:
            d.mkdir(mode=0o700)
            return d
        except FileExistsError:
            continue


def net_tag(cluster_dir):
    """The prefix of the network names of the cluster in cluster_dir: ccbs + the directory's ID."""
    return NET_PREFIX + pathlib.Path(cluster_dir).name[len(DIR_PREFIX):]


def namespaces(prefix):
    names = [line.split()[0] for line in _ip("netns", "list").stdout.splitlines() if line.strip()]
    return [n for n in names if n.startswith(prefix)]


def links(prefix):
    """Interfaces of the root namespace whose name starts with prefix (the bridge, the veths' bridge ends)."""
    names = [line.split(":")[1].strip().split("@")[0] for line in _ip("-o", "link", "show").stdout.splitlines()]
    return [n for n in names if n.startswith(prefix)]


def namespace_pids(prefix):
    return [int(p) for ns in namespaces(prefix) for p in _ip("netns", "pids", ns, check=False).stdout.split()]


def free_subnet():
    """10.78.0.0/24, or the next 10.78.N.0/24 that no address or route of this machine overlaps (as the
    cluster tier's nscluster.free_subnet() picks in 10.77)."""
    taken = [ipaddress.ip_interface(line.split()[3]).network
             for line in _ip("-4", "-o", "addr", "show").stdout.splitlines()]
    for line in _ip("-4", "-o", "route", "show", "table", "all").stdout.splitlines():
        if line.split()[0][0].isdigit():
            taken.append(ipaddress.ip_network(line.split()[0], strict=False))
    for n in range(256):
        net = ipaddress.ip_network(f"{SUBNETS}.{n}.0/24")
        if not any(net.overlaps(t) for t in taken):
            return net
    raise ClusterError(f"no free /24 in {SUBNETS}.0.0/16")


def remove_network(prefix):
    """Kills what runs in the namespaces named prefix*, deletes them (their eth0 and the veth peer go with
    them) and the links named prefix*, and waits until none is left; returns the problems, [] when none."""
    deadline = time.monotonic() + NET_GRACE_S
    while pids := [p for p in namespace_pids(prefix) if _pid_alive(p)]:
        if time.monotonic() > deadline:
            return [f"processes {pids} in the namespaces {prefix}* survive SIGKILL"]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    for ns in namespaces(prefix):
        _ip("netns", "del", ns, check=False)
    for link in links(prefix):
        _ip("link", "del", link, check=False)  # a veth may vanish with its peer meanwhile
    while (left := [f"network namespace {n}" for n in namespaces(prefix)] + [f"link {n}" for n in links(prefix)]) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    return [f"{', '.join(left)} still there {NET_GRACE_S:g} s after the teardown"] if left else []


def _free_ports(n):
    """n ports free now in the root namespace, below the kernel's ephemeral range: a port bind(0) hands
    out could be taken by any outgoing connection (slurmctld pinging a node) before our daemon binds it."""
    try:
        low = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    ports = []
    for port in random.sample(range(10000, max(low, 10000 + 10 * n)), 10 * n):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("", port))  # slurmctld listens on every address
            except OSError:
                continue
        ports.append(port)
        if len(ports) == n:
            return ports
    raise ClusterError(f"no {n} free TCP ports found below {low}")


def _die_with_parent():
    """preexec_fn: SIGTERM the daemon when the test process dies, even by SIGKILL (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def _pid_alive(pid):
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] != "Z"


def processes_of(cluster_dir):
    """(pid, command) of every live process of the cluster in cluster_dir: the daemons and whatever
    a client started carry our marker in their environment; slurmd gives slurmstepd and the job's
    processes an environment of its own, with our SLURM_CONF in it."""
    needles = {f"{MARKER}={cluster_dir}".encode(), f"SLURM_CONF={cluster_dir}/slurm.conf".encode()}
    in_namespaces = set(namespace_pids(net_tag(cluster_dir) + "-"))
    found = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            if (not needles & set((proc / "environ").read_bytes().split(b"\0")) and str(cluster_dir) not in cmd
                    and int(proc.name) not in in_namespaces):
                continue
        except OSError:
            continue
        if _pid_alive(int(proc.name)):
            found.append((int(proc.name), cmd))
    return found


def reap_stale(log=print, min_age_s=120):
    """Removes what a test killed without a chance to tear down (SIGKILL) left: a cluster directory
    older than min_age_s (one starting up has no PID files yet) none of whose daemons is alive (they
    got SIGTERM from PR_SET_PDEATHSIG and removed their PID files), the processes its jobs left
    running, killed by PID, and its network; and any network of ours whose directory is gone (a
    cluster makes its directory before its network and removes it after)."""
    tmp = pathlib.Path(tempfile.gettempdir())
    for d in tmp.glob(DIR_PREFIX + "*"):
        try:
            pid_files = list((d / "run").glob("*.pid"))
            pids = [int(f.read_text().split()[0]) for f in pid_files]
            stale = time.time() - d.stat().st_mtime > min_age_s and not any(map(_pid_alive, pids))
        except (OSError, ValueError, IndexError):
            continue
        if not stale:
            continue
        left = processes_of(d)
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        problems = remove_network(net_tag(d))
        shutil.rmtree(d, ignore_errors=True)
        log(f"slurm_cluster: removed {d}, left by a test that was killed, {len(left)} processes of its jobs "
            f"and its network{': ' + '; '.join(problems) if problems else ''}")
    tags = {name[:len(NET_PREFIX) + ID_LEN] for name in namespaces(NET_PREFIX) + links(NET_PREFIX)}
    for tag in sorted(tags):
        if not (tmp / (DIR_PREFIX + tag[len(NET_PREFIX):])).exists():
            problems = remove_network(tag)
            log(f"slurm_cluster: removed the network {tag}*, left by a test that was killed"
                f"{': ' + '; '.join(problems) if problems else ''}")
