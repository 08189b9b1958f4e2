#!/usr/bin/env python3
"""Which tests a ctest run skipped, and whether CI may accept that.

    ci_skips.py CTEST_OUTPUT LAST_TEST_LOG [--allow REGEX ...]

Reads ctest's console output (the '***Skipped' lines) and Testing/Temporary/LastTest.log (each test's
output, for its reason). A skipped gpu test whose output says there is no GPU is fine anywhere, and so is
a test whose output matches an --allow REGEX (a build that leaves a feature out on purpose). Any other
skip means a tier did not run because a tool, root or a download was missing: with CI=true that fails
(exit 1), naming the tier and the reason; elsewhere it is listed and accepted (exit 0).
"""
import os
import re
import sys

NO_GPU = re.compile(r"no GPU|no CUDA device")


def skipped_tests(ctest_output):
    return re.findall(r"Test\s+#\d+: (\S+) \.*\s*\*+Skipped", ctest_output)


def outputs(last_test_log):
    """Each test's output in LastTest.log, by name."""
    found = {}
    for block in re.split(r"\n(?=\d+/\d+ Test: )", last_test_log):
        m = re.match(r"\d+/\d+ Test: (\S+)", block)
        if m:
            found[m.group(1)] = block
    return found


def reason(output):
    lines = [line for line in output.splitlines() if "SKIPPED" in line or "Skipped" in line]
    return lines[0].strip() if lines else "(no reason printed)"


def main(argv):
    args, allow = [], []
    it = iter(argv)
    for a in it:
        if a == "--allow":
            allow.append(re.compile(next(it)))
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8", errors="replace") as f:
        skipped = skipped_tests(f.read())
    with open(args[1], encoding="utf-8", errors="replace") as f:
        by_name = outputs(f.read())
    bad = []
    for name in skipped:
        out = by_name.get(name, "")
        if name.startswith("gpu.") and NO_GPU.search(out):
            continue
        if any(a.search(out) for a in allow):
            continue
        bad.append((name.split(".")[0], name, reason(out)))
    ci = os.environ.get("CI", "") == "true"
    for tier, name, why in bad:
        print(f"{'error' if ci else 'note'}: tier {tier} skipped {name}: {why}")
    if bad and ci:
        tiers = sorted({tier for tier, _, _ in bad})
        print(f"error: with CI=true only the gpu tier may skip, and only for having no GPU; skipped here: "
              f"{', '.join(tiers)} ({len(bad)} test(s))")
        return 1
    print(f"skips: {len(skipped)} skipped, {len(skipped) - len(bad)} of them accepted"
          f"{'' if ci else ' (not CI: skips do not fail the run)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
