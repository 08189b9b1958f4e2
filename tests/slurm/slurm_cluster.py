#!/usr/bin/env python3
"""A real Slurm cluster on this machine, for testing the sbatch scripts (Debian 12's slurm-wlm
22.05 and munge 0.5.15, Open MPI 4.1 with PMIx; no systemd needed). Needs root.

Everything lives under one private temporary directory, /tmp/ccbench-slurm-ID: a munge key,
socket, PID, seed and log file of our own munged; slurm.conf; slurmctld; and one slurmd per node
(n1, n2, ...), each with its own spool and TmpFS directory (two pmix plugins on one machine collide
without). Each node is a host of its own, as on a real cluster: its slurmd (and so every step of
its jobs) runs in a network namespace of its own, ccbsID-n1, whose eth0 has the node's address,
.1, .2, ... of a free 10.78.N.0/24, joined by a veth pair to the bridge ccbsIDb (.254) in the root
namespace, where slurmctld, munged and the clients run; and in a UTS namespace of its own whose
hostname is the node's name (Open MPI decides from the hostname which ranks share memory). Open
MPI's TCP traffic between the nodes goes over that link (btl/tcp leaves out lo by default).
munged's socket is a file, which the nodes share: each has a mount namespace of its own, but only for a /sys that
is its network namespace's (its own eth0, so its own machine id); every other mount is the root's.
mpi.conf sets PMIxCollFence=ring: Slurm 22.05's default runs a fence without data as a tree, which
with fewer nodes than TreeWidth (50) is no barrier at all, and Open MPI 4.1 relies on one at the
end of MPI_Init (see _write_conf). Clients need only SLURM_CONF (see env()).

    with SlurmCluster(nodes=2) as cluster:
        subprocess.run(["srun", "-N2", "hostname"], env=cluster.env())

Teardown, also after a failure or SIGTERM: scancel every job, stop slurmd, slurmctld and munged
by their PID files (never by name), then check that no process of ours is left (the daemons and
clients carry CCBENCH_SLURM_CLUSTER=<dir> in their environment, slurmstepd and the jobs'
processes our SLURM_CONF; whatever runs in a node's namespace is ours too), delete the namespaces
and the bridge (the veths go with them), check that no namespace or link named ccbsID is left and
remove the directory. Teardown raises ClusterError when something survived (and kills it, by PID).
The daemons run in their own session, so that a signal to the test's process group reaches the
test alone; they get SIGTERM should the test die unannounced (PR_SET_PDEATHSIG), which leaves the
directory and the network behind: the next cluster removes them (reap_stale).

As a script: `slurm_cluster.py [--nodes N] [-- COMMAND...]` brings a cluster up, runs COMMAND
with SLURM_CONF set (default: srun on every node, printing the hostnames), and tears it down.

The machine's side (the directory, the network, the processes of a cluster and their removal, reap_stale) is in
slurm_host.py.
"""
import argparse
import fcntl
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from slurm_host import (MARKER, ClusterError, _die_with_parent, _free_ports, _ip, _pid_alive, _tool, free_subnet,
                        make_dir, missing_prerequisites, net_tag, processes_of, reap_stale, remove_network)

GATEWAY_HOST = 254  # the bridge's address in the subnet: slurmctld's
SLURMD_PORT = 6818  # every node has its own network namespace, so all take slurmd's usual port


