#pragma once
// Expected peak: the spec bandwidth of the bottleneck link for a group of ranks (DESIGN §4).
#include <optional>
#include <string>
#include <vector>

#include "ccbench/rdma_info.hpp"
#include "ccbench/topo/specs.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

/// Where one rank of a group runs: which host (index into the hosts vector) and which GPU
/// (index into that host's gpus; -1 for host memory, the MPI backend).
struct RankPlace {
  int host = 0;
  int gpu = -1;
};

struct Peak {
  std::optional<double> GBps;  // per direction, comparable with busbw; nullopt when unknown
  std::string basis;           // "NVLink4 18 links x 25 GB/s per direction, H100 SXM"; why unknown, when unknown
};

/// The bottleneck for `collective` among `ranks`, per rank and per direction (comparable with busbw):
///
/// - One host, every pair of the group's GPUs joined by active NVLinks (directly or both through
///   NVSwitch): NVLink = usable active links x the per-link rate of the GPU's spec, the minimum over
///   the group (a GPU with a link down lowers it). Usable links: those to an NVSwitch, plus direct
///   links whose peer GPU is in the group (links to GPUs outside the group carry none of its traffic).
/// - One host without such a domain: PCIe per direction of the slowest GPU's link at its max
///   generation x width, the exact encoded line rate (data reaches about 85-90% of it).
/// - Several hosts: per host, the sum of its active NICs' rated port bandwidth divided by the group's
///   ranks on that host (NICs with an RDMA device only, when the host has any; of those the GPUs'
///   rails, NICs sharing a PCIe switch with a GPU, when there are such; a plain Ethernet speed counts
///   as rate/8), the minimum over hosts; for GPU ranks also capped by the GPU's own PCIe link
///   (GPUDirect RDMA reads GPU memory over it) and, where several GPU ranks share a host, by the
///   one-host bound above. A lone GPU rank on a host has no PXN peer to relay through NVLink, so it
///   gets only its own rail: the NICs sharing the most PCIe bridges with its GPU, else those on its
///   NUMA node, else all.
/// - Host memory (gpu -1) on one host: unknown (no spec for shared-memory copies); across hosts the
///   share of the ports that are no GPU's rail (unknown when every port is a rail).
/// - Anything unknown (a GPU model not in `specs`, NVLink or PCIe information missing, a NIC rate of 0
///   or an unrated InfiniBand rate, a rank outside the topology): nullopt, and the basis says what.
///   A single rank: nullopt ("one rank: no link"). A peak is never invented.
///
/// It takes no collective: all seven are bounded by the same link with nccl-tests' busbw factors (busbw
/// already normalises ring traffic to the per-link rate). A collective-specific bound (NVLS, tree) would
/// come in as a parameter of its own.
Peak expected_peak(const SpecDatabase& specs, const std::vector<HostTopology>& hosts,
                   const std::vector<RankPlace>& ranks);

/// One GPU's PCIe link per direction as the GPU and its slot can train it (max generation x width: GPUs
/// lower the generation when idle), with a note in the basis when discovery saw it below its max.
/// `label` names the GPU in the basis ("GPU 2"). For copies between host and GPU memory (copy_bench).
Peak gpu_pcie_peak(const SpecDatabase& specs, const Gpu& gpu, const std::string& label);

/// An RDMA pair (ib_write_bw / ib_write_lat): the slower of its two ports as rated in `specs`, per
/// direction. Unknown (nullopt, the basis says which port and why) when a port's rate is unknown or not a
/// rated port. Known once the pair is connected (the ports are chosen then), before its first case.
Peak rdma_pair_peak(const SpecDatabase& specs, const std::vector<RdmaEndpoint>& endpoints);

}  // namespace ccbench::topo
