"""rdma_test.py fabric: the fabric's own evidence of one ib_write_bw_bench run on rxe0, in the guest.

The bench's result must hold rxe0's counter deltas (read on the host's first rank before the first case and after
the last); they must equal what capture.sh read from sysfs around the run (nothing else writes on rxe0 then); and
rxe0's packet counter must account for the bytes the bench wrote (rdma.posted_writes / posted_bytes):

    sent_pkts = requests + acks + 2 x duplicate_request, within ACCOUNT_TOLERANCE of sent_pkts

requests: ceil(size / MTU) packets per write of SIZE bytes, one per zero-byte write; acks: rxe asks for an ACK on
a message's last packet and on the first packet after 65 without one (RXE_MAX_PKT_PER_ACK = 64 in rxe_req.c), and
the responder answers each; duplicate_request: requests the requester sent again after its retransmission timer
(67 ms: --timeout 14 of the QP) fired while the emulated responder was still behind, each counted when it
arrives and answered by one more ACK. rxe on lo hands its packets to itself without the netdev (lo's counters do
not see them), so sent_pkts equals rcvd_pkts and there is no byte counter: the bytes on the wire are worked out
from the packets (ROCE_V2_HEADER_B per packet, RETH_B per write, ACK_B per acknowledgement) and printed.
Also: ccbench-topo --links in the guest (rxe0's port: its rate against its capability) and --json.
"""
import io
import json
import math
import pathlib
import tarfile
import time

import rdma_vm
import validate_result
from rdma_test_steps import MPI_FILES, check_steps, loadavg, mpirun_command, print_timings

HERE = pathlib.Path(__file__).resolve().parent
CAPTURE = HERE.parent / "data" / "fabric" / "capture.sh"
# -t 4: four writes in flight, so that few retransmission timers fire under emulation (-t 128 sent ~1.3% of the
# request packets twice in the first runs here); -c 1: verified, which writes nothing over RDMA.
BENCH_FLAGS = "-d rxe0 -c 1 -b 64K -e 1M -f 16 -n 10 -t 4 --cq-mod 4 --timeout 60"
ACCOUNT_TOLERANCE = 0.01  # measured: 2 of 13,385 packets (-t 4) and 55 of 365,212 (-t 128) unaccounted for
RXE_MAX_PKT_PER_ACK = 64
# RoCE v2 over IPv4 on Ethernet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 (no FCS or preamble on lo)
ROCE_V2_HEADER_B = 14 + 20 + 8 + 12 + 4
RETH_B = 16  # the RDMA extended header on a write's first packet
ACK_B = ROCE_V2_HEADER_B + 4  # + AETH
RXE_COUNTERS = ("sent_pkts", "rcvd_pkts", "duplicate_request", "completer_retry_err")


