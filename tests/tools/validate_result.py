#!/usr/bin/env python3
"""Validate ccbench result documents against report/schema/ccbench.result.schema.json.

Usage: validate_result.py --schema SCHEMA [--check-schema] [FILE ...]
Exit 0 when every file validates; 1 with the file and JSON pointer of the first problem.
"""
import argparse
import json
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
