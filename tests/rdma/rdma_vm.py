#!/usr/bin/env python3
"""A small Linux guest under QEMU with Soft-RoCE (rdma_rxe on lo) for the rdma test tier (DESIGN.md section 8).

The guest kernel is Debian's own linux-image package, resolved afresh every run, downloaded once into a cache
and only unpacked (never installed on this machine). The initramfs holds busybox, the rxe modules, the host's
perftest, iproute2 `rdma`/`ip` and rxe verbs provider with their shared libraries, plus whatever the caller
adds (programs come with their ldd closure). /init loads the modules, brings up lo and rxe0 (GID index 1 is
::ffff:127.0.0.1), runs the guest script under `timeout` and powers off. With `-nic none` the serial console
is the only channel: step outputs and fetched files come back base64-encoded between markers.

  results = rdma_vm.run_steps([rdma_vm.Step("hello", "ibv_devices; rdma link", 30)], fetch=["/tmp/x.json"])

Software emulation (TCG) by default: the recipe found /dev/kvm here unable to boot a stock kernel. Set
CCBENCH_RDMA_VM_ACCEL=kvm where it works. Cache: $CCBENCH_RDMA_VM_CACHE, else ~/.cache/ccbench/rdma-vm.

  rdma_vm.py check                      exit 77 with the reason when this machine cannot run the guest
  rdma_vm.py run [--extra P]... [--fetch GUEST_PATH --to DIR] -- 'shell command'   one step in a fresh guest
  rdma_vm.py check-clean [--tag TAG]    exit 1, listing them, when a qemu or temp dir of ours is left
"""
import argparse
import base64
import ctypes
import dataclasses
import functools
import gzip
import hashlib
import os
import pathlib
import re
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
PREFIX = "ccbrdma"
TAG_VARIABLE = "CCBENCH_RDMA_VM"  # in the environment of every qemu we start: check-clean finds them by it
# crc32_generic first: rxe's ICRC needs it (recipe); dummy: a link that stays down, for a port that is not ACTIVE
MODULES = ["crc32_generic", "rdma_rxe", "ib_uverbs", "dummy"]
HOST_PROGRAMS = ["ib_write_bw", "ib_write_lat", "rdma", "ip"]
OPTIONAL_PROGRAMS = ["ibv_devices", "ibv_devinfo"]  # ibverbs-utils, handy for looking around in the guest
RXE_PROVIDER = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
HOST_FILES = [RXE_PROVIDER, "/etc/libibverbs.d/rxe.driver",
              "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1"]  # glibc dlopens libgcc_s at thread exit; ldd omits it
TOOLS = {"qemu-system-x86_64": "qemu-system-x86", "busybox": "busybox-static", "ib_write_bw": "perftest",
         "rdma": "iproute2", "ip": "iproute2", "modprobe": "kmod",
         "depmod": "kmod", "dpkg": "dpkg", "apt-get": "apt", "apt-cache": "apt", "ldd": "libc-bin"}
GUEST_DIR = "/etc/ccbench-vm"
PR_SET_PDEATHSIG = 1
BOOT_ALLOWANCE_S = 60  # qemu start to the guest script (9-15 s on a loaded 2-core host)
NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")
PATH_RE = re.compile(r"^/[A-Za-z0-9_.+/-]+$")
TREE_SKIP = re.compile(r"\.(a|la|h)$|^(include|pkgconfig)$")  # in directories copied in: build-time files
B64_RE = re.compile(r"^[A-Za-z0-9+/=]+$")
BOOT_ERROR_RE = re.compile(r"Initramfs unpacking failed|Kernel panic|@@\S+ init-failed|host: qemu killed")


class Unavailable(Exception):
    """This machine cannot run the guest; the message is one line saying why (the test exits 77)."""


@dataclasses.dataclass
class Step:
    name: str  # letters, digits, ._+-
    command: str  # shell text, run by busybox sh with the guest helpers (wait_listen) defined
    timeout_s: int = 60


@dataclasses.dataclass
class StepResult:
    name: str
    rc: int  # 137 when the guest's `timeout -s KILL` ended it
    output: str
    elapsed_s: float  # measured inside the guest


