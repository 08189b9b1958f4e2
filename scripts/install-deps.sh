#!/usr/bin/env bash
# Installs what ccbench needs to build and test, from Debian/Ubuntu packages, when missing.
# CUDA and NCCL are optional and not installed here (they come with the CUDA toolkit).
# --build-only: what building the benches and ccbench-report needs, not the test tiers' tools
# (scripts/quickstart.sh: a first look should not pull in Chromium, QEMU and Slurm).
set -euo pipefail
build_only=0
[ "${1:-}" = --build-only ] && build_only=1

packages=(cmake ninja-build g++ git pkg-config libopenmpi-dev openmpi-bin libfmt-dev nlohmann-json3-dev
  libcli11-dev libgtest-dev libhwloc-dev libpng-dev libsqlite3-dev libssl-dev python3 python3-jsonschema clang-format
  json-schema-test-suite                        # the JSON Schema validator checked against the official suite
  clang libclang-rt-14-dev                      # the reader's fuzz target (libFuzzer)
  chromium fonts-dejavu-core python3-pil        # the HTML report opened in headless Chromium
  python3-junitparser                           # JUnit XML from ccbench-report accept, parsed
  python3-scipy                                 # the median's interval checked against scipy.stats.binom
  prometheus prometheus-node-exporter curl      # export: promtool check metrics, the textfile collector served
  prometheus-pushgateway                        # export: an export pushed to a Pushgateway and read back
  slurm-wlm munge                               # the slurm tier: a two-node Slurm cluster on this machine
  iproute2 nftables                             # the cluster tier: network namespaces, veth, tc; a lossy cable
  qemu-system-x86 busybox-static kmod perftest  # the rdma tier: Soft-RoCE in a QEMU guest, perftest for reference
  ibverbs-providers ibverbs-utils              # the rdma tier: rxe verbs provider, ibv_devinfo in the guest
  libibverbs-dev                                # the verbs backend: ib_write_bw_bench, ib_write_lat_bench
  libbenchmark-dev                              # copy_bench (Google Benchmark)
  gdb                                           # a hung job's stacks, printed by the mpi tier's signal tests
  mmdebstrap dpkg-dev fakeroot binutils patchelf  # the install tier: the .deb in a fresh Debian 12, the bundle
  python3-pip                                   # the bundle: the PyPI wheel of Open MPI (pip download)
  python3-venv                                  # the doc test: byexample (PyPI, not in Debian) in a venv, below
  podman runc)                                  # the install tier: container/Containerfile built and run

if [ "$build_only" = 1 ]; then
  packages=(cmake ninja-build g++ git pkg-config libopenmpi-dev openmpi-bin libfmt-dev nlohmann-json3-dev
    libcli11-dev libhwloc-dev libpng-dev libsqlite3-dev libssl-dev libibverbs-dev python3)
fi
# The doc test's runner (tests/docs/doc_examples.py): byexample from PyPI, pinned, into a venv of the user's own
# (Debian's python3 is externally managed), once; pip asks nothing, so it runs as root with CI=true and no stdin.
doc_venv=${CCBENCH_DOC_VENV:-$HOME/.cache/ccbench/doc-venv}
byexample_version=11.0.0
install_byexample() {
  [ "$build_only" = 1 ] && return 0
  [ -x "$doc_venv/bin/byexample" ] && return 0
  echo "install-deps: byexample $byexample_version into $doc_venv (pip)"
  python3 -m venv "$doc_venv"
  "$doc_venv/bin/pip" install -q --disable-pip-version-check --no-input "byexample==$byexample_version"
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  install_byexample
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: missing packages: ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_byexample