class SlurmCluster:
    def __init__(self, nodes=2, cpus=8, log=print):
        self.node_names = [f"n{i + 1}" for i in range(nodes)]
        self.cpus = cpus
        self.log = log
        self.dir = None
        self.conf = None
        self.subnet = None
        self.bridge = None
        self._procs = {}  # name -> (Popen, pid file)

    # ---- public -------------------------------------------------------------------------------
    def env(self, extra=None):
        """The environment for clients (sbatch, srun, squeue, ...) of this cluster."""
        env = dict(os.environ, SLURM_CONF=str(self.conf), **{MARKER: str(self.dir)})
        for k in [k for k in env if k.startswith("SLURM_") and k != "SLURM_CONF"]:
            del env[k]  # a test started inside another Slurm job must not talk to that one
        env.update(extra or {})
        return env

    def run(self, cmd, timeout=30, check=True, env=None):
        p = subprocess.run(cmd, env=env or self.env(), capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise ClusterError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip() or p.stdout.strip()}")
        return p

    def start(self):
        problem = missing_prerequisites()
        if problem:
            raise ClusterError(problem)
        t0 = time.monotonic()
        reap_stale(self.log)
        self.dir = make_dir()
        self.dir.chmod(0o755)  # munged: "execute permissions for all required" on the socket's directories
        for sub in ["log", "run", "state", "work", *(f"spool/{n}" for n in self.node_names),
                    *(f"tmp/{n}" for n in self.node_names)]:
            (self.dir / sub).mkdir(parents=True)
        self._start_network()
        self._start_munge()
        self._write_conf()
        self._spawn("slurmctld", [_tool("slurmctld"), "-D", "-i", "-f", str(self.conf)],
                    self.dir / "run/slurmctld.pid")
        self._wait("slurmctld answers", lambda: self.run(["scontrol", "ping"], check=False).returncode == 0, 20)
        for node in self.node_names:
            # The node's network namespace, and a mount namespace of its own whose /sys is that network
            # namespace's (as `ip netns exec` makes it): the node sees its own eth0 in /sys/class/net, so its
            # machine id (the hash of its interfaces' MACs) is its own, as a host's is, and --all-pairs does not
            # take two nodes for one machine. The cgroup tree is carried over onto the new /sys (slurmd needs it);
            # every other mount is the root's (munged's socket, the directory). A UTS namespace named after the
            # node. nsenter execs unshare, unshare sh, sh slurmd: the Popen pid is slurmd's (and the PID file's).
            cgroup = self.dir / f"run/cgroup-{node}"
            setup = (f'set -e; mkdir -p {cgroup}; mount --rbind /sys/fs/cgroup {cgroup}; mount -t sysfs sysfs /sys; '
                     f'mount --rbind {cgroup} /sys/fs/cgroup; umount -l {cgroup}; hostname {node}; exec "$0" "$@"')
            cmd = ["nsenter", f"--net=/run/netns/{self.namespace(node)}", "unshare", "--mount", "--uts", "sh", "-c",
                   setup, _tool("slurmd"), "-D", "-N", node, "-f", str(self.conf)]
            self._spawn(f"slurmd-{node}", cmd, self.dir / f"run/slurmd-{node}.pid")
        self._wait("every node idle", self._all_idle, 30)
        nodes = ", ".join(f"{n} ({self.address(k)})" for k, n in enumerate(self.node_names))
        self.log(f"slurm cluster up in {time.monotonic() - t0:.1f} s: nodes {nodes}, slurmctld on {self.bridge} "
                 f"({self.gateway()}), SLURM_CONF={self.conf}")
        return self

    def namespace(self, node):
        return f"{net_tag(self.dir)}-{node}"

    def address(self, k):
        """Node k's address (k = 0 for n1)."""
        return self.subnet.network_address + k + 1

    def gateway(self):
        """The bridge's address, slurmctld's."""
        return self.subnet.network_address + GATEWAY_HOST

    def stop(self):
        """Cancels the jobs, stops the daemons, checks nothing is left, removes the network and the directory.
        SIGTERM and SIGINT wait until it is done."""
        if self.dir is None:
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGINT])
        try:
            self._stop()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _stop(self):
        problems = []
        if "slurmctld" in self._procs and _pid_alive(self._procs["slurmctld"][0].pid):
            problems += self._cancel_jobs()
        for name in [f"slurmd-{n}" for n in self.node_names] + ["slurmctld", "munged"]:
            if name in self._procs:
                problems += self._stop_daemon(name)
        deadline = time.monotonic() + 10  # a slurmstepd may still be on its way out
        while (survivors := self._processes_of_ours()) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid, cmd in survivors:
            problems.append(f"process {pid} ({cmd}) survived the teardown; killed")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        problems += remove_network(net_tag(self.dir))
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.dir.exists():
            problems.append(f"{self.dir} could not be removed")
        left = self.dir
        self.dir = None
        if problems:
            raise ClusterError("teardown: " + "; ".join(problems))
        self.log(f"slurm cluster down: daemons stopped, no process left, network {net_tag(left)}* and {left} removed")

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self._stop_after_failure()
            raise

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.stop()
        else:
            self._stop_after_failure()
        return False

    def logs(self, tail=40):
        """The last lines of every daemon log, for a failure message."""
        out = []
        for path in sorted((self.dir / "log").glob("*")) if self.dir else []:
            lines = path.read_text(errors="replace").splitlines()[-tail:]
            out.append(f"--- {path.name} ---\n" + "\n".join(lines))
        return "\n".join(out)

    # ---- set-up -------------------------------------------------------------------------------
    def _start_network(self):
        """The bridge (slurmctld's address) and, for every node, its namespace with eth0 on a veth into the
        bridge. No default route and no NAT: the nodes reach the bridge's subnet only."""
        tag = net_tag(self.dir)
        self.bridge = tag + "b"
        # Chosen and taken (the bridge's address) under a lock: another cluster starting meanwhile picks the next.
        with open(pathlib.Path(tempfile.gettempdir()) / "ccbench-slurm.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = free_subnet()
            _ip("link", "add", self.bridge, "type", "bridge")
            _ip("addr", "add", f"{self.gateway()}/{self.subnet.prefixlen}", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for k, node in enumerate(self.node_names):
            ns, port = self.namespace(node), f"{tag}v{k + 1}"
            _ip("netns", "add", ns)
            _ip("link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", port, "master", self.bridge, "up")
            _ip("-n", ns, "addr", "add", f"{self.address(k)}/{self.subnet.prefixlen}", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")

    def _start_munge(self):
        key = self.dir / "munge.key"
        subprocess.run([_tool("mungekey"), "-c", "-k", str(key)], check=True, capture_output=True, timeout=20)
        self.socket = self.dir / "run/munge.socket"
        self._spawn("munged", [_tool("munged"), "-F", f"--key-file={key}", f"--socket={self.socket}",
                               f"--pid-file={self.dir / 'run/munged.pid'}", f"--log-file={self.dir / 'log/munged.log'}",
                               f"--seed-file={self.dir / 'state/munged.seed'}"], self.dir / "run/munged.pid")
        self._wait("munged answers", self._munge_ok, 10)

    def _munge_ok(self):
        if not self.socket.exists():
            return False
        cred = subprocess.run(["munge", "-n", "-S", str(self.socket)], capture_output=True, timeout=10)
        if cred.returncode != 0:
            return False
        return subprocess.run(["unmunge", "-S", str(self.socket)], input=cred.stdout, capture_output=True,
                              timeout=10).returncode == 0

    def _write_conf(self):
        d = self.dir
        user = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
        ctld_port, = _free_ports(1)
        host = socket.gethostname().split(".")[0]
        lines = [
            "ClusterName=ccbench-test",
            f"SlurmctldHost={host}({self.gateway()})",
            f"SlurmctldPort={ctld_port}",
            f"SlurmUser={user}",
            f"SlurmdUser={user}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={d}/state",
            f"SlurmctldPidFile={d}/run/slurmctld.pid",
            f"SlurmdPidFile={d}/run/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log",
            f"SlurmdLogFile={d}/log/slurmd-%n.log",
            f"SlurmdSpoolDir={d}/spool/%n",
            f"TmpFS={d}/tmp/%n",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/builtin",
            "MpiDefault=pmix",
            "SlurmdParameters=config_overrides",
            "EnforcePartLimits=ALL",
            "ReturnToService=2",
            "MailProg=/bin/true",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "KillWait=5",
            "MinJobAge=300",
        ]
        for k, node in enumerate(self.node_names):
            lines.append(f"NodeName={node} NodeHostname={node} NodeAddr={self.address(k)} Port={SLURMD_PORT} "
                         f"CPUs={self.cpus} State=UNKNOWN")
        lines.append(f"PartitionName=test Nodes={','.join(self.node_names)} Default=YES MaxTime=INFINITE State=UP")
        self.conf = d / "slurm.conf"
        self.conf.write_text("\n".join(lines) + "\n")
        # Slurm 22.05's mpi/pmix runs a fence that collects no data (Open MPI 4.1's barrier at the end of MPI_Init)
        # as a tree of TreeWidth (default 50): with fewer nodes than that there is no tree (reverse_tree_info) and
        # each node completes the fence alone. Then a node whose modex fence ended first leaves MPI_Init and sends to
        # ranks still in theirs, whose btl/tcp calls ob1's not yet registered callback: SIGSEGV at address 0. The
        # ring collective is a real barrier at any node count.
        (d / "mpi.conf").write_text("PMIxCollFence=ring\n")

    def _spawn(self, name, cmd, pid_file):
        log = open(self.dir / f"log/{name}.stderr", "wb")
        env = dict(os.environ, **{MARKER: str(self.dir)})
        if self.conf:
            env["SLURM_CONF"] = str(self.conf)
        # Its own session: a Ctrl-C, or timeout(1) signalling its process group, reaches the test
        # alone, which then tears the cluster down in order (scancel needs slurmctld alive).
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=self.dir, start_new_session=True, preexec_fn=_die_with_parent)
        log.close()
        self._procs[name] = (proc, pid_file)

    def _wait(self, what, ready, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [n for n, (p, _) in self._procs.items() if p.poll() is not None]
            if dead:
                raise ClusterError(f"{', '.join(dead)} exited while waiting for {what}\n{self.logs()}")
            if ready():
                return
            time.sleep(0.1)
        raise ClusterError(f"timed out after {timeout} s waiting for {what}\n{self.logs()}")

    def _all_idle(self):
        p = self.run(["sinfo", "-h", "-N", "-o", "%N %T"], check=False)
        states = dict(line.split() for line in p.stdout.splitlines() if line.strip())
        return p.returncode == 0 and all(states.get(n) == "idle" for n in self.node_names)

    # ---- teardown -----------------------------------------------------------------------------
    def _cancel_jobs(self):
        problems = []
        try:
            jobs = self.run(["squeue", "-h", "-o", "%i"], timeout=15).stdout.split()
            if jobs:
                self.run(["scancel", *jobs], timeout=15, check=False)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and self.run(["squeue", "-h", "-o", "%i"], timeout=15).stdout.split():
                    time.sleep(0.2)
        except (ClusterError, subprocess.TimeoutExpired) as e:
            problems.append(f"scancel: {e}")
        return problems

    def _stop_daemon(self, name, timeout=15):
        proc, pid_file = self._procs.pop(name)
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pid = proc.pid  # it died or never wrote one: the process we started is the one to stop
        problems = []
        if pid != proc.pid:
            problems.append(f"{name}: PID file says {pid}, we started {proc.pid}")
        for target in {pid, proc.pid}:
            try:
                os.kill(target, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            problems.append(f"{name} (pid {proc.pid}) ignored SIGTERM for {timeout} s; killed")
            proc.kill()
            proc.wait(timeout=5)
        return problems

    def _processes_of_ours(self):
        return processes_of(self.dir)

    def _stop_after_failure(self):
        try:
            self.stop()
        except ClusterError as e:
            print(f"slurm_cluster: {e}", file=sys.stderr)


def raise_on_sigterm():
    """CTest and timeout(1) end a test with SIGTERM: turn it into an exception so teardown runs."""
    def handler(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("command", nargs="*", help="run this with SLURM_CONF set (after --)")
    args = parser.parse_args()
    problem = missing_prerequisites()
    if problem:
        print(f"SKIPPED: {problem}")
        return 77
    raise_on_sigterm()
    with SlurmCluster(nodes=args.nodes) as cluster:
        cmd = args.command or ["timeout", "60", "srun", f"-N{args.nodes}", f"--ntasks-per-node=1", "hostname"]
        print("$", " ".join(cmd), flush=True)
        rc = subprocess.run(cmd, env=cluster.env(), cwd=cluster.dir / "work").returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())
