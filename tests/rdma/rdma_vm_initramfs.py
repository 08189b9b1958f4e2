"""Part of rdma_vm.py: the guest's initramfs (newc cpio written in Python), its /init and guest helper scripts,
and build_image(), which puts the kernel's modules, the host's programs and the caller's files in it.
"""
import gzip
import os
import pathlib
import re
import shutil
import struct

from rdma_vm_kernel import HOST_FILES, MODULES, kernel, log, sh

HOST_PROGRAMS = ["ib_write_bw", "ib_write_lat", "rdma", "ip"]
OPTIONAL_PROGRAMS = ["ibv_devices", "ibv_devinfo"]  # ibverbs-utils, handy for looking around in the guest
GUEST_DIR = "/etc/ccbench-vm"
TREE_SKIP = re.compile(r"\.(a|la|h)$|^(include|pkgconfig)$")  # in directories copied in: build-time files


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
