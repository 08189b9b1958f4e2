#!/usr/bin/env python3
"""copy_bench tests.

  copy_bench_test.py --bin B --schema S bad-input   anywhere: bad options exit 2 with one line, before any GPU
                                                    is looked for; --check-args (with --bind, --timeout) exit 0
                                                    and print nothing; no GPU: exit 2, "no CUDA device here"
  copy_bench_test.py --bin B --schema S gpu         a GPU: every path of every local GPU at 3 sizes, verified
                                                    (0 wrong bytes), JSON valid, %peak printed; exit 77
                                                    (skipped) where nvidia-smi lists no GPU
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import validate_result  # noqa: E402

SKIP = 77
BAD = [
    (["-b", "1M", "-e", "1K"], "--min-bytes 1M is larger than --max-bytes 1K"),
    (["-f", "1"], "--step-factor 1 must be greater than 1"),
    (["-b", "12Q"], "sizes are like 64K, 4M, 1G"),
    (["-c", "2"], "--check 2 must be 0 or 1"),
    (["--min-time", "0"], "--min-time 0 must be from 0 to 60 seconds"),
    (["--no-such-flag"], "--no-such-flag"),
    (["--bind", "bogus"], "--bind 'bogus' is not none or auto"),
    (["--timeout", "-1"], "--timeout must be positive seconds"),
    (["--check-args", "--bind", "bogus"], "--bind 'bogus' is not none or auto"),
    (["--check-args", "--timeout", "-1"], "--timeout must be positive seconds"),
]
# What a workflow asks every bench before a run (accept-node, regression): answered with exit 0 and no output.
GOOD_CHECKS = [
    ["--check-args"],
    ["--check-args", "--bind", "auto"],
    ["--check-args", "--bind", "none", "--timeout", "60", "-b", "4M", "-e", "4M", "-c", "1"],
]


def gpus_listed():
    """A GPU machine (the kernel driver's device nodes, or nvidia-smi listing a GPU): only without one is the GPU
    part skipped; where CUDA cannot start on a GPU machine, copy_bench's failure fails the test."""
    if os.path.exists("/dev/nvidiactl"):
        return True
    smi = shutil.which("nvidia-smi")
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout if smi else ""
    return "GPU 0" in listed


def run(binary, args, cwd):
    p = subprocess.run([binary, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    return p.returncode, p.stdout, p.stderr


def bad_input(args):
    with tempfile.TemporaryDirectory() as tmp:
        for flags, says in BAD:
            rc, out, err = run(args.bin, flags, tmp)
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert rc == 2 and len(lines) == 1 and says in lines[0], f"{flags}: exit {rc}, stderr {err!r}"
            assert not list(pathlib.Path(tmp).rglob("*.json")), f"{flags}: a result file was written"
            print(f"{' '.join(flags)}: exit 2, {lines[0]}")
        for flags in GOOD_CHECKS:
            rc, out, err = run(args.bin, flags, tmp)
            assert rc == 0 and not out and not err, f"{flags}: exit {rc}, stdout {out!r}, stderr {err!r}"
            assert not list(pathlib.Path(tmp).rglob("*")), f"{flags}: wrote {list(pathlib.Path(tmp).rglob('*'))}"
            print(f"{' '.join(flags)}: exit 0, nothing printed")
        if not gpus_listed():
            rc, out, err = run(args.bin, ["-b", "1M", "-e", "1M"], tmp)
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert rc == 2 and len(lines) == 1 and "no CUDA device here" in lines[0], f"no GPU: exit {rc}, {err!r}"
            print(f"no GPU: exit 2, {lines[0]}")
    print(f"PASS: {len(BAD)} bad inputs exit 2 with one line and no file; {len(GOOD_CHECKS)} checks answer 0")


def gpu(args):
    if not gpus_listed():
        print("SKIPPED: no GPU visible (nvidia-smi -L lists none); copy_bench did not run")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "copy.json"
        rc, stdout, err = run(args.bin, ["-b", "1M", "-e", "64M", "-f", "8", "--min-time", "0.05", "--out", str(out)],
                              tmp)
        print(stdout[-6000:], err[-2000:])
        assert rc == 0, f"copy_bench exit {rc}"
        doc = json.loads(out.read_text())
        found = list(validate_result.problems(validate_result.validator(args.schema), doc))
        assert not found, f"{out} does not validate: {found[0]}"
        print(f"{'path':<28} {'bytes':>10} {'busbw GB/s':>11} {'%peak':>7} {'wrong':>6}  peak basis")
        for r in doc["results"]:
            assert r["status"] == "ok" and r["wrong_elements"] == 0, f"{r['group_id']} {r['size_bytes']}: {r}"
            pct = f"{r['pct_of_peak']:.1f}" if r["pct_of_peak"] is not None else "-"
            print(f"{r['group_id']:<28} {r['size_bytes']:>10} {r['busbw_GBps']:>11.2f} {pct:>7} "
                  f"{r['wrong_elements']:>6}  {r['peak_basis']}")
        # Every path a GPU has (p2p with two or more) at every size of the sweep: a path that silently went
        # missing would otherwise pass.
        gpus = sorted({int(g) for r in doc["results"] for g in re.findall(r"gpu(\d+)", r["group_id"])})
        expected = {f"{kind}:{mem}:gpu{g}" for g in gpus for kind in ("h2d", "d2h") for mem in ("pinned", "pageable")}
        expected |= {f"d2d:{engine}:gpu{g}" for g in gpus for engine in ("ce", "sm")}
        if len(gpus) > 1:
            expected |= {f"p2p:{engine}:{way}:gpu{a}-gpu{b}" for a in gpus for b in gpus if a != b
                         for engine in ("ce", "sm") for way in ("uni", "bidir")}
        sizes = {1 << 20, 8 << 20, 64 << 20}
        have = {(r["group_id"], r["size_bytes"]) for r in doc["results"]}
        missing = sorted((p, b) for p in expected for b in sizes if (p, b) not in have)
        assert gpus and not missing, f"gpus {gpus}; missing path/size: {missing[:10]}"
        print(f"PASS: {len(doc['results'])} copies verified, every path of {len(gpus)} GPU(s) at 3 sizes, JSON valid")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("what", choices=["bad-input", "gpu"])
    args = parser.parse_args()
    return (bad_input if args.what == "bad-input" else gpu)(args) or 0


if __name__ == "__main__":
    sys.exit(main())
