#!/usr/bin/env python3
"""Runs the examples of README.md and docs/*.md with byexample, and says how many ran, passed and were not run.

  doc_examples.py --source DIR --build DIR [--byexample PATH] [FILE...]
  doc_examples.py --source DIR --build DIR --catch     # a broken copy of an example must fail

An example is a `$ COMMAND` line inside a fenced block, followed by the output the document shows; byexample
runs it in bash and compares. `<...>` in the output masks what varies (times, rates, hosts, dates, paths).
Every example runs in one scratch folder per document, which holds links to the checkout's scripts/,
profiles/, tests/ and report/ and to the build under test as build/: commands read as they would at the root of a
clone. An example that cannot run here (a GPU, an InfiniBand fabric, a Slurm cluster) carries
`# byexample: +skip` and sits in a block right after a `<!-- not run: REASON -->` line; this script lists
each with its reason, and refuses a skipped example without a reason, or a reason with no skipped example.

A block right after `<!-- cluster: hosts=N rate=MBIT [slow=nodeK:MBIT ...] -->` runs on a namespace cluster
(tests/cluster/nscluster.py, as root): N hosts node0.., every link at MBIT Mbit/s, nodeK's at its own rate. The
block runs alone in a scratch folder whose `hosts` is the cluster's hostfile and whose environment gives Open MPI's
mpirun the cluster's launch options (OMPI_MCA_*), so its commands read as an operator types them (doc_cluster.py).
A plain run lists such examples as run by docs.examples_cluster; --cluster runs them, and only them, each block on a
cluster of its own, torn down after it (also on failure) and checked for leftovers.

  doc_examples.py --source DIR --build DIR --cluster [--catch]   # the cluster blocks (root; exit 77 where none)

--catch copies README.md up to its first example into a scratch folder, changes one word of that example's
output, runs it, and fails unless byexample fails it (the check that the doc test can fail at all); with --cluster,
the first cluster block with the host its BAD HOST or BAD LINK line names changed to the next one.

Exit 0 every example passed; 1 one failed (byexample's diff printed), or --catch was not caught;
2 bad input (no build, a skip without its reason, a cluster marker not before a block); 77 no byexample, or
(--cluster) no namespace cluster here (SKIPPED).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import doc_cluster

LINKED = ["scripts", "profiles", "tests", "report"]  # what the examples may name, beside build/
PROMPT = re.compile(r"^\s*\$ ")
SKIP = "byexample: +skip"
REASON = re.compile(r"^\s*<!-- not run: (.+?) -->\s*$")
SUMMARY = re.compile(r"\[(PASS|FAIL|ABORT|SKIP)\] Pass: (\d+) Fail: (\d+) Skip: (\d+)")
OPTIONS = "+norm-ws +shell=bash"  # output columns widen with their values: compare words, not spaces


def die(msg):
    print(f"doc_examples.py: {msg}", file=sys.stderr)
    sys.exit(2)


def find_byexample(given):
    """The byexample program: --byexample, else the one beside this interpreter, else install-deps.sh's venv."""
    candidates = [given] if given else []
    candidates += [str(Path(sys.executable).parent / "byexample"), shutil.which("byexample") or "",
                   os.path.join(os.environ.get("CCBENCH_DOC_VENV", os.path.expanduser("~/.cache/ccbench/doc-venv")),
                                "bin", "byexample")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    print("SKIPPED: byexample not found (scripts/install-deps.sh installs it into $CCBENCH_DOC_VENV, "
          "else ~/.cache/ccbench/doc-venv; or give --byexample)")
    sys.exit(77)


def not_run(path):
    """[(line, command, reason)] for every skipped example of `path`; dies on a skip without a reason."""
    out, reason, in_fence, fence_reason, fence_skips = [], None, False, None, 0
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = REASON.match(line)
        if m and not in_fence:
            if reason:
                die(f"{path}:{n}: a second 'not run' line before a block (the first had no block)")
            reason = m.group(1)
            continue
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            if in_fence:
                fence_reason, reason, fence_skips = reason, None, 0
            elif fence_reason is not None and fence_skips == 0:
                die(f"{path}:{n}: the block after 'not run: {fence_reason}' holds no skipped example")
            continue
        if in_fence and PROMPT.match(line):
            skipped = SKIP in line
            if skipped and fence_reason is None:
                die(f"{path}:{n}: a skipped example without a '<!-- not run: REASON -->' line before its block")
            if fence_reason is not None and not skipped:
                die(f"{path}:{n}: an example in a 'not run' block without '# {SKIP}'")
            if skipped:
                fence_skips += 1
                out.append((n, line.split("$ ", 1)[1].split("#", 1)[0].strip(), fence_reason))
    return out


def scratch_for(source, build, root):
    """A scratch folder that reads like the root of a clone with its build."""
    folder = Path(tempfile.mkdtemp(prefix="ccbench-docs-", dir=root))
    for name in LINKED:
        (folder / name).symlink_to(source / name)
    (folder / "build").symlink_to(build)
    return folder


def run_file(byexample, doc, folder, timeout, extra_env=None):
    """byexample's (passed, failed, skipped) on `doc` run in `folder`, and its output."""
    env = dict(os.environ, CCBENCH_BUILD=str(folder / "build"), HOME=os.environ.get("HOME", str(folder)),
               **(extra_env or {}))
    if os.geteuid() == 0:  # Open MPI refuses root unless told; CI runs as root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [byexample, "-l", "shell", "--timeout", str(timeout), "--options", OPTIONS, "--no-enhance-diff",
           "--pretty", "none", "--no-progress-bar", "--jobs", "1", str(doc)]
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=30 * 60)
    text = proc.stdout + proc.stderr
    m = SUMMARY.search(text)
    if not m:  # no summary: a document without examples (exit 0), else byexample's own error
        return ((0, 0, 0) if proc.returncode == 0 and not text.strip() else None), text
    return (int(m.group(2)), int(m.group(3)), int(m.group(4))), text


