#!/usr/bin/env python3
"""install tier: what an operator gets, checked where the source and build trees cannot help.

  install_test.py --build DIR --source DIR relocated
      cmake --install into a scratch prefix, the tree moved elsewhere, the source and build trees
      hidden (a private mount namespace lays an empty tmpfs over each): mpirun -np 2 allreduce_bench,
      ccbench-report accept --profile by name, --version of every program, RUNPATH (not RPATH); then
      an unknown profile and the data moved away: one line each, exit 2.
  install_test.py --build DIR --source DIR deb
      cpack -G DEB; a minimal Debian 12 root filesystem (mmdebstrap --variant=apt); its dependencies
      from the archive, then dpkg -i: mpirun -np 2 allreduce_bench and ccbench-report table inside;
      dpkg -r: nothing of the package is left, and nothing else changed.

  install_test.py --build DIR --source DIR bundle
      scripts/make-bundle.sh: the tarball (at most 64 MiB) unpacked into a bare Debian 12 root filesystem
      (mmdebstrap --variant=essential: no apt, no libstdc++, no MPI): --version, mpirun -np 2
      allreduce_bench, ccbench-report table, and ldd of every ELF file in it finding everything; in a
      bare Debian 11 (glibc 2.31): one line saying it needs glibc 2.34, exit 2.

  install_test.py --build DIR --source DIR quickstart
      the README's first command in a fresh Debian 12 (mmdebstrap --variant=apt): a clone of the
      source's HEAD, scripts/quickstart.sh -b 8 -e 1M; its time and the table.

  install_test.py --build DIR --source DIR container
      container/Containerfile built with podman from the bundle over a bare Debian 12 image (made here
      with mmdebstrap and imported: no registry is reachable), then run: --version, mpirun -np 2
      allreduce_bench, ccbench-report table.

  install_test.py --build DIR --source DIR nccl-swap
      the same allreduce_bench with the NCCL the system has and with the NCCL of the PyPI wheel
      nvidia-nccl-cu13 2.32.3 (pip download, kept in DIR/_nccl) on LD_LIBRARY_PATH, then through
      CCBENCH_NCCL_LIBRARY: --version names each library and version; no rebuild.

  install_test.py --build DIR --source DIR gpu-smoke
      the bundle's ccbench-gpu-smoke in a bare Debian 12 root filesystem (no GPU, python3 or MPI) with the
      nvidia-nccl-cu13 wheel's libnccl.so.2 where pip puts it: env (the wheel's NCCL found, the bundle's MPI
      run) and report pass, copy/collectives/graph/dtypes report skipped, exit 77; bad --steps: exit 2.

  install_test.py --build DIR --source DIR workflows
      the operator's workflows as shipped, from a moved install and from the unpacked bundle, the source and
      build trees hidden: ccbench-accept-node --profile mpi-host-smoke PASS (exit 0), and FAIL (exit 1, the
      busbw check named) on a run made slow (rank 1 late by 50 ms to every sample: CCBENCH_DEBUG_LATE); a small
      suite stored by ccbench-regression (--launches 2: launch-1/ and launch-2/), a slowed candidate REGRESSION
      with SLOWER rows (exit 1), and NO VERDICT (exit 2) where nothing can be compared: a baseline that holds
      none of the suite's benches, and ccbench-report regression on an empty candidate folder.

Root is needed (mount namespaces, chroot); mmdebstrap and the Debian archive for deb. Exit 77 =
skipped, saying what is missing. Failures raise AssertionError (exit 1).
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

SKIP = 77
BENCH_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader",
             "OMPI_MCA_mpi_yield_when_idle": "1"}


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def sh(cmd, check=True, timeout=600, **kw):
    """Runs a command (a list, or a string for bash -c), printing it and its output."""
    shown = cmd if isinstance(cmd, str) else " ".join(str(c) for c in cmd)
    print("$", shown, flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd if not isinstance(cmd, str) else ["bash", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout, **kw)
    out = p.stdout + p.stderr
    print(out.rstrip(), f"\n[exit {p.returncode}, {time.monotonic() - start:.1f} s]", flush=True)
    if check:
        assert p.returncode == 0, f"{shown}: exit {p.returncode}"
    return p


def need_root():
    if os.geteuid() != 0:
        skip("needs root (mount namespaces, chroot)")


def hidden(script, hide):
    """bash -c SCRIPT in a private mount namespace where each folder of `hide` is an empty tmpfs."""
    hide = [h for h in hide if not any(h != o and h.startswith(o.rstrip("/") + "/") for o in hide)]
    mounts = "".join(f"mount -t tmpfs ccbench-hidden '{h}' && " for h in hide)
    return ["unshare", "--mount", "--fork", "bash", "-c", f"set -e; {mounts}true; {script}"]


def check_runpath(program):
    dyn = sh(["readelf", "-d", str(program)]).stdout
    assert "(RUNPATH)" in dyn, f"{program}: no RUNPATH (LD_LIBRARY_PATH could not swap NCCL or MPI)"
    assert "(RPATH)" not in dyn, f"{program}: RPATH, which LD_LIBRARY_PATH cannot override"
    assert "$ORIGIN/../lib/ccbench" in dyn, f"{program}: RUNPATH lacks $ORIGIN/../lib/ccbench"


def moved_install(args, tmp):
    """cmake --install into TMP/staged, then the tree moved to TMP/moved/opt-ccbench: its new place."""
    sh(["cmake", "--install", args.build, "--prefix", tmp / "staged", "--strip", "--component", "ccbench"])
    moved = tmp / "moved" / "opt-ccbench"
    moved.parent.mkdir()
    shutil.move(tmp / "staged", moved)
    return moved


def relocated(args):
    need_root()
    with tempfile.TemporaryDirectory(prefix="ccbench-install-") as tmp:
        tmp = pathlib.Path(tmp)
        moved = moved_install(args, tmp)
        bindir = moved / "bin"
        programs = sorted(p.name for p in bindir.iterdir())
        print("installed bin/:", " ".join(programs))
        for want in ["allreduce_bench", "sendrecv_bench", "ccbench-report", "ccbench-topo", "ccbench-accept-node",
                     "ccbench-accept-fleet", "ccbench-regression"]:
            assert want in programs, f"bin/{want} was not installed"
        for data in ["share/ccbench/profiles/mpi-host-smoke.json", "share/ccbench/suites/smoke.suite",
                     "share/ccbench/hardware.json", "share/ccbench/ccbench.result.schema.json",
                     "share/doc/ccbench/README.md", "libexec/ccbench/env.sh", "libexec/ccbench/lib/workflow.sh"]:
            assert (moved / data).is_file(), f"{data} was not installed"
        check_runpath(bindir / "allreduce_bench")
        env = dict(os.environ, **BENCH_ENV)
        env.pop("CCBENCH_DATA_DIR", None)
        hide = [str(pathlib.Path(args.source).resolve()), str(pathlib.Path(args.build).resolve())]
        out = tmp / "out"
        out.mkdir()
        versions = " && ".join(f"echo == {p} && '{bindir / p}' --version" for p in programs
                               if p.endswith("_bench") or p in ("ccbench-report", "ccbench-topo"))
        steps = (f"test -z \"$(ls -A '{hide[0]}')\" && echo 'source tree hidden: {hide[0]} is empty' && "
                 f"{versions} && cd '{out}' && "
                 f"mpirun -np 2 --oversubscribe '{bindir}/allreduce_bench' -b 8 -e 1M -c 1 --out ar.json && "
                 f"'{bindir}/ccbench-report' accept --profile mpi-host-smoke ar.json")
        p = sh(hidden(steps, hide), check=False, env=env, timeout=300)
        assert p.returncode == 0, "the moved install did not run and judge (see above)"
        text = p.stdout
        assert "source tree hidden" in text
        assert re.search(r"allreduce_bench: ccbench \S+ \(git ", text), "--version names no version"
        for lib in ["cuda", "nccl", "mpi", "verbs"]:
            assert re.search(rf"^  {lib}\s", text, re.M), f"allreduce_bench --version has no {lib} line"
        assert "share/ccbench/profiles/mpi-host-smoke.json" in text, "accept did not find the profile by name"
        assert "PASS" in text and "FAIL" not in text, "the profile did not pass"

        # Bad input: an unknown profile; the data moved away (bench, reporter and the workflows).
        p = sh(hidden(f"cd '{out}' && '{bindir}/ccbench-report' accept --profile no-such-profile ar.json", hide),
               check=False, env=env)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1, "unknown profile: expected one line, exit 2"
        assert "no such profile" in lines[0] and "mpi-host-smoke" in lines[0], lines[0]
        shutil.move(moved / "share", tmp / "share-away")
        for cmd, what in [(f"'{bindir}/ccbench-report' accept --profile mpi-host-smoke ar.json", "profile"),
                          (f"'{bindir}/ccbench-accept-node' --profile mpi-host-smoke --out an", "profile"),
                          (f"'{bindir}/ccbench-regression' --suite smoke --label a --store st", "suite")]:
            p = sh(hidden(f"cd '{out}' && {cmd}", hide), check=False, env=env)
            lines = p.stderr.strip().splitlines()
            assert p.returncode == 2, f"{cmd}: exit {p.returncode}, expected 2"
            assert len(lines) == 1, f"{cmd}: expected one line, got {len(lines)}"
            assert f"{moved}/share/ccbench/" in lines[0] and "is missing" in lines[0] and what in lines[0], lines[0]
    print("relocated: PASSED")


def rootfs(path, log, variant="apt", suite="bookworm"):
    """A minimal Debian root filesystem at `path`: `apt` (essential packages and apt), or `essential`."""
    if shutil.which("mmdebstrap") is None:
        skip("mmdebstrap is not installed (scripts/install-deps.sh installs it)")
    start = time.monotonic()
    sh(["mmdebstrap", "--mode=root", f"--variant={variant}", "--quiet", suite, str(path),
        "http://deb.debian.org/debian"], timeout=900)
    log.append(f"rootfs {suite}/{variant}: {time.monotonic() - start:.1f} s")
    shutil.copy("/etc/resolv.conf", path / "etc" / "resolv.conf")


def chroot(root, script, timeout=900, check=True):
    """bash -c SCRIPT chrooted in `root`, with /proc, /dev and /sys mounted (private namespace)."""
    inner = script.replace("'", "'\\''")
    # A /dev of its own (a tmpfs with the usual nodes and /dev/shm), not the host's rbind-mounted: what
    # runs inside must not make device nodes on the host (Debian 13's libcuda made /dev/nvidiactl so).
    dev = (f"mount -t tmpfs -o mode=755 ccbench-dev '{root}/dev'; for n in null zero full random urandom tty; do "
           f"touch '{root}/dev/'$n; mount --bind /dev/$n '{root}/dev/'$n; done; mkdir '{root}/dev/shm' '{root}/dev/pts'; "
           f"mount -t tmpfs ccbench-shm '{root}/dev/shm'; ")
    return sh(["unshare", "--mount", "--fork", "bash", "-c",
               f"set -e; mount -t proc proc '{root}/proc'; {dev}"
               f"mount --rbind /sys '{root}/sys'; chroot '{root}' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "
               f"HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive bash -c '{inner}'"], timeout=timeout,
              check=check)


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


NCCL_WHEEL = "nvidia-nccl-cu13==2.32.3"


def nccl_wheel_library(build):
    """libnccl.so.2 of the PyPI wheel NCCL_WHEEL (pip download once, kept in BUILD/_nccl/lib)."""
    wheels = build / "_nccl"
    lib = wheels / "lib" / "libnccl.so.2"
    if not lib.exists():
        wheels.mkdir(exist_ok=True)
        sh([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", NCCL_WHEEL, "-d",
            str(wheels)], timeout=900)
        wheel = next(wheels.glob("nvidia_nccl_cu13-2.32.3-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            lib.parent.mkdir(exist_ok=True)
            lib.write_bytes(z.read("nvidia/nccl/lib/libnccl.so.2"))
        wheel.unlink()
    return lib


def nccl_swap(args):
    build = pathlib.Path(args.build).resolve()
    bench = build / "bench" / "apps" / "allreduce_bench"
    before = sh([str(bench), "--version"]).stdout
    if re.search(r"^  nccl\s+not built in", before, re.M):
        skip("this build has no NCCL backend")
    system = re.search(r"^  nccl\s+(\S+) loaded from (\S+), built with (\S+)", before, re.M)
    assert system, f"no NCCL loaded by default: {before}"
    print(f"default: NCCL {system.group(1)} from {system.group(2)} (built with {system.group(3)})")
    lib = nccl_wheel_library(build)
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib.parent))
    env.pop("CCBENCH_NCCL_LIBRARY", None)
    swapped = sh([str(bench), "--version"], env=env).stdout
    m = re.search(r"^  nccl\s+(\S+) loaded from (\S+), built with (\S+)", swapped, re.M)
    assert m and m.group(1) == "2.32.3" and m.group(2) == str(lib.resolve()), f"LD_LIBRARY_PATH: {swapped}"
    assert m.group(3) == system.group(3), "the build's NCCL changed"
    env = dict(os.environ, CCBENCH_NCCL_LIBRARY=str(lib))
    chosen = sh([str(bench), "--version"], env=env).stdout
    m2 = re.search(r"^  nccl\s+(\S+) loaded from (\S+)", chosen, re.M)
    assert m2 and m2.group(1) == "2.32.3", f"CCBENCH_NCCL_LIBRARY: {chosen}"
    env = dict(os.environ, CCBENCH_NCCL_LIBRARY=str(build / "no-such-libnccl.so.2"))
    p = sh([str(bench), "--version"], env=env)
    assert "none loaded: CCBENCH_NCCL_LIBRARY=" in p.stdout, p.stdout
    print(f"swapped: NCCL {system.group(1)} -> {m.group(1)} ({m.group(2)}), same binary, built with {m.group(3)}")
    print("nccl-swap: PASSED")


GPU_STEPS = ["copy", "collectives", "graph", "dtypes"]


def gpu_smoke(args):
    """The bundle's ccbench-gpu-smoke in a bare Debian 12 (no GPU, no python3, no MPI), with a pip wheel's NCCL
    where pip puts it (/usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib), as on a GPU machine that has
    PyTorch: every step runs or says why not; the GPU steps report skipped (exit 77)."""
    need_root()
    build = pathlib.Path(args.build).resolve()
    before = sh([str(build / "bench" / "apps" / "allreduce_bench"), "--version"]).stdout
    if re.search(r"^  nccl\s+not built in", before, re.M):
        skip("this build has no NCCL backend: the smoke's NCCL steps cannot be rehearsed")
    wheel_lib = nccl_wheel_library(build)
    log = []
    with tempfile.TemporaryDirectory(prefix="ccbench-gpu-smoke-") as tmp:
        tmp = pathlib.Path(tmp)
        start = time.monotonic()
        tarball = pathlib.Path(sh([str(pathlib.Path(args.source) / "scripts" / "make-bundle.sh"), args.build,
                                   str(tmp / "out")], timeout=600).stdout.strip().splitlines()[-1])
        log.append(f"make-bundle: {time.monotonic() - start:.1f} s")
        name = tarball.name[:-len(".tar.gz")]
        root = tmp / "bookworm"
        rootfs(root, log, variant="essential")
        for absent in ["usr/bin/python3", "usr/bin/mpirun", "usr/bin/nvidia-smi", "dev/nvidiactl"]:
            assert not (root / absent).exists(), f"the bare root filesystem has {absent}"
        sh(["tar", "-C", str(root / "opt"), "-xzf", str(tarball)])
        pip_dir = root / "usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib"
        pip_dir.mkdir(parents=True)
        shutil.copy(wheel_lib, pip_dir / "libnccl.so.2")
        smoke = f"/opt/{name}/bin/ccbench-gpu-smoke"
        start = time.monotonic()
        p = chroot(root, f"cd /tmp && {smoke} /tmp/smoke; echo \"exit $?\"; ls /tmp/smoke", check=False)
        log.append(f"ccbench-gpu-smoke: {time.monotonic() - start:.1f} s")
        out = p.stdout
        assert re.search(r"^exit 77$", out, re.M), "expected exit 77 (nothing failed, the GPU steps skipped)"
        for step in GPU_STEPS:
            assert re.search(rf"^== {step}: skipped in \d+ s \(no GPU here", out, re.M), f"{step}: not skipped"
        for step in ["env", "report"]:
            assert re.search(rf"^== {step}: ok in \d+ s$", out, re.M), f"{step}: not ok"
        nccl = re.search(r"^  nccl\s+(\S+) loaded from ([^,\s]+)", out, re.M)
        assert nccl and nccl.group(2) == "/usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib/libnccl.so.2", \
            f"the wheel's NCCL was not found: {nccl and nccl.group(0)}"
        assert f"Open MPI v5.0.11 loaded from /opt/{name}/lib/ccbench/openmpi/lib/libmpi.so" in out, "not the bundle's MPI"
        for f in ["summary.txt", "env.txt", "env-mpi.json", "report.txt"] + [f"{s}.txt" for s in GPU_STEPS]:
            assert re.search(rf"^{re.escape(f)}$", out, re.M), f"{f} is not in the output folder"
        # bad input: one line, exit 2; the steps and their budgets listed
        p = chroot(root, f"{smoke} --steps copy,bogus /tmp/x; echo \"exit $?\"; {smoke} --list", check=False)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert re.search(r"^exit 2$", p.stdout, re.M) and len(lines) == 1 and "'bogus' is not a step" in lines[0], \
            (p.stdout, p.stderr)
        for step in ["env"] + GPU_STEPS + ["report"]:
            assert re.search(rf"^{step} +\d+ s  needs", p.stdout, re.M), f"--list: no {step}"
    print(f"NCCL {nccl.group(1)} from the pip wheel's place: {nccl.group(2)}")
    print("gpu-smoke:", "; ".join(log))
    print("gpu-smoke: PASSED (env and report ran; copy, collectives, graph and dtypes skipped without a GPU)")


MINI_SUITE = ("allreduce_bench --backend mpi -b 64K -e 1M -f 4 -c 1 --samples --time-budget 0.2\n"
              "sendrecv_bench --backend mpi -b 64K -e 1M -f 4 -c 1 --samples --time-budget 0.2\n")


def run_workflows(where, bindir, work, hide, env):
    """accept-node and regression from `bindir` (an install's or the bundle's bin/), in `work`, with `hide` hidden."""
    work.mkdir()
    (work / "mini.suite").write_text(MINI_SUITE)
    (work / "other.suite").write_text("reduce_bench --backend mpi -b 64K -e 64K -c 1\n")
    (work / "empty").mkdir()
    slow = "OMPI_MCA_mpi_yield_when_idle=0 taskset -c 0"  # two busy-polling ranks take turns on one core
    # rank 1 late by 50 ms to every sample (a CPU-starved process; bench/apps/debug_hooks.hpp): the others wait for it
    # inside their timed op. (taskset alone is undone by accept-node's --bind auto, and left 0.28 GB/s here.)
    late = "CCBENCH_DEBUG_LATE=1:50000"
    common = "--np 2 --timeout 120 --mpirun-args '--bind-to none'"
    steps = [
        ("accept-node, healthy", f"'{bindir}/ccbench-accept-node' --profile mpi-host-smoke --out an-ok {common}", 0,
         r"allreduce-busbw-512k +PASS"),
        ("accept-node, made slow", f"{late} '{bindir}/ccbench-accept-node' --profile mpi-host-smoke --out an-slow "
         f"{common}", 1, r"allreduce-busbw-512k +FAIL"),
        ("regression, base", f"'{bindir}/ccbench-regression' --suite mini.suite --label base --store st {common} "
         "--launches 2", 0, r"stored: 2 launch\(es\) of the 2 benches of suite mini as label\(s\) base"),
        ("regression, slowed candidate", f"{slow} '{bindir}/ccbench-regression' --suite mini.suite --label slow "
         f"--baseline base --store st {common} --launches 2", 1, r"verdict: REGRESSION \([1-9]\d* SLOWER"),
        ("regression, nothing in common", f"'{bindir}/ccbench-regression' --suite other.suite --label other "
         f"--baseline base --store st {common} --launches 2", 2,
         r"verdict: NO VERDICT \(baseline base holds none of the benches"),
        ("regression of an empty candidate", f"'{bindir}/ccbench-report' regression st/base empty", 2,
         r"verdict: NO VERDICT \(empty holds no result"),
    ]
    for what, cmd, want, pattern in steps:
        start = time.monotonic()
        p = sh(hidden(f"cd '{work}' && {cmd}", hide), check=False, env=env, timeout=900)
        text = p.stdout + p.stderr
        assert p.returncode == want, f"{where}: {what}: exit {p.returncode}, expected {want}"
        if what == "regression, base":  # the layout the reporter reads: one folder per launch
            for k in (1, 2):
                got = sorted(f.name for f in (work / "st" / "base" / f"launch-{k}").glob("*.json"))
                assert got == ["allreduce_bench.json", "sendrecv_bench.json"], f"{where}: launch-{k}: {got}"
        found = re.search(pattern, text, re.M)
        assert found, f"{where}: {what}: no line matches {pattern!r}"
        line = text[text.rfind("\n", 0, found.start()) + 1:text.find("\n", found.end())].strip()
        print(f"PASS {where}: {what}: exit {p.returncode} in {time.monotonic() - start:.0f} s: {line}")


def workflows(args):
    need_root()
    with tempfile.TemporaryDirectory(prefix="ccbench-workflows-") as tmp:
        tmp = pathlib.Path(tmp)
        moved = moved_install(args, tmp)
        made = sh([str(pathlib.Path(args.source) / "scripts" / "make-bundle.sh"), args.build, str(tmp / "out")],
                  timeout=600).stdout.strip().splitlines()[-1]
        (tmp / "bundle").mkdir()
        sh(["tar", "-C", str(tmp / "bundle"), "-xzf", made])
        bundle_bin = next((tmp / "bundle").iterdir()) / "bin"
        hide = [str(pathlib.Path(args.source).resolve()), str(pathlib.Path(args.build).resolve())]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "CCBENCH_"))}
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        run_workflows("install", moved / "bin", tmp / "install-work", hide, env)
        run_workflows("bundle", bundle_bin, tmp / "bundle-work", hide, env)
    print("workflows: PASSED")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    cases = {"relocated": relocated, "deb": deb, "bundle": bundle, "quickstart": quickstart, "container": container,
             "nccl-swap": nccl_swap, "gpu-smoke": gpu_smoke, "workflows": workflows}
    parser.add_argument("case", choices=list(cases))
    args = parser.parse_args()
    cases[args.case](args)


if __name__ == "__main__":
    main()
