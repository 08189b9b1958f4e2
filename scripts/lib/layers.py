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
- ccbench::report is its three folders' libraries, each linking down: reading (result files, log importers) only
  the model, the output library and the spec database (ccbench::specs, itself on the model alone: `import` sets an
  imported run's peak from it); judging (the verdicts) only reading; rendering (the formats) only judging and
  reading;
- the sources under model/ include only the model's headers; under runtime/, topo/specs/,
  topo/discovery/ and kernels/ only the model's and their own (none reaches into bench/, and the
  two parts of topo/ stay apart); under runtime/cuda/ also the runtime's (and runtime/ none of
  runtime/cuda/'s: the runtime library needs no CUDA);
- under report/: reading/ includes neither judging/ nor rendering/; judging/ includes reading/'s public headers
  and never rendering/; rendering/ includes the public headers of judging/ and reading/ (never their src/: a
  renderer words the verdicts that judging/ decided, from what the verdict holds); the folders' src/ are private.

- rendering/ calls no judge: of the free functions judging/'s public headers declare, a renderer calls only the
  words every format shares (JUDGING_WORDS: a verdict's name, a check's description, a pair's name, "+1.2%");
  a verdict reaches a renderer decided.

A folder's own src/ and include/ are open to it; another folder's include/ (its public headers) only.
`layers.py --includes SOURCE_ROOT` checks the include rules (and the judges' calls) alone, on any tree (no CMake): the test that shows a
deliberate judging -> rendering include caught.

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
    "ccbench_report": {"ccbench_report_reading", "ccbench_report_judging", "ccbench_report_rendering"},
    "ccbench_report_reading": {"ccbench_model", "ccbench_output", "ccbench_specs"},
    "ccbench_report_judging": {"ccbench_report_reading"},
    "ccbench_report_rendering": {"ccbench_report_judging", "ccbench_report_reading"},
}
OPTIONAL = {"ccbench_cuda"}  # built only where CUDA was found
INCLUDE_RULES = {  # source folder -> the folders whose include/ it may use
    "model": ["model"],
    "runtime": ["model", "runtime"],
    "runtime/cuda": ["model", "runtime", "runtime/cuda"],
    "topo/specs": ["model", "topo/specs"],
    "topo/discovery": ["model", "topo/discovery"],
    "kernels": ["model", "kernels"],
    "report/reading": ["model", "runtime", "topo/specs", "report/reading"],
    "report/judging": ["model", "report/reading", "report/judging"],
    "report/rendering": ["model", "report/reading", "report/judging", "report/rendering"],
}

JUDGING_WORDS = {"name", "describe", "threshold_text", "lane_suffix", "pair_name", "pct", "count_rows"}


def judge_calls(source: pathlib.Path) -> list[str]:
    """`file: calls JUDGE, which decides a verdict` for each renderer that calls a judge (or defines one)."""
    judging = source / "report" / "judging" / "include"
    if not judging.is_dir():
        return []
    declared = set()
    for header in judging.rglob("*.hpp"):
        declared |= set(re.findall(r"^[A-Za-z][\w:<>, *&]* \**&?(\w+)\(", header.read_text(), re.M))
    judges = sorted(declared - JUDGING_WORDS)
    call = re.compile(r"(?<![\w.>:])(" + "|".join(judges) + r")\s*\(")
    out = []
    for path in sorted((source / "report" / "rendering").rglob("*")):
        if path.suffix in {".cpp", ".hpp"}:
            code = re.sub(r"//[^\n]*", "", path.read_text())
            for name in sorted(set(call.findall(code))):
                out.append(f"{path.relative_to(source)}: calls {name}, which decides a verdict (judging/ decides, "
                           "rendering/ words what it decided)")
    return out


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
        dirs = [source / a / "include" for a in allowed] + [source / folder / "src"]
        for path in sorted((source / folder).rglob("*")):
            if path.suffix not in {".cpp", ".hpp", ".cu", ".cuh", ".in"} or owner(path.relative_to(source)) != folder:
                continue
            for header in re.findall(r'#include "([^"]+)"', path.read_text()):
                local = (path.parent / header).exists()
                if not local and not any((d / header).exists() for d in dirs):
                    public = ", ".join(a for a in allowed if a != folder)
                    out.append(f"{path.relative_to(source)}: includes {header}, which is not in {folder} or the "
                               f"public headers of {public}")
    return out


def main(argv: list[str]) -> int:
    if argv and argv[0] in {"-h", "--help"}:
        print(__doc__.strip())
        return 0
    if argv and argv[0] == "--includes":
        if len(argv) != 2 or not pathlib.Path(argv[1]).is_dir():
            print("layers.py: --includes needs one source tree (a folder)", file=sys.stderr)
            return 2
        problems = include_violations(pathlib.Path(argv[1])) + judge_calls(pathlib.Path(argv[1]))
        for p in problems:
            print(f"layers: {p}", file=sys.stderr)
        print(f"{len(problems)} include rule(s) broken" if problems else "every include rule holds")
        return 1 if problems else 0
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
    problems += include_violations(source) + judge_calls(source)
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    print(f"{len(problems)} layer rule(s) broken" if problems else "every layer rule holds")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
