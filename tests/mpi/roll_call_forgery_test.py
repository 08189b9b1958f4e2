#!/usr/bin/env python3
"""The roll call answers only its own job (issue 15, item 2).

  roll_call_forgery_test.py --bin-dir DIR --report CCBENCH_REPORT --mpirun M

While a 2-rank allreduce_bench --backend mpi sweep runs, another process of this host finds the ranks'
roll-call sockets (the UDP sockets the ranks' pids hold: /proc/PID/fd -> socket:[INODE] matched against
/proc/net/udp) and sends them forged datagrams with the right magic and no MAC or a wrong one: PINGs (which
used to be answered with what the rank is doing) and NOTEs carrying a hang report (which used to make rank 0
write a timed_out row into a run that went on). Nothing may be answered, the run must exit 0 with no
timed_out row, its file must pass `ccbench-report table`, and each rank must say on stderr that it ignored
the datagrams (so they did reach it).
"""
import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import validate_result  # noqa: E402  (mpi_test_environment, world_rank_pids)

ENV = validate_result.mpi_test_environment(os.environ)
# At least 50 samples per size: the large sizes alone then take ~8 s on an idle 2-core machine, longer
# than the forging takes (0.6 s of budget alone let an idle machine finish the sweep in 4 s, before it).
FLAGS = ["--backend", "mpi", "-b", "1K", "-e", "64M", "-f", "2", "--time-budget", "3", "--min-samples", "50", "--timeout", "60"]
HANG = {"reporter": 1, "activity": "all_reduce 1024 B out-of-place in group world", "waited_s": 5.0,
        "silent": [0], "resumed": [], "answered": [{"rank": 1, "activity": "forged", "resumed_s_ago": -1.0}]}
FAKE_MAC = "0" * 64


def forgeries():
    """(verb, datagram): the protocol before the MAC (CCBRC1) and the keyed one (CCBRC2) without a MAC or with
    a wrong one."""
    note = json.dumps(HANG)
    return [
        ("PING", "CCBRC1 PING 4242"),
        ("PING", "CCBRC2 PING 1 17"),
        ("PING", f"CCBRC2 PING 1 18 {FAKE_MAC}\n"),
        ("PING", f"CCBRC2 PING 0 19 {'ab' * 32}\n"),
        ("NOTE", f"CCBRC1 NOTE 4243\n{note}"),
        ("NOTE", f"CCBRC2 NOTE 1 20\n{note}"),
        ("NOTE", f"CCBRC2 NOTE 1 21 {FAKE_MAC}\n{note}"),
    ]


def rank_pids(tag, np):
    """World rank -> pid of the run whose argv holds `tag`."""
    return {r: pid for r, pid in validate_result.world_rank_pids(tag).items() if r < np}


def udp_endpoints(pid):
    """The (IPv4 address, port) of every UDP socket `pid` holds; 0.0.0.0 becomes 127.0.0.1."""
    inodes = set()
    for fd in pathlib.Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    out = []
    for line in pathlib.Path(f"/proc/{pid}/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            hex_ip, hex_port = fields[1].split(":")
            ip = socket.inet_ntoa(int(hex_ip, 16).to_bytes(4, "little"))
            out.append(("127.0.0.1" if ip == "0.0.0.0" else ip, int(hex_port, 16)))
    return out


def forge(endpoints, rank):
    """Sends every forgery to every endpoint of `rank`; returns the answers that came back within 1.5 s."""
    answers = []
    sent = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(0.1)
        for verb, text in forgeries():
            if verb == "NOTE" and rank != 0:
                continue
            for ep in endpoints:
                s.sendto(text.encode(), ep)
                sent += 1
        deadline = time.time() + 1.5
        while time.time() < deadline:
            try:
                data, sender = s.recvfrom(65536)
                answers.append((sender, data[:120]))
            except (socket.timeout, ConnectionRefusedError):
                pass
    return sent, answers


def completed(path):
    try:
        return json.loads(path.read_text())["results"]
    except (OSError, ValueError):
        return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "forged.json"
        bench = pathlib.Path(args.bin_dir).resolve() / "allreduce_bench"
        cmd = [args.mpirun, "-q", "-np", "2", "--bind-to", "none", str(bench), *FLAGS, "--out", str(out)]
        print("$", " ".join(cmd), flush=True)
        proc = subprocess.Popen(cmd, cwd=tmp, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            started = time.time()
            while not completed(out) and time.time() < started + 120 and proc.poll() is None:
                time.sleep(0.05)
            pids = rank_pids(str(out), 2)
            assert sorted(pids) == [0, 1], f"ranks not found: {pids}"
            sent = {}
            problems = []  # every symptom is said, not only the first
            for rank, pid in sorted(pids.items()):
                endpoints = udp_endpoints(pid)
                assert endpoints, f"rank {rank} (pid {pid}) holds no UDP socket"
                sent[rank], answers = forge(endpoints, rank)
                print(f"rank {rank} pid {pid}: roll-call sockets {endpoints}; {sent[rank]} forged datagrams sent, "
                      f"{len(answers)} answered {answers}")
                if answers:
                    problems.append(f"rank {rank} answered {len(answers)} forged datagrams: {answers}")
            assert proc.poll() is None, "the run ended before every forgery was sent: make the sweep longer"
            print(f"forged while {len(completed(out))} cases were done; waiting for the run to end", flush=True)
            stdout, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
        print(stdout[-2000:], stderr, sep="\n")
        if proc.returncode != 0:
            problems.append(f"exit code {proc.returncode}, expected 0")
        results = completed(out)
        bad = [(r["status"], r.get("reason")) for r in results if r["status"] != "ok"]
        if bad:
            problems.append(f"rows that are not ok: {bad}")
        report = subprocess.run([str(pathlib.Path(args.report).resolve()), "table", str(out)], capture_output=True,
                                text=True)
        print(f"ccbench-report table: exit {report.returncode}; {report.stderr.strip()}")
        if report.returncode != 0:
            problems.append(f"the result file fails ccbench-report table (exit {report.returncode})")
        for rank, count in sent.items():
            said = [line for line in stderr.splitlines() if f"rank {rank} ignored" in line]
            ignored = int(said[0].split(" ignored ")[1].split()[0]) if said else 0
            if ignored < count:
                problems.append(f"rank {rank} says it ignored {ignored} roll-call datagrams; {count} were sent")
        assert not problems, "\n".join(["FAIL:", *problems])
        print(f"PASS: {sum(sent.values())} forged datagrams, none answered; exit 0; {len(results)} ok rows, "
              "no timed_out; ccbench-report table exit 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
