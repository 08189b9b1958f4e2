#!/usr/bin/env python3
"""The model's JSON Schema validator (C++) and Python's jsonschema give the same verdicts.

    schema_agreement_test.py --check BUILD/tests/ccbench_schema_check

For each schema of ours (results, hardware.json, acceptance profiles) a corpus of documents: the real
files, the malformed cases of tests/report/report_test.py (results), and edits of the real files made
here, deterministically: every value replaced by one of another JSON type, every key removed, an unknown
key added to every object, every number made negative. Each document is judged by ccbench_schema_check
and by jsonschema.Draft202012Validator; the verdicts (valid or not) must agree, except the deviation on
purpose below, which must occur. Exit 0 when they agree, 1 when not, 77 when jsonschema is missing.
"""
import argparse
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("skipped: python3-jsonschema is not installed")
    sys.exit(77)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "report"))
import report_test  # noqa: E402  (its malformed corpus)

SCHEMAS = {
    "result": (ROOT / "report/schema/ccbench.result.schema.json",
               sorted((ROOT / "tests/data/report/runs").glob("*.json"))),
    "hardware": (ROOT / "topo/specs/hardware.schema.json", [ROOT / "topo/specs/hardware.json"]),
    "profile": (ROOT / "report/schema/ccbench.accept.schema.json",
                sorted((ROOT / "profiles").glob("*.json")) + [ROOT / "tests/data/baseline/learned/namespace-fleet.json"]),
}
# A case name -> the C++ verdict that differs from Python's on purpose, and why.
DEVIATIONS = {
    "result:integer_as_float": (False, "a float with no fraction (2.0) where the schema says integer: the "
                                       "standard takes it, our reader does not (the writer never writes one)"),
}
# Edits per real file: every key of a hardware or profile file; a sample of the large result files (each
# is tens of KB, and jsonschema takes about 20 ms a document).
MAX_EDITS = {"result": 60, "hardware": 400, "profile": 400}


def paths(doc, at=()):
    """Every (path, value) below doc, parents before children."""
    yield at, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, at + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, at + (i,))


def edited(doc, path, change):
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    change(node, path[-1]) if path else None
    return out


def other_type(value):
    """A value of another JSON type (never a float with no fraction: that is the one deviation)."""
    if isinstance(value, bool) or value is None:
        return "text"
    if isinstance(value, (int, float)):
        return "12"
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return {"k": 1}
    return [1, 2]


def edits(name, doc, most):
    """(case, document) edits of one real document: chosen first, then made (each is a deep copy)."""
    chosen = []
    for path, value in paths(doc):
        label = "/" + "/".join(str(p) for p in path)
        if path:
            chosen.append((f"{name}{label}:type", path, lambda n, k: n.__setitem__(k, other_type(n[k]))))
        if path and isinstance(path[-1], str):
            chosen.append((f"{name}{label}:removed", path, lambda n, k: n.pop(k)))
        if isinstance(value, dict):
            chosen.append((f"{name}{label}:unknown_key", path + ("zz_unknown",), lambda n, k: n.__setitem__(k, 1)))
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            chosen.append((f"{name}{label}:negative", path, lambda n, k: n.__setitem__(k, -n[k])))
    step = max(1, len(chosen) // most)
    return [(case, edited(doc, path, change)) for case, path, change in chosen[::step]]


def corpus(kind, files):
    cases = []
    for f in files:
        doc = json.loads(f.read_text())
        cases.append((f"{f.name}", doc))
        cases += edits(f.name, doc, MAX_EDITS[kind])
    if kind == "result":
        base = (ROOT / "tests/data/report/runs/allreduce-np4-a.json").read_text()
        for name, text, _ in report_test.malformed_cases(base):
            try:
                doc = json.loads(text)
                json.dumps(doc, allow_nan=False)
            except (ValueError, RecursionError):
                continue  # not JSON (or a number past a double, which Python reads as inf): no schema verdict
            cases.append((f"malformed:{name}", doc))
        doc = json.loads(base)
        doc["results"][0]["ranks"] = float(doc["results"][0]["ranks"])
        cases.append(("integer_as_float", doc))
    return cases


def cpp_verdicts(check, schema, docs, tmp):
    files = []
    for i, (_, doc) in enumerate(docs):
        path = os.path.join(tmp, f"{i}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, allow_nan=False)
        files.append(path)
    run = subprocess.run([check, str(schema), *files], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"FAIL: {check} {schema}: exit {run.returncode}: {run.stderr.strip()}")
    verdicts = {}
    for line in run.stdout.splitlines():
        path, verdict, *why = line.split("\t")
        verdicts[path] = ({"valid": True, "invalid": False}.get(verdict), why[0] if why else "")
    return [verdicts[p] for p in files]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", required=True, help="the ccbench_schema_check binary")
    args = ap.parse_args()
    bad = []
    seen_deviations = set()
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (schema_path, files) in SCHEMAS.items():
            schema = json.loads(schema_path.read_text())
            jsonschema.Draft202012Validator.check_schema(schema)
            python = jsonschema.Draft202012Validator(schema)
            docs = corpus(kind, files)
            cpp = cpp_verdicts(args.check, schema_path, docs, tmp)
            counts = {True: 0, False: 0}
            real = {f.name for f in files}
            for (name, doc), (cpp_valid, why) in zip(docs, cpp):
                py_valid = python.is_valid(doc)
                case = f"{kind}:{name}"
                if cpp_valid is None:
                    bad.append(f"{case}: ccbench_schema_check could not read it: {why}")
                elif name in real and not (cpp_valid and py_valid):
                    bad.append(f"{case}: a real file, not valid (C++ {cpp_valid}, Python {py_valid}): {why}")
                elif cpp_valid == py_valid:
                    counts[py_valid] += 1
                elif case in DEVIATIONS and DEVIATIONS[case][0] == cpp_valid:
                    seen_deviations.add(case)
                else:
                    bad.append(f"{case}: C++ says {'valid' if cpp_valid else 'invalid (' + why + ')'}, "
                               f"Python says {'valid' if py_valid else 'invalid'}")
            print(f"{kind:<9} {schema_path.relative_to(ROOT)}: {len(docs)} documents from {len(files)} file(s), "
                  f"agree on {counts[True]} valid and {counts[False]} invalid")
    for case, (_, why) in DEVIATIONS.items():
        if case in seen_deviations:
            print(f"deviation on purpose, seen: {case}: {why}")
        else:
            bad.append(f"{case}: the deviation on purpose did not occur")
    if bad:
        print("FAIL:\n  " + "\n  ".join(bad[:40]) + (f"\n  ... {len(bad) - 40} more" if len(bad) > 40 else ""))
        return 1
    print("ok: the C++ validator and jsonschema agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
