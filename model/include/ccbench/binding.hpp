#pragma once
// --bind: where a rank should run, planned from the discovered topology of its host (pure; the
// app applies it). DGX practice: a rank runs on the NUMA node of its GPU, on that node's CPUs,
// and uses the NIC nearest its GPU (one NIC per GPU).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/config.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench {

std::string_view name(BindPolicy policy);
std::optional<BindPolicy> parse_bind_policy(std::string_view text);

/// What the planner needs to know about one rank. The CUDA variables are the rank's environment
/// (nullopt when unset).
struct BindingInputs {
  int local_rank = 0;
  int local_size = 1;
  bool gpu = false;  // the NCCL backend: the rank's memory is the local_rank-th visible GPU
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> cuda_device_order;
};

/// Where a rank belongs. `numa_node` unset means nothing can be applied; `reason` says why.
struct BindingPlan {
  std::optional<int> numa_node;
  std::vector<int> cpus;          // the node's CPUs
  std::string gpu_bus_id;         // the rank's GPU; empty for host memory or when unknown
  std::string nic;                // the nearest NIC's name ("mlx5_0"); empty when there is none
  bool nic_is_rdma_port = false;  // an RDMA device that is not known to be down: NCCL_IB_HCA may name it
  std::string reason;             // why nothing is applied, or what the user should know
};

/// The plan for one rank on `host`.
///
/// GPU ranks: the GPU is the local_rank-th device CUDA makes visible. CUDA_VISIBLE_DEVICES may list
/// indices, which we take to be NVML's (= PCI bus order). That holds when CUDA_DEVICE_ORDER=PCI_BUS_ID,
/// and with CUDA's default FASTEST_FIRST on a node of identical GPUs (ties go to the lower bus id);
/// device UUIDs cannot be mapped (discovery keeps no UUID): no binding, with the reason. The plan is
/// that GPU's NUMA node and CPUs, and the NIC nearest it (topo::nearest_nic, query.hpp).
///
/// Host memory (MPI backend): the host's ranks are spread over its NUMA nodes with CPUs in blocks
/// (node = local_rank * nodes / local_size), and the NIC is one on that node not known to be down
/// (an RDMA port first, then an ACTIVE/up one; plain Ethernet counts, MPI may run over TCP).
///
/// A GPU without a known NUMA node (-1) on a host of several nodes, or a host without NUMA nodes: no
/// node, with the reason. On a host of one node, a device at -1 is on that node (firmware often says -1
/// there); the same holds for NICs.
BindingPlan plan_binding(const topo::HostTopology& host, const BindingInputs& in);

/// The NUMA node whose CPUs hold every one of `cpus` (a rank's affinity), if there is one.
std::optional<int> numa_node_holding(const topo::HostTopology& host, const std::vector<int>& cpus);

}  // namespace ccbench
