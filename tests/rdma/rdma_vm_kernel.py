"""Part of rdma_vm.py: whether this machine can run the guest, and the guest kernel (Debian's linux-image package,
resolved with apt, downloaded once into the cache and unpacked there), with the helpers every part shares: sh(),
log() and the cache directory.
"""
import dataclasses
import functools
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

# crc32_generic first: rxe's ICRC needs it (recipe); dummy: a link that stays down, for a port that is not ACTIVE
MODULES = ["crc32_generic", "rdma_rxe", "ib_uverbs", "dummy"]
RXE_PROVIDER = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
HOST_FILES = [RXE_PROVIDER, "/etc/libibverbs.d/rxe.driver",
              "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1"]  # glibc dlopens libgcc_s at thread exit; ldd omits it
TOOLS = {"qemu-system-x86_64": "qemu-system-x86", "busybox": "busybox-static", "ib_write_bw": "perftest",
         "rdma": "iproute2", "ip": "iproute2", "modprobe": "kmod",
         "depmod": "kmod", "dpkg": "dpkg", "apt-get": "apt", "apt-cache": "apt", "ldd": "libc-bin"}


class Unavailable(Exception):
    """This machine cannot run the guest; the message is one line saying why (the test exits 77)."""


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