def hw_counters(tar_bytes, tree):
    """rxe0 port 1's hw_counters in a capture.sh tree from the guest's tarball: name -> value."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        prefix = f"{tree}/sys/class/infiniband/rxe0/ports/1/hw_counters/"
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith(prefix):
                out[member.name[len(prefix):]] = int(tar.extractfile(member).read().decode().strip())
    return out


def expected_packets(results):
    """(request packets, ACKs rxe asks for, writes, payload bytes) of the bench's writes, case by case."""
    requests = acks = writes = payload = 0
    for r in results:
        rdma, size = r["rdma"], r["size_bytes"]
        data = rdma["posted_bytes"] // size
        assert data * size == rdma["posted_bytes"], f"{size} B: posted_bytes {rdma['posted_bytes']} is not whole writes"
        per_write = math.ceil(size / rdma["mtu"])
        fences = rdma["posted_writes"] - data  # zero-byte writes: one packet, one ACK
        requests += data * per_write + fences
        acks += data * (1 + (per_write - 1) // (RXE_MAX_PKT_PER_ACK + 2)) + fences
        writes += rdma["posted_writes"]
        payload += rdma["posted_bytes"]
    return requests, acks, writes, payload


def fabric(args, tag):
    assert args.bin_dir, "fabric needs --bin-dir (build/bench/apps)"
    bench = pathlib.Path(args.bin_dir).resolve() / "ib_write_bw_bench"
    assert bench.is_file(), f"{bench} does not exist: build with libibverbs-dev installed (CCBENCH_VERBS)"
    topo = pathlib.Path(args.topo_bin).resolve() if args.topo_bin else None
    assert topo and topo.is_file(), f"fabric needs --topo-bin (build/topo/discovery/ccbench-topo): {topo}"
    out, links, cap = "/tmp/fabric.json", "/tmp/links.json", "/tmp/cap.tar"
    steps = [
        rdma_vm.Step("links", f"{topo} --links && {topo} --links --json > {links}", 30),
        rdma_vm.Step("capture-before", f"sh {CAPTURE} /tmp/cap/before", 30),
        rdma_vm.Step("bench", mpirun_command(2, f"{bench} {BENCH_FLAGS} --out {out}"), 120),
        rdma_vm.Step("capture-after", f"sh {CAPTURE} /tmp/cap/after && cd /tmp/cap && tar cf {cap} before after", 30),
    ]
    print(f"loadavg before: {' '.join(loadavg())}", flush=True)
    start = time.monotonic()
    result = rdma_vm.run_steps(steps, extra_files=MPI_FILES + [bench, topo, CAPTURE], fetch=[out, links, cap],
                               budget_s=200, tag=tag)
    wall_s = time.monotonic() - start
    print(f"loadavg after: {' '.join(loadavg())}")
    check_steps(result, steps)
    for path in (out, links, cap):
        assert path in result.files, f"{path} did not come back from the guest"
    print(f"--- ccbench-topo --links in the guest:\n{result.steps['links'].output}")
    print(f"--- the bench:\n{result.steps['bench'].output}")
    doc = json.loads(result.files[out])
    if args.schema:
        found = list(validate_result.problems(validate_result.validator(args.schema), doc))
        assert not found, f"{out} does not validate: {found[0]}"
    for r in doc["results"]:
        assert r["status"] == "ok" and r["wrong_elements"] == 0, f"{r['size_bytes']} B: {r['status']} {r['reason']}"

    # The guest's links: rxe0's one port, read without error, not below its capability.
    guest_links = json.loads(result.files[links])
    rxe_links = [link for link in guest_links if link["device"] == "rxe0 port 1"]
    assert len(rxe_links) == 1 and not rxe_links[0]["below"], f"ccbench-topo --links --json: {guest_links}"

    # The result holds rxe0's deltas, and they are sysfs's own.
    hosts = doc.get("fabric") or []
    assert len(hosts) == 1 and hosts[0]["host"] == "ccbench-vm", f"fabric: {[h.get('host') for h in hosts]}"
    host = hosts[0]
    assert not host["warnings"], f"fabric warnings: {host['warnings']}"
    moved = {m["name"]: m["delta"] for m in host["moved"] if m["device"] == "rxe0"}
    before, after = hw_counters(result.files[cap], "before"), hw_counters(result.files[cap], "after")
    for name in RXE_COUNTERS:
        captured = after[name] - before[name]
        assert moved.get(name, 0) == captured, f"rxe0 {name}: the result says +{moved.get(name, 0)}, sysfs +{captured}"
    sent, dup = moved.get("sent_pkts", 0), moved.get("duplicate_request", 0)
    assert sent > 0 and sent == moved.get("rcvd_pkts"), f"rxe0 on lo receives what it sends: {moved}"

    # rxe0's packets account for the bytes the bench wrote.
    requests, acks, writes, payload = expected_packets(doc["results"])
    accounted = requests + acks + 2 * dup
    off = (sent - accounted) / sent
    wire = payload + requests * ROCE_V2_HEADER_B + writes * RETH_B + (acks + dup) * ACK_B + dup * ROCE_V2_HEADER_B
    print(f"rxe0 sent_pkts +{sent:,} (rcvd_pkts +{moved['rcvd_pkts']:,}) for {writes:,} writes of "
          f"{payload:,} B (rdma.posted_writes / posted_bytes, MTU {doc['results'][0]['rdma']['mtu']}):")
    print(f"  {requests:,} request packets (ceil(size / MTU) per write) + {acks:,} ACKs (one per write and per 66 "
          f"packets) + 2 x {dup:,} duplicate_request (sent again, answered again) = {accounted:,}; "
          f"unaccounted {sent - accounted:+,} ({off:+.3%}; tolerance {ACCOUNT_TOLERANCE:.0%})")
    print(f"  on the wire that is ~{wire:,} B for {payload:,} B written: {wire / payload - 1:.2%} of protocol "
          f"(RoCE v2 headers {ROCE_V2_HEADER_B} B a packet, RETH {RETH_B} B a write, ACKs {ACK_B} B, and the "
          f"{dup * 100 / requests:.2f}% of the requests sent twice, whose payload is not counted here)")
    print("  the bench's readings equal sysfs's around it: " +
          ", ".join(f"{n} +{moved.get(n, 0):,}" for n in RXE_COUNTERS))
    assert abs(off) <= ACCOUNT_TOLERANCE, \
        f"rxe0's packets do not account for the writes: {sent} sent, {accounted} expected ({off:+.3%})"
    print_timings(result, wall_s)
    print(f"PASS: the result holds rxe0's deltas (equal to sysfs's), its {sent:,} packets account for the "
          f"{payload:,} B written within {abs(off):.3%}; ccbench-topo --links read the guest's rxe0 port")
