#!/usr/bin/env python3
"""The documents hold together: nothing of the old README lost, no page orphaned, no link broken, the layout whole.

  sections_check.py --source DIR

Checks, printing each finding on a line of its own:
  1. every heading of the README as it was before docs/ (tests/docs/old-readme-sections.txt) is a heading
     of README.md or of a page of docs/ (any level): printed as a map, old heading -> its page now;
  2. every page of docs/ is linked from docs/README.md (the index), and README.md links the index;
  3. every relative link of README.md and docs/*.md names a file that exists (an #anchor is not checked);
  4. the layout (docs/layout.md's block of folders) names every top-level folder of the checkout, docs/ too.
Exit 0 all hold; 1 one does not; 2 bad input.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def headings(path):
    """The headings of a Markdown file, outside its fenced blocks."""
    out, fence = [], False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (m := HEADING.match(line)):
            out.append(m.group(2))
    return out


def top_folders(source):
    """The checkout's top-level folders: git's tracked ones, else those on disk (no hidden, no build output)."""
    try:
        files = subprocess.run(["git", "-C", str(source), "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split()
        return sorted({f.split("/")[0] for f in files if "/" in f and not f.startswith(".")})
    except (OSError, subprocess.CalledProcessError):
        return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith((".", "build"))
                      and p.name != "results")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, required=True, help="the checkout")
    args = p.parse_args()
    src = args.source.resolve()
    docs = src / "docs"
    old = src / "tests" / "docs" / "old-readme-sections.txt"
    if not docs.is_dir() or not old.is_file():
        print(f"sections_check.py: {src} has no docs/ or no tests/docs/old-readme-sections.txt", file=sys.stderr)
        return 2
    pages = [src / "README.md"] + sorted(docs.glob("*.md"))
    where = {}
    for page in pages:
        for h in headings(page):
            where.setdefault(h, page.relative_to(src))
    bad = []

    print("1. the old README's sections, and where each is now:")
    wanted = [line for line in old.read_text().splitlines() if line.startswith("##")]
    for line in wanted:
        text = line.split(" ", 1)[1]
        print(f"  {line}  ->  {where.get(text, 'NOWHERE')}")
        if text not in where:
            bad.append(f"the old README's section '{text}' is no heading of README.md or docs/")

    index = (docs / "README.md").read_text() if (docs / "README.md").is_file() else ""
    for page in sorted(docs.glob("*.md")):
        if page.name != "README.md" and f"({page.name})" not in index and f"({page.name}#" not in index:
            bad.append(f"docs/{page.name} is not linked from docs/README.md")
    if "(docs/README.md)" not in (src / "README.md").read_text():
        bad.append("README.md does not link docs/README.md")

    links = 0
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            links += 1
            if not (page.parent / target.split("#")[0]).exists():
                bad.append(f"{page.relative_to(src)}: the link ({target}) names nothing")

    layout = (docs / "layout.md").read_text() if (docs / "layout.md").is_file() else ""
    block = "\n".join(re.findall(r"```\n(.*?)```", layout, re.S))
    named = set(re.findall(r"^([a-z_]+)/", block, re.M))
    folders = top_folders(src)
    for f in folders:
        if f not in named:
            bad.append(f"docs/layout.md does not name the top-level folder {f}/")

    print(f"2-4. {len(pages)} pages, {links} relative links, {len(folders)} top-level folders "
          f"({', '.join(folders)}) in the layout")
    for b in bad:
        print(f"FAIL: {b}")
    print(f"{len(wanted)} old sections mapped, {len(bad)} problems" if not bad else f"{len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
