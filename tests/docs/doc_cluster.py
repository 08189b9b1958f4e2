"""The cluster blocks of the documents (doc_examples.py): a fenced block right after a line

  <!-- cluster: hosts=N rate=MBIT [slow=HOST:MBIT ...] -->

runs on a namespace cluster (tests/cluster/nscluster.py) made for it alone: N hosts node0..node{N-1}, every link
at MBIT Mbit/s, each HOST named by slow= at its own rate. The block runs by itself in a scratch folder of its own,
which holds, beside the links every example has, `hosts` (the cluster's hostfile: the one the block's commands
name) and whose environment gives Open MPI's mpirun the cluster's launch options (OMPI_MCA_*, which every mpirun of
Open MPI reads, so the command shown is the one an operator types). The cluster is torn down after the block, also
when it failed, and nothing of it may be left (nscluster check-clean). Needs root; doc_examples.py --cluster.
"""
import re
import sys
from pathlib import Path
from typing import NamedTuple

MARKER = re.compile(r"^\s*<!-- cluster: (.+?) -->\s*$")
PROMPT = re.compile(r"^\s*\$ ")
FENCE = "```"
SKIP = "byexample: +skip"
HOSTFILE = "hosts"
VERDICT = re.compile(r"^\s*BAD (HOST|LINK) .*\bnode(\d+)\b")  # the line --catch --cluster changes


class Spec(NamedTuple):
    hosts: int
    rate_mbit: int
    slow: dict  # host index -> Mbit/s
    text: str  # as the page says it


class Block(NamedTuple):
    marker: int  # 1-based line of the marker
    start: int  # 0-based index of the opening fence
    end: int  # 0-based index of the closing fence
    spec: Spec


def parse_spec(text, where):
    """A marker's words: hosts=N rate=MBIT [slow=nodeK:MBIT ...]; a ValueError saying what is wrong."""
    hosts = rate = None
    slow = {}
    for word in text.split():
        key, _, value = word.partition("=")
        if key == "hosts" and value.isdigit():
            hosts = int(value)
        elif key == "rate" and value.isdigit():
            rate = int(value)
        elif key == "slow" and (m := re.fullmatch(r"node(\d+):(\d+)", value)):
            slow[int(m.group(1))] = int(m.group(2))
        else:
            raise ValueError(f"{where}: cluster marker: '{word}': expected hosts=N, rate=MBIT or slow=nodeK:MBIT")
    if hosts is None or rate is None:
        raise ValueError(f"{where}: cluster marker '{text}': hosts= and rate= are needed")
    if not 2 <= hosts <= 6 or any(k >= hosts for k in slow):
        raise ValueError(f"{where}: cluster marker '{text}': 2 to 6 hosts (nscluster), and slow= names one of them")
    return Spec(hosts, rate, slow, text)


def blocks(path):
    """[Block] of `path`: every fenced block right after a cluster marker; a ValueError for a marker that is not."""
    lines = path.read_text().splitlines()
    out, in_fence = [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(FENCE):
            in_fence = not in_fence
            continue
        m = MARKER.match(line)
        if not m or in_fence:
            continue
        spec = parse_spec(m.group(1), f"{path}:{i + 1}")
        if i + 1 >= len(lines) or not lines[i + 1].lstrip().startswith(FENCE):
            raise ValueError(f"{path}:{i + 1}: a cluster marker not right before a block")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].lstrip().startswith(FENCE)), None)
        if end is None or not any(PROMPT.match(x) for x in lines[i + 2:end]):
            raise ValueError(f"{path}:{i + 1}: the block after a cluster marker holds no example")
        if any(SKIP in x for x in lines[i + 2:end]):
            raise ValueError(f"{path}:{i + 1}: a cluster block runs on the cluster: no '# {SKIP}' in it")
        out.append(Block(i + 1, i + 1, end, spec))
    return out