@dataclasses.dataclass
class RunResult:
    exit_code: int  # the guest script's, or None when the guest never reported one
    steps: dict  # name -> StepResult, in order
    files: dict  # guest path -> bytes, for every fetched file that existed
    console: str
    timings: dict  # image_s, image_MiB, boot_s (qemu start to ready; nan if never), run_s (qemu start to exit)
    tag: str  # names the temp dir and marks the qemu process: leftovers(tag) must be empty after the run
    kernel: str = ""
    errors: list = dataclasses.field(default_factory=list)  # console lines telling of a broken boot


def log(msg):
    print(f"rdma-vm: {msg}", flush=True)


def cache_dir_default():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(os.environ.get("CCBENCH_RDMA_VM_CACHE") or os.path.join(base, "ccbench", "rdma-vm"))


def sh(*cmd, cwd=None, check=True):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{' '.join(map(str, cmd))}` failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return p


# ---- availability and the guest kernel ----------------------------------------------------------------------


def unavailable_reason():
    """Why this machine cannot run the guest (one line), or None. The kernel download is checked by kernel()."""
    if not shutil.which("dpkg") or sh("dpkg", "--print-architecture", check=False).stdout.strip() != "amd64":
        return "not a Debian amd64 host: the guest is built from this machine's own packages and files"
    missing = sorted({pkg for tool, pkg in TOOLS.items() if not shutil.which(tool)})
    missing += [path for path in HOST_FILES if not os.path.exists(path)]
    if missing:
        return f"missing {', '.join(missing)} (scripts/install-deps.sh installs them)"
    if os.environ.get("CCBENCH_RDMA_VM_ACCEL", "tcg") == "kvm" and not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "CCBENCH_RDMA_VM_ACCEL=kvm but /dev/kvm is not usable"
    return None


def kernel_package():
    """The package linux-image-amd64 depends on now (the ABI number changes), or None when apt cannot say."""
    p = sh("apt-cache", "depends", "linux-image-amd64", check=False)
    found = re.search(r"Depends: (linux-image-\S+)", p.stdout)
    return found.group(1) if p.returncode == 0 and found else None


def kernel_deb(cache_dir):
    """The current kernel package's .deb in cache_dir, downloaded when missing; older ones removed."""
    pkg = kernel_package()
    cached = sorted(cache_dir.glob("linux-image-*.deb"), key=lambda p: p.stat().st_mtime)
    if pkg is None:
        if not cached:
            raise Unavailable("apt-cache cannot resolve linux-image-amd64 (run apt-get update) and no kernel is cached")
        log(f"apt-cache cannot resolve linux-image-amd64: using the cached {cached[-1].name}")
        return cached[-1]
    version = sh("apt-cache", "policy", pkg).stdout
    version = re.search(r"Candidate: (\S+)", version).group(1).replace(":", "%3a")
    want = [p for p in cached if p.name.startswith(f"{pkg}_{version}_")]
    if want:
        return want[0]
    download = pathlib.Path(tempfile.mkdtemp(prefix="download-", dir=cache_dir))
    try:
        p = sh("apt-get", "download", pkg, cwd=download, check=False)
        debs = list(download.glob("*.deb"))
        if p.returncode != 0 or len(debs) != 1:
            why = (p.stderr.strip().splitlines() or ["no .deb"])[-1]
            if not cached:
                raise Unavailable(f"cannot download {pkg} ({why}) and no kernel is cached")
            log(f"cannot download {pkg} ({why}): using the cached {cached[-1].name}")
            return cached[-1]
        deb = debs[0].rename(cache_dir / debs[0].name)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    for old in cached:  # a newer kernel replaces the older ones and what was unpacked from them
        old.unlink(missing_ok=True)
        for d in cache_dir.glob(f"kernel-{old.stem}-*"):
            shutil.rmtree(d, ignore_errors=True)
    log(f"downloaded {deb.name} ({deb.stat().st_size >> 20} MiB)")
    return deb


@dataclasses.dataclass
class Kernel:
    version: str
    vmlinuz: pathlib.Path
    modules: list  # paths of the .ko files in load order


@functools.lru_cache(maxsize=None)
def kernel(cache_dir, modules=tuple(MODULES)):
    """vmlinuz and the .ko files of `modules` with their dependencies in load order, unpacked from the current
    kernel package once (dpkg -x, depmod -b) and kept in cache_dir next to the .deb. Resolved once a process."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    deb = kernel_deb(cache_dir)
    parts = cache_dir / f"kernel-{deb.stem}-{hashlib.sha1(' '.join(modules).encode()).hexdigest()[:8]}"
    if not (parts / "modules.order").exists():
        unpack_kernel(deb, parts, modules)
    version = (parts / "version").read_text().strip()
    order = [parts / name for name in (parts / "modules.order").read_text().split()]
    return Kernel(version, parts / "vmlinuz", order)


def unpack_kernel(deb, parts, modules):
    work = pathlib.Path(tempfile.mkdtemp(prefix="unpack-", dir=parts.parent))
    try:
        root = work / "root"
        sh("dpkg", "-x", deb, root)
        versions = [d.name for d in (root / "lib/modules").iterdir()]
        assert len(versions) == 1, f"{deb.name}: expected one kernel in lib/modules, found {versions}"
        kver = versions[0]
        sh("depmod", "-b", root, kver)
        shown = sh("modprobe", "-a", "-d", root, "-S", kver, "--show-depends", *modules).stdout.splitlines()
        out = work / "parts"
        out.mkdir()
        order = []
        for line in shown:
            fields = line.split()
            if fields[:1] != ["insmod"] or not fields[1].endswith(".ko"):
                continue  # "builtin NAME": nothing to load
            name = pathlib.Path(fields[1]).name
            if name not in order:
                shutil.copy(fields[1], out / name)
                order.append(name)
        shutil.copy(root / "boot" / f"vmlinuz-{kver}", out / "vmlinuz")
        (out / "version").write_text(kver + "\n")
        (out / "modules.order").write_text("\n".join(order) + "\n")  # written last: marks the parts complete
        try:
            out.rename(parts)
        except OSError:  # another run unpacked it meanwhile
            pass
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- the initramfs ------------------------------------------------------------------------------------------


def has_debug_info(path):
    """Whether an ELF64 file has .debug_* sections (read from its section headers; stdlib only)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:5] != b"\x7fELF\x02":
            return False
        shoff, = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
        if not shoff or shstrndx >= shnum:
            return False
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
        _, _, _, _, str_off, str_size = sections[shstrndx]
        f.seek(str_off)
        names = f.read(str_size)
    return any(names[s[0]:names.index(b"\0", s[0])].startswith(b".debug_") for s in sections)


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


class Initramfs:
    """The guest's files as newc cpio entries (written in Python: device nodes need no root)."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.entries = {}  # guest path (no leading /) -> ("dir",) | ("file", host path | bytes, mode)
        #                                               | ("link", target) | ("chr", major, minor)
        self.closed = set()  # host ELF files whose ldd closure is already in
        self.notes = []

    def canon(self, path):
        """`path` with every symlinked directory on the way resolved (sbin/ip -> usr/sbin/ip), no leading /."""
        parts = [p for p in path.split("/") if p]
        done = []
        for i, part in enumerate(parts):
            done.append(part)
            entry = self.entries.get("/".join(done))
            if i < len(parts) - 1 and entry and entry[0] == "link":
                target = os.path.normpath(os.path.join("/" + "/".join(done[:-1]), entry[1]))
                done = self.canon(target).split("/")
        return "/".join(done)

    def dir(self, path):
        path = self.canon(path)
        if path and path not in self.entries:
            self.dir(os.path.dirname(path))
            self.entries[path] = ("dir",)
        return path

    def put(self, path, entry):
        path = self.canon(path)
        self.dir(os.path.dirname(path))
        self.entries.setdefault(path, entry)  # the first one wins: host files before busybox applets

    def data(self, path, content, mode=0o644):
        self.put(path, ("file", content.encode() if isinstance(content, str) else content, mode))

    def host_file(self, path, guest=None, strip=False):
        """The host file `path` at `guest` (default: the same path). At its own path, each symlink on the way
        is a symlink here too, so that /lib -> usr/lib and soname links look as on the host. ELF files come
        with their ldd closure; with `strip`, without debug info."""
        same = guest is None or guest.strip("/") == path.strip("/")
        if same:
            self.host_symlinks(os.path.dirname(path))
        guest = self.canon(path if same else guest)
        if guest in self.entries:
            return
        if same and os.path.islink(path):
            target = os.readlink(path)
            self.put(guest, ("link", target))
            self.host_file(os.path.join(os.path.realpath(os.path.dirname(path)), target), strip=strip)
            return
        real = os.path.realpath(path)
        source = real
        if strip and is_elf(real) and has_debug_info(real) and shutil.which("objcopy"):
            source = str(self.workdir / f"stripped-{len(self.entries)}-{os.path.basename(real)}")
            sh("objcopy", "--strip-debug", real, source)
        self.put(guest, ("file", source, os.stat(real).st_mode & 0o7777))
        if is_elf(real):
            self.ldd_closure(real)

    def host_symlinks(self, directory):
        """Each symlinked directory on the way to `directory` (usrmerge's /lib -> usr/lib) as that symlink."""
        parts = pathlib.PurePosixPath(directory).parts[1:]
        for i in range(1, len(parts) + 1):
            prefix = "/" + "/".join(parts[:i])
            if os.path.islink(prefix) and self.canon(prefix) not in self.entries:
                self.put(prefix, ("link", os.readlink(prefix)))
                self.host_symlinks(os.path.realpath(prefix))

    def ldd_closure(self, path):
        real = os.path.realpath(path)
        if real in self.closed:
            return
        self.closed.add(real)
        p = sh("ldd", path, check=False)
        if p.returncode != 0:  # "not a dynamic executable": a static program
            return
        missing = [line.split()[0] for line in p.stdout.splitlines() if "not found" in line]
        if missing:  # a plugin of an optional component, say: the loader names it in the guest if it matters
            self.notes.append(f"{path}: ldd cannot find {', '.join(missing)}")
        for lib in re.findall(r"(/\S+) \(0x", p.stdout):
            self.host_file(lib)

    def host_tree(self, path, guest=None, strip=False):
        """A file, or a directory with everything under it (programs and plugins with their closures)."""
        if not os.path.isdir(path) or os.path.islink(path):
            self.host_file(path, guest, strip)
            return
        if guest is None or guest.rstrip("/") == path.rstrip("/"):
            self.host_symlinks(path)
            guest = path
        self.dir(guest)
        for name in sorted(os.listdir(path)):
            if TREE_SKIP.search(name):
                continue
            self.host_tree(os.path.join(path, name), f"{guest.rstrip('/')}/{name}", strip)

    def busybox(self):
        """busybox and a link for each of its applets that the host files have not provided."""
        bb = shutil.which("busybox")
        self.host_file(os.path.realpath(bb), "/usr/bin/busybox")
        for applet in sh(bb, "--list-full").stdout.split():
            self.put(applet, ("link", "/usr/bin/busybox"))

    def write(self, out, compress):
        """The archive at `out`, gzip'd (level 1) when `compress`: big extras travel uncompressed, which the
        emulated guest unpacks much faster."""
        opener = (lambda: gzip.open(out, "wb", compresslevel=1)) if compress else (lambda: open(out, "wb"))
        with opener() as f:
            for ino, (path, entry) in enumerate(sorted(self.entries.items()), start=1):
                self.write_entry(f, ino, path, entry)
            self.write_entry(f, 0, "TRAILER!!!", ("file", b"", 0))

    @staticmethod
    def write_entry(f, ino, path, entry):
        kind = entry[0]
        rdev = (0, 0)
        if kind == "dir":
            mode, size, data = 0o040755, 0, b""
        elif kind == "link":
            data = entry[1].encode()
            mode, size = 0o120777, len(data)
        elif kind == "chr":
            mode, size, data, rdev = 0o020600, 0, b"", entry[1:3]
        else:
            content, perm = entry[1], entry[2]
            mode = 0o100000 | perm if path != "TRAILER!!!" else 0
            data = content if isinstance(content, bytes) else None
            size = len(data) if data is not None else os.stat(content).st_size
        name = path.encode() + b"\0"
        fields = [ino, mode, 0, 0, 2 if kind == "dir" else 1, 0, size, 0, 0, rdev[0], rdev[1], len(name), 0]
        f.write(b"070701" + b"".join(b"%08X" % v for v in fields) + name)
        f.write(b"\0" * (-(110 + len(name)) % 4))
        if data is not None:
            f.write(data)
        else:
            with open(entry[1], "rb") as src:
                shutil.copyfileobj(src, f, 1 << 20)
        f.write(b"\0" * (-size % 4))


INIT = """#!/bin/sh
# ccbench rdma-vm guest init (generated by tests/rdma/rdma_vm.py)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /dev/pts /tmp /run /root
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
dmesg -n 1
. {dir}/helpers.sh
init_failed() {{ say "init-failed $*"; dmesg | tail -n 40; poweroff -f; }}
while read -r m; do insmod "{dir}/modules/$m" || init_failed "insmod $m"; done < {dir}/modules.order
hostname ccbench-vm
ip link set lo up || init_failed "ip link set lo up"
rdma link add rxe0 type rxe netdev lo || init_failed "rdma link add rxe0"
say "ready $(cut -d' ' -f1 /proc/uptime)"
timeout -s KILL {budget} sh {dir}/guest.sh
say "exit $?"
poweroff -f
"""

HELPERS = """# helpers for the guest script and its steps (busybox sh)
TAG={tag}
say() {{ echo "@@$TAG $*"; }}
uptime_cs() {{ read -r up _ < /proc/uptime; echo $(( ${{up%.*}} * 100 + 1${{up#*.}} - 100 )); }}
# emit KIND NAME FILE RC [EXTRA]: FILE base64-encoded between markers
emit() {{ say "begin $1 $2"; base64 "$3"; say "end $1 $2 $4 $5"; }}
failed=0
# run_step NAME TIMEOUT_S SCRIPT: output and exit code (137: timed out) back to the host
run_step() {{
  t0=$(uptime_cs)
  timeout -s KILL "$2" sh -c ". {dir}/helpers.sh; . $3" > "/tmp/step-$1.out" 2>&1 < /dev/null
  rc=$?
  emit step "$1" "/tmp/step-$1.out" "$rc" "$(( $(uptime_cs) - t0 ))"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
}}
# fetch PATH: a guest file back to the host (rc 1 and nothing when it is missing)
fetch() {{ if [ -f "$1" ]; then emit file "$1" "$1" 0; else say "begin file $1"; say "end file $1 1"; fi; }}
# wait_listen PORT [SECONDS]: until a TCP socket listens on PORT (perftest's server is up)
wait_listen() {{
  hex=$(printf ':%04X ' "$1"); n=0
  while [ "$n" -lt "$(( ${{2:-30}} * 10 ))" ]; do
    grep -q "${{hex}}[0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
    sleep 0.1; n=$((n + 1))
  done
  echo "wait_listen: nothing listens on port $1 after ${{2:-30}} s"; return 1
}}
# wait_exit PID SECONDS: the background job's exit code, SIGKILLed (137) when still running after SECONDS
wait_exit() {{
  n=0
  while kill -0 "$1" 2>/dev/null && [ "$n" -lt "$(( $2 * 10 ))" ]; do sleep 0.1; n=$((n + 1)); done
  kill -9 "$1" 2>/dev/null; wait "$1"
}}
# server_client PORT 'SERVER COMMAND' 'CLIENT COMMAND': the server in the background until it listens on PORT,
# then the client; the client's output, then "== server exit N ==" and the server's. Exit: the client's code,
# else the server's.
server_client() {{
  sh -c "$2" > "/tmp/server-$1.out" 2>&1 &
  server=$!
  if wait_listen "$1" 30; then sh -c "$3"; rc=$?; else rc=90; fi
  wait_exit "$server" 15; src=$?
  echo "== server exit $src =="; cat "/tmp/server-$1.out"
  [ "$rc" -ne 0 ] && return "$rc"; return "$src"
}}
"""


def steps_script(steps, fetch):
    """The guest script for `steps` (each in its own file under GUEST_DIR/steps) and the files to fetch."""
    lines = [f". {GUEST_DIR}/helpers.sh"]
    for step in steps:
        lines.append(f"run_step {step.name} {int(step.timeout_s)} {GUEST_DIR}/steps/{step.name}.sh")
    lines += [f"fetch {path}" for path in fetch]
    lines.append('exit "$failed"')
    return "\n".join(lines) + "\n"


def build_image(cache_dir, workdir, tag, guest_script, extra_files=(), extra_data=None, budget_s=600,
                modules=tuple(MODULES)):
    """vmlinuz and initramfs in `workdir` for a guest that runs `guest_script` (shell text) under a `budget_s`
    timeout. extra_files: host paths (at the same guest path) or (host, guest) pairs, directories recursively,
    programs with their ldd closure and without debug info; extra_data: {guest path: str|bytes}."""
    k = kernel(pathlib.Path(cache_dir), tuple(modules))
    base = Initramfs(workdir)
    for d in ("/bin", "/sbin", "/lib", "/lib64"):  # usrmerge's links, where the host has them
        base.host_symlinks(d)
    for d in ("proc", "sys", "dev", "tmp", "run", "root"):
        base.dir(d)
    base.put("dev/console", ("chr", 5, 1))
    for prog in HOST_PROGRAMS + [p for p in OPTIONAL_PROGRAMS if shutil.which(p)]:
        base.host_file(shutil.which(prog))
    for path in HOST_FILES:
        base.host_file(path)
    base.busybox()
    for ko in k.modules:
        base.put(f"{GUEST_DIR}/modules/{ko.name}", ("file", str(ko), 0o644))
    base.data(f"{GUEST_DIR}/modules.order", "\n".join(ko.name for ko in k.modules) + "\n")
    base.data("init", INIT.format(dir=GUEST_DIR, budget=int(budget_s)), 0o755)
    base.data(f"{GUEST_DIR}/helpers.sh", HELPERS.format(tag=tag, dir=GUEST_DIR))
    base.data(f"{GUEST_DIR}/guest.sh", guest_script)
    base.data("etc/hosts", "127.0.0.1 localhost ccbench-vm\n")
    base.data("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")
    base.data("etc/group", "root:x:0:\n")
    for path, content in (extra_data or {}).items():
        base.data(path, content)
    extra = Initramfs(workdir)
    extra.entries = dict(base.entries)  # already in the base archive: skipped, and removed below
    extra.closed = base.closed
    for item in extra_files:
        host, guest = (item, None) if isinstance(item, (str, os.PathLike)) else item
        extra.host_tree(str(host), guest, strip=True)
    for path in base.entries:
        del extra.entries[path]
    for note in extra.notes:
        log(note)
    initrd = workdir / "initrd.cpio"
    base.write(initrd, compress=True)
    if extra.entries:
        with open(initrd, "ab") as out:  # the kernel unpacks concatenated archives one after the other; an
            out.write(b"\0" * (-out.tell() % 512))  # uncompressed one must start 4-byte aligned (NULs skipped)
        extra.write(workdir / "extra.cpio", compress=False)
        with open(initrd, "ab") as out, open(workdir / "extra.cpio", "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
        (workdir / "extra.cpio").unlink()
    return k, initrd


# ---- booting ------------------------------------------------------------------------------------------------


def qemu_command(k, initrd, mem_mb):
    accel = os.environ.get("CCBENCH_RDMA_VM_ACCEL", "tcg")
    cpu = ["-accel", "kvm", "-cpu", "host"] if accel == "kvm" else ["-accel", "tcg,thread=multi"]
    return ["qemu-system-x86_64", *cpu, "-smp", "2", "-m", f"{mem_mb}M", "-nographic", "-monitor", "none",
            "-no-reboot", "-nic", "none", "-kernel", str(k.vmlinuz), "-initrd", str(initrd),
            "-append", "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off tsc=reliable"]


def boot(k, initrd, tag, timeout_s, mem_mb=None):
    """Boot the guest, wait for it to power off (at most timeout_s); return (console text, timings). QEMU runs
    under `timeout` in a session of its own, gets SIGTERM should this process die, and is ended by kill_group
    however this function is left."""
    size_mb = initrd.stat().st_size >> 20
    mem_mb = mem_mb or max(1024, 512 + 3 * size_mb)  # the archive and what it unpacks to both sit in RAM
    cmd = ["timeout", "-k", "5", str(int(timeout_s))] + qemu_command(k, initrd, mem_mb)
    env = dict(os.environ, **{TAG_VARIABLE: tag})
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True, preexec_fn=term_with_parent)
    chunks, tail, ready_at, killed = [], b"", None, False
    ready = f"@@{tag} ready".encode()
    try:
        deadline = start + timeout_s + 10
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
            data = os.read(proc.stdout.fileno(), 1 << 16) if readable else None
            if data == b"":
                break
            if data:
                chunks.append(data)
                tail = (tail + data)[-256:]  # the serial port comes a few bytes at a time
                if ready_at is None and ready in tail:
                    ready_at = time.monotonic()
        else:
            killed = True
        if not killed:
            proc.wait(timeout=10)
    finally:
        kill_group(proc)
    console = b"".join(chunks).decode(errors="replace").replace("\r", "")
    if killed or proc.returncode in (124, 137):
        console += f"\n[host: qemu killed after {timeout_s} s]\n"
    boot_s = ready_at - start if ready_at else float("nan")  # nan: the guest never got ready
    return console, {"boot_s": boot_s, "run_s": time.monotonic() - start}


def term_with_parent():
    """In the child before exec: SIGTERM when this process dies, even by SIGKILL (timeout passes it to qemu)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def kill_group(proc):
    """End QEMU and its `timeout`: SIGTERM to the group first (qemu exits, timeout reaps it: no zombie left),
    SIGKILL to whatever is left 5 s later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break  # nothing of the group is left
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            proc.poll()  # reaps `timeout`, the group leader, once it has ended
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
    proc.wait()
    if proc.stdout:
        proc.stdout.close()


def parse_console(console, tag):
    """Steps, fetched files and the guest script's exit code from the console log."""
    marker = f"@@{tag} "
    steps, files, exit_code, current, body = {}, {}, None, None, []
    for line in console.splitlines():
        at = line.find(marker)
        if at < 0:
            if current is not None and B64_RE.match(line.strip()):
                body.append(line.strip())
            continue
        words = line[at + len(marker):].split()
        if words[:1] == ["begin"] and len(words) >= 3:
            current, body = (words[1], words[2]), []
        elif words[:1] == ["end"] and len(words) >= 4 and current == (words[1], words[2]):
            data = base64.b64decode("".join(body)) if body else b""
            if words[1] == "step":
                elapsed = int(words[4]) / 100 if len(words) > 4 and words[4].isdigit() else float("nan")
                steps[words[2]] = StepResult(words[2], int(words[3]), data.decode(errors="replace"), elapsed)
            elif words[3] == "0":
                files[words[2]] = data
            current = None
        elif words[:1] == ["exit"] and len(words) == 2:
            exit_code = int(words[1])
    return exit_code, steps, files


# ---- one run: build, boot, parse, clean up --------------------------------------------------------------------


def check_available(cache_dir=None):
    """Raise Unavailable (one line why) unless this machine can run the guest; fetches the kernel when needed."""
    if reason := unavailable_reason():
        raise Unavailable(reason)
    return kernel(pathlib.Path(cache_dir or cache_dir_default()))


def new_tag():
    return PREFIX + secrets.token_hex(3)


def run_steps(steps, extra_files=(), fetch=(), extra_data=None, cache_dir=None, budget_s=None, tag=None):
    """Build an image running `steps` (each under its own timeout) then fetching `fetch` (guest paths), boot it,
    and return a RunResult. The guest script as a whole gets budget_s (default: the steps' timeouts + 30 s);
    QEMU is SIGKILLed BOOT_ALLOWANCE_S after that. Raises Unavailable where this machine cannot run the guest.
    The temp dir and QEMU are gone when this returns or raises: leftovers(tag) checks it."""
    if reason := unavailable_reason():
        raise Unavailable(reason)
    for step in steps:
        assert NAME_RE.match(step.name), f"step name {step.name!r}: letters, digits and ._+- only"
    for path in fetch:
        assert PATH_RE.match(path), f"fetch path {path!r}: absolute, letters, digits and ._+-/ only"
    assert len({s.name for s in steps}) == len(steps), "step names must be unique"
    tag = tag or new_tag()
    budget = budget_s or sum(int(s.timeout_s) + 5 for s in steps) + 30
    data = dict(extra_data or {})
    data.update({f"{GUEST_DIR}/steps/{s.name}.sh": s.command + "\n" for s in steps})
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=tag + "-"))
    result = RunResult(None, {}, {}, "", {}, tag)
    try:
        start = time.monotonic()
        k, initrd = build_image(cache_dir or cache_dir_default(), workdir, tag, steps_script(steps, fetch),
                                extra_files, data, budget)
        result.timings["image_s"] = time.monotonic() - start
        result.timings["image_MiB"] = initrd.stat().st_size / (1 << 20)
        result.kernel = k.version
        result.console, timings = boot(k, initrd, tag, BOOT_ALLOWANCE_S + budget)
        result.timings.update(timings)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result.exit_code, result.steps, result.files = parse_console(result.console, tag)
    result.errors = [line for line in result.console.splitlines() if BOOT_ERROR_RE.search(line)]
    return result


def qemu_processes(prefix=PREFIX):
    """Live processes started by us (marked with TAG_VARIABLE=prefix...), as 'pid cmdline' strings."""
    found, marker = [], f"{TAG_VARIABLE}={prefix}".encode()
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and any(e.startswith(marker) for e in environ):
            found.append(f"pid {entry.name} {cmdline[:120]}")
    return found


def leftovers(prefix=PREFIX):
    """Everything of ours still there: processes and temporary directories."""
    dirs = sorted(str(p) for p in pathlib.Path(tempfile.gettempdir()).glob(prefix + "*"))
    return [f"process {p}" for p in qemu_processes(prefix)] + [f"directory {d}" for d in dirs]


def exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)  # unwinds through the finally blocks, which kill QEMU and remove the temp dir


def install_guards():
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)


# ---- CLI ----------------------------------------------------------------------------------------------------


def cli_run(args):
    steps = [Step("command", " ".join(args.command), args.step_timeout)]
    result = run_steps(steps, extra_files=args.extra, fetch=args.fetch, cache_dir=args.cache_dir)
    if args.console:
        print(result.console)
    step = result.steps.get("command")
    print(step.output if step else result.console[-4000:], end="")
    for path, content in result.files.items():
        out = pathlib.Path(args.to) / os.path.basename(path)
        out.write_bytes(content)
        log(f"fetched {path} -> {out} ({len(content)} B)")
    log(f"kernel {result.kernel}; image {result.timings['image_s']:.1f} s "
        f"({result.timings['image_MiB']:.1f} MiB), boot {result.timings['boot_s']:.1f} s, "
        f"boot+run {result.timings['run_s']:.1f} s")
    left = leftovers(result.tag)
    if left:
        log("left behind: " + "; ".join(left))
        return 1
    return step.rc if step else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("check")
    run = sub.add_parser("run")
    run.add_argument("--extra", action="append", default=[], help="host file or directory to copy in")
    run.add_argument("--fetch", action="append", default=[], help="guest file to copy out (into --to)")
    run.add_argument("--to", default=".")
    run.add_argument("--step-timeout", type=int, default=120)
    run.add_argument("--cache-dir", type=pathlib.Path, default=None)
    run.add_argument("--console", action="store_true", help="print the whole console log")
    run.add_argument("command", nargs="+")
    clean = sub.add_parser("check-clean")
    clean.add_argument("--tag", default=PREFIX)
    args = parser.parse_args()
    if args.what == "check-clean":
        left = leftovers(args.tag)
        print("\n".join(f"left behind: {item}" for item in left) or f"clean: nothing named {args.tag}* is left")
        return 1 if left else 0
    install_guards()
    try:
        if args.what == "check":
            k = check_available()
            print(f"ok: kernel {k.version}, {len(k.modules)} modules, cache {k.vmlinuz.parent}")
            return 0
        return cli_run(args)
    except Unavailable as e:
        print(f"SKIPPED: {e}")
        return SKIP


if __name__ == "__main__":
    sys.exit(main())
