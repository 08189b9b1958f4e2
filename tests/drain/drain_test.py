#!/usr/bin/env python3
"""scripts/drain.sh (ccbench-drain) without Slurm: a fake `scontrol` on PATH that records its argv and answers
`scontrol show node` from a state file (in scontrol's own format, as Slurm 22.05 prints it) that its updates change.
The verdicts are real: `ccbench-report fleet|accept --format json` over the runs of tests/data/report/runs, their
host names rewritten where a case needs other names.

  drain_test.py --report BIN CASE
    dry-run      fleet: node2 a BAD HOST: one scontrol line printed (a shell script: piped to sh it does the same
                 update), nothing run; 2 ranks a host, node2 bad on both lanes: one line
    apply        --apply --log: node2 drained with the ccbench reason, the log names the verdict; again: nothing
    resume       a fleet that names nothing: ccbench's drain resumed; admin-drained, down, down with ccbench's
                 reason and an unjudged node drained by ccbench all left as they were
    admin        node2 a BAD HOST but drained by an admin: left alone, its reason kept
    no-verdict   unreadable, empty, not a verdict, no verdict in it, an expired accept: exit 2, no update at all,
                 even beside a verdict that would drain
    hostile      host names with a newline or tab: exit 2, nothing; "node2;reboot", "node[0-3]": left alone;
                 a check id and figure full of quotes, $(...), newlines, 2,000 bytes: a reason of safe bytes only,
                 255 at most, one argv element
    accept       accept FAIL drains the results' host (the figure and threshold in the reason); WARNING (on its evidence) resumes
                 ccbench's drain; WAIVED touches nothing; results of two hosts: exit 2 unless --host
    this-node    --this-node (SLURMD_NODENAME, CCBENCH_DRAIN_VERDICT): only this node is read and acted on
    bad-link     fleet BAD LINK node1<->node3: neither end resumed nor drained; the other hosts resumed
Failures raise AssertionError (exit 1).
"""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DRAIN = ROOT / "scripts/drain.sh"
INSTALLED = False  # --installed: DRAIN is an install's bin/ccbench-drain
RUNS = ROOT / "tests/data/report/runs"
PROFILE = ROOT / "profiles/mpi-host-smoke.json"

FAKE_SCONTROL = r'''#!/usr/bin/env python3
import json, os, sys
path = os.environ["FAKE_SLURM"]
nodes = json.load(open(path))
args = sys.argv[1:]
with open(os.environ["FAKE_SLURM_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
if args[:2] == ["show", "node"]:
    for name in args[2:] or list(nodes):
        if name not in nodes:
            sys.exit(f"Node {name} not found")
        n = nodes[name]
        print(f"NodeName={name} Arch=x86_64 CoresPerSocket=1 \n   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=0.1\n"
              f"   NodeAddr=10.0.0.1 NodeHostName={n.get('host', name)} Version=22.05.8\n"
              f"   State={n['state']} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n   Partitions=test ")
        if n.get("reason"):
            print(f"   Reason={n['reason']} [root@2026-11-28T14:28:09]")
        print()
elif args[:1] == ["update"]:
    kv = dict(a.split("=", 1) for a in args[1:])
    n = nodes[kv["NodeName"]]
    base = [s for s in n["state"].split("+") if s != "DRAIN"]
    if kv["State"] == "DRAIN":
        n["state"], n["reason"] = "+".join(base + ["DRAIN"]), kv["Reason"]
    elif kv["State"] == "RESUME":
        n["state"], n["reason"] = "+".join(base), ""
    json.dump(nodes, open(path, "w"))
else:
    sys.exit(f"fake scontrol: {args}")
'''


