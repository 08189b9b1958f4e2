#!/usr/bin/env python3
"""Writes the HostTopology fixtures of tests/unit/topo from the public sources in README.md.

Run from anywhere: python3 tests/data/topo/make_fixtures.py. The JSON files are committed; this
script records how every value was chosen. Bridge bus ids inside pci_path are synthetic (no
source lists them); they are numbered to sit between the host bridge and the device bus ids the
sources give, and shaped so that the connection types match the published nvidia-smi matrices.
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
MIB = 1024 * 1024


def bdf(bus, dev=0, fn=0):
    return f"0000:{bus:02x}:{dev:02x}.{fn:x}"


def nvlinks(count, version):
    return [{"index": i, "active": True, "version": version, "peer": "nvswitch", "peer_bus_id": ""}
            for i in range(count)]


def gpu(index, name, bus, path, numa, memory, gen, nvl):
    return {"index": index, "name": name, "bus_id": bdf(bus), "memory_bytes": memory, "numa_node": numa,
            "pcie": {"gen_current": gen[0], "gen_max": gen[1], "width_current": gen[2], "width_max": gen[3]},
            "nvlinks": nvl, "pci_path": path}


def nic(name, netdev, bus_id, path, numa, rate, state, layer):
    return {"name": name, "netdev": netdev, "bus_id": bus_id, "numa_node": numa, "rate_Gbps": rate,
            "state": state, "link_layer": layer, "pci_path": path}


def numa(index, cpulist, socket):
    return {"index": index, "socket": socket, "cpulist": cpulist, "memory_bytes": 0}


def dgx_h100():
    # DGX H100/H200 User Guide, network ports table: GPU -> compute port (RDMA device, netdev).
    # GPU bus ids: lspci of a DGX H200 (same board), easydiffusion/torchruntime#24.
    # Matrix shape (PXB to own NIC, NODE same socket, SYS across, storage port pairs PIX, NV18):
    # nvidia-smi topo -m in vllm-project/vllm#6746. CPU: NVIDIA/mlperf-common#7 (2x 8480C).
    compute = [  # (gpu bus, nic bus, rdma device, netdev); host bridge root bus = gpu bus - 6
        (0x1B, 0x18, "mlx5_0", "ibp24s0"), (0x43, 0x40, "mlx5_3", "ibp64s0"),
        (0x52, 0x4F, "mlx5_4", "ibp79s0"), (0x61, 0x5E, "mlx5_5", "ibp94s0"),
        (0x9D, 0x9A, "mlx5_6", "ibp154s0"), (0xC3, 0xC0, "mlx5_9", "ibp192s0"),
        (0xD1, 0xCE, "mlx5_10", "ibp206s0"), (0xDF, 0xDC, "mlx5_11", "ibp220s0"),
    ]
    gpus, nics = [], {}
    for i, (gbus, nbus, rdma, netdev) in enumerate(compute):
        root = gbus - 6  # root port -> switch (up, down) -> NIC; down -> 2nd switch (up, down) -> GPU
        switch = [bdf(root, 1), bdf(root + 1), bdf(root + 2)]
        gpus.append(gpu(i, "NVIDIA H100 80GB HBM3", gbus, switch[:2] + [bdf(root + 2, 1), bdf(root + 4), bdf(root + 5)],
                        0 if i < 4 else 1, 81559 * MIB, (5, 5, 16, 16), nvlinks(18, 4)))
        nics[rdma] = nic(rdma, netdev, bdf(nbus), switch, 0 if i < 4 else 1, 400.0, "ACTIVE", "InfiniBand")
    for names, root, node in ((("mlx5_1", "mlx5_2"), 0x27, 0), (("mlx5_7", "mlx5_8"), 0xA9, 1)):
        for fn, rdma in enumerate(names):  # dual-port storage ConnectX-7 on its own root port
            nics[rdma] = nic(rdma, "", bdf(root + 1, 0, fn), [bdf(root, 1)], node, 400.0, "ACTIVE", "InfiniBand")
    order = sorted(nics, key=lambda n: int(n.split("_")[1]))
    return {"hostname": "dgx-h100", "cpu_model": "Intel(R) Xeon(R) Platinum 8480C", "sockets": 2,
            "numa_nodes": [numa(0, "0-55,112-167", 0), numa(1, "56-111,168-223", 1)],
            "gpus": gpus, "nics": [nics[n] for n in order],
            "gpu_discovery": "recorded: DGX H100 layout from public sources (tests/data/topo/README.md)"}


def h800():
    # nvidia-smi topo -m of an 8x H800 node: NVIDIA/nccl#933 (NV8, 9 NICs, PIX GPU/NIC pairs).
    # GPU name and bus ids: NCCL's device list of an 8x H800 node in NVIDIA/nccl#892.
    pairs = [(0x0F, 2), (0x34, 4), (0x48, 6), (0x5A, 8), (0x87, 1), (0xAE, 3), (0xC2, 5), (0xD7, 7)]
    gpus, nics = [], {}
    for i, (gbus, nic_index) in enumerate(pairs):
        root = gbus - 4  # root port -> switch up -> two downstream ports: NIC and GPU (PIX)
        up = [bdf(root, 1), bdf(root + 1)]
        gpus.append(gpu(i, "NVIDIA H800", gbus, up + [bdf(root + 2, 1)], 0 if i < 4 else 1, 0, (5, 5, 16, 16),
                        nvlinks(8, 4)))
        nics[nic_index] = nic(f"mlx5_{nic_index}", "", bdf(gbus - 1), up + [bdf(root + 2)], 0 if i < 4 else 1,
                              0.0, "", "")
    nics[0] = nic("mlx5_0", "", bdf(0x20), [bdf(0x1F, 1)], 0, 0.0, "", "")  # NODE to GPU0-3, SYS to GPU4-7
    return {"hostname": "h800-node", "cpu_model": "", "sockets": 2,
            "numa_nodes": [numa(0, "0-47,96-143", 0), numa(1, "48-95,144-191", 1)],
            "gpus": gpus, "nics": [nics[i] for i in range(9)],
            "gpu_discovery": "recorded: H800 layout from public sources (tests/data/topo/README.md)"}


def pcie_box():
    # Layout of the PCIe node in lattice/quda#669 (pairs of GPUs under one PCIe switch: PIX; across
    # sockets: SYS; the one mlx5 NIC on a root port of socket 1: PHB), cut to one switch per socket.
    # Parts are a synthetic choice: A100 80GB PCIe (PCIe Gen4 x16), GPU1 trained down to x8.
    def switch_gpu(index, root, port, numa_node, width):
        path = [bdf(root), bdf(root + 1), bdf(root + 2, port)]
        return gpu(index, "NVIDIA A100 80GB PCIe", root + 3 + index % 2, path, numa_node, 81920 * MIB,
                   (4, 4, width, 16), [])
    gpus = [switch_gpu(0, 0x17, 0x08, 0, 16), switch_gpu(1, 0x17, 0x10, 0, 8),
            switch_gpu(2, 0x85, 0x08, 1, 16), switch_gpu(3, 0x85, 0x10, 1, 16)]
    nics = [nic("mlx5_0", "ib0", bdf(0x8A), [bdf(0x85, 2)], 1, 200.0, "ACTIVE", "InfiniBand")]
    return {"hostname": "pcie-4gpu", "cpu_model": "", "sockets": 2,
            "numa_nodes": [numa(0, "0-13", 0), numa(1, "14-27", 1)],
            "gpus": gpus, "nics": nics,
            "gpu_discovery": "synthetic: PCIe layout of lattice/quda#669 with A100 PCIe parts (README.md)"}


def main():
    for name, doc in (("dgx_h100.json", dgx_h100()), ("h800_nvlink8.json", h800()), ("pcie_4gpu.json", pcie_box())):
        (HERE / name).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
