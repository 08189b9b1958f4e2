#!/usr/bin/env python3
"""ccbench-report import on real logs (tests/data/import, each file's origin in its README), end to end.

  logs       every fixture imported; figures checked against the log's own printed numbers; the documents
             validate against the schema and table, html and accept take them
  platforms  the mission's comparison: six 8x H800 all_reduce logs against one 8x H100 log, compare --label-a H800
             --label-b H100 in the terminal and as a page: each side's %peak of its own NVLink spec, measured B/A
             beside spec B/A
  json       nccl-tests' -J file, written here by the rules of its writer (src/util.cu at 2.19.6: booleans and NaN
             as strings, root padded to 6, -I 1's per-iteration and per-process times) around the rows of the real
             8x H100 log: samples from the iterations, per-rank times from the processes
  malformed  cut, empty, foreign and mixed logs: one line, exit 2
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import validate_result  # noqa: E402

H100_MULTI = "nccl-tests/h100x8_1node_nccltests2.17.8_multi-coll_xxrjun_cnode3-002.log"
H100_10N = "nccl-tests/h100x8_10node_nccltests2.17.8_multi-coll_xxrjun_N10_G8.log"
H100_FLOAT = "nccl-tests/h100x8_1node_all_reduce_float_dgxc-benchmarking.log"
H800 = [f"nccl-tests/h800x8_all_reduce_float_panlichen_run{i}.txt" for i in range(6)]
OLD = {  # the 2.0-2.11 logs without Rank lines: the ranks their rates give (busbw / algbw = 2(n-1)/n)
    "nccl-tests/a100_4node_nccltests2.0-2.9era_all_reduce_deepops_slurm-perf.txt": 32,  # 4 DGX A100
    "nccl-tests/a100x16_2node_nccltests2.10-2.11era_all_reduce_deepops_network-operator.txt": 16,  # 2 DGX A100
    "nccl-tests/roce_k8s_nccltests2.0-2.9era_all_reduce_deepops_roce-perf.txt": 16,
}
PERFTEST = "perftest/perftest_ib_write_bw_gbits_rdmacm_deepops_roce-perf.txt"
GiB = 1 << 30


class Env:
    def __init__(self, args, tmp):
        self.report, self.data, self.tmp = args.report, pathlib.Path(args.data), pathlib.Path(tmp)
        self.validator = validate_result.validator(args.schema)

    def run(self, *args):
        return subprocess.run([self.report, *map(str, args)], capture_output=True, text=True, timeout=120)

    def imported(self, name, files, *extra):
        out = self.tmp / f"{name}.json"
        p = self.run("import", *[self.data / f for f in files], *extra, "-o", out)
        assert p.returncode == 0, f"import {files}: exit {p.returncode}: {p.stderr}"
        doc = json.loads(out.read_text())
        found = list(validate_result.problems(self.validator, doc))
        assert not found, f"{name}: the imported document does not validate: {found[0]}"
        print(f"import {' '.join(map(str, files))} {' '.join(extra)}: {p.stderr.strip()}")
        return out, doc


def case(doc, bench, size, in_place=False):
    rows = [r for r in doc["results"] if r["benchmark"] == bench and r["size_bytes"] == size and
            r["in_place"] == in_place]
    assert len(rows) == 1, f"{bench} {size} B in_place={in_place}: {len(rows)} rows"
    return rows[0]


def close(a, b, rel=1e-3):
    return abs(a - b) <= rel * abs(b)


def check_logs(env):
    path, doc = env.imported("h100", [H100_MULTI])
    src = doc["run"]["source"]
    assert src["tool"] == "nccl-tests" and src["version"] == "2.17.8" and src["format"] == "text", src
    assert doc["environment"]["libraries"] == {"nccl": "2.29.2"}, doc["environment"]["libraries"]
    assert [h["hostname"] for h in doc["environment"]["hosts"]] == ["cnode3-002"]
    benches = sorted({r["benchmark"] for r in doc["results"]})
    assert benches == ["allgather_bench", "allreduce_bench", "alltoall_bench", "reducescatter_bench",
                       "sendrecv_bench"], benches
    # the log: 17179869184 B all_reduce, out-of-place 62340.7 us, 275.58 GB/s algbw, 482.27 GB/s busbw
    ar = case(doc, "allreduce_bench", 16 * GiB)
    assert ar["ranks"] == 8 and ar["dtype"] == "float64" and ar["wrong_elements"] == 0, ar
    assert close(ar["time"]["p50_us"], 62340.7, 1e-9) and close(ar["busbw_GBps"], 482.27), ar
    assert ar["peak_GBps"] == 450.0 and "H100 SXM" in ar["peak_basis"], ar["peak_basis"]
    # alltoall in place: the log printed N/A for #wrong (not checked)
    a2a = case(doc, "alltoall_bench", 32 << 20, in_place=True)
    assert a2a["wrong_elements"] is None and close(a2a["busbw_GBps"], 237.47), a2a
    ag = case(doc, "allgather_bench", 32 << 20)
    assert ag["count"] == 524288 and close(ag["busbw_GBps"], 237.85), ag
    print(f"  8x H100: all_reduce 16 GiB {ar['busbw_GBps']:.2f} GB/s busbw (the log: 482.27), "
          f"{ar['pct_of_peak']:.1f}% of {ar['peak_GBps']:.0f}; all_gather 32 MiB {ag['busbw_GBps']:.2f} (237.85)")
    for sub in (["table", path], ["html", path, "-o", env.tmp / "h100.html"]):
        p = env.run(*sub)
        assert p.returncode == 0, f"{sub[0]}: exit {p.returncode}: {p.stderr}"
    table = env.run("table", path).stdout
    assert "imported from nccl-tests 2.17.8 text" in table, table[:600]
    page = (env.tmp / "h100.html").read_text()
    assert "nccl-tests 2.17.8 (text), imported by ccbench" in page
    p = env.run("accept", path, "--profile", env.profiles / "h100-sxm-8gpu.json")
    line = next(x for x in p.stdout.splitlines() if x.startswith("allreduce-busbw-16g"))
    assert " PASS " in line, p.stdout
    print(f"  accept (h100-sxm-8gpu) on it: {' '.join(line.split())}")

    # the same log as launchers print it: Open MPI's --tag-output, srun's --label (derived from the real one)
    base = {(r["benchmark"], r["size_bytes"], r["in_place"]): r["time"]["p50_us"] for r in
            json.loads(path.read_text())["results"]}
    text = (env.data / H100_MULTI).read_text().splitlines(keepends=True)
    # Rank 0 prints the table; every other line comes from any rank (NCCL INFO lines interleave).
    def rank(i, line):
        return 0 if line.strip()[:1].isdigit() else i % 8

    for name, prefix in (("tagged", lambda i: f"[1,{i}]<stdout>:"), ("labelled", lambda i: f"{i}: ")):
        tagged = env.tmp / f"{name}.log"
        tagged.write_text("".join(prefix(rank(i, line)) + line for i, line in enumerate(text)))
        _, again = env.imported(name, [tagged])
        got = {(r["benchmark"], r["size_bytes"], r["in_place"]): r["time"]["p50_us"] for r in again["results"]}
        assert got == base, f"{name}: {len(got)} rows, {sum(got.get(k) == v for k, v in base.items())} as untagged"
        print(f"  with every line prefixed as {prefix(0)!r}: the same {len(got)} rows")

    _, doc = env.imported("h100x80", [H100_10N])
    ar = case(doc, "allreduce_bench", 8 * GiB)
    assert ar["ranks"] == 80 and ar["nodes"] == 10 and ar["peak_GBps"] is None, ar
    assert "several hosts" in ar["peak_basis"], ar["peak_basis"]
    print(f"  10 x 8 H100: 80 ranks on 10 hosts, all_reduce 8 GiB {ar['busbw_GBps']:.2f} GB/s, peak unknown "
          f"({ar['peak_basis']})")

    for f, ranks in OLD.items():
        p = env.run("import", env.data / f, "-o", env.tmp / "old.json")
        assert p.returncode == 2 and "--test" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
        _, doc = env.imported("old", [f], "--test", "all_reduce")
        got = {r["ranks"] for r in doc["results"]}
        assert got == {ranks}, f"{f}: ranks {got}, expected {ranks}"
        assert any("from busbw / algbw" in n for n in doc["run"]["source"]["notes"]), doc["run"]["source"]
        assert all(r["wrong_elements"] is None for r in doc["results"]), "the old error column is no count"
        print(f"  {pathlib.Path(f).name}: {len(doc['results'])} rows, {ranks} ranks from the rates")

    _, doc = env.imported("perftest", [PERFTEST])
    (r,) = doc["results"]
    # the log: 65536 B, 5000 iterations, BW peak 92.42 Gb/sec, BW average 92.40 Gb/sec (--report_gbits: 1e9 bit/s)
    assert r["benchmark"] == "ib_write_bw_bench" and r["backend"] == "verbs" and r["size_bytes"] == 65536, r
    assert close(r["busbw_GBps"], 92.40 / 8, 1e-9) and close(r["bw_peak_GBps"], 92.42 / 8, 1e-9), r
    ep = r["rdma"]["endpoints"]
    assert ep[0]["device"] == "mlx5_0" and ep[0]["gid"] == "::ffff:10.10.11.12" and ep[1]["gid"] == "::ffff:10.10.11.11"
    assert r["rdma"]["tx_depth"] == 128 and r["rdma"]["mtu"] == 4096 and r["ops_per_sample"] == 5000, r["rdma"]
    print(f"  perftest ib_write_bw: 92.40 Gb/sec -> {r['busbw_GBps']:.4f} GB/s")


def check_platforms(env):
    h800, doc = env.imported("h800", H800, "--test", "all_reduce", "--label", "H800")
    top = case(doc, "allreduce_bench", 4 * GiB)
    assert top["time"]["n"] == 6 and len(top["samples_us"]) == 6, top["time"]
    assert top["peak_GBps"] == 200.0 and "H800 SXM" in top["peak_basis"], top["peak_basis"]
    h100, doc = env.imported("h100f", [H100_FLOAT], "--test", "all_reduce", "--label", "H100")
    assert case(doc, "allreduce_bench", 4 * GiB)["peak_GBps"] == 450.0
    page = env.tmp / "platforms.html"
    p = env.run("compare", h800, h100, "--label-a", "H800", "--label-b", "H100", "--html", page)
    assert p.returncode == 0, f"compare: exit {p.returncode}: {p.stderr}"
    print(p.stdout)
    row = next(x.split() for x in p.stdout.splitlines() if x.strip().startswith("4 GiB"))
    # size(2) placement busbw_a busbw_b %peak_a %peak_b measured spec
    busbw_a, busbw_b, pct_a, pct_b, measured, spec = map(float, row[3:9])
    assert spec == 2.25 and close(measured, busbw_b / busbw_a, 2e-3), row
    assert close(pct_a, 100 * busbw_a / 200, 2e-3) and close(pct_b, 100 * busbw_b / 450, 2e-3), row
    html = page.read_text()
    assert all(t in html for t in ("H800 %peak", "H100 %peak", "measured B/A", "spec B/A", row[6], row[8])), html[:400]
    print(f"4 GiB: H800 {busbw_a} GB/s = {pct_a}% of 200, H100 {busbw_b} GB/s = {pct_b}% of 450; measured "
          f"H100/H800 {measured} against the spec's {spec}; the page {page.name} has the same row")


def writer_json(rows, args, devices, per_iter):
    """A -J document as nccl-tests 2.19.6's src/util.cu writes it (one line, booleans and NaN as strings, %lf
    numbers, root "%6i"), around ROWS taken from a real log. PER_ITER: (times_us per iteration, per-process rows)
    for each row, as -I 1 adds them."""
    results = []
    for i, r in enumerate(rows):
        entry = {"size": r["size"], "count": r["count"], "type": r["type"], "redop": r["redop"],
                 "root": "%6i" % r["root"]}
        for side in ("out_of_place", "in_place"):
            entry[side] = {"time": r[side][0], "alg_bw": r[side][1], "bus_bw": r[side][2], "nwrong": 0.0}
            if per_iter:
                times, procs = per_iter[i]
                entry[side + "_per_iter"] = {"skipped_iterations": 0, "min_us": min(times), "max_us": max(times),
                                             "avg_us": sum(times) / len(times), "p50_us": sorted(times)[len(times) // 2],
                                             "times_us": times, "per_process_max_times_us": procs}
        entry["actual_iterations"] = 20
        entry["experiment_name"] = ""
        results.append(entry)
    doc = {"version": 3, "start_time": "2026-01-28 14:50:17", "args": args, "env": [], "nccl_version": 22902,
           "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": rows[0]["size"], "maximum_bytes": rows[-1]["size"],
                      "step_factor": 2, "warmup_iters": 5, "iterations": 20, "aggregated_iterations": 1,
                      "validation": 1, "graph": 0, "blocking_collectives": "false", "per_iter_timing":
                      "true" if per_iter else "false", "per_iter_skip": 0, "parallel_init": "false",
                      "devices": devices},
           "results": results, "out_of_bounds": {"count": 0, "okay": "true"},
           "average_bus_bandwidth": {"bandwidth": "nan", "okay": "unchecked"}, "errors": [],
           "end_time": "2026-01-28 14:51:02"}
    text = json.dumps(doc, separators=(",", ":")).replace("/", "\\/")
    return re.sub(r'("(?:time|alg_bw|bus_bw|nwrong)":)(-?[0-9.]+)', lambda m: f"{m[1]}{float(m[2]):f}", text)


def real_rows(path):
    """The all_reduce rows of the real 8x H100 log, and its devices as -J lists them (one per process)."""
    rows, devices, inside = [], [], False
    for line in path.read_text().splitlines():
        if line.startswith("# Collective test starting:"):
            inside = line.split()[-1] == "all_reduce_perf"
        m = re.match(r"#\s+Rank\s+(\d+) Group\s+\d+ Pid\s+(\d+) on (\S+) device\s+(\d+) \[(\S+)\] (.*)", line)
        if inside and m:
            devices.append({"rank": int(m[1]), "group": 0, "pid": int(m[2]), "hostname": m[3], "device": int(m[4]),
                            "device_hex": m[5], "device_info": m[6]})
        f = line.split()
        if inside and len(f) == 13 and f[0].isdigit():
            rows.append({"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3], "root": int(f[4]),
                         "out_of_place": tuple(map(float, f[5:8])), "in_place": tuple(map(float, f[9:12]))})
    return rows, devices


def check_json(env):
    rows, devices = real_rows(env.data / H100_MULTI)
    assert len(rows) == 10 and len(devices) == 8, (len(rows), len(devices))
    args = ["./build/all_reduce_perf", "-b", "32M", "-e", "64G", "-f", "2", "-d", "double", "-J", "r.json"]
    plain = env.tmp / "plain.json"
    plain.write_text(writer_json(rows, args, devices, None))
    _, doc = env.imported("json", [plain])
    ar = case(doc, "allreduce_bench", 16 * GiB)
    assert close(ar["busbw_GBps"], 482.27) and ar["time"]["n"] == 1, ar
    assert doc["run"]["source"]["format"] == "json" and doc["run"]["started_utc"] == "2026-01-28T14:50:17Z"
    assert doc["environment"]["libraries"] == {"nccl": "2.29.2"}
    # -I 1: 20 iterations a row, each process's own; the printed time is their mean. Rank 5 arrives 30 us late to
    # every iteration, so its own time is the shortest and the others' is 30 us longer (what a straggler does).
    per_iter = []
    for r in rows:
        base = r["out_of_place"][0]
        procs = [[base - 30.0 if p == 5 else base for _ in range(20)] for p in range(8)]
        per_iter.append(([base] * 20, procs))
    slow = env.tmp / "per_iter.nccl-tests.json"  # not the imported result's name: no output replaces an input
    slow.write_text(writer_json(rows, args, devices, per_iter))
    _, doc = env.imported("per_iter", [slow])
    ar = case(doc, "allreduce_bench", 16 * GiB)
    assert ar["time"]["n"] == 20 and ar["time"]["p50_ci95_lo_us"] is not None, ar["time"]
    assert len(ar["per_rank"]) == 8 and ar["per_rank"][5]["last"] == 20, ar["per_rank"][5]
    t = env.run("table", env.tmp / "per_iter.json").stdout
    assert re.search(r"straggler in world: rank 5 \(cnode3-002", t), t[-1500:]
    print("  -J with -I 1: 20 samples a row; " + next(x for x in t.splitlines() if "straggler" in x).strip())
    # Issue 35: values -J never writes were read as "not checked", "N/A" or cast unchecked; each is one line, exit 2.
    base = json.loads(slow.read_text())
    for where, value, want in (("nwrong", 1.5, "nwrong 1.5 is not a count"), ("nwrong", -3, "nwrong -3 is not a count"),
                               ("time", 0, "time 0 is not a positive number"),
                               ("skipped_iterations", 1e30, "skipped_iterations 1e+30 is not a count"),
                               ("skipped_iterations", -1, "skipped_iterations -1 is not a count")):
        doc = json.loads(json.dumps(base))
        row = doc["results"][0]
        (row["out_of_place_per_iter"] if where == "skipped_iterations" else row["out_of_place"])[where] = value
        bad = env.tmp / "bad.nccl-tests.json"
        bad.write_text(json.dumps(doc))
        p = env.run("import", bad, "-o", env.tmp / "bad.json")
        assert p.returncode == 2 and want in p.stderr and len(p.stderr.strip().splitlines()) == 1, (where, p.stderr)
    print("  -J: nwrong 1.5 and -3, time 0, skipped_iterations 1e30 and -1: each refused with one line")


def broadcast_log(root):
    """A broadcast table of 8 ranks in nccl-tests 2.17's layout, built here as a test input (busbw = algbw: its
    bus factor is 1); `root` as the log prints it."""
    ranks = "".join(f"#  Rank  {r} Group  0 Pid 1000{r} on node-a device  {r} [0000:{r:02x}:00] NVIDIA H100 80GB HBM3\n"
                    for r in range(8))
    rows = "".join(f"  {size:>12}  {size // 4:>12}     float    none  {root:>6}  {t:>7.2f}  {size / t / 1e3:6.2f}  "
                   f"{size / t / 1e3:6.2f}       0  {t:>7.2f}  {size / t / 1e3:6.2f}  {size / t / 1e3:6.2f}       0\n"
                   for size, t in ((1048576, 20.0), (4194304, 50.0)))
    return ("# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902\n"
            "# Collective test starting: broadcast_perf\n"
            "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 4(factor) warmup iters: 5 iters: 20\n"
            + ranks +
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw"
            "   busbw  #wrong\n"
            + rows + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 70.0\n")


def stray_row_log(text):
    """The real log under Open MPI's --tag-output ("[1,0]<stdout>:"), one of its rows printed again by rank 3."""
    lines = [f"[1,0]<stdout>:{x}" for x in text.splitlines()]
    row = next(i for i, x in enumerate(lines) if x.split(":", 1)[1].strip().startswith("67108864"))
    lines.insert(row + 1, "[1,3]<stdout>:" + lines[row].split(":", 1)[1])
    return "\n".join(lines) + "\n"


