#!/usr/bin/env bash
# clang-format and clang-tidy over the sources (tidy needs a configured build for
# compile_commands.json; files that need CUDA are checked only when the build found it).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$CCBENCH_ROOT"
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror
echo "clang-format: clean"
[ -f "$CCBENCH_BUILD/compile_commands.json" ] || ccbench_configure "$CCBENCH_BUILD" >/dev/null
files=$(git ls-files 'model/*.cpp' 'runtime/*.cpp' 'bench/*.cpp' 'topo/*.cpp' 'report/*.cpp' | grep -v -e '^bench/backends/nccl/' -e '^report/fuzz/' || true)
if grep -q nccl_backend.cpp "$CCBENCH_BUILD/compile_commands.json"; then
  files="$files $(git ls-files 'bench/backends/nccl/*.cpp')"
fi
# shellcheck disable=SC2086
clang-tidy -p "$CCBENCH_BUILD" --quiet $files 2>&1 | grep -E "warning:|error:" | sort -u | tee /tmp/ccbench-tidy.txt || true
if [ -s /tmp/ccbench-tidy.txt ]; then
  echo "clang-tidy: $(wc -l < /tmp/ccbench-tidy.txt) findings"
  exit 1
fi
echo "clang-tidy: clean"
