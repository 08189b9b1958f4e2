"""The straggler case of tests/mpi/bench_test.py (issue 27): --per-rank keeps each rank's own times, and the rank
the others wait for is named, with its host and CPUs, in the bench's footer, in `ccbench-report table` (terminal,
JSON) and on the HTML page; without a late rank, nobody is.

A rank is made late on purpose with the test hook CCBENCH_DEBUG_LATE=RANK:US (it sleeps US microseconds after each
sample's barrier, before its timer starts): the others start their op and wait inside it, so their times are
longer and the late rank's the shortest of its sample. per_op timing: one op per sample, so every op carries the
wait. Judged on which rank is named, never on the times themselves.
"""
import json
import pathlib
import socket
import subprocess
import tempfile

LATE_RANK = 2
LATE_US = 2000  # far above an op's time here (tens of microseconds) and this machine's scheduling noise
FLAGS = ["--per-rank", "--timing", "per_op", "-b", "1K", "-e", "64K", "-f", "8", "-n", "30"]
NP = 4


def run(env, args, tmp, name, late):
    out = pathlib.Path(tmp) / f"{name}.json"
    extra = {"CCBENCH_DEBUG_LATE": f"{LATE_RANK}:{LATE_US}"} if late else {}
    cmd = env.command("allreduce_bench", NP, [*FLAGS, "--out", str(out)])
    if late:  # mpirun passes the hook to every rank; only LATE_RANK acts on it
        cmd[1:1] = ["-x", "CCBENCH_DEBUG_LATE"]
    print("$", " ".join(f"{k}={v}" for k, v in extra.items()), " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=tmp, env=dict(env.env, **extra), capture_output=True, text=True, timeout=240)
    print(p.stdout, p.stderr, sep="\n")
    assert p.returncode == 0, f"exit code {p.returncode}"
    doc = env.validate(out)
    footer = [ln for ln in p.stdout.splitlines() if ln.startswith(("# straggler", "# per-rank"))]
    return out, doc, footer


def check_per_rank(doc):
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert ok, "nothing measured"
    for r in ok:
        ranks = r.get("per_rank") or []
        assert [t["rank"] for t in ranks] == list(range(NP)), f"{r['size_bytes']} B: per_rank {ranks}"
        assert all(len(t["samples_us"]) == r["time"]["n"] for t in ranks), f"{r['size_bytes']} B: sample counts"
        assert sum(t["last"] for t in ranks) == r["time"]["n"], f"{r['size_bytes']} B: last counts"
        # the MAX across ranks of each sample is what the case reports: no rank's own time exceeds its max
        assert max(t["max_us"] for t in ranks) <= r["time"]["max_us"] * (1 + 1e-9), r["size_bytes"]
    return ok


def report_lines(args, path, fmt):
    p = subprocess.run([args.report, "table", "--format", fmt, str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def straggler(env, args):
    host = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        late_out, late_doc, late_footer = run(env, args, tmp, "late", True)
        ok = check_per_rank(late_doc)
        named = f"straggler in world: rank {LATE_RANK} ({host}, CPUs "
        assert len(late_footer) == 1 and late_footer[0].startswith(f"# {named}"), f"footer: {late_footer}"
        terminal = report_lines(args, late_out, "terminal")
        assert f"# {named}" in terminal, f"ccbench-report table does not name rank {LATE_RANK}:\n{terminal}"
        table = json.loads(report_lines(args, late_out, "json"))
        assert table["per_rank"][0]["findings"][0].startswith(named), table.get("per_rank")
        page = pathlib.Path(tmp) / "page.html"
        subprocess.run([args.report, "html", str(late_out), "-o", str(page)], check=True, capture_output=True)
        assert "<h2>Per-rank times</h2>" in page.read_text() and named in page.read_text(), "the page names nobody"
        shares = {t["rank"]: sum(r2["per_rank"][t["rank"]]["last"] for r2 in ok) for t in ok[0]["per_rank"]}

        quiet_out, quiet_doc, quiet_footer = run(env, args, tmp, "quiet", False)
        check_per_rank(quiet_doc)
        assert len(quiet_footer) == 1 and quiet_footer[0].startswith("# per-rank times of world: no straggler"), \
            f"footer without a late rank: {quiet_footer}"
        assert "straggler in" not in report_lines(args, quiet_out, "terminal")
        print(f"late rank {LATE_RANK} ({LATE_US} us after each barrier): {late_footer[0]}")
        print(f"  samples in which each rank was last to arrive: {shares}")
        print(f"no late rank: {quiet_footer[0]}")
        print(f"PASS: rank {LATE_RANK} named with its host in the footer, the table (terminal, JSON) and the page; "
              "nobody named without the hook")
    return 0
