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
      with SLOWER rows (exit 1) against the label and against the history index made of it (ccbench-report
      index, --history), and NO VERDICT (exit 2) where nothing can be compared: a baseline that holds
      none of the suite's benches, and ccbench-report regression on an empty candidate folder.

Root is needed (mount namespaces, chroot); mmdebstrap and the Debian archive for deb. Exit 77 =
skipped, saying what is missing. Failures raise AssertionError (exit 1).

The shared driver (sh, the hidden trees, the moved install, Debian root filesystems and chroot) is in
install_driver.py; deb and quickstart (Debian 12 with apt) in install_debian.py; bundle and container in
install_bundle.py; nccl-swap and gpu-smoke (the pip wheel's NCCL) in install_nccl.py; relocated and workflows
(a moved install with the trees hidden) are here.
"""
import argparse
import os
import pathlib
import re
import shutil
import tempfile
import time

from install_bundle import bundle, container
from install_debian import deb, quickstart
from install_driver import hidden, moved_install, need_root, sh
from install_nccl import gpu_smoke, nccl_swap

BENCH_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader",
             "OMPI_MCA_mpi_yield_when_idle": "1"}


def check_runpath(program):
    dyn = sh(["readelf", "-d", str(program)]).stdout
    assert "(RUNPATH)" in dyn, f"{program}: no RUNPATH (LD_LIBRARY_PATH could not swap NCCL or MPI)"
    assert "(RPATH)" not in dyn, f"{program}: RPATH, which LD_LIBRARY_PATH cannot override"
    assert "$ORIGIN/../lib/ccbench" in dyn, f"{program}: RUNPATH lacks $ORIGIN/../lib/ccbench"


def relocated(args):
    need_root()
    with tempfile.TemporaryDirectory(prefix="ccbench-install-") as tmp:
        tmp = pathlib.Path(tmp)
        moved = moved_install(args, tmp)
        bindir = moved / "bin"
        programs = sorted(p.name for p in bindir.iterdir())
        print("installed bin/:", " ".join(programs))
        for want in ["allreduce_bench", "sendrecv_bench", "ccbench-report", "ccbench-topo", "ccbench-accept-node",
                     "ccbench-accept-fleet", "ccbench-regression", "ccbench-drain"]:
            assert want in programs, f"bin/{want} was not installed"
        for data in ["share/ccbench/profiles/mpi-host-smoke.json", "share/ccbench/suites/smoke.suite",
                     "share/ccbench/hardware.json", "share/ccbench/ccbench.result.schema.json",
                     "share/doc/ccbench/README.md", "share/doc/ccbench/docs/README.md", "libexec/ccbench/env.sh",
                     "libexec/ccbench/lib/workflow.sh"]:
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
                 f"{versions} && '{bindir}/ccbench-drain' --help | grep -q 'State=RESUME' && cd '{out}' && "
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
        # the history holds base alone: indexed before any other label is stored
        ("history index", f"'{bindir}/ccbench-report' index st --db history.sqlite", 0,
         r"4 result file\(s\) under the folders: 4 added"),
        ("regression, slowed candidate", f"{slow} '{bindir}/ccbench-regression' --suite mini.suite --label slow "
         f"--baseline base --store st {common} --launches 2", 1, r"verdict: REGRESSION \([1-9]\d* SLOWER"),
        ("regression against history, slowed candidate", f"{slow} '{bindir}/ccbench-regression' --suite mini.suite "
         f"--label hslow --history history.sqlite --store st {common} --launches 2", 1,
         r"verdict: REGRESSION \([1-9]\d* SLOWER"),
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
