"""The install tier's bundle cases (tests/install/install_test.py): bundle (scripts/make-bundle.sh's tarball in a
bare Debian 12, and refused in a bare Debian 11) and container (container/Containerfile built with podman from the
bundle, then run).
"""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time

from install_driver import chroot, need_root, rootfs, sh, skip


def bundle(args):
    need_root()
    log = []
    with tempfile.TemporaryDirectory(prefix="ccbench-bundle-") as tmp:
        tmp = pathlib.Path(tmp)
        start = time.monotonic()
        made = sh([str(pathlib.Path(args.source) / "scripts" / "make-bundle.sh"), args.build, str(tmp / "out")],
                  timeout=600).stdout.strip().splitlines()[-1]
        log.append(f"make-bundle: {time.monotonic() - start:.1f} s")
        tarball = pathlib.Path(made)
        size = tarball.stat().st_size
        print(f"{tarball.name}: {size} bytes ({size / 2**20:.1f} MiB)")
        assert re.fullmatch(r"ccbench-[0-9.]+-linux-x86_64\.tar\.gz", tarball.name), tarball.name
        assert size <= 64 * 2**20, f"the bundle is {size / 2**20:.1f} MiB, over 64 MiB"
        name = tarball.name[:-len(".tar.gz")]
        # The glibc the bundle claims (2.34) is what its ELF files ask for, at most.
        unpacked = tmp / "unpacked"
        unpacked.mkdir()
        sh(["tar", "-C", str(unpacked), "-xzf", str(tarball)])
        newest = (0, 0)
        # fallback/cxx (Debian 12's libstdc++, glibc 2.36) is used only where the machine has no
        # libstdc++ of its own; bundle-env.sh refuses it in one line on glibc 2.34/2.35.
        for f in (unpacked / name).rglob("*"):
            if "fallback/cxx" in str(f):
                continue
            if f.is_file() and not f.is_symlink() and f.open("rb").read(4) == b"\x7fELF":
                syms = subprocess.run(["objdump", "-T", str(f)], capture_output=True, text=True).stdout
                for major, minor in re.findall(r"GLIBC_(\d+)\.(\d+)", syms):
                    if (int(major), int(minor)) > newest:
                        newest, newest_file = (int(major), int(minor)), f.name
        print(f"newest glibc symbol version asked for: {newest[0]}.{newest[1]} ({newest_file})")
        assert newest <= (2, 34), f"{newest_file} needs GLIBC_{newest[0]}.{newest[1]}, the bundle says 2.34"
        for suite in ["bookworm", "bullseye"]:
            root = tmp / suite
            rootfs(root, log, variant="essential", suite=suite)
            for absent in ["usr/bin/apt-get", "usr/bin/mpirun", "usr/bin/python3"]:
                assert not (root / absent).exists(), f"the bare {suite} has {absent}"
            sh(["tar", "-C", str(root / "opt"), "-xzf", str(tarball)])
            b = f"/opt/{name}"
            if suite == "bullseye":  # glibc 2.31: refused in one line
                p = chroot(root, f"{b}/bin/allreduce_bench --version", check=False)
                lines = p.stderr.strip().splitlines()
                assert p.returncode == 2 and len(lines) == 1, "Debian 11: expected one line, exit 2"
                assert "glibc 2.31" in lines[0] and "2.34" in lines[0], lines[0]
                continue
            cxx = list((root / "usr/lib/x86_64-linux-gnu").glob("libstdc++.so.6*"))
            print("libstdc++ in the bare root filesystem:", cxx or "none (the bundle's fallback is used)")
            elves = f"{b}/libexec/ccbench/bin/* {b}/lib/ccbench/*.so.* {b}/lib/ccbench/openmpi/lib/*.so.* " \
                    f"{b}/lib/ccbench/openmpi/lib/openmpi/*.so* {b}/lib/ccbench/openmpi/bin/*"
            p = chroot(root, f"cd /tmp && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 && "
                             f"{b}/bin/allreduce_bench --version && {b}/bin/ccbench-report --version && "
                             f"{b}/bin/mpirun -np 2 --oversubscribe {b}/bin/allreduce_bench -b 8 -e 1M -c 1 "
                             f"--out /tmp/ar.json && {b}/bin/ccbench-report table /tmp/ar.json && "
                             f"n=0; for f in {elves}; do n=$((n+1)); echo \"== ldd $f\"; "
                             f"{b}/bin/ccbench-env ldd $f; done; echo \"ldd: $n files\"", check=False)
            assert p.returncode == 0, "the bundle did not run in the bare Debian 12 (see above)"
            assert "all_reduce" in p.stdout and "busbw" in p.stdout, "no table"
            assert "not found" not in p.stdout, "ldd: a library is missing: " + ", ".join(
                line.strip() for line in p.stdout.splitlines() if "not found" in line)
            assert f"Open MPI v5.0.11 loaded from {b}/lib/ccbench/openmpi/lib/libmpi.so" in p.stdout, "not the bundle's MPI"
            count = re.search(r"ldd: (\d+) files", p.stdout).group(1)
            print(f"ldd: {count} ELF files in the bundle, nothing missing")
    print("bundle:", "; ".join(log))
    print("bundle: PASSED")


