# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
# Sourced by the scripts: where things are, and what Open MPI needs here. Two layouts:
#   a source tree   scripts/ (this file) beside profiles/; the binaries in CCBENCH_BUILD (build/)
#   an install      PREFIX/libexec/ccbench/ (this file), PREFIX/bin (the binaries), PREFIX/share/ccbench
#                   (profiles/, suites/): cmake --install, the .deb and the bundle, wherever moved
# CCBENCH_DATA_DIR, when set, names the folder that holds profiles/ and suites/ in either.
ccbench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$(basename "$ccbench_here")" = ccbench ] && [ "$(basename "$(dirname "$ccbench_here")")" = libexec ]; then
  CCBENCH_INSTALLED=1
  CCBENCH_PREFIX=$(cd "$ccbench_here/../.." && pwd)
  CCBENCH_ROOT=$CCBENCH_PREFIX/share/ccbench
  CCBENCH_BIN=$CCBENCH_PREFIX/bin
  CCBENCH_PROFILES=${CCBENCH_DATA_DIR:-$CCBENCH_ROOT}/profiles
  CCBENCH_SUITES=${CCBENCH_DATA_DIR:-$CCBENCH_ROOT}/suites
else
  CCBENCH_INSTALLED=0
  CCBENCH_ROOT=$(cd "$ccbench_here/.." && pwd)
  CCBENCH_BUILD=${CCBENCH_BUILD:-$CCBENCH_ROOT/build}
  CCBENCH_BIN=$CCBENCH_BUILD/bench/apps
  CCBENCH_PROFILES=$CCBENCH_ROOT/profiles
  CCBENCH_SUITES=$CCBENCH_ROOT/scripts/suites
  if [ -n "${CCBENCH_DATA_DIR:-}" ]; then
    CCBENCH_PROFILES=$CCBENCH_DATA_DIR/profiles CCBENCH_SUITES=$CCBENCH_DATA_DIR/suites
  fi
fi
unset ccbench_here
if [ "$(id -u)" -eq 0 ]; then
  # Open MPI refuses to run as root unless told; containers and CI run as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

ccbench_configure() {  # ccbench_configure BUILD_DIR [cmake args...]
  local dir=$1
  shift
  cmake -S "$CCBENCH_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=/usr/bin/python3 "$@"
}
