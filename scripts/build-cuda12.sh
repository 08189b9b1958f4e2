#!/usr/bin/env bash
# CUDA 12 beside CUDA 13: configures and builds every CUDA target (the kernels, the NCCL backend, the
# nine benches, copy_bench; not ccbench-report, which has no CUDA) against CUDA 12.4 and nccl.h of NCCL 2.32 for CUDA 12, with -Werror, so
# that binaries for R525+ drivers exist and the code keeps compiling on both toolkits.
# Where CUDA 12 comes from: Debian 13's nvidia-cuda-toolkit 12.4 (non-free), in a trixie root
# filesystem made with mmdebstrap (kept in WORK_DIR and reused), and the PyPI wheel nvidia-nccl-cu12
# for nccl.h. PyPI's nvidia-cuda-nvcc-cu12 has ptxas and libnvvm but no nvcc (12.0 to 12.9), and
# Debian 12 packages CUDA 11.8 only, so neither builds CUDA 12 by itself.
# Usage (root): scripts/build-cuda12.sh WORK_DIR   prints each program's --version; exit 0 when
# every CUDA target built and names CUDA 12.
set -euo pipefail
source "$(dirname "$0")/env.sh"
readonly prog=build-cuda12.sh
die() {
  echo "$prog: $*" >&2
  exit 2
}
[ $# -eq 1 ] || die "usage: scripts/build-cuda12.sh WORK_DIR"
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (scripts/install-deps.sh installs it)"
mkdir -p "$1" || die "WORK_DIR $1: cannot create it"
work=$(cd "$1" && pwd)
root=$work/trixie
nccl_wheel_version=2.32.3

stage() { echo "== $prog: $* ($(date -u +%T))"; }
if [ ! -x "$root/usr/bin/nvcc" ]; then
  stage "a Debian 13 root filesystem with nvidia-cuda-toolkit (CUDA 12.4) and the build's packages"
  rm -rf "$root"
  mmdebstrap --mode=root --variant=apt --components="main contrib non-free" --quiet \
    --include="nvidia-cuda-toolkit,g++-13,g++,cmake,ninja-build,pkg-config,libfmt-dev,nlohmann-json3-dev,libcli11-dev,libopenmpi-dev,openmpi-bin,libhwloc-dev,libpng-dev,libsqlite3-dev,libssl-dev,libibverbs-dev,libbenchmark-dev,python3" \
    trixie "$root" http://deb.debian.org/debian
fi
if [ ! -f "$root/opt/nccl/include/nccl.h" ]; then
  stage "nccl.h from the nvidia-nccl-cu12 $nccl_wheel_version wheel"
  mkdir -p "$work/wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: "nvidia-nccl-cu12==$nccl_wheel_version" -d "$work/wheels"
  python3 - "$work"/wheels/nvidia_nccl_cu12-"$nccl_wheel_version"-*.whl "$root/opt/nccl" <<'PY'
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("nvidia/nccl/include/") and not name.endswith("/"):
            out = dest / "include" / name[len("nvidia/nccl/include/"):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
PY
fi
stage "the source (tracked files of $CCBENCH_ROOT as they are now)"
rm -rf "$root/root/ccbench"
mkdir -p "$root/root/ccbench"
git -C "$CCBENCH_ROOT" ls-files -z | tar -C "$CCBENCH_ROOT" --null -T - -cf - | tar -C "$root/root/ccbench" -xf -

stage "configure and build: nvcc 12.4 with g++-13 as its host compiler (12.4 takes gcc 13 at most), the rest with g++ 14 (Debian 13's libraries are built with it)"
in_root() {  # in_root SCRIPT: SCRIPT run by bash chrooted in the root filesystem
  # A /dev of its own (a tmpfs with the few nodes a build needs), not the host's: Debian 13's libcuda1
  # (a dependency of the toolkit) runs nvidia-modprobe when a program asks CUDA for the driver's
  # version, and that made /dev/nvidiactl in the host's /dev, which then looked like a GPU machine.
  printf '%s\n' "$1" >"$root/root/step.sh"
  unshare --mount --fork bash -c "set -e; mount -t proc proc '$root/proc'; mount --rbind /sys '$root/sys'
    mount -t tmpfs -o mode=755 ccbench-dev '$root/dev'
    for n in null zero full random urandom tty; do touch '$root/dev/'\$n; mount --bind /dev/\$n '$root/dev/'\$n; done
    mkdir '$root/dev/shm'; mount -t tmpfs ccbench-shm '$root/dev/shm'
    chroot '$root' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash /root/step.sh"
}
revision=$(git -C "$CCBENCH_ROOT" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
in_root "set -e; export CCBENCH_GIT_REVISION=$revision; cd /root/ccbench; CUDAHOSTCXX=g++-13 cmake -S . -B /root/build-cuda12 -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCBENCH_WERROR=ON -DCCBENCH_CUDA=ON -DCCBENCH_NCCL=ON -DCCBENCH_KERNELS=ON \
  -DCCBENCH_BUILD_TESTS=OFF -DCCBENCH_BUILD_PERF=OFF -DNCCL_HOME=/opt/nccl >/root/configure.log || { tail -30 /root/configure.log; exit 1; }
  grep -A8 'features have been enabled' /root/configure.log; ninja -C /root/build-cuda12 -j\$(nproc) copy_bench \
  ccbench_benches >/root/build.log ||
  { grep -B2 -A12 -m3 'error' /root/build.log; exit 1; }; tail -1 /root/build.log"

stage "what was built, and what each says it was built with"
in_root 'set -e; cd /root/build-cuda12
  for t in kernels/libccbench_kernels.a bench/backends/nccl/libccbench_nccl.a bench/copy/copy_bench; do
    [ -f "$t" ] || { echo "not built: $t"; exit 1; }
  done
  echo "built: the kernels, the NCCL backend, copy_bench and the benches (target ccbench_benches):" \
    $(cd bench/apps && ls -- *_bench)
  bench/apps/allreduce_bench --version
  bench/copy/copy_bench --version
  bench/apps/allreduce_bench --version | grep -q "built with 12\." || { echo "allreduce_bench: not CUDA 12"; exit 1; }
  bench/copy/copy_bench --version | grep -q "cuda_runtime *12\." || { echo "copy_bench: not CUDA 12"; exit 1; }'
stage "done"
