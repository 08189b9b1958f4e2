"""A ccbench-report as a later version might word its tables: the same verdicts, JSON and exit codes, other
words in every table (compare's, accept's, fleet's). The workflow scripts must reach the same verdicts through
it: they read --format json through `get`, or exit codes, never the table (issue 25's wording test)."""
import pathlib

SHIM = r"""#!/bin/bash
real=@REAL@
for a in "$@"; do
  case $a in json | --format=json) exec "$real" "$@" ;; esac
done
case $1 in get | benches) exec "$real" "$@" ;; esac
"$real" "$@" | sed -e 's/SLOWER/Slower (reworded)/g; s/ FAIL / Failed /g; s/ PASS / Passed /g' \
  -e 's/passed/ok/g; s/failed/not ok/g; s/rows compared/comparisons made/g; s/checks:/verdicts:/g' \
  -e 's/BAD HOST/Bad host (reworded)/g; s/BAD LINK/Bad link (reworded)/g; s/FLEET LOW/Fleet low (reworded)/g'
exit "${PIPESTATUS[0]}"
"""


def write(path, real):
    """Writes the shim at `path` (executable) over the real ccbench-report `real`; returns `path`."""
    path = pathlib.Path(path)
    path.write_text(SHIM.replace("@REAL@", str(pathlib.Path(real).resolve())))
    path.chmod(0o755)
    return path
