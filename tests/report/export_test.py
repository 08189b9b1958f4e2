#!/usr/bin/env python3
"""ccbench-report export --format openmetrics against Prometheus' own tools (issue 39, section 2).

  export_test.py --report BIN --data tests/data --profiles profiles --readme docs/reporter.md CASE

  promtool       every real result under tests/data/report/runs (and the fabric one), the fleet verdict of each
                 sweep there, the accept verdict of every shipped profile, and all of them at once: exported,
                 each export `promtool check metrics` clean (no lint either); every family exported is in the reporter's reference (docs/reporter.md)
  node_exporter  the export written with --textfile-dir, served by prometheus-node-exporter's textfile collector:
                 a scrape of /metrics holds every series of the file and no textfile scrape error
  benches        (mpi tier; --bin-dir, --mpirun) every bench the MPI backend runs (`ccbench-report benches
                 --backend mpi`), run for real on 2 ranks over 3 sizes, its result exported and `promtool check
                 metrics` clean; the RDMA benches' export is promtool's case on the Soft-RoCE result, and
                 copy_bench's needs a GPU
  pushgateway    the export piped to `curl --data-binary @- .../metrics/job/ccbench/instance/HOST` of a
                 prometheus-pushgateway: a scrape of it holds every series with job and instance

The services are started by the test on loopback, on a socket the test binds first (port 0: the kernel's choice)
and hands over by systemd socket activation (--web.systemd-socket, LISTEN_FDS), so no port can conflict; they are
ended before the test ends. Exit 77 (skipped) when promtool, prometheus-node-exporter, prometheus-pushgateway or
curl is missing (Debian: prometheus, prometheus-node-exporter, prometheus-pushgateway, curl; scripts/install-deps.sh).
"""
import argparse
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