def shown(doc, source):
    """A document's name as the summary prints it: relative to the checkout where it is in it."""
    return doc.relative_to(source) if doc.is_relative_to(source) else doc


def docs_of(source, given):
    if given:
        return [Path(g).resolve() for g in given]
    return [source / "README.md"] + sorted((source / "docs").glob("*.md"))


def run_all(args, byexample):
    total = [0, 0, 0]
    failed_docs, skipped = [], []
    start = time.monotonic()
    on_cluster = []  # (doc, line, command, marker): run by docs.examples_cluster
    with tempfile.TemporaryDirectory(prefix="ccbench-docs-") as root:
        for doc in docs_of(args.source, args.files):
            skipped += [(doc, n, c, r) for n, c, r in not_run(doc)]
            folder = scratch_for(args.source, args.build, root)
            found = cluster_blocks(doc)
            found_examples = doc_cluster.examples(doc, found)
            on_cluster += [(doc, n, c, m) for n, c, m in found_examples]
            run = doc_cluster.skipped_copy(doc, found, folder / doc.name) if found else doc
            t0 = time.monotonic()
            counts, text = run_file(byexample, run, folder, args.timeout)
            rel = shown(doc, args.source)
            if counts is None:
                print(text)
                failed_docs.append(str(rel))
                continue
            passed, failed, skip = counts
            if not any(counts):
                continue
            for i, v in enumerate(counts):
                total[i] += v
            elsewhere = f", {len(found_examples)} run by docs.examples_cluster" if found else ""
            print(f"{rel}: {passed + failed} run, {passed} passed, {failed} failed, "
                  f"{skip - len(found_examples)} not run{elsewhere} ({time.monotonic() - t0:.1f} s)")
            if failed:
                print(text)
                failed_docs.append(str(rel))
    passed, failed, skip = total
    print(f"\ndoc examples: {passed + failed} run, {passed} passed, {failed} failed, {skip - len(on_cluster)} marked "
          f"not runnable here, {len(on_cluster)} run on a namespace cluster by docs.examples_cluster "
          f"({time.monotonic() - start:.1f} s)")
    if len(skipped) + len(on_cluster) != skip:
        print(f"doc_examples.py: byexample skipped {skip} examples, the documents mark {len(skipped)} not run and "
              f"{len(on_cluster)} for the cluster", file=sys.stderr)
        return 1
    for doc, n, command, reason in skipped:
        print(f"  not run: {shown(doc, args.source)}:{n}: {command}  ({reason})")
    for doc, n, command, marker in on_cluster:
        print(f"  run by docs.examples_cluster: {shown(doc, args.source)}:{n}: {command}  (cluster: {marker})")
    if failed_docs:
        print(f"FAILED: {', '.join(failed_docs)}")
        return 1
    return 0


