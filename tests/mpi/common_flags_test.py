#!/usr/bin/env python3
"""Every bench answers the questions a workflow asks it the same way (issue 37).

  common_flags_test.py BENCH...   each BENCH (a path: the collective benches, the RDMA pair's, copy_bench)
                                  --check-args with --bind and --timeout: exit 0, nothing printed; a bad
                                  --bind or --timeout: exit 2, one line naming the flag, the same words in
                                  every bench. No MPI, no GPU: --check-args needs neither.
"""
import pathlib
import subprocess
import sys

GOOD = [
    ["--check-args"],
    ["--check-args", "--bind", "auto"],
    ["--check-args", "--bind", "none", "--timeout", "60"],
]
BAD = [
    (["--check-args", "--bind", "bogus"], "--bind 'bogus' is not none or auto"),
    (["--check-args", "--timeout", "-1"], "--timeout must be positive seconds, at most 86400 (a day)"),
    (["--check-args", "--timeout", "0"], "--timeout must be positive seconds, at most 86400 (a day)"),
]


def run(binary, flags):
    p = subprocess.run([binary, *flags], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    benches = sys.argv[1:]
    assert benches, "give the benches' paths"
    for binary in benches:
        name = pathlib.Path(binary).name
        for flags in GOOD:
            rc, out, err = run(binary, flags)
            assert rc == 0 and not out and not err, f"{name} {flags}: exit {rc}, stdout {out!r}, stderr {err!r}"
        for flags, says in BAD:
            rc, out, err = run(binary, flags)
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert rc == 2 and not out and lines == [f"{name}: error: {says}"], \
                f"{name} {flags}: exit {rc}, stdout {out!r}, stderr {err!r}"
        print(f"{name}: {len(GOOD)} checks exit 0 silently, {len(BAD)} bad values exit 2 with one line")
    print(f"PASS: {len(benches)} benches answer alike")
    return 0


if __name__ == "__main__":
    sys.exit(main())