def check_malformed(env):
    text = (env.data / H100_MULTI).read_text()
    perf = (env.data / PERFTEST).read_text()
    cases = {
        "cut-mid-row.log": (text[:text.index("  4294967296")] + "  4294967296   536870", "fields under a header"),
        "header-only.log": (text[:text.index("    33554432")], "a table header and no row"),
        "empty.log": ("", "not a nccl-tests log"),
        "words.log": ("hello\nworld\n", "not a nccl-tests log"),
        "cut.json": ('{"version":3,"args":["all_reduce_perf"],"config":{', "truncated or not JSON"),
        "foreign.json": ('{"schema": "ccbench.result"}', "not a nccl-tests -J file"),
        "hypercube.log": (text.replace("all_reduce_perf", "hypercube_perf"), "has no ccbench bench"),
        "perftest-cut.txt": (perf[:perf.index("65536      5000")], "truncated: no result row"),
        "perftest-read.txt": (perf.replace("RDMA_Write BW Test", "RDMA_Read BW Test"), "ib_write_bw and ib_write_lat"),
        "bad-type.log": (text.replace("double     sum", "quad       sum", 1), "unknown type 'quad'"),
        # Issue 35: what was accepted, dropped or misread before
        "negative-size.log": (text.replace("    33554432       4194304", "   -33554432       4194304", 1),
                              "size '-33554432' is negative"),
        "huge-size.log": (text.replace("    33554432       4194304", "1152921504606846976 144115188075855872", 1),
                          "is too large (above 2^53"),
        "footer-failed.log": (text.replace("# Out of bounds values : 0 OK", "# Out of bounds values : 5 FAILED", 1),
                              "the footer counts 5 out-of-bounds values, and no row of the table counts"),
        "broadcast-root-minus-one.log": (broadcast_log(-1), "root -1 is not a rank of the 8 ranks of broadcast"),
        "broadcast-root-nine.log": (broadcast_log(9), "root 9 is not a rank of the 8 ranks of broadcast"),
        "stray-rank-row.log": (stray_row_log(text), "a table row printed by rank 3, inside the table another rank"),
    }
    for name, (body, want) in cases.items():
        path = env.tmp / name
        path.write_text(body)
        p = env.run("import", path, "-o", env.tmp / "out.json")
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and want in lines[0], f"{name}: exit {p.returncode}: {lines}"
        assert not (env.tmp / "out.json").exists(), f"{name}: a document was written"
        print(f"  {name}: exit 2, {lines[0].split(': ', 2)[-1]}")
    p = env.run("import", env.data / H100_MULTI, env.data / PERFTEST, "-o", env.tmp / "out.json")
    assert p.returncode == 2 and "one tool's logs at a time" in p.stderr, p.stderr
    # "#bytes" in a note of a nccl-tests log does not make it a perftest log; a valid broadcast log imports.
    noted = env.tmp / "noted.log"
    noted.write_text(text.replace("# Collective test starting: all_reduce_perf",
                                  "# Collective test starting: all_reduce_perf\n# note: #bytes of each row", 1))
    assert env.run("import", noted, "-o", env.tmp / "noted.json").returncode == 0, "#bytes sent it to perftest"
    bcast = env.tmp / "bcast.log"
    bcast.write_text(broadcast_log(3))
    p = env.run("import", bcast, "-o", env.tmp / "bcast.json")
    assert p.returncode == 0, p.stderr


