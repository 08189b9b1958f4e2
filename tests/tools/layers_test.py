#!/usr/bin/env python3
"""The include rules of scripts/lib/layers.py catch what they forbid.

    layers_test.py

Copies the folders the rules cover (model/, runtime/, topo/, kernels/, report/) into a scratch tree, checks that
`layers.py --includes` passes on the copy as it is, then breaks one rule at a time with a deliberate include and
checks that the check fails (exit 1) naming that file and header:

- a judging source includes a rendering header (public: ccbench/report/renderer.hpp; private: text_table.hpp);
- a rendering source includes judging's private header (fleet_internal.hpp): a renderer words a verdict from
  what the verdict holds and never reaches into how it was decided;
- a reading source includes a judging header (ccbench/report/accept.hpp);
- a rendering source calls a judge (evaluate_fleet, all_passed) instead of wording the verdict it was given.

Exit 0 when every case is caught, 1 naming the case that was not.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

SOURCE = pathlib.Path(__file__).resolve().parents[2]
LAYERS = SOURCE / "scripts" / "lib" / "layers.py"
COVERED = ["model", "runtime", "topo", "kernels", "report"]

def include(header: str):
    return lambda code: f'#include "{header}"\n' + code, f"includes {header}, which is not in"


def call(judge: str):
    return lambda code: code + f"\nstatic const bool kCalled = {judge}({{}}, {{}});\n", \
        f"calls {judge}, which decides a verdict"


BREAKS = [  # (the file broken, how: what it gains and what the check must then say of it)
    ("report/judging/src/fleet.cpp", include("ccbench/report/renderer.hpp")),
    ("report/judging/src/accept.cpp", include("text_table.hpp")),
    ("report/rendering/src/fleet_render.cpp", include("fleet_internal.hpp")),
    ("report/reading/src/input.cpp", include("ccbench/report/accept.hpp")),
    ("report/rendering/src/fleet_html.cpp", call("evaluate_fleet")),
    ("report/rendering/src/accept_render.cpp", call("all_passed")),
]


def check(tree: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LAYERS), "--includes", str(tree)], capture_output=True, text=True,
                          check=False)


def main() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp)
        for folder in COVERED:
            shutil.copytree(SOURCE / folder, tree / folder, ignore=shutil.ignore_patterns("build*"))
        clean = check(tree)
        if clean.returncode != 0:
            print(f"the unchanged copy does not pass (exit {clean.returncode}): {clean.stderr.strip()}")
            return 1
        for path, (gain, says) in BREAKS:
            target = tree / path
            original = target.read_text()
            target.write_text(gain(original))
            run = check(tree)
            if run.returncode != 1 or f"layers: {path}: {says}" not in run.stderr:
                failures.append(f"{path} ({says}): exit {run.returncode}, said {run.stderr.strip()!r}")
            else:
                print(f"caught: {run.stderr.strip()}")
            target.write_text(original)
    for f in failures:
        print(f"NOT CAUGHT: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
