#!/usr/bin/env python3
"""Validate ccbench result documents against report/schema/ccbench.result.schema.json.

Usage: validate_result.py --schema SCHEMA [--check-schema] [FILE ...]
Exit 0 when every file validates; 1 with the file and JSON pointer of the first problem.
"""
import argparse
import json
import os
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("validate_result.py: python module jsonschema is missing (apt-get install python3-jsonschema)")


def validator(schema_path):
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(v, document):
    for error in sorted(v.iter_errors(document), key=lambda e: list(e.absolute_path)):
        pointer = "/" + "/".join(str(p) for p in error.absolute_path)
        yield f"{pointer}: {error.message}"


def checked_document(v, path):
    """The document at `path`, asserting that it validates (the tests' way to read a result file)."""
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    found = list(problems(v, doc))
    assert not found, f"{path} does not validate: {found[0]}"
    return doc


def mpi_test_environment(environ):
    """`environ` with what the tests' mpirun needs here: root allowed, ranks that yield, shared memory
    between the ranks of one host, and more ranks than cores."""
    return dict(environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl="self,vader", OMPI_MCA_rmaps_base_oversubscribe="1")


def process_argvs():
    """(pid, argv as a list of bytes) of every live process this user can read."""
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            yield int(proc.name), (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue


def world_rank_pids(tag):
    """World rank -> pid of the bench processes (not mpirun) whose argv holds `tag`."""
    found = {}
    for pid, cmdline in process_argvs():
        if tag.encode() not in cmdline or b"mpirun" in cmdline[0]:
            continue
        try:
            environ = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for entry in environ:
            if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                found[int(entry.split(b"=", 1)[1])] = pid
    return found


class MpiTestEnv:
    """What the MPI tests share: the benches' folder (args.bin_dir), the result validator (args.schema),
    mpirun (args.mpirun) and its environment."""

    def __init__(self, args):
        self.bin_dir = pathlib.Path(args.bin_dir).resolve()
        self.validator = validator(args.schema)
        self.mpirun = args.mpirun
        self.env = mpi_test_environment(os.environ)

    def validate(self, path):
        return checked_document(self.validator, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schema", required=True)
    parser.add_argument("--check-schema", action="store_true")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    v = validator(args.schema)
    if args.check_schema:
        print(f"schema ok: {args.schema}")
    bad = 0
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            found = list(problems(v, json.load(f)))
        if found:
            bad += 1
            print(f"{path}: {found[0]}", file=sys.stderr)
        else:
            print(f"valid: {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