class Slurm:
    """A fake Slurm in a temporary folder: nodes {name: {state, reason, host}}, every scontrol call recorded."""

    def __init__(self, tmp, report, nodes):
        self.dir, self.report = pathlib.Path(tmp), report
        (self.dir / "bin").mkdir()
        fake = self.dir / "bin/scontrol"
        fake.write_text(FAKE_SCONTROL)
        fake.chmod(0o755)
        self.state, self.calls_file = self.dir / "nodes.json", self.dir / "calls.jsonl"
        self.state.write_text(json.dumps(nodes))
        self.calls_file.write_text("")

    def nodes(self):
        return json.loads(self.state.read_text())

    def calls(self):
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]

    def updates(self):
        return [c for c in self.calls() if c[:1] == ["update"]]

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "CCBENCH_"))}
        env.update(PATH=f"{self.dir / 'bin'}:{env['PATH']}", FAKE_SLURM=str(self.state),
                   FAKE_SLURM_LOG=str(self.calls_file), **extra)
        return env

    def drain(self, *args, expect=0, **env):
        own = ["--report", self.report] if not INSTALLED else []  # an install finds its own ccbench-report
        p = subprocess.run(["bash", DRAIN, *own, *map(str, args)], env=self.env(**env),
                           capture_output=True, text=True, timeout=120)
        print(f"$ ccbench-drain {' '.join(map(str, args))}: exit {p.returncode}\n{p.stdout}{p.stderr}", end="")
        assert p.returncode == expect, f"exit {p.returncode}, expected {expect}: {p.stderr}"
        return p


def idle(*names, **special):
    nodes = {n: {"state": "IDLE", "reason": ""} for n in names}
    nodes.update(special)
    return nodes


def fleet_verdict(report, tmp, run="fleet-host.json", rename=None):
    """A real fleet verdict (JSON) over RUNS/run, host names rewritten by `rename`."""
    text = (RUNS / run).read_text()
    for old, new in (rename or {}).items():
        text = text.replace(json.dumps(old), json.dumps(new))
    results = pathlib.Path(tmp) / f"results-{run}"
    results.write_text(text)
    out = pathlib.Path(tmp) / f"fleet-{len(list(pathlib.Path(tmp).glob('fleet-*')))}.json"
    p = subprocess.run([report, "fleet", results, "--format", "json"], capture_output=True, text=True)
    assert p.returncode in (0, 1), f"fleet: exit {p.returncode}: {p.stderr}"
    out.write_text(p.stdout)
    return out


def accept_verdict(report, folder, host="vm", min_gbps=None, level=None, size=None):
    """accept-node.sh's folder: a real run (its host renamed) and accept.json of mpi-host-smoke (the busbw gate
    made impossible with min_gbps, at `level` when given)."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    run = json.loads((RUNS / "allreduce-np4-a.json").read_text())
    for h in run["environment"]["hosts"]:
        h["hostname"] = host
    (folder / "allreduce_bench.json").write_text(json.dumps(run))
    profile = json.loads(PROFILE.read_text())
    gate = next(c for c in profile["checks"] if c["kind"] == "busbw")
    if min_gbps is not None:
        gate["min_GBps"] = min_gbps
    if level:
        gate["level"] = level
    if size:
        gate["size"] = size
    (folder.parent / "profile.json").write_text(json.dumps(profile))
    p = subprocess.run([report, "accept", folder / "allreduce_bench.json", "--profile", folder.parent / "profile.json",
                        "--format", "json"], capture_output=True, text=True)
    assert p.returncode in (0, 1), f"accept: exit {p.returncode}: {p.stderr}"
    (folder / "accept.json").write_text(p.stdout)
    return folder / "accept.json"


def commands(out):
    """The output's command lines (not comments), each split as a shell would."""
    return [shlex.split(line) for line in out.splitlines() if line and not line.startswith("#")]


def check_reason(reason):
    assert reason.startswith("ccbench: "), reason
    assert len(reason.encode()) <= 255, f"{len(reason)} bytes: {reason}"
    bad = set(reason) - set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._:/+<,()-")
    assert not bad, f"unsafe {bad} in {reason!r}"


