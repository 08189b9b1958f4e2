#!/usr/bin/env python3
"""ccbench-report fleet on synthetic sweeps (tests/tools/synthetic_fleet.py, derived from the real 4-host sweeps):
the verdict must not depend on the bad hosts being a minority (issue 22, section 2), and bad input gets one line and
exit 2 (section 3).

  verdicts   every case of section 2 with the names it must give (JSON), its exit code and its line of text
  input      section 3: a pair of a host with itself, a latency of 0 us, nothing measured, --junit on /proc, on an
             input or empty, hostile host names in Markdown and CSV, hyphenated names, --check, --partial

Usage: fleet_cases_test.py --report BIN verdicts|input
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
import synthetic_fleet  # noqa: E402

# name: (sweep arguments, extra fleet flags, exit code, bad hosts, bad links, fleet LOW, split parts, a line of text)
VERDICTS = {
    "4_hosts_2_bad_n0_n1": (dict(hosts=4, bad={0: 0.5, 1: 0.5}), [], 1, ["n0", "n1"], [], False, None,
                            "BAD HOST n0: rank 0; 3 of 3 pairs LOW, median 50% of the reference"),
    "4_hosts_2_bad_n1_n3": (dict(hosts=4, bad={1: 0.5, 3: 0.5}), [], 1, ["n1", "n3"], [], False, None,
                            "BAD HOST n3: rank 3; 3 of 3 pairs LOW"),
    "6_hosts_3_bad": (dict(hosts=6, bad={0: 0.5, 2: 0.5, 4: 0.5}), [], 1, ["n0", "n2", "n4"], [], False, None,
                      "3 bad hosts, 0 bad links (of 15 pairs)"),
    "8_hosts_4_bad": (dict(hosts=8, bad={1: 0.5, 3: 0.5, 5: 0.5, 7: 0.5}), [], 1, ["n1", "n3", "n5", "n7"], [],
                      False, None, "4 bad hosts, 0 bad links (of 28 pairs)"),
    # 3 hosts, 2 at half rate: every pair holds a bad host, so all run at one level. Only an anchor can tell.
    "3_hosts_2_bad_no_anchor": (dict(hosts=3, bad={0: 0.5, 1: 0.5}), [], 0, [], [], False, None,
                                "there is no anchor"),
    "3_hosts_2_bad_reference": (dict(hosts=3, bad={0: 0.5, 1: 0.5}), ["--reference", "1"], 1, [], [], True, None,
                                "FLEET LOW: the level 0.5 GB/s is 50% of the anchor 1 GB/s (--reference 1 GB/s)"),
    "3_hosts_2_bad_spec_peak": (dict(hosts=3, bad={0: 0.5, 1: 0.5}, peak=1.25), [], 1, [], [], True, None,
                                "FLEET LOW: the level 0.5 GB/s is 50% of the anchor 1 GB/s (80% of the spec peak 1.25"),
    "latency_4_hosts_2_bad": (dict(hosts=4, bad={0: 0.5, 2: 0.5}, bench="ib_write_lat", base=2.0), [], 1,
                              ["n0", "n2"], [], False, None, "reference latency: 2 us"),
    "groups_4_hosts_2_bad": (dict(hosts=4, bad={0: 0.5, 1: 0.5}, bench="groups"), [], 1, ["n0", "n1"], [], False,
                             None, "BAD HOST n1: rank 1; 2 of 2 groups LOW"),
    # n0 and n3 at half rate: every group of {0,1},{2,3},{0,2},{1,3} holds one, so only an anchor tells.
    "groups_every_group_bad_reference": (dict(hosts=4, bad={0: 0.5, 3: 0.5}, bench="groups"), ["--reference", "1"],
                                         1, [], [], True, None, "FLEET LOW: the level 0.5 GB/s is 50%"),
    "bad_host_and_bad_link": (dict(hosts=4, bad={0: 0.5}, links={(2, 3): 0.5}), [], 1, ["n0"], [["n2", "n3"]], False,
                              None, "BAD LINK n2<->n3: ranks 2 and 3; 0.5 GB/s = 50% of the reference; n2 is fine "
                              "elsewhere (median 100%), n3 too (median 100%)"),
    "5_hosts_2_bad_at_0.7": (dict(hosts=5, bad={0: 0.7, 1: 0.7}), [], 1, ["n0", "n1"], [], False, None,
                             "BAD HOST n1: rank 1; 4 of 4 pairs LOW, median 70% of the reference"),
    "1_bad_at_0.7": (dict(hosts=5, bad={3: 0.7}), [], 1, ["n3"], [], False, None, "1 bad host, 0 bad links"),
    "two_equal_halves": (dict(hosts=4, links={(0, 2): 0.5, (0, 3): 0.5, (1, 2): 0.5, (1, 3): 0.5}), [], 1, [], [],
                         False, [["n0", "n1"], ["n2", "n3"]],
                         "SPLIT: 2 parts fine inside and LOW between them: {n0, n1} | {n2, n3}; 4 pairs across"),
    "whole_fleet_slow_reference": (dict(hosts=4, bad={h: 0.5 for h in range(4)}), ["--reference", "1"], 1, [], [],
                                   True, None, "the fleet LOW as a whole, 0 bad hosts, 0 bad links (of 6 pairs)"),
    "whole_fleet_slow_and_one_worse": (dict(hosts=5, bad={0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5, 4: 0.2}),
                                       ["--reference", "1"], 1, ["n4"], [], True, None, "BAD HOST n4"),
    "healthy_with_anchor": (dict(hosts=4, peak=1.1), [], 0, [], [], False, None, "nothing named: 6 pairs"),
    # Issue 35, section 1: one fast pair (a loopback: one machine under two names) named 14 healthy hosts of 16.
    # The fastest pairs' 2 hosts are no level while the other 14 sit together: judged against those, the pair named.
    "16_hosts_one_fast_pair": (dict(hosts=16, links={(0, 1): 2.0}), [], 1, [], [], False, None,
                               "SUSPICIOUS n0<->n1: ranks 0 and 1; faster than the rest of the fleet: 2 GB/s against "
                               "its level 1 GB/s"),
    "64_hosts_one_fast_pair": (dict(hosts=64, links={(5, 40): 2.0}), [], 1, [], [], False, None,
                               "SUSPICIOUS n40<->n5"),
    "16_hosts_two_fast_pairs_3x": (dict(hosts=16, links={(0, 1): 3.0, (2, 3): 3.0}), [], 1, [], [], False, None,
                                   "the fastest 2 pair(s) (n0<->n1, n2<->n3, at 3 GB/s) hold 4 of the 16 hosts"),
    # --reference is the level, not the better of it and the fleet's best: the healthy hosts are not named.
    "16_hosts_one_fast_pair_reference": (dict(hosts=16, links={(0, 1): 2.0}), ["--reference", "1"], 1, [], [],
                                         False, None, "SUSPICIOUS n0<->n1"),
    # 14 of 16 hosts really slow: only an anchor can tell it from one fast pair; with it, the 14 are named.
    "16_hosts_14_slow_reference": (dict(hosts=16, bad={h: 0.5 for h in range(2, 16)}), ["--reference", "1"], 1,
                                   sorted(f"n{h}" for h in range(2, 16)), [], False, None, "14 bad hosts, 0 bad links"),
    "16_hosts_14_slow_no_anchor": (dict(hosts=16, bad={h: 0.5 for h in range(2, 16)}), [], 1, [], [], False, None,
                                   "give --reference to say which is healthy"),
    # A pair over its link's spec cannot be a measurement of it.
    "faster_than_spec": (dict(hosts=4, peak=1.1, links={(1, 2): 1.5}), [], 1, [], [], False, None,
                         "SUSPICIOUS n1<->n2: ranks 1 and 2; faster than its link can go: 1.5 GB/s over the spec peak "
                         "1.1 GB/s"),
    # Every pair above its spec peak: the spec is what is wrong, and no pair is named for it.
    "all_faster_than_spec": (dict(hosts=4, peak=0.5), [], 0, [], [], False, None,
                             "6 of the 6 pairs measured above their spec peak: the spec (peak_GBps) looks low"),
    "every_pair_failed": (dict(hosts=4, status="failed"), [], 2, None, None, None, None,
                          "no pair of the sweep measured (6 pairs, each failed): nothing to judge"),
}


def run(report, args, cwd):
    p = subprocess.run([report, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check_verdicts(report):
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (sweep, flags, code, hosts, links, fleet_low, parts, text) in VERDICTS.items():
            path = pathlib.Path(tmp) / f"{name}.json"
            sweep = dict(sweep)
            synthetic_fleet.write_sweep(path, sweep.pop("hosts"), **sweep)
            rc, out, err = run(report, ["fleet", path.name, "--colour", "never", *flags], tmp)
            shown = out + err
            problems = []
            if rc != code:
                problems.append(f"exit {rc}, expected {code}")
            if text not in shown:
                problems.append(f"no line says {text!r}")
            if code != 2:
                j = json.loads(run(report, ["fleet", path.name, "--format", "json", *flags], tmp)[1])
                named = sorted(h["host"] for h in j["bad_hosts"])
                named_links = sorted(sorted(link["hosts"]) for link in j["bad_links"])
                split = j["splits"][0]["parts"] if j["splits"] else None
                if named != hosts or named_links != links or any(j["fleet_low"]) != fleet_low or split != parts:
                    problems.append(f"named hosts {named}, links {named_links}, fleet LOW {j['fleet_low']}, "
                                    f"split {split}")
            if problems:
                bad.append(f"{name}: {'; '.join(problems)}\n{shown}")
            else:
                line = next(line for line in shown.splitlines() if text in line)
                print(f"ok   {name}: exit {rc}: {line.strip()[:160]}")
    return bad


def check_input(report):
    bad = []

    def expect(name, args, code, text, cwd, stdout_empty=True):
        rc, out, err = run(report, args, cwd)
        lines = err.strip().splitlines()
        if rc != code or (code == 2 and (len(lines) != 1 or text not in lines[0] or (stdout_empty and out))) or \
                (code != 2 and text not in out):
            bad.append(f"{name}: exit {rc} (expected {code}), stderr {err.strip()!r}, stdout {out[:300]!r}")
        else:
            print(f"ok   {name}: exit {rc}: {(lines[0] if code == 2 else text)[:160]}")

    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        synthetic_fleet.write_sweep(t / "ok.json", 4, bad={2: 0.5})
        doc = json.loads((t / "ok.json").read_text())
        itself = json.loads(json.dumps(doc))
        itself["results"][0]["group_hosts"] = ["n0", "n0"]
        (t / "itself.json").write_text(json.dumps(itself))
        expect("pair_with_itself", ["fleet", "itself.json"], 2, "pair:0-1 pairs host n0 with itself", tmp)
        synthetic_fleet.write_sweep(t / "lat.json", 4, bench="ib_write_lat", base=2.0)
        zero = json.loads((t / "lat.json").read_text())
        zero["results"][1]["time"]["p50_us"] = 0.0
        (t / "zero.json").write_text(json.dumps(zero))
        expect("latency_of_zero", ["fleet", "zero.json"], 2, "pair:0-2 is ok with a latency of 0 us: not a measurement",
               tmp)
        expect("junit_on_proc", ["fleet", "ok.json", "--junit", "/proc/version"], 2, "--junit /proc/version", tmp)
        before = (t / "ok.json").read_bytes()
        expect("junit_on_the_input", ["fleet", "ok.json", "--junit", "ok.json"], 2,
               "--junit ok.json: is the input ok.json", tmp)
        if (t / "ok.json").read_bytes() != before:
            bad.append("junit_on_the_input: the input was changed")
        expect("junit_empty", ["fleet", "ok.json", "--junit", ""], 2, "--junit '': expected a file path", tmp)
        expect("threshold_zero_checked", ["fleet", "--check", "--threshold", "0"], 2,
               "--threshold 0: expected a percentage between 0 and 100", tmp)
        expect("threshold_fine_checked", ["fleet", "--check", "--threshold", "20"], 0, "", tmp, stdout_empty=False)
        expect("no_files", ["fleet"], 2, "fleet: give the result files of one sweep", tmp)
        # Host names that are markup or hold control characters, and names with hyphens that a hyphen would mix up.
        hostile = ["<script>x</script>", "a-b", "b\x01c", "c-d"]
        synthetic_fleet.write_sweep(t / "hostile.json", 4, bad={0: 0.5}, hostname_format="h{}")
        text = (t / "hostile.json").read_text()
        for i, name in enumerate(hostile):
            text = text.replace(f'"h{i}"', json.dumps(name))
        (t / "hostile.json").write_text(text)
        rc, md, err = run(report, ["fleet", "hostile.json", "--format", "markdown"], tmp)
        bullets = [line for line in md.splitlines() if line.startswith("- **")]
        if rc != 1 or not bullets or "<script>" in md or "\x01" in md or "&lt;script&gt;" not in bullets[0]:
            bad.append(f"markdown: exit {rc}, bullets {bullets}, raw markup or control characters in {md[:400]!r}")
        else:
            print(f"ok   markdown_escaped: {bullets[0]}")
        rc, csv, err = run(report, ["fleet", "hostile.json", "--format", "csv"], tmp)
        if any(ord(c) < 32 and c not in "\n" for c in csv) or "b?c" not in csv:
            bad.append(f"csv: control characters pass through: {csv!r}")
        else:
            print("ok   csv_without_control_characters: b\\x01c written as b?c")
        rc, _, err = run(report, ["html", "hostile.json", "-o", "hostile.html"], tmp)
        page = (t / "hostile.html").read_text(errors="replace") if rc == 0 else ""
        if rc != 0 or "<script>x" in page or "\x01" in page or "&lt;script&gt;x&lt;/script&gt;" not in page:
            bad.append(f"page: exit {rc} {err.strip()}: raw markup or control characters on the page")
        else:
            print("ok   page_escaped: the host names' markup escaped, b\\x01c written with U+FFFD")
        rc, out, err = run(report, ["fleet", "hostile.json", "--format", "json"], tmp)
        pairs = {tuple(p["hosts"]) for p in json.loads(out)["pairs"]}
        rc, term, err = run(report, ["fleet", "hostile.json", "--colour", "never"], tmp)
        if "a-b<->c-d" not in term or len(pairs) != 6:
            bad.append(f"pair names: {term!r}")
        else:
            print("ok   hyphenated_hosts: a-b<->c-d names one pair")
        # A sweep that stopped early: missing pairs are refused, or judged aside with --partial.
        part = json.loads((t / "ok.json").read_text())
        part["results"] = part["results"][:4]
        (t / "part.json").write_text(json.dumps(part))
        expect("missing_pairs", ["fleet", "part.json"], 2, "2 of the 6 pairs of 4 hosts are missing from the sweep", tmp)
        expect("partial", ["fleet", "part.json", "--partial", "--colour", "never"], 1,
               "partial: 2 of the 6 pairs were not measured", tmp, stdout_empty=False)
        # Issue 35: two host names of one machine (the same boot id and interfaces in environment.hosts): refused.
        alias = json.loads((t / "ok.json").read_text())
        for h in alias["environment"]["hosts"]:
            h["machine"] = f"boot_id b interfaces {h['hostname']} (1 MAC)"
        alias["environment"]["hosts"][3]["machine"] = alias["environment"]["hosts"][2]["machine"]
        (t / "alias.json").write_text(json.dumps(alias))
        expect("one_machine_two_names", ["fleet", "alias.json"], 2, "hosts n2 and n3 are one machine", tmp)
        # Issue 35: under --partial a host with one measured pair, LOW, was named BAD LINK "... too (median -)". One
        # pair cannot tell the host from the link: CANNOT TELL, the pair named.
        synthetic_fleet.write_sweep(t / "one.json", 4, links={(2, 3): 0.5})
        one = json.loads((t / "one.json").read_text())
        one["results"] = [r for r in one["results"] if sorted(r["group_hosts"]) not in (["n0", "n3"], ["n1", "n3"])]
        (t / "one.json").write_text(json.dumps(one))
        expect("partial_one_pair", ["fleet", "one.json", "--partial", "--colour", "never"], 1,
               "CANNOT TELL n2<->n3: ranks 2 and 3; 0.5 GB/s = 50% of the reference; n3 has no other pair measured: "
               "one pair cannot tell the host from the link", tmp, stdout_empty=False)
        rc, out, _ = run(report, ["fleet", "one.json", "--partial", "--format", "json"], tmp)
        j = json.loads(out)
        if j["bad_links"] or [c["hosts"] for c in j.get("cannot_tell", [])] != [["n2", "n3"]]:
            bad.append(f"partial_one_pair: bad links {j['bad_links']}, cannot tell {j.get('cannot_tell')}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("case", choices=["verdicts", "input"])
    a = ap.parse_args()
    report = os.path.abspath(a.report)
    bad = check_verdicts(report) if a.case == "verdicts" else check_input(report)
    if bad:
        print("FAIL:\n" + "\n".join(bad))
        return 1
    print(f"PASS: fleet {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
