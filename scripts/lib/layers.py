#!/usr/bin/env python3
"""The layers of the libraries, listed and checked.

    layers.py [BUILD_DIR]

Runs `cmake --graphviz` on a configured build folder (none given: configures this checkout in a
temporary folder, tests and perf off, every feature found on this machine) and prints, for each library of ours, what it links
(ours first, then third-party; `(private)` for a link its users do not inherit). Then checks that
dependencies point one way:

- ccbench::model links nothing of ours (fmt and nlohmann_json only);
- ccbench::output and ccbench::runtime link only the model; topo's libraries (specs, discovery) too;
- ccbench::cuda (runtime/cuda/) links only the model and the runtime;
- ccbench::report links only the model, the output library and the spec database (ccbench::specs, itself on
  the model alone: `import` sets an imported run's peak from it);
- the sources under model/ include only the model's headers; under runtime/, topo/specs/,
  topo/discovery/ and kernels/ only the model's and their own (none reaches into bench/, and the
  two parts of topo/ stay apart); under runtime/cuda/ also the runtime's (and runtime/ none of
  runtime/cuda/'s: the runtime library needs no CUDA).

ccbench::warnings is a set of compile flags (an INTERFACE target with no code), so it is not counted.
Exit 0 when every rule holds, 1 with one line per broken rule, 2 on bad input.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

OURS = re.compile(r"^ccbench_[a-z_]+$")
FLAGS_ONLY = {"ccbench_warnings"}
ALLOWED = {  # library -> the libraries of ours it may link
    "ccbench_model": set(),
    "ccbench_output": {"ccbench_model"},
    "ccbench_runtime": {"ccbench_model"},
    "ccbench_cuda": {"ccbench_model", "ccbench_runtime"},
    "ccbench_specs": {"ccbench_model"},
    "ccbench_topo_discovery": {"ccbench_model"},
    "ccbench_report": {"ccbench_model", "ccbench_output", "ccbench_specs"},
}
OPTIONAL = {"ccbench_cuda"}  # built only where CUDA was found
INCLUDE_RULES = {  # source folder -> the folders whose include/ it may use
    "model": ["model"],
    "runtime": ["model", "runtime"],
    "runtime/cuda": ["model", "runtime", "runtime/cuda"],
    "topo/specs": ["model", "topo/specs"],
    "topo/discovery": ["model", "topo/discovery"],
    "kernels": ["model", "kernels"],
}


def graph(source: pathlib.Path, build: pathlib.Path | None) -> dict[str, list[tuple[str, bool]]]:
    """{target: [(linked target, private)]} from cmake --graphviz."""
    with tempfile.TemporaryDirectory() as tmp:
        dot = pathlib.Path(tmp) / "deps.dot"
        where = [str(build)] if build else ["-S", str(source), "-B", f"{tmp}/build", "-DCCBENCH_BUILD_TESTS=OFF",
                                            "-DCCBENCH_BUILD_PERF=OFF"]
        run = subprocess.run(["cmake", f"--graphviz={dot}", *where], capture_output=True, text=True, check=False)
        if run.returncode != 0:
            last = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
            print(f"layers.py: cmake --graphviz failed: {last}", file=sys.stderr)
            sys.exit(2)
        text = dot.read_text()
    names = {node: label.split("\\n")[0] for node, label in re.findall(r'"(node\d+)" \[ label = "([^"]+)"', text)}
    links: dict[str, list[tuple[str, bool]]] = {}
    for a, b, style in re.findall(r'"(node\d+)" -> "(node\d+)"(?: \[ style = (\w+) \])?', text):
        links.setdefault(names[a], []).append((names[b], style == "dotted"))
    return links


def owner(path: pathlib.Path) -> str:
    """The folder of INCLUDE_RULES whose rule covers `path`: the deepest that holds it."""
    return max((f for f in INCLUDE_RULES if path.is_relative_to(f)), key=len)


def include_violations(source: pathlib.Path) -> list[str]:
    """`file: includes X, which is not in FOLDERS` for each include that crosses a layer upwards."""
    out = []
    for folder, allowed in INCLUDE_RULES.items():
        dirs = [source / a / "include" for a in allowed] + [source / a / "src" for a in allowed]
        for path in sorted((source / folder).rglob("*")):
            if path.suffix not in {".cpp", ".hpp", ".cu", ".cuh", ".in"} or owner(path.relative_to(source)) != folder:
                continue
            for header in re.findall(r'#include "([^"]+)"', path.read_text()):
                local = (path.parent / header).exists()
                if not local and not any((d / header).exists() for d in dirs):
                    out.append(f"{path.relative_to(source)}: includes {header}, which is not in {', '.join(allowed)}")
    return out


def main(argv: list[str]) -> int:
    if argv and argv[0] in {"-h", "--help"}:
        print(__doc__.strip())
        return 0
    source = pathlib.Path(__file__).resolve().parents[2]
    build = pathlib.Path(argv[0]) if argv else None
    if build and not (build / "CMakeCache.txt").is_file():
        print(f"layers.py: {build} is not a configured build folder (no CMakeCache.txt)", file=sys.stderr)
        return 2
    links = graph(source, build)
    problems = []
    for lib in sorted(t for t in links if OURS.match(t) and "test" not in t and "fake" not in t):
        deps = sorted(links[lib], key=lambda d: (not OURS.match(d[0]), d[0]))
        shown = [f"{d}{' (private)' if private else ''}" for d, private in deps if d not in FLAGS_ONLY]
        print(f"{lib.replace('ccbench_', 'ccbench::')} -> {', '.join(shown) or '(nothing)'}")
        if lib in ALLOWED:
            ours = {d for d, _ in deps if OURS.match(d) and d not in FLAGS_ONLY}
            if extra := ours - ALLOWED[lib]:
                problems.append(f"{lib} links {', '.join(sorted(extra))}; it may link only "
                                f"{', '.join(sorted(ALLOWED[lib])) or 'nothing of ours'}")
    missing = sorted(set(ALLOWED) - set(links) - OPTIONAL)
    problems += [f"{lib}: not in the graph (is the build configured?)" for lib in missing]
    problems += include_violations(source)
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    print(f"{len(problems)} layer rule(s) broken" if problems else "every layer rule holds")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