def dry_run(report, tmp):
    s = Slurm(tmp, report, idle("node0", "node1", "node2", "node3"))
    verdict = fleet_verdict(report, tmp)
    p = s.drain("--verdict", verdict)
    cmds = commands(p.stdout)
    assert len(cmds) == 1 and cmds[0][:4] == ["scontrol", "update", "NodeName=node2", "State=DRAIN"], cmds
    assert len(cmds[0]) == 5 and cmds[0][4].startswith("Reason="), cmds[0]
    reason = cmds[0][4][len("Reason="):]
    check_reason(reason)
    assert reason.startswith("ccbench: fleet-bad-host sendrecv_bench ") and " < 0.80 of level, 3/3 pairs low (run " in reason, reason
    assert not s.updates(), f"a dry run ran {s.updates()}"
    # The output is a shell script: run by sh, it does what --apply would.
    sh = subprocess.run(["sh"], input=p.stdout, env=s.env(), capture_output=True, text=True)
    assert sh.returncode == 0 and s.updates() == [cmds[0][1:]], f"sh: {sh.returncode} {sh.stderr} {s.updates()}"
    # 2 ranks a host (a lane each): node2 BAD HOST on both lanes is drained once, on its worse lane's figure.
    lanes = commands(s.drain("--verdict", fleet_verdict(report, tmp, run="fleet-lanes.json")).stdout)
    assert [c[:4] for c in lanes] == [["scontrol", "update", "NodeName=node2", "State=DRAIN"]], lanes
    print(f"PASS: dry run printed one line, ran nothing; piped to sh it drains node2 ({reason}); 2 lanes: one line")


def apply(report, tmp):
    s = Slurm(tmp, report, idle("node0", "node1", "node2", "node3"))
    verdict, log = fleet_verdict(report, tmp), pathlib.Path(tmp) / "drain.log"
    s.drain("--verdict", verdict, "--apply", "--log", log)
    [update] = s.updates()
    assert update[:3] == ["update", "NodeName=node2", "State=DRAIN"], update
    check_reason(update[3][len("Reason="):])
    node2 = s.nodes()["node2"]
    assert node2["state"] == "IDLE+DRAIN" and node2["reason"] == update[3][len("Reason="):], node2
    text = log.read_text()
    assert "applied node2" in text and str(verdict) in text and "fleet-bad-host" in text, text
    p = s.drain("--verdict", verdict, "--apply")
    assert len(s.updates()) == 1 and "already drained for it" in p.stdout, "a second run acted again"
    print(f"PASS: --apply drained node2, logged with {verdict.name}; again: nothing to do")


def resume(report, tmp):
    ours = "ccbench: fleet-bad-host sendrecv_bench 0.43 < 0.80 of level (run 1)"
    s = Slurm(tmp, report, idle("node0", "node1", "node2", "node3", "node9",
                                node0={"state": "IDLE+DRAIN", "reason": ours},
                                node1={"state": "IDLE+DRAIN", "reason": "admin: fan"},
                                node2={"state": "DOWN+DRAIN", "reason": ours},
                                node3={"state": "DOWN+NOT_RESPONDING", "reason": "Not responding"},
                                node9={"state": "IDLE+DRAIN", "reason": ours}))
    before = s.nodes()
    s.drain("--verdict", fleet_verdict(report, tmp, run="fleet-equal.json"), "--apply")
    assert s.updates() == [["update", "NodeName=node0", "State=RESUME"]], s.updates()
    after = s.nodes()
    assert after["node0"] == {"state": "IDLE", "reason": ""}, after["node0"]
    for n in ("node1", "node2", "node3", "node9"):
        assert after[n] == before[n], f"{n} changed: {before[n]} -> {after[n]}"
    print("PASS: ccbench's drain resumed; admin-drained, down, down with ours and unjudged node9 untouched")


def admin(report, tmp):
    s = Slurm(tmp, report, idle("node0", "node1", "node3", node2={"state": "IDLE+DRAIN", "reason": "admin: fan"}))
    p = s.drain("--verdict", fleet_verdict(report, tmp), "--apply")
    assert not s.updates() and s.nodes()["node2"]["reason"] == "admin: fan", s.updates()
    assert "not ccbench's: left alone" in p.stdout, p.stdout
    print("PASS: a BAD HOST drained by an admin keeps the admin's reason")