def check_runs(env):
    """Issue 35, section 2: logs of other runs are not samples of one, and one log given twice is one sample."""
    # An H800 node's log beside an H100 node's: other hosts and GPU models, refused with one line naming both.
    out = env.tmp / "mixed.json"
    p = env.run("import", env.data / H800[0], env.data / H100_FLOAT, "--test", "all_reduce", "-o", out)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and not out.exists(), f"exit {p.returncode}: {p.stderr}"
    assert "a run of 8 rank(s) on pool0-01806 of NVIDIA H100 80GB HBM3 beside" in lines[0], lines[0]
    assert "of NVIDIA H800: logs of other hosts, rank counts or GPU models are other runs" in lines[0], lines[0]
    print(f"  H800 and H100 logs together: exit 2: {lines[0]}")
    # The same bytes under three names (twice the same path, once a copy): one log, one sample.
    copy = env.tmp / "run0-copy.txt"
    copy.write_bytes((env.data / H800[0]).read_bytes())
    p = env.run("import", env.data / H800[0], env.data / H800[0], copy, "--test", "all_reduce", "-o",
                env.tmp / "once.json")
    assert p.returncode == 0, p.stderr
    assert "from 1 log(s)" in p.stderr, p.stderr
    doc = json.loads((env.tmp / "once.json").read_text())
    assert all(r["time"]["n"] == 1 for r in doc["results"] if r["status"] == "ok"), "a copy counted as a sample"
    notes = doc["run"]["source"]["notes"]
    assert any("run0-copy.txt is the same log as" in n and "counted once" in n for n in notes), notes
    print(f"  one log given three times: {p.stderr.strip()}; n = 1 per row")
    # Six copies against six copies of another log: n = 1 a side, so compare cannot be sure (it said SLOWER).
    a = env.run("import", *([env.data / H800[0]] * 6), "--test", "all_reduce", "-o", env.tmp / "a6.json")
    b = env.run("import", *([env.data / H800[1]] * 6), "--test", "all_reduce", "-o", env.tmp / "b6.json")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    c = env.run("compare", env.tmp / "a6.json", env.tmp / "b6.json", "--format", "json")
    counts = json.loads(c.stdout)["counts"]
    assert counts["slower"] == 0 and counts["faster"] == 0 and counts["unsure"] > 0, counts
    print(f"  six copies against six copies: {counts}")