def examples(path, found):
    """[(line, command, spec text)]: the examples of the cluster blocks `found` of `path`."""
    lines = path.read_text().splitlines()
    return [(j + 1, lines[j].split("$ ", 1)[1].strip(), b.spec.text)
            for b in found for j in range(b.start + 1, b.end) if PROMPT.match(lines[j])]


def skipped_copy(path, found, dest):
    """`path` with every example of its cluster blocks marked +skip, written to `dest` (docs.examples' run)."""
    lines = path.read_text().splitlines(keepends=True)
    for b in found:
        for j in range(b.start + 1, b.end):
            if PROMPT.match(lines[j]):
                lines[j] = f"{lines[j].rstrip()}   # {SKIP}\n"
    dest.write_text("".join(lines))
    return dest


def block_text(path, block, broken=False):
    """The block alone, as a document, and None; `broken`: its verdict line's host changed to the next one
    (--catch), and (that line as the page has it, as changed)."""
    lines = path.read_text().splitlines(keepends=True)[block.start:block.end + 1]
    if broken:
        i = next((k for k, x in enumerate(lines) if VERDICT.match(x)), None)
        if i is None:
            raise ValueError(f"{path}:{block.marker}: no 'BAD HOST nodeK' or 'BAD LINK' line to change in its block")
        k, original = int(VERDICT.match(lines[i]).group(2)), lines[i].strip()
        lines[i] = re.sub(rf"\bnode{k}\b", f"node{(k + 1) % block.spec.hosts}", lines[i], count=1)
        return "".join(lines), (original, lines[i].strip())
    return "".join(lines), None


def launch_env(cluster):
    """The cluster's mpirun options (nscluster's mpirun_prefix, less its hostfile: the block's own names it) as
    Open MPI's environment: --mca K V as OMPI_MCA_K=V, --bind-to none as its MCA parameter; with the TCP options
    the cluster tier's fleet runs use (FULL_DUPLEX_MCA) and the cluster's tag, which marks every process of it."""
    import nscluster
    prefix = cluster.mpirun_prefix()[1:]
    env = {nscluster.TAG_VARIABLE: cluster.tag}
    i = 0
    while i < len(prefix):
        option, value = prefix[i], prefix[i + 1]
        if option == "--mca":
            key, value = value, prefix[i + 2]
            env[f"OMPI_MCA_{key}"] = str(value)
            i += 3
            continue
        if option == "--bind-to":
            env["OMPI_MCA_hwloc_base_binding_policy"] = value
        elif option != "--hostfile":
            raise ValueError(f"nscluster's mpirun option {option}: no environment variable known for it")
        i += 2
    env.update({f"OMPI_MCA_{k}": str(v) for k, v in nscluster.FULL_DUPLEX_MCA.items()})
    return env


def run_block(path, block, folder, run, broken=False):
    """Bring up the block's cluster, write its hostfile into `folder`, run the block (`run(doc, folder, env)`:
    byexample's counts and output), tear the cluster down; (counts, output, block_text's change or None). Raises
    RuntimeError when anything of the cluster is left behind."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cluster"))
    import nscluster
    if reason := nscluster.unavailable_reason():
        raise OSError(reason)
    text, changed = block_text(path, block, broken)
    doc = folder / f"{path.stem}-{block.marker}.md"
    doc.write_text(text)
    spec = block.spec
    cluster = nscluster.Cluster(hosts=spec.hosts, slots=1, rate_mbit=spec.rate_mbit)
    try:
        with cluster:
            for k, mbit in spec.slow.items():
                cluster.shape(k, mbit)
            (folder / HOSTFILE).write_text((cluster.tmpdir / "hostfile").read_text())
            print(f"{path.name}:{block.marker}: {cluster.describe()}", flush=True)
            counts, output = run(doc, folder, launch_env(cluster))
    finally:
        left = nscluster.leftovers(cluster.tag)
    if left:
        raise RuntimeError(f"cluster {cluster.tag} left behind: {'; '.join(left)}")
    return counts, output, changed