def no_verdict(report, tmp):
    t = pathlib.Path(tmp)
    s = Slurm(tmp, report, idle("node0", "node1", "node2", "node3"))
    good = fleet_verdict(report, tmp)
    doc = json.loads(good.read_text())
    del doc["verdict"]
    (t / "no-verdict.json").write_text(json.dumps(doc))
    (t / "empty.json").write_text("")
    (t / "not-json.json").write_text("PASS\n")
    (t / "other.json").write_text(json.dumps({"schema": "ccbench.result"}))
    expired = accept_verdict(report, t / "expired")
    doc = json.loads(expired.read_text())
    doc["valid_until"] = "2020-01-01T00:00:00Z"
    expired.write_text(json.dumps(doc))
    cases = {"no-verdict.json": "NO VERDICT", "empty.json": "unreadable", "not-json.json": "unreadable",
             "other.json": "neither an accept nor a fleet verdict", "missing.json": "not a readable file",
             "expired/accept.json": "expired"}
    for name, says in cases.items():
        for order in ([good, t / name], [t / name, good]):
            p = s.drain(*(a for v in order for a in ("--verdict", v)), "--apply", expect=2)
            lines = p.stderr.strip().splitlines()
            assert len(lines) == 1 and says in lines[0], f"{name}: {lines}, expected one line with {says!r}"
            assert not s.calls(), f"{name}: scontrol was run: {s.calls()}"
    print(f"PASS: {len(cases)} verdicts that are none: exit 2, one line, nothing updated, good verdict beside or not")


def hostile(report, tmp):
    s = Slurm(tmp, report, idle("node0", "node1", "node2", "node3"))
    for name in ("node2\tbad_host", "node2\nnode1"):  # the second would forge a row "node1 bad_host"
        p = s.drain("--verdict", fleet_verdict(report, tmp, rename={"node2": name}), "--apply", expect=2)
        assert "newline or a tab" in p.stderr and not s.updates(), (p.stderr, s.updates())
    pwned = pathlib.Path(tmp) / "pwned"
    for name in ("node2;touch pwned", "node[0-3]", f"$(touch {pwned})"):
        p = s.drain("--verdict", fleet_verdict(report, tmp, rename={"node2": name}), "--apply")
        assert not s.updates() and "left alone" in p.stdout, s.updates()
    verdict = accept_verdict(report, pathlib.Path(tmp) / "acc", host="node1", min_gbps=1e9)
    doc = json.loads(verdict.read_text())
    check = next(c for c in doc["checks"] if c["verdict"] == "fail")
    check["id"] = f"busbw'\"; $(touch {pwned}) `touch {pwned}` \\x"
    check["measured"] = "1 GB/s\nNodeName=node0 State=DOWN\t[x] %s " + "é" * 1000
    verdict.write_text(json.dumps(doc))
    s.drain("--verdict", verdict, "--apply")
    [update] = s.updates()
    assert len(update) == 4 and update[:3] == ["update", "NodeName=node1", "State=DRAIN"], update
    check_reason(update[3][len("Reason="):])
    assert "(run 46a3c40ab5729163)" in update[3], f"the run was cut off: {update[3]}"
    assert not pwned.exists(), "a name or check ran a command"
    print(f"PASS: hostile names refused or left alone; a hostile check gives {update[3][:90]!r}...")


def accept(report, tmp):
    t = pathlib.Path(tmp)
    ours = "ccbench: allreduce-busbw-512k 0.03 GB/s < 0.1 GB/s (run x)"
    s = Slurm(tmp, report, idle("n1", "n2", n3={"state": "IDLE+DRAIN", "reason": ours}))
    fail = accept_verdict(report, t / "fail", host="n1.cluster.example", min_gbps=1e9)
    s.drain("--verdict", fail, "--apply")
    [update] = s.updates()
    reason = update[3][len("Reason="):]
    assert update[1] == "NodeName=n1" and reason.startswith("ccbench: allreduce-busbw-512k "), update
    assert " GB/s < 1000000000" in reason and "(run 46a3c40ab5729163)" in reason, reason
    warning = accept_verdict(report, t / "warning", host="n3", min_gbps=1e9, level="warning")
    assert json.loads(warning.read_text())["verdict"] == "warning"
    s.drain("--verdict", warning, "--apply")
    assert s.updates()[1:] == [["update", "NodeName=n3", "State=RESUME"]], s.updates()
    s.state.write_text(json.dumps(idle("n1", "n2", n3={"state": "IDLE+DRAIN", "reason": ours})))
    # a WARNING for evidence the check lacked (no result at its size) is never a pass: n3 stays drained
    unmeasured = accept_verdict(report, t / "unmeasured", host="n3", level="warning", size="16G")
    assert json.loads(unmeasured.read_text())["verdict"] == "warning"
    s.drain("--verdict", unmeasured, "--apply")
    assert len(s.updates()) == 2, f"a WARNING on evidence it lacked resumed: {s.updates()}"
    waived_doc = json.loads(warning.read_text())
    waived_doc["verdict"] = "waived"
    waived = t / "waived/accept.json"
    waived.parent.mkdir()
    waived.write_text(json.dumps(waived_doc))
    (t / "warning/allreduce_bench.json").rename(t / "waived/allreduce_bench.json")
    s.drain("--verdict", waived, "--apply")
    assert len(s.updates()) == 2, f"WAIVED acted: {s.updates()}"
    two = accept_verdict(report, t / "two", host="n2")
    other = json.loads((t / "two/allreduce_bench.json").read_text())
    other["environment"]["hosts"][0]["hostname"] = "n1"
    (t / "two/other.json").write_text(json.dumps(other))
    p = s.drain("--verdict", two, "--apply", expect=2)
    assert "name 2 hosts" in p.stderr and len(s.updates()) == 2, p.stderr
    s.drain("--verdict", two, "--host", "n2")
    print(f"PASS: accept FAIL drains the results' host ({reason}); WARNING resumes ours; a WARNING for lacked evidence, WAIVED and 2 hosts do not")


