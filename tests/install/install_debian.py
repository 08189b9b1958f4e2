"""The install tier's cases in a fresh Debian 12 with apt (tests/install/install_test.py): deb (cpack's package
installed with its dependencies from the archive, run, removed without a trace) and quickstart (the README's first
command on a clone of the source's HEAD).
"""
import os
import pathlib
import re
import shutil
import tempfile
import time

from install_driver import chroot, need_root, rootfs, sh


def file_list(root):
    """Every path under the root filesystem but the ones that change by themselves (dpkg's records, logs,
    caches, /tmp, the mounts)."""
    skip_dirs = {"proc", "sys", "dev", "tmp", "run", "var/lib/dpkg", "var/log", "var/cache", "var/lib/apt",
                 "root", "etc/ld.so.cache"}
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if os.path.normpath(os.path.join(rel, d)) not in skip_dirs]
        for name in dirnames + filenames:
            r = os.path.normpath(os.path.join(rel, name))
            if r not in skip_dirs:
                out.add(r)
    return out


def deb(args):
    need_root()
    log = []
    build = pathlib.Path(args.build).resolve()
    for old in build.glob("ccbench_*_amd64.deb"):
        old.unlink()
    start = time.monotonic()
    sh(["cpack", "-G", "DEB"], cwd=build, timeout=600)
    log.append(f"cpack: {time.monotonic() - start:.1f} s")
    debs = sorted(build.glob("ccbench_*_amd64.deb"))
    assert len(debs) == 1, f"cpack made {debs}"
    package = debs[0]
    info = sh(["dpkg-deb", "-f", str(package), "Depends", "Recommends", "Installed-Size"]).stdout
    depends = re.search(r"^Depends: (.*)$", info, re.M).group(1)
    assert "nccl" not in depends and "cuda" not in depends, f"Depends names an NVIDIA package: {depends}"
    for need in ["openmpi-bin", "libopenmpi3", "python3"]:
        assert need in depends, f"Depends lacks {need}: {depends}"
    deps = [re.sub(r"\s*\(.*\)", "", d).strip() for d in depends.split(",")]
    print(f"{package.name}: {package.stat().st_size / 2**20:.1f} MiB; Depends: {depends}")
    with tempfile.TemporaryDirectory(prefix="ccbench-rootfs-") as tmp:
        root = pathlib.Path(tmp) / "bookworm"
        rootfs(root, log)
        start = time.monotonic()
        chroot(root, f"apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends {' '.join(deps)}"
                     " >/tmp/deps.log 2>&1 || (tail -20 /tmp/deps.log; exit 1)")
        log.append(f"dependencies from the archive: {time.monotonic() - start:.1f} s")
        before = file_list(root)
        shutil.copy(package, root / "tmp" / package.name)
        chroot(root, f"dpkg -i /tmp/{package.name}")
        listed = chroot(root, "dpkg -L ccbench").stdout.split()
        p = chroot(root, "cd /tmp && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 && "
                         "allreduce_bench --version && command -v allreduce_bench && "
                         "mpirun -np 2 --oversubscribe --mca btl self,vader allreduce_bench -b 8 -e 1M -c 1 "
                         "--out /tmp/ar.json && ccbench-report table /tmp/ar.json && "
                         "ccbench-report accept --profile mpi-host-smoke /tmp/ar.json", check=False)
        assert p.returncode == 0, "the installed package did not run (see above)"
        assert "/usr/bin/allreduce_bench" in p.stdout
        assert "all_reduce" in p.stdout and "busbw" in p.stdout, "ccbench-report table printed no table"
        assert "/usr/share/ccbench/profiles/mpi-host-smoke.json" in p.stdout
        nccl = re.search(r"^  nccl\s+(.*)$", p.stdout, re.M)
        print("nccl in the fresh root filesystem:", nccl.group(1) if nccl else "(no nccl line)")
        os.remove(root / "tmp" / "ar.json")
        chroot(root, "dpkg -r ccbench")
        after = file_list(root)
        left = sorted("/" + f for f in after - before)
        gone = sorted("/" + f for f in before - after)
        print(f"dpkg -L listed {len(listed)} paths; after dpkg -r: {len(left)} new paths left, {len(gone)} gone")
        assert not left, f"dpkg -r left: {left[:20]}"
        assert not gone, f"dpkg -r removed what was there before: {gone[:20]}"
        status = chroot(root, "dpkg -s ccbench 2>&1 || true").stdout
        assert "is not installed" in status or "deinstall" in status, status
    print("deb:", "; ".join(log))
    print("deb: PASSED")


def quickstart(args):
    need_root()
    log = []
    with tempfile.TemporaryDirectory(prefix="ccbench-quickstart-") as tmp:
        root = pathlib.Path(tmp) / "bookworm"
        rootfs(root, log)
        head = sh(["git", "-C", args.source, "rev-parse", "--short=12", "HEAD"]).stdout.strip()
        sh(["git", "clone", "--quiet", "--no-hardlinks", args.source, str(root / "root" / "ccbench")])
        start = time.monotonic()
        p = chroot(root, "cd /root/ccbench && scripts/quickstart.sh -b 8 -e 1M", timeout=3000, check=False)
        took = time.monotonic() - start
        log.append(f"scripts/quickstart.sh (apt, configure, build, run) at {head}: {took:.0f} s")
        assert p.returncode == 0, "scripts/quickstart.sh failed in the fresh Debian 12 (see above)"
        assert "all_reduce" in p.stdout or "allreduce_bench" in p.stdout, "no table"
        assert re.search(r"^# results: \S*allreduce_bench-\S+\.json$", p.stdout, re.M), "no result path"
    print("quickstart:", "; ".join(log))
    print("quickstart: PASSED")
