#!/usr/bin/env python3
"""Hostile files around ccbench-report (issue 15, items 1 and 5). Device nodes and pipes are made in the
test's own temporary folder (mknod, mkfifo), never the machine's /dev.

  inputs              a device node (/dev/zero's numbers), a named pipe, a 1 GiB file: one line, exit 2, at once
                      (the pipe without blocking); --max-file-size raises the limit
  outputs             html -o and accept --junit to a device node, a pipe, a symlink, a directory, a missing
                      folder: one line, exit 2, the node left as it was
  outputs_inputs      every output (html -o, compare --html, import -o, accept --junit) that is an input, by any
                      name (the same path, a folder holding it, another spelling, a hard link): one line, exit 2,
                      the input left byte for byte as it was (issue 35, section 5)
  compare_incomplete  BASE and CAND with no row in common: exit 2; a CAND that stopped after 2 of 9 sizes:
                      exit 1 with its rows MISSING
"""
import argparse
import json
import os
import stat
import subprocess
import sys
import tempfile
import time


def run(report, args, cwd=None, timeout=30):
    start = time.monotonic()
    p = subprocess.run([report, *args], cwd=cwd, capture_output=True, text=True, errors="replace", timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def expect(report, args, want_rc, want_text, cwd=None):
    rc, out, err, took = run(report, args, cwd)
    lines = err.strip().splitlines()
    assert rc == want_rc, f"{args}: exit {rc}, expected {want_rc}; stderr: {err[-600:]}"
    if want_rc == 2:
        assert len(lines) == 1 and want_text in lines[0], f"{args}: expected one line with '{want_text}': {lines}"
    print(f"PASS: ccbench-report {' '.join(args)}: exit {rc} in {took:.2f} s: {lines[-1] if lines else ''}")
    return out


def make_nodes(tmp):
    zero = os.path.join(tmp, "zero")
    os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # the zero device, in our own folder
    null = os.path.join(tmp, "null")
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    pipe = os.path.join(tmp, "pipe")
    os.mkfifo(pipe)
    return zero, null, pipe


def check_inputs(report, data):
    run_file = os.path.join(data, "runs", "allreduce-np4-a.json")
    with tempfile.TemporaryDirectory() as tmp:
        zero, _, pipe = make_nodes(tmp)
        expect(report, ["table", zero], 2, "is a character device")
        expect(report, ["table", pipe], 2, "is a named pipe")
        expect(report, ["compare", run_file, pipe], 2, "is a named pipe")
        big = os.path.join(tmp, "big.json")
        with open(big, "wb") as f:
            f.truncate(1 << 30)  # sparse: 1 GiB without writing it
        expect(report, ["table", big], 2, "larger than the limit of 256M per input file")
        with open(run_file, "rb") as f:
            text = f.read()
        padded = os.path.join(tmp, "padded.json")
        with open(padded, "wb") as f:
            f.write(text + b" " * ((1 << 20) - len(text) + 1))  # a valid document of 1 MiB + 1 byte
        expect(report, ["table", padded, "--max-file-size", "1M"], 2, "larger than the limit of 1M")
        expect(report, ["table", padded, "--max-file-size", "2M"], 0, "")
        expect(report, ["table", padded, "--max-file-size", "lots"], 2, "--max-file-size lots")


def check_outputs(report, data, profiles):
    runs = os.path.join(data, "runs")
    smoke = os.path.join(profiles, "mpi-host-smoke.json")
    with tempfile.TemporaryDirectory() as tmp:
        _, null, pipe = make_nodes(tmp)
        with open(os.path.join(tmp, "target.html"), "w") as f:
            f.write("kept\n")
        os.symlink("target.html", os.path.join(tmp, "link.html"))
        os.mkdir(os.path.join(tmp, "d"))
        for out, what in ((null, "is a character device"), (pipe, "is a named pipe"),
                          (os.path.join(tmp, "link.html"), "is a symbolic link"),
                          (os.path.join(tmp, "d"), "is a directory"),
                          (os.path.join(tmp, "no", "r.html"), "does not exist")):
            expect(report, ["html", "allreduce-np4-a.json", "-o", out], 2, what, cwd=runs)
            expect(report, ["accept", "allreduce-np4-a.json", "--profile", smoke, "--junit", out], 2, what, cwd=runs)
        assert stat.S_ISCHR(os.lstat(null).st_mode), "the device node was replaced"
        assert stat.S_ISFIFO(os.lstat(pipe).st_mode), "the pipe was replaced"
        with open(os.path.join(tmp, "target.html")) as f:
            assert f.read() == "kept\n", "the symlink's target was written"
        page = os.path.join(tmp, "page.html")
        expect(report, ["html", "allreduce-np4-a.json", "-o", page], 0, "", cwd=runs)
        expect(report, ["html", "allreduce-np4-a.json", "-o", page], 0, "", cwd=runs)  # replaces a regular file
        left = sorted(os.listdir(tmp))
        assert left == ["d", "link.html", "null", "page.html", "pipe", "target.html", "zero"], f"left: {left}"


def check_outputs_inputs(report, data, profiles):
    smoke = os.path.join(profiles, "mpi-host-smoke.json")
    log_src = os.path.join(data, "..", "import", "nccl-tests", "h100x8_1node_all_reduce_float_dgxc-benchmarking.log")
    with tempfile.TemporaryDirectory() as tmp:
        for name, src in (("a.json", os.path.join(data, "runs", "allreduce-np4-a.json")),
                          ("b.json", os.path.join(data, "runs", "allreduce-np4-b.json")), ("run.log", log_src)):
            with open(src, "rb") as f, open(os.path.join(tmp, name), "wb") as out:
                out.write(f.read())
        os.link(os.path.join(tmp, "a.json"), os.path.join(tmp, "hard.html"))

        def contents():
            return {n: open(os.path.join(tmp, n), "rb").read() for n in ("a.json", "b.json", "run.log")}

        before = contents()
        for args in (["html", "a.json", "-o", "a.json"],
                     ["html", ".", "-o", "a.json"],                   # a folder that holds it
                     ["html", "a.json", "-o", "./a.json"],            # another spelling
                     ["html", "a.json", "-o", "hard.html"],           # a hard link to it
                     ["compare", "a.json", "b.json", "--html", "b.json"],
                     ["compare", "a.json", "b.json", "--html", "a.json"],
                     ["import", "run.log", "--test", "all_reduce", "-o", "run.log"],
                     ["import", "run.log", "--test", "all_reduce", "-o", tmp + "/./run.log"],
                     ["accept", "a.json", "--profile", smoke, "--junit", "a.json"]):
            expect(report, args, 2, "is the input", cwd=tmp)
        assert contents() == before, "an input was changed"
        expect(report, ["html", "a.json", "-o", "page.html"], 0, "", cwd=tmp)  # a new file is no input
        print("PASS: no output replaced an input; every input byte for byte as it was")


def check_compare_incomplete(report, data):
    runs = os.path.join(data, "runs")
    base = os.path.join(runs, "allreduce-np4-a.json")
    with open(base, encoding="utf-8") as f:
        doc = json.load(f)
    sizes = sorted({r["size_bytes"] for r in doc["results"]})
    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, "stopped.json")
        doc["results"] = [r for r in doc["results"] if r["size_bytes"] in sizes[:2]]
        doc["run"]["label"] = "stopped"
        with open(cut, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        out = expect(report, ["compare", base, os.path.join(runs, "sendrecv-pairs-np4.json")], 2, "no row in common")
        assert out == "", f"a refused compare printed a comparison: {out[:200]!r}"
        skipped = os.path.join(tmp, "skipped.json")  # the rows a bench writes for sizes it skipped
        with open(skipped, "w", encoding="utf-8") as f:
            json.dump(dict(doc, results=[dict(r, status="skipped", reason="skipped before allocating", time=None,
                                              algbw_GBps=0.0, busbw_GBps=0.0, busbw_mean_GBps=0.0, elapsed_s=0.0,
                                              ops_per_sample=0, pct_of_peak=None, samples_us=[], stop_reason=None)
                                         for r in doc["results"]]), f)
        expect(report, ["compare", skipped, skipped], 2, "were skipped in both")
        out = expect(report, ["compare", base, cut, "--format", "json"], 1, "")
        result = json.loads(out)
        missing = len(result["only_a"])
        assert result["regression"] and missing == 2 * (len(sizes) - 2), f"regression {result['regression']}, " \
            f"{missing} rows only in base"
        text = expect(report, ["compare", base, cut, "--colour", "never"], 1, "")
        assert f"{missing} MISSING" in text.splitlines()[-1], text.splitlines()[-1]
        print(f"PASS: a candidate with {len(sizes[:2])} of {len(sizes)} sizes: {missing} rows MISSING, exit 1")
        expect(report, ["compare", base, base], 0, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--profiles", required=True)
    ap.add_argument("case", choices=["inputs", "outputs", "outputs_inputs", "compare_incomplete"])
    a = ap.parse_args()
    report = os.path.abspath(a.report)
    data = os.path.abspath(a.data)
    if a.case == "inputs":
        check_inputs(report, data)
    elif a.case == "outputs":
        check_outputs(report, data, os.path.abspath(a.profiles))
    elif a.case == "outputs_inputs":
        check_outputs_inputs(report, data, os.path.abspath(a.profiles))
    else:
        check_compare_incomplete(report, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
