#!/usr/bin/env python3
"""Whether two ccbench result documents differ in more than what every run makes anew.

    result_diff.py BEFORE.json AFTER.json

For a refactor: the same bench with the same flags, built before and after, on one machine, should
write the same document up to run-specific values. Prints each difference as one line
`path: before -> after` (path like results[3].size_bytes), then `N cases compared, K differences`.
Every object's keys must match in set and in order (a key on one side only is a difference), and
every value must match exactly (1 and 1.0 differ), except the run-specific values below, which are
compared by kind only (null, boolean, number, string, array, object; an object's keys still count):

  run.id, run.started_utc, run.ended_utc   a new random id and the clock of each run
  run.git_revision                         the commit the binary was built from: what changes
  run.argv                                 an argument with a '/' by its last part (bench and temp
                                           folders differ); the value of --out not at all
  results[].time.*                         measured; time.n compared when both sides ran --iters
  results[].samples_us                     measured; its length compared when both ran --iters
  results[].elapsed_s, ops_per_sample      wall time, and the batch calibrated to it
  results[].stop_reason                    when both are adaptive stops (target_ci, time_budget,
                                           max_samples, noise_floor): when sampling ended
  results[].algbw_GBps, busbw_GBps, busbw_mean_GBps, pct_of_peak, bw_peak_GBps, rdma.run_bw_GBps
                                           rates from the measured times
  fabric                                   the hosts' counters moved with everything the hosts did, and
                                           their links: compared by kind (an array) when both sides have it
  environment.variables.SLURM_JOB_ID, PMIX_*, OMPI_MCA_orte_* / ess* / pmix* / initial_wdir /
  shmem_RUNTIME_*                          per-launch ids (the bench drops most of them already; a
                                           name on one side only still differs)

Exit: 0 only run-specific values differ; 1 anything else differs; 2 bad input (one line on stderr).
"""
import json
import sys

ADAPTIVE = {"target_ci", "time_budget", "max_samples", "noise_floor"}
MEASURED = {"run.id", "run.started_utc", "run.ended_utc", "run.git_revision", "results[].samples_us",
            "results[].elapsed_s", "results[].ops_per_sample", "results[].algbw_GBps", "results[].busbw_GBps",
            "results[].busbw_mean_GBps", "results[].pct_of_peak", "results[].bw_peak_GBps",
            "results[].rdma.run_bw_GBps", "fabric"}
PER_LAUNCH_VARIABLES = ("SLURM_JOB_ID", "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
                        "OMPI_MCA_shmem_RUNTIME_", "PMIX_")
ABSENT = object()


class BadInput(Exception):
    pass


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def same(a, b):
    """Equal and of the same JSON type: 1 and 1.0 differ, and so do true and 1."""
    return type(a) is type(b) and a == b


def show(v):
    if v is ABSENT:
        return "(absent)"
    text = json.dumps(v, separators=(",", ":"))
    return text if len(text) <= 72 else text[:69] + "..."


def at(items, i):
    return items[i] if i < len(items) else ABSENT


def argv_key(argv):
    """What of argv must match: an argument with a '/' by its last part, the value of --out by nothing."""
    key, after_out = [], False
    for arg in argv:
        if not isinstance(arg, str):
            key.append(arg)
        elif after_out:
            key.append("<out>")
        elif arg.startswith("--out="):
            key.append("--out=<out>")
        else:
            key.append(arg.rstrip("/").rsplit("/", 1)[-1] if "/" in arg else arg)
        after_out = arg == "--out"
    return key


def rule(gpath, a, b, fixed):
    """How the value at gpath (list indices as []) is compared: exact, kind (run-specific) or length."""
    if gpath.startswith("results[].time."):
        return "exact" if gpath == "results[].time.n" and fixed else "kind"
    if gpath == "results[].samples_us" and fixed:
        return "length"
    if gpath in MEASURED:
        return "kind"
    if gpath == "results[].stop_reason" and a in ADAPTIVE and b in ADAPTIVE:
        return "kind"
    if gpath.startswith("environment.variables.") and gpath.split(".", 2)[2].startswith(PER_LAUNCH_VARIABLES):
        return "kind"
    return "exact"


def walk(a, b, path, gpath, fixed, out):
    """Appends to out a line for each difference between a and b below path."""
    if gpath == "results[]" and isinstance(a, dict) and isinstance(b, dict):
        fixed = a.get("stop_reason") == "fixed_iters" and b.get("stop_reason") == "fixed_iters"
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b) and set(a) == set(b):
            out.append(f"{path or '(document)'}: keys in order {','.join(a)} -> {','.join(b)}")
        for k in list(a) + [k for k in b if k not in a]:
            sub, gsub = f"{path}.{k}" if path else k, f"{gpath}.{k}" if gpath else k
            if k not in a or k not in b:
                out.append(f"{sub}: {show(a.get(k, ABSENT))} -> {show(b.get(k, ABSENT))}")
            else:
                walk(a[k], b[k], sub, gsub, fixed, out)
        return
    how = rule(gpath, a, b, fixed)
    if gpath == "run.argv" and isinstance(a, list) and isinstance(b, list):
        ka, kb = argv_key(a), argv_key(b)
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b) or not same(ka[i], kb[i]):
                out.append(f"{path}[{i}]: {show(at(a, i))} -> {show(at(b, i))}")
        return
    if how == "kind" or (how == "length" and not (isinstance(a, list) and isinstance(b, list))):
        if kind(a) != kind(b):
            out.append(f"{path}: {show(a)} -> {show(b)} ({kind(a)} -> {kind(b)})")
        return
    if how == "length":
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items -> {len(b)} items")
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items -> {len(b)} items")
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                out.append(f"{path}[{i}]: {show(at(a, i))} -> {show(at(b, i))}")
            else:
                walk(a[i], b[i], f"{path}[{i}]", f"{gpath}[]", fixed, out)
        return
    if not same(a, b):
        out.append(f"{path}: {show(a)} -> {show(b)}")


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise BadInput(f"key '{dup}' twice in one object")
    return dict(pairs)


def not_a_number(name):
    raise BadInput(f"{name} is not JSON")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, object_pairs_hook=no_duplicates, parse_constant=not_a_number)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: not JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    except BadInput as e:
        raise BadInput(f"{path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "ccbench.result":
        raise BadInput(f"{path}: not a ccbench result document (no \"schema\": \"ccbench.result\")")
    if not isinstance(doc.get("results"), list):
        raise BadInput(f"{path}: \"results\" is not an array")
    return doc


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if len(argv) != 2:
        print("result_diff.py: expected two result files: result_diff.py BEFORE.json AFTER.json", file=sys.stderr)
        return 2
    try:
        before, after = load(argv[0]), load(argv[1])
    except BadInput as e:
        print(f"result_diff.py: {e}", file=sys.stderr)
        return 2
    out = []
    walk(before, after, "", "", False, out)
    for line in out:
        print(line)
    cases = min(len(before["results"]), len(after["results"]))
    print(f"{cases} cases compared, {len(out)} differences")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
