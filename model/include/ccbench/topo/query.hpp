#pragma once
// Questions about one host's topology that more than one part asks, answered once: which NIC is
// nearest a GPU (--bind auto sets NCCL_IB_HCA to it; an acceptance FAIL names it), a GPU's rail, a
// port's state, a device's NUMA node. Pure functions of the discovered values.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

/// PCIe bridges above both devices (the common start of their paths): the more, the nearer.
std::size_t shared_bridges(const std::vector<std::string>& a, const std::vector<std::string>& b);

/// An RDMA device ("mlx5_0", "rxe0"), not a plain netdev.
bool has_rdma_device(const Nic& nic);

enum class PortState { Down, Unknown, Active };
/// Active: ACTIVE (verbs) or up (netdev), in any case; Unknown: not reported; Down: anything else
/// (DOWN, INIT, ARMED, inactive): known not to pass traffic.
PortState port_state(const Nic& nic);

/// An RDMA device whose port is not known to be down: what NCCL_IB_HCA may name.
bool usable_rdma_port(const Nic& nic);

/// The NUMA nodes that hold CPUs (memory-only nodes, CXL or HBM, hold none to bind to).
std::vector<const NumaNode*> nodes_with_cpus(const HostTopology& host);

/// A device's NUMA node: firmware often leaves it -1 on a one-node host, where it can only be that node.
std::optional<int> known_numa_node(const HostTopology& host, int numa_node);

/// The NIC nearest `gpu`: among RDMA ports not known to be down (every NIC when there is none), the
/// one sharing the most PCIe bridges with the GPU, then one on the GPU's NUMA node, then an active one;
/// ties go to the first listed. Null when the host has no NIC. --bind auto binds to it and names it in
/// NCCL_IB_HCA; ccbench-report accept names it beside a failing GPU.
const Nic* nearest_nic(const HostTopology& host, const Gpu& gpu);

/// The NIC a host-memory rank bound to NUMA node `node` uses: one on that node not known to be down,
/// an RDMA device and an active one first. Null when none is there.
const Nic* nic_on_numa_node(const HostTopology& host, int node);

/// A NIC that shares a PCIe bridge with one of the host's GPUs (nvidia-smi's PIX or PXB): a GPU's
/// rail, as on DGX/HGX boards, where the other ports serve storage.
bool near_a_gpu(const Nic& nic, const HostTopology& host);

/// The rail of a GPU among `fabric`: the NICs that share the most PCIe bridges with it, else those on
/// its NUMA node; all of `fabric` when nothing tells them apart.
std::vector<const Nic*> rail_of(const Gpu& gpu, const std::vector<const Nic*>& fabric);

}  // namespace ccbench::topo
