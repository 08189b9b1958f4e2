#!/usr/bin/env python3
"""Synthetic fleet sweeps for the fleet verdict's tests and its scale benchmark, derived from a real sweep.

Every result is a copy of a real result of tests/data/report/runs/fleet-equal.json (sendrecv_bench --all-pairs
over 4 namespace hosts) or fleet-groups.json (allreduce_bench --hosts-per-group 2), with its hosts, ranks and
figures replaced: a pair's busbw is BASE x the slower of its two hosts' factors x its link's factor, its times
follow from the size (for ib_write_lat_bench: a latency of BASE / factor microseconds). The label says so:
"synthetic: ...". Nothing here is a measurement; it is the shape of one, for the verdict's rules.

  synthetic_fleet.py OUT --hosts 4 [--lanes 1] [--bad 0=0.5 --bad 1=0.5] [--link 2:3=0.5]
                     [--bench sendrecv|ib_write_lat|groups] [--base 1.0] [--peak GBPS] [--status failed]
                     [--hostname-format n{}]
As a module: write_sweep(path, hosts=..., ...) with the same arguments.
"""
import argparse
import copy
import json
import pathlib

RUNS = pathlib.Path(__file__).resolve().parent.parent / "data" / "report" / "runs"


def _template(kind):
    source = "fleet-groups.json" if kind == "groups" else "fleet-equal.json"
    doc = json.loads((RUNS / source).read_text())
    return source, doc


def _pairs(n):
    return [(a, b) for a in range(n) for b in range(a + 1, n)]


def _groups_of_two(n):
    """--hosts-per-group 2 as the planner makes it: consecutive hosts, then slot s of every group."""
    first = [list(range(i, min(i + 2, n))) for i in range(0, n, 2)]
    order = [g[s] for s in range(2) for g in first if s < len(g)]
    second = [order[i:i + 2] for i in range(0, n, 2)]
    return first + second


def _set_figures(r, size, factor, base, bench, peak):
    if bench == "ib_write_lat":
        lat_us = base / factor
        for key in ("p50_us", "min_us", "mean_us", "max_us", "p95_us", "p99_us", "p999_us"):
            r["time"][key] = lat_us * {"min_us": 0.97, "max_us": 1.2, "p95_us": 1.1, "p99_us": 1.15,
                                       "p999_us": 1.19}.get(key, 1.0)
        rate = size / (lat_us * 1e-6) / 1e9
    else:
        rate = base * factor
        p50_us = size / (rate * 1e9) * 1e6
        for key, share in (("p50_us", 1.0), ("min_us", 0.97), ("mean_us", 1.02), ("max_us", 1.2), ("p95_us", 1.1),
                           ("p99_us", 1.15), ("p999_us", 1.19)):
            r["time"][key] = p50_us * share
    r["time"]["stdev_us"] = r["time"]["p50_us"] * 0.03
    r["time"]["p50_ci95_lo_us"] = None
    r["time"]["p50_ci95_hi_us"] = None
    r["algbw_GBps"] = r["busbw_GBps"] = r["busbw_mean_GBps"] = rate
    r["peak_GBps"] = peak
    r["pct_of_peak"] = 100.0 * rate / peak if peak else None
    r["peak_basis"] = "--peak-GBps given on the command line" if peak else r["peak_basis"]


def write_sweep(path, hosts, lanes=1, bad=None, links=None, bench="sendrecv", base=1.0, peak=None, status="ok",
                hostname_format="n{}"):
    bad = bad or {}
    links = links or {}
    source, doc = _template(bench)
    template = doc["results"][0]
    topo_host = doc["topology"]["hosts"][0]
    names = [hostname_format.format(i) for i in range(hosts)]
    size = template["size_bytes"]
    doc["environment"]["hosts"] = [{"hostname": name, "ranks": [i * lanes + l for l in range(lanes)]}
                                   for i, name in enumerate(names)]
    doc["environment"]["binding"] = []
    topologies = []
    for name in names:
        t = copy.deepcopy(topo_host)
        t["hostname"] = name
        topologies.append(t)
    doc["topology"]["hosts"] = topologies
    label = (f"synthetic: {hosts} hosts x {lanes} ranks from {source} (tests/tools/synthetic_fleet.py), "
             f"{bench}, host factors {bad or 'none'}, link factors {links or 'none'}")
    doc["run"]["label"] = label
    doc["run"]["argv"] = ["synthetic_fleet.py", path.name if isinstance(path, pathlib.Path) else str(path)]
    if bench == "ib_write_lat":
        template = dict(template, benchmark="ib_write_lat_bench", op="ib_write_lat", dtype="uint8", count=size)
        doc["run"]["benchmark"] = "ib_write_lat_bench"
    text = json.dumps(template, indent=1)
    members = ([(g, [names[h] for h in g]) for g in _groups_of_two(hosts)] if bench == "groups" else None)
    results = []
    units = members if members else [((a, b), None) for a, b in _pairs(hosts)]
    for n, (unit, _) in enumerate(units):
        for lane in range(1 if bench == "groups" else lanes):
            r = json.loads(text)
            factor = min(bad.get(h, 1.0) for h in unit)
            if bench != "groups":
                factor *= links.get((unit[0], unit[1]), 1.0)
            _set_figures(r, size, factor, base, bench, peak)
            if bench == "groups":
                r["group_id"] = f"hosts:{n}"
                r["group_ranks"] = [h * lanes + l for h in unit for l in range(lanes)]
                r["group_hosts"] = [names[h] for h in unit]
            else:
                ra, rb = unit[0] * lanes + lane, unit[1] * lanes + lane
                r["group_id"] = f"pair:{ra}-{rb}"
                r["group_ranks"] = [ra, rb]
                r["group_hosts"] = [names[unit[0]], names[unit[1]]]
            r["ranks"] = len(r["group_ranks"])
            r["nodes"] = len(r["group_hosts"])
            if status != "ok":
                r["status"] = status
                r["reason"] = f"synthetic: {status}"
            results.append(r)
    doc["results"] = results
    pathlib.Path(path).write_text(json.dumps(doc, indent=1))
    return names


def _factor(text):
    key, value = text.split("=")
    return key, float(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--lanes", type=int, default=1)
    ap.add_argument("--bad", action="append", default=[], type=_factor, help="HOST=FACTOR (host index)")
    ap.add_argument("--link", action="append", default=[], type=_factor, help="A:B=FACTOR (host indices, A < B)")
    ap.add_argument("--bench", choices=["sendrecv", "ib_write_lat", "groups"], default="sendrecv")
    ap.add_argument("--base", type=float, default=1.0)
    ap.add_argument("--peak", type=float)
    ap.add_argument("--status", default="ok")
    ap.add_argument("--hostname-format", default="n{}")
    a = ap.parse_args()
    bad = {int(k): v for k, v in a.bad}
    links = {tuple(int(x) for x in k.split(":")): v for k, v in a.link}
    write_sweep(pathlib.Path(a.out), a.hosts, a.lanes, bad, links, a.bench, a.base, a.peak, a.status,
                a.hostname_format)


if __name__ == "__main__":
    main()
