#!/bin/sh
# Captures this host's fabric counter files as a fixture tree for tests/unit/topo/fabric_test.cpp:
#   capture.sh OUT_DIR
# copies, with their values as read now, /sys/class/net/*/statistics/* and carrier_changes,
# /sys/class/infiniband/*/ports/*/{counters,hw_counters}/* with each port's rate, state, phys_state and
# link_layer and each device's fw_ver and hca_type, /proc/net/snmp and /proc/net/netstat, and `ethtool -S`
# of each network device into OUT_DIR/ethtool/DEV.txt. Nothing is edited: the tree is the host's.
# POSIX sh, so that it also runs in the rdma tier's guest (busybox).
set -eu
out=${1:?usage: capture.sh OUT_DIR}
mkdir -p "$out"
copy() {  # copy FILE: into $out at its own path, when it can be read
  f=$1
  [ -r "$f" ] || return 0
  mkdir -p "$out$(dirname "$f")"
  cat -- "$f" >"$out$f" 2>/dev/null || rm -f -- "$out$f"
}
for d in /sys/class/net/*; do
  for f in "$d"/statistics/* "$d"/carrier_changes; do copy "$f"; done
  if command -v ethtool >/dev/null; then
    mkdir -p "$out/ethtool"
    ethtool -S "$(basename "$d")" >"$out/ethtool/$(basename "$d").txt" 2>/dev/null || rm -f "$out/ethtool/$(basename "$d").txt"
  fi
done
for d in /sys/class/infiniband/*; do
  [ -e "$d" ] || continue
  for f in "$d"/fw_ver "$d"/hca_type "$d"/ports/*/rate "$d"/ports/*/state "$d"/ports/*/phys_state \
    "$d"/ports/*/link_layer "$d"/ports/*/counters/* "$d"/ports/*/hw_counters/*; do copy "$f"; done
done
copy /proc/net/snmp
copy /proc/net/netstat
echo "captured into $out: $(find "$out" -type f | wc -l) files"