SKIP = 77
HOST = "ccbench-host-1"
SAMPLE = re.compile(r'^(ccbench_[a-z0-9_]+)(\{.*\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def run(cmd, stdin=None, ok=(0,)):
    done = subprocess.run([str(c) for c in cmd], input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode in ok, f"{' '.join(map(str, cmd))}: exit {done.returncode}: {done.stderr[-800:]}"
    return done


def need(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        print(f"SKIPPED: {', '.join(missing)} not found (apt-get install prometheus prometheus-node-exporter "
              "prometheus-pushgateway curl; scripts/install-deps.sh installs them)")
        sys.exit(SKIP)


def series(text):
    """{series: value} of the ccbench samples in an exposition; a series is its name and its labels in name order,
    without those of empty value (which Prometheus does not tell from absent ones), as node_exporter writes them."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = sorted((k, v) for k, v in LABEL.findall(m.group(2) or "") if v)
            out[m.group(1) + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"] = float(m.group(3))
    return out


def verdicts(args, tmp):
    """The fleet verdict of each sweep and the accept verdict of each shipped profile, as their JSON files."""
    runs = os.path.join(args.data, "report", "runs")
    made = []
    for sweep in sorted(glob.glob(os.path.join(runs, "fleet-*.json"))):
        out = os.path.join(tmp, "fleet-verdict-" + os.path.basename(sweep))
        with open(out, "w", encoding="utf-8") as f:
            f.write(run([args.report, "fleet", sweep, "--format", "json"], ok=(0, 1)).stdout)
        made.append(out)
    fabric = os.path.join(args.data, "fabric", "rxe-ib_write_bw.json")
    for profile in sorted(glob.glob(os.path.join(args.profiles, "*.json"))):
        name = os.path.basename(profile)[:-5]
        for label, inputs in (("runs", [runs]), ("fabric", [fabric])):
            out = os.path.join(tmp, f"accept-verdict-{name}-{label}.json")
            with open(out, "w", encoding="utf-8") as f:
                f.write(run([args.report, "accept", *inputs, "--profile", profile, "--format", "json"],
                            ok=(0, 1)).stdout)
            made.append(out)
    # a profile with a validity: accept writes valid_until (RFC 3339), which the export carries
    with open(os.path.join(args.profiles, "mpi-host-smoke.json"), encoding="utf-8") as f:
        profile = json.load(f)
    profile["profile_version"] = "1.1.0"
    profile["validity"] = "24h"
    expiring = os.path.join(tmp, "mpi-host-smoke-24h.json")
    with open(expiring, "w", encoding="utf-8") as f:
        json.dump(profile, f)
    out = os.path.join(tmp, "accept-verdict-valid-until.json")
    with open(out, "w", encoding="utf-8") as f:
        f.write(run([args.report, "accept", runs, "--profile", expiring, "--format", "json"], ok=(0, 1)).stdout)
    with open(out, encoding="utf-8") as f:
        assert json.load(f)["valid_until"], "accept wrote no valid_until under a profile's validity"
    made.append(out)
    return made


def promtool_clean(args, inputs, what):
    exported = run([args.report, "export", *inputs])
    check = run(["promtool", "check", "metrics"], stdin=exported.stdout, ok=(0, 1, 3))
    problems = (check.stdout + check.stderr).strip()
    assert check.returncode == 0 and not problems, f"promtool check metrics on the export of {what}: {problems}"
    found = series(exported.stdout)
    assert found, f"the export of {what} holds no ccbench series"
    return exported.stdout, found


def case_promtool(args, tmp):
    results = sorted(glob.glob(os.path.join(args.data, "report", "runs", "*.json")))
    results.append(os.path.join(args.data, "fabric", "rxe-ib_write_bw.json"))
    made = verdicts(args, tmp)
    families = set()
    total = 0
    for path in results + made:
        text, found = promtool_clean(args, [path], os.path.basename(path))
        families |= {re.match(r"[a-z0-9_]+", s).group(0) for s in found}
        total += len(found)
        print(f"PASS: promtool check metrics: {os.path.basename(path)}: {len(found)} series")
    _, together = promtool_clean(args, [os.path.join(args.data, "report", "runs"), *results[-1:], *made],
                                 "everything at once")
    print(f"PASS: promtool check metrics: everything at once: {len(together)} series")
    assert any(s.startswith("ccbench_accept_valid_until_timestamp_seconds") for s in together)
    with open(args.readme, encoding="utf-8") as f:
        readme = f.read()
    missing = sorted(f for f in families if f"`{f}`" not in readme)
    assert not missing, f"{args.readme} lists no {missing}"
    print(f"PASS: {len(results) + len(made) + 1} exports clean ({len(results)} results, "
          f"{sum('fleet-verdict' in m for m in made)} fleet and {sum('accept-verdict' in m for m in made)} accept "
          f"verdicts, and all at once): {total} series in {len(families)} families, each family in {args.readme}")


class Service:
    """A Prometheus daemon on a loopback socket the test bound first, handed over by socket activation."""

    def __init__(self, argv):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        fd = self.sock.fileno()
        # sh sets LISTEN_PID to its own pid, which exec keeps, and puts the socket at fd 3 (SD_LISTEN_FDS_START)
        self.proc = subprocess.Popen(["sh", "-c", f'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@" 3<&{fd}', "sh", *argv,
                                      "--web.systemd-socket"],
                                     pass_fds=(fd,), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def log(self):
        return self.proc.stdout.read() if self.proc.poll() is not None else ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        if exc[0] is not None:
            print(out[-2000:])
        self.sock.close()


def scrape(url):
    return run(["curl", "-sS", "--fail", "--max-time", "30", url + "/metrics"]).stdout


def case_node_exporter(args, tmp):
    textfiles = os.path.join(tmp, "textfile")
    os.mkdir(textfiles)
    inputs = [os.path.join(args.data, "report", "runs"), os.path.join(args.data, "fabric", "rxe-ib_write_bw.json"),
              *verdicts(args, tmp)]
    run([args.report, "export", *inputs, "--textfile-dir", textfiles])
    assert os.listdir(textfiles) == ["ccbench.prom"], os.listdir(textfiles)  # no temporary file left
    with open(os.path.join(textfiles, "ccbench.prom"), encoding="utf-8") as f:
        written = series(f.read())
    with Service(["prometheus-node-exporter", "--collector.disable-defaults", "--collector.textfile",
                  f"--collector.textfile.directory={textfiles}"]) as node:
        page = scrape(node.url)
    served = series(page)
    assert served == written, (f"served {len(served)} series, the file {len(written)}; missing or other e.g. "
                               f"{sorted(set(written.items()) - set(served.items()))[:3]}")
    assert re.search(r"^node_textfile_scrape_error 0$", page, re.M), "node_exporter: a textfile scrape error"
    mtime = [line for line in page.splitlines() if line.startswith("node_textfile_mtime_seconds")]
    print(f"PASS: prometheus-node-exporter --collector.textfile.directory on port {node.port}: /metrics serves "
          f"{len(served)} of the file's {len(written)} ccbench series; node_textfile_scrape_error 0; {mtime[0]}")


def case_pushgateway(args, tmp):
    inputs = [os.path.join(args.data, "report", "runs"), *verdicts(args, tmp)]
    exported = run([args.report, "export", *inputs]).stdout
    with Service(["prometheus-pushgateway", "--persistence.file="]) as gateway:
        run(["curl", "-sS", "--fail", "--max-time", "30", "--data-binary", "@-",
                      f"{gateway.url}/metrics/job/ccbench/instance/{HOST}"], stdin=exported)
        page = scrape(gateway.url)
    want = series(exported)
    got = {}  # without the grouping key's labels, which the gateway adds
    for name, value in series(page).items():
        labels = LABEL.findall(name)
        assert ("job", "ccbench") in labels and ("instance", HOST) in labels, name
        own = ",".join(f'{k}="{v}"' for k, v in labels if k not in ("job", "instance"))
        got[name[:name.index("{")] + "{" + own + "}"] = value
    assert got == want, (f"the gateway serves {len(got)} ccbench series, {len(want)} were pushed; missing "
                         f"e.g. {sorted(want.keys() - got.keys())[:3]}")
    assert re.search(rf'^push_time_seconds\{{.*instance="{HOST}".*\}} ', page, re.M), "no push_time_seconds"
    print(f"PASS: curl --data-binary @- {gateway.url}/metrics/job/ccbench/instance/{HOST} accepted the export; "
          f"/metrics serves all {len(got)} pushed series with job=\"ccbench\", instance=\"{HOST}\"")


def case_benches(args, tmp):
    benches = run([args.report, "benches", "--backend", "mpi"]).stdout.split()
    assert benches, "ccbench-report benches --backend mpi named none"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    total = 0
    for bench in benches:
        out = os.path.join(tmp, bench + ".json")
        cmd = [args.mpirun, "-np", "2", "--oversubscribe", os.path.join(args.bin_dir, bench), "-b", "1K", "-e", "4K",
               "-f", "2", "-n", "3", "-w", "1", "-c", "1", "--out", out]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr[-800:]}"
        _, found = promtool_clean(args, [out], bench)
        rows = [s for s in found if s.startswith("ccbench_bus_bandwidth_bytes_per_second")]
        with open(out, encoding="utf-8") as f:
            measured = [r for r in json.load(f)["results"] if r["status"] == "ok"]
        assert len(measured) >= 3 and len(rows) == len(measured), \
            f"{bench}: {len(rows)} busbw series for {len(measured)} measured rows (3 sizes, each placement it has)"
        total += len(found)
        print(f"PASS: promtool check metrics: {bench} (mpi, 2 ranks, 1-4 KiB): {len(found)} series")
    print(f"PASS: {len(benches)} benches exported, {total} series, every export promtool-clean")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True)
    ap.add_argument("--data", required=True, help="tests/data")
    ap.add_argument("--profiles", required=True)
    ap.add_argument("--readme", required=True, help="the page that lists every metric family (docs/reporter.md)")
    ap.add_argument("--bin-dir", help="the bench binaries (case benches)")
    ap.add_argument("--mpirun", help="mpirun (case benches)")
    ap.add_argument("case", choices=["promtool", "node_exporter", "pushgateway", "benches"])
    args = ap.parse_args()
    need(*{"promtool": ["promtool"], "node_exporter": ["prometheus-node-exporter", "curl"],
           "pushgateway": ["prometheus-pushgateway", "curl"], "benches": ["promtool"]}[args.case])
    with tempfile.TemporaryDirectory() as tmp:
        {"promtool": case_promtool, "node_exporter": case_node_exporter, "pushgateway": case_pushgateway,
         "benches": case_benches}[args.case](args, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