def check_ended(env):
    """Issue 35, section 2: a run that failed or was cut is imported with what it measured and why it ended (accept
    FAILs it); a 2.12+ log that does not name its test gets it from its table; a flag its figures contradict is
    refused."""
    lines = (env.data / H100_MULTI).read_text().splitlines(keepends=True)
    at_4g = next(i for i, x in enumerate(lines) if x.lstrip().startswith("4294967296"))
    corrupt = lines[at_4g].split()
    corrupt[8] = "7"  # out-of-place #wrong: seven wrong elements at 4 GiB
    failure = "cnode3-002: Test NCCL failure common.cu:1279 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'\n"
    next_test = next(i for i, x in enumerate(lines) if i > at_4g and x.startswith("# nccl-tests version"))
    failed = env.tmp / "failed.log"
    failed.write_text("".join(lines[:at_4g]) + "  " + "  ".join(corrupt) + "\n" + failure + "".join(lines[next_test:]))
    _, doc = env.imported("failed", [failed])
    ar = [r for r in doc["results"] if r["benchmark"] == "allreduce_bench"]
    ok = [r for r in ar if r["status"] == "ok"]
    bad = [r for r in ar if r["status"] == "failed"]
    assert len(ok) == 16, f"{len(ok)} all_reduce rows kept, expected the 8 sizes x 2 placements measured"
    assert [r["size_bytes"] for r in bad] == [8 * GiB], [r["size_bytes"] for r in bad]
    assert "Test NCCL failure common.cu:1279" in bad[0]["reason"] and bad[0]["time"] is None, bad[0]["reason"]
    assert case(doc, "allreduce_bench", 4 * GiB)["wrong_elements"] == 7
    others = sorted({r["benchmark"] for r in doc["results"]} - {"allreduce_bench"})
    assert len(others) == 4, f"the other complete tests of the file: {others}"
    print(f"  failed run: 16 rows kept, {bad[0]['size_bytes']} B failed: {bad[0]['reason'][:120]}; also {others}")
    p = env.run("accept", env.tmp / "failed.json", "--profile", env.profiles / "h100-sxm-8gpu.json")
    assert p.returncode == 1, f"accept: exit {p.returncode}"
    verdicts = {m.group(1): m.group(2) for m in re.finditer(r"^(\S+) +(PASS|FAIL) ", p.stdout, re.M)}
    assert verdicts.get("no-failed") == "FAIL" and verdicts.get("no-wrong-elements") == "FAIL", verdicts
    wrong_line = next(x for x in p.stdout.splitlines() if x.startswith("no-wrong-elements"))
    assert "4 GiB" in wrong_line, wrong_line
    print(f"  accept: no-failed FAIL, {wrong_line.strip()[:150]}")
    table = env.run("table", env.tmp / "failed.json").stdout
    assert "Test NCCL failure" in table, "table does not show why the run ended"

    # Cut after a row, no failure line: truncated, its rows kept.
    cut = env.tmp / "cut.log"
    cut.write_text("".join(lines[:at_4g + 1]))
    _, doc = env.imported("cut", [cut])
    bad = [r for r in doc["results"] if r["status"] == "failed"]
    assert len(bad) == 1 and "truncated: the table of the test from line 1 ends after line" in bad[0]["reason"], bad

    # A 2.12+ log that does not name its test: inferred from its table, and said so.
    unnamed = env.tmp / "unnamed.log"
    unnamed.write_text("".join(x for x in lines[:35] if "Collective test" not in x))
    _, doc = env.imported("unnamed", [unnamed])
    assert {r["benchmark"] for r in doc["results"]} == {"allreduce_bench"}
    note = next(n for n in doc["run"]["source"]["notes"] if "inferred" in n)
    print(f"  {note}")
    gather = env.tmp / "unnamed-gather.log"  # all_gather and alltoall print alike: it must ask
    gather.write_text("".join(x for x in lines[35:70] if "Collective test" not in x))
    p = env.run("import", gather, "-o", env.tmp / "g.json")
    assert p.returncode == 2 and "does not tell it: give --test" in p.stderr, p.stderr

    # Flags the log's own figures contradict: refused with both.
    p = env.run("import", env.data / H100_FLOAT, "--test", "all_gather", "-o", env.tmp / "x.json")
    assert p.returncode == 2 and "where all_gather_perf on 8 rank(s) gives 0.8750" in p.stderr, p.stderr
    print(f"  --test all_gather on an all_reduce log: {p.stderr.strip()[-150:]}")
    old = next(f for f, n in OLD.items() if n == 32)
    p = env.run("import", env.data / old, "--test", "all_reduce", "--ranks", "5", "-o", env.tmp / "x.json")
    assert p.returncode == 2 and "where all_reduce_perf on 5 rank(s) gives 1.6000" in p.stderr, p.stderr
    p = env.run("import", env.data / H100_MULTI, "--ranks", "4", "-o", env.tmp / "x.json")
    assert p.returncode == 2 and "--ranks 4: the log's Rank lines name 8 ranks" in p.stderr, p.stderr
    p = env.run("import", env.data / H100_MULTI, "--test", "all_gather", "-o", env.tmp / "x.json")
    assert p.returncode == 2 and "--test all_gather: the log names its test all_reduce_perf" in p.stderr, p.stderr