def this_node(report, tmp):
    ours = "ccbench: fleet-bad-host sendrecv_bench 0.43 < 0.80 of level (run 1)"
    s = Slurm(tmp, report, idle("node0", "node2", "node3", node1={"state": "IDLE+DRAIN", "reason": ours}))
    verdict = str(fleet_verdict(report, tmp))
    s.drain("--this-node", "--apply", SLURMD_NODENAME="node2", CCBENCH_DRAIN_VERDICT=verdict)
    assert [c for c in s.calls() if c[:2] == ["show", "node"]] == [["show", "node", "node2"]], s.calls()
    assert [u[:3] for u in s.updates()] == [["update", "NodeName=node2", "State=DRAIN"]], s.updates()
    s.drain("--this-node", "--apply", "--verdict", verdict, SLURMD_NODENAME="node1")
    assert s.updates()[1:] == [["update", "NodeName=node1", "State=RESUME"]], s.updates()
    s.drain("--this-node", "--apply", "--verdict", verdict, SLURMD_NODENAME="node0")
    assert len(s.updates()) == 2, s.updates()
    print("PASS: --this-node reads and acts on this node only (node2 drained, node1 resumed, node0 left)")


def bad_link(report, tmp):
    ours = "ccbench: fleet-bad-host sendrecv_bench 0.43 < 0.80 of level (run 1)"
    drained = {"state": "IDLE+DRAIN", "reason": ours}
    s = Slurm(tmp, report, {n: dict(drained) for n in ("node0", "node1", "node2", "node3")})
    verdict = fleet_verdict(report, tmp, run="fleet-link.json")
    links = json.loads(verdict.read_text())["bad_links"]
    assert [sorted(b["hosts"]) for b in links] == [["node1", "node3"]], links
    s.drain("--verdict", verdict, "--apply")
    assert sorted(u[1] for u in s.updates()) == ["NodeName=node0", "NodeName=node2"], s.updates()
    assert all(u[2] == "State=RESUME" for u in s.updates())
    print("PASS: the ends of a BAD LINK neither drained nor resumed; the other hosts resumed")


CASES = {"dry-run": dry_run, "apply": apply, "resume": resume, "admin": admin, "no-verdict": no_verdict,
         "hostile": hostile, "accept": accept, "this-node": this_node, "bad-link": bad_link}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True)
    parser.add_argument("--installed", metavar="BUILD",
                        help="cmake --install BUILD into a scratch prefix and run the case with its bin/ccbench-drain")
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    global DRAIN, INSTALLED
    with tempfile.TemporaryDirectory(prefix="ccbench-drain-") as tmp:
        if args.installed:
            prefix = pathlib.Path(tmp) / "inst"
            subprocess.run(["cmake", "--install", args.installed, "--prefix", str(prefix)], check=True,
                           capture_output=True, timeout=300)
            DRAIN, INSTALLED = prefix / "bin/ccbench-drain", True
            print(f"ccbench-drain from an install: {DRAIN}")
        CASES[args.case](args.report, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
