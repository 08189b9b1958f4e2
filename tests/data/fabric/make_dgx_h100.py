#!/usr/bin/env python3
"""Writes two sysfs trees of a DGX H100's links for tests/unit/topo/fabric_test.cpp, from the layout of
tests/data/topo/dgx_h100.json (its GPUs' and ConnectX-7s' bus ids and names, each with its public source in
tests/data/topo/README.md):

  dgx-h100/      every GPU and NIC PCIe link at Gen5 x16 (H100 SXM5 and ConnectX-7 are PCIe Gen5 x16: NVIDIA's
                 H100 and ConnectX-7 datasheets), every port at 400 Gb/sec (4X NDR), ACTIVE
  dgx-h100-low/  the same, but GPU 1 (0000:43:00.0) trained at 16.0 GT/s x8 and mlx5_5's port at 200 Gb/sec (2X NDR)

The text of each file is as the kernel writes it (drivers/pci/pci-sysfs.c: "32.0 GT/s PCIe", the width as a
number; drivers/infiniband/core/sysfs.c: "400 Gb/sec (4X NDR)", "4: ACTIVE"); hca_type MT4129 is ConnectX-7's
PCI device id (0x1021). Nothing else is written: no firmware versions, no AER counts (none is known).
"""
import json
import os
import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent
LAYOUT = json.loads((HERE.parent / "topo" / "dgx_h100.json").read_text())


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def pci_device(root, bdf, vendor, cls, speed, width):
    d = root / "sys/bus/pci/devices" / bdf
    write(d / "vendor", vendor)
    write(d / "class", cls)
    write(d / "current_link_speed", speed)
    write(d / "current_link_width", str(width))
    write(d / "max_link_speed", "32.0 GT/s PCIe")
    write(d / "max_link_width", "16")


def tree(name, low_gpu=None, low_port=None):
    root = HERE / name
    shutil.rmtree(root, ignore_errors=True)
    for gpu in LAYOUT["gpus"]:
        bdf = gpu["bus_id"]
        speed, width = ("16.0 GT/s PCIe", 8) if bdf == low_gpu else ("32.0 GT/s PCIe", 16)
        pci_device(root, bdf, "0x10de", "0x030200", speed, width)  # NVIDIA, 3D controller
    for nic in LAYOUT["nics"]:
        pci_device(root, nic["bus_id"], "0x15b3", "0x020700", "32.0 GT/s PCIe", 16)  # Mellanox, InfiniBand ctrl
        dev = root / "sys/class/infiniband" / nic["name"]
        write(dev / "hca_type", "MT4129")
        rate = "200 Gb/sec (2X NDR)" if nic["name"] == low_port else "400 Gb/sec (4X NDR)"
        write(dev / "ports/1/rate", rate)
        write(dev / "ports/1/state", "4: ACTIVE")
        write(dev / "ports/1/link_layer", nic["link_layer"])
        os.symlink(f"../../../bus/pci/devices/{nic['bus_id']}", dev / "device")
    print(f"{name}: {sum(1 for _ in root.rglob('*'))} entries")


if __name__ == "__main__":
    tree("dgx-h100")
    tree("dgx-h100-low", low_gpu="0000:43:00.0", low_port="mlx5_5")