def check_perftest(env):
    """Issue 35: a perftest log over InfiniBand (LIDs, no GID lines) was recorded as 1 node; an ib_write_lat row
    whose t_min is above its t_max was accepted. Both logs are the real RoCE log edited here as test inputs."""
    perf = (env.data / PERFTEST).read_text()
    ib = (perf.replace("Link type       : Ethernet", "Link type       : IB")
          .replace("    GID index       : 3\n", "")
          .replace("local address: LID 0000", "local address: LID 0x02")
          .replace("remote address: LID 0000", "remote address: LID 0x05"))
    ib = "".join(x for x in ib.splitlines(keepends=True) if not x.strip().startswith("GID:"))
    (env.tmp / "ib.txt").write_text(ib)
    _, doc = env.imported("ib", [env.tmp / "ib.txt"])
    assert doc["results"][0]["nodes"] == 2, doc["results"][0]["nodes"]
    print(f"  InfiniBand (LIDs 0x02 and 0x05, no GID): {doc['results'][0]['nodes']} nodes")
    lat = (perf.replace("RDMA_Write BW Test", "RDMA_Write Latency Test")
           .replace(perf[perf.index(" #bytes"):perf.index("---", perf.index(" #bytes"))],
                    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                    "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
                    " 2       1000          9.10           1.50         1.60               1.62           0.10"
                    "             2.00                   5.00\n    "))
    (env.tmp / "lat.txt").write_text(lat)
    p = env.run("import", env.tmp / "lat.txt", "-o", env.tmp / "lat.json")
    assert p.returncode == 2 and "t_min, t_typical, t_avg and t_max are out of order" in p.stderr, p.stderr
    (env.tmp / "lat-ok.txt").write_text(lat.replace("9.10           1.50", "1.50           9.10"))
    assert env.run("import", env.tmp / "lat-ok.txt", "-o", env.tmp / "lat-ok.json").returncode == 0
    # --run_infinitely: a row every -D seconds and no closing line (stopped by hand). Its rows are samples, and the
    # cut is said. (The real log's row, three times over at three rates; the log cut after them.)
    row = next(x for x in perf.splitlines(keepends=True) if x.strip().startswith("65536"))
    head = perf[:perf.index(row)]
    rows = "".join(row.replace("92.40", f"{rate:.2f}") for rate in (92.10, 92.40, 91.80))
    (env.tmp / "infinite.txt").write_text(head + rows)
    _, doc = env.imported("infinite", [env.tmp / "infinite.txt"])
    assert doc["results"][0]["time"]["n"] == 3, doc["results"][0]["time"]
    assert any("truncated: the table ends after line" in n and "3 row(s) are kept" in n
               for n in doc["run"]["source"]["notes"]), doc["run"]["source"]["notes"]
    print(f"  --run_infinitely: 3 rows, n = 3: {doc['results'][0]['busbw_GBps']:.4f} GB/s (the median)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True)
    parser.add_argument("--data", required=True, help="tests/data/import")
    parser.add_argument("--schema", required=True)
    parser.add_argument("--profiles", required=True)
    parser.add_argument("what", choices=["logs", "platforms", "json", "malformed", "runs", "ended", "perftest"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ccbench-import-") as tmp:
        env = Env(args, tmp)
        env.profiles = pathlib.Path(args.profiles)
        {"logs": check_logs, "platforms": check_platforms, "json": check_json, "malformed": check_malformed,
         "runs": check_runs, "ended": check_ended, "perftest": check_perftest}[args.what](env)
    print(f"PASS: import {args.what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