def catch(args, byexample):
    """A README whose first example's output says one word wrong must fail."""
    with tempfile.TemporaryDirectory(prefix="ccbench-docs-catch-") as root:
        lines = (args.source / "README.md").read_text().splitlines(keepends=True)
        first = next(i for i, line in enumerate(lines) if PROMPT.match(line) and SKIP not in line)
        target = first + 1  # the first line of its output
        broken = lines[target].replace("allreduce_bench", "allreduce_bnch", 1)
        if broken == lines[target]:
            die(f"README.md:{target + 1}: expected the first example's output to name allreduce_bench")
        lines[target] = broken
        end = next(i for i in range(target, len(lines)) if lines[i].lstrip().startswith("```"))
        lines = lines[:end + 1]  # that example alone: the rest of README.md is the plain run's
        folder = scratch_for(args.source, args.build, root)
        doc = folder / "README-broken.md"
        doc.write_text("".join(lines))
        print(f"README.md with line {target + 1} of its first example's output changed to:\n  {broken.rstrip()}")
        counts, text = run_file(byexample, doc, folder, args.timeout)
        print(text)
        if counts is None or counts[1] == 0:
            print("doc_examples.py --catch: the broken example was NOT failed", file=sys.stderr)
            return 1
        print(f"caught: the broken copy failed ({counts[1]} failed, {counts[0]} passed)")
        return 0


def cluster_blocks(doc):
    try:
        return doc_cluster.blocks(doc)
    except ValueError as e:
        die(str(e))


def run_cluster(args, byexample):
    """Every cluster block (doc_cluster.py), each on a namespace cluster of its own; with --catch, the first
    one with its verdict line's host changed, which must fail."""
    found = [(doc, b) for doc in docs_of(args.source, args.files) for b in cluster_blocks(doc)]
    if args.catch:
        found = found[:1]
    if not found:
        die("no cluster block (<!-- cluster: ... --> before a block) in the documents")
    total, failed_blocks, start = [0, 0], [], time.monotonic()
    text, changed = "", None
    with tempfile.TemporaryDirectory(prefix="ccbench-docs-cluster-") as root:
        for doc, block in found:
            where = f"{shown(doc, args.source)}:{block.marker}"
            folder = scratch_for(args.source, args.build, root)
            t0 = time.monotonic()
            try:
                counts, text, changed = doc_cluster.run_block(
                    doc, block, folder, lambda d, f, env: run_file(byexample, d, f, args.timeout, env), args.catch)
            except OSError as e:
                print(f"SKIPPED: no namespace cluster here: {e}")
                return 77
            except ValueError as e:
                die(str(e))
            except RuntimeError as e:  # something of the cluster left behind
                print(f"{where}: {e}")
                failed_blocks.append(where)
                continue
            if changed:
                print(f"{where}: the block's verdict line changed to:\n  {changed[1]}")
            if counts is None:
                print(text)
                failed_blocks.append(where)
                continue
            print(f"{where} (cluster: {block.spec.text}): {counts[0] + counts[1]} run, {counts[0]} passed, "
                  f"{counts[1]} failed ({time.monotonic() - t0:.1f} s)")
            total[0], total[1] = total[0] + counts[0], total[1] + counts[1]
            if counts[1] or args.catch:
                print(text)
            if counts[1]:
                failed_blocks.append(where)
    if args.catch:
        if not failed_blocks:
            print("doc_examples.py --catch --cluster: the broken cluster block was NOT failed", file=sys.stderr)
            return 1
        shown_verdict = changed[0].split("<...>")[0].strip() if changed else "?"
        if shown_verdict not in text:  # failed, but not for the verdict: the cluster or the run broke
            print(f"doc_examples.py --catch --cluster: failed, but the run did not print '{shown_verdict}'",
                  file=sys.stderr)
            return 1
        print(f"caught: the broken cluster block failed ({total[1]} failed, {total[0]} passed)")
        return 0
    print(f"\ndoc cluster examples: {sum(total)} run, {total[0]} passed, {total[1]} failed, in {len(found)} "
          f"block(s) ({time.monotonic() - start:.1f} s)")
    if failed_blocks:
        print(f"FAILED: {', '.join(failed_blocks)}")
        return 1
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, required=True, help="the checkout (README.md, docs/, scripts/)")
    p.add_argument("--build", type=Path, required=True, help="the build folder under test")
    p.add_argument("--byexample", help="the byexample program")
    p.add_argument("--timeout", type=int, default=300, help="seconds per example")
    p.add_argument("--catch", action="store_true", help="a broken copy of README.md's first example must fail")
    p.add_argument("--cluster", action="store_true",
                   help="run only the cluster blocks, each on a namespace cluster (root; doc_cluster.py)")
    p.add_argument("files", nargs="*", help="documents (default: README.md and docs/*.md)")
    args = p.parse_args()
    args.source, args.build = args.source.resolve(), args.build.resolve()
    if not (args.build / "bench" / "apps").is_dir():
        die(f"{args.build} holds no bench/apps: not a build folder")
    byexample = find_byexample(args.byexample)
    if args.cluster:
        return run_cluster(args, byexample)
    return catch(args, byexample) if args.catch else run_all(args, byexample)


if __name__ == "__main__":
    sys.exit(main())
