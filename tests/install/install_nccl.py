"""The install tier's NCCL cases (tests/install/install_test.py), with the NCCL of the PyPI wheel nvidia-nccl-cu13:
nccl-swap (the same allreduce_bench on the system's NCCL and on the wheel's) and gpu-smoke (the bundle's
ccbench-gpu-smoke in a bare Debian 12, the wheel's NCCL where pip puts it).
"""
import os
import pathlib
import re
import shutil
import sys
import tempfile
import time
import zipfile

from install_driver import chroot, need_root, rootfs, sh, skip

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