# This machine's root lacks CAP_SYS_RESOURCE (podman's default rlimits cannot be set: lower ones are
# given) and mounts cgroups v1 and v2 side by side (crun refuses it: runc with cgroupfs does not).
PODMAN = ["podman", "--runtime", "runc", "--cgroup-manager=cgroupfs"]
PODMAN_LIMITS = ["--ulimit", "nofile=1024:20000", "--ulimit", "nproc=1000:1000", "--network", "host"]


def container(args):
    need_root()
    for tool in ["podman", "runc", "mmdebstrap"]:
        if shutil.which(tool) is None:
            skip(f"{tool} is not installed (scripts/install-deps.sh installs it)")
    log = []
    tag = f"localhost/ccbench-test:{os.getpid()}"
    base = f"localhost/ccbench-test-base:{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="ccbench-container-") as tmp:
        tmp = pathlib.Path(tmp)
        try:
            start = time.monotonic()
            sh(["mmdebstrap", "--mode=root", "--variant=essential", "--quiet", "bookworm", str(tmp / "base.tar"),
                "http://deb.debian.org/debian"], timeout=900)
            sh(PODMAN + ["import", str(tmp / "base.tar"), base])
            log.append(f"base image: {time.monotonic() - start:.1f} s")
            made = sh([str(pathlib.Path(args.source) / "scripts" / "make-bundle.sh"), args.build, str(tmp / "ctx")],
                      timeout=600).stdout.strip().splitlines()[-1]
            start = time.monotonic()
            sh(PODMAN + ["build"] + PODMAN_LIMITS[:4] + ["--network", "host", "-f",
               str(pathlib.Path(args.source) / "container" / "Containerfile"), "--build-arg", f"BASE={base}",
               "--build-arg", f"BUNDLE={pathlib.Path(made).name}", "-t", tag, str(tmp / "ctx")], timeout=900)
            log.append(f"podman build: {time.monotonic() - start:.1f} s")
            p = sh(PODMAN + ["run", "--rm"] + PODMAN_LIMITS + [tag, "bash", "-c",
                   "allreduce_bench --version && mpirun -np 2 --oversubscribe allreduce_bench -b 8 -e 1M -c 1 "
                   "--out /results/ar.json && ccbench-report table /results/ar.json"], check=False, timeout=600)
            assert p.returncode == 0, "the container did not run (see above)"
            assert "Open MPI v5.0.11 loaded from /opt/ccbench" in p.stdout, "not the bundle's MPI"
            assert "all_reduce" in p.stdout and "busbw" in p.stdout, "no table"
        finally:
            sh(PODMAN + ["rmi", "-f", tag, base], check=False)
    print("container:", "; ".join(log))
    print("container: PASSED")
