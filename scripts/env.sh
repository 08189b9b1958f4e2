# Sourced by the scripts: build settings and what Open MPI needs here.
CCBENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CCBENCH_BUILD=${CCBENCH_BUILD:-$CCBENCH_ROOT/build}
if [ "$(id -u)" -eq 0 ]; then
  # Open MPI refuses to run as root unless told; containers and CI run as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

ccbench_configure() {  # ccbench_configure BUILD_DIR [cmake args...]
  local dir=$1
  shift
  cmake -S "$CCBENCH_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=/usr/bin/python3 "$@"
}
