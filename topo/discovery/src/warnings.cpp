// What an operator acts on, found in a HostTopology: downtrained PCIe links, NVLinks down, GPUs
// far from every NIC, NIC ports not active.
#include <fmt/format.h>

#include <algorithm>

#include "ccbench/topo/matrix.hpp"
#include "ccbench/topo/query.hpp"

namespace ccbench::topo {
namespace {

void pcie_below_max(const HostTopology& host, std::vector<Warning>& out) {
  for (std::size_t i = 0; i < host.gpus.size(); ++i) {
    const auto& link = host.gpus[i].pcie;
    const bool gen_low = link.gen_current > 0 && link.gen_max > 0 && link.gen_current < link.gen_max;
    const bool width_low = link.width_current > 0 && link.width_max > 0 && link.width_current < link.width_max;
    if (!gen_low && !width_low) {
      continue;
    }
    const auto device = gpu_ref(static_cast<int>(i));
    out.push_back(
        {WarningKind::PcieBelowMax, device,
         fmt::format("{}: PCIe link runs at Gen{} x{}, below the Gen{} x{} it supports{}", describe(host, device),
                     link.gen_current, link.width_current, link.gen_max, link.width_max,
                     width_low ? "" : " (idle GPUs lower the generation to save power: check under load)")});
  }
}

void nvlink_down(const HostTopology& host, std::vector<Warning>& out) {
  for (std::size_t i = 0; i < host.gpus.size(); ++i) {
    const auto& gpu = host.gpus[i];
    const int active = active_nvlinks(gpu);
    if (active == 0 || active == static_cast<int>(gpu.nvlinks.size())) {
      continue;
    }
    std::vector<int> down;
    for (const auto& link : gpu.nvlinks) {
      if (!link.active) {
        down.push_back(link.index);
      }
    }
    const auto device = gpu_ref(static_cast<int>(i));
    out.push_back(
        {WarningKind::NvLinkDown, device,
         fmt::format("{}: NVLink {} {} inactive while {} other{} active", describe(host, device), fmt::join(down, ", "),
                     down.size() == 1 ? "is" : "are", active, active == 1 ? " is" : "s are")});
  }
}

int socket_of(const HostTopology& host, int numa_node) {
  const auto node = std::ranges::find(host.numa_nodes, numa_node, &NumaNode::index);
  return node == host.numa_nodes.end() ? -1 : node->socket;
}

void no_local_nic(const HostTopology& host, std::vector<Warning>& out) {
  std::vector<const Nic*> physical;
  for (const auto& nic : host.nics) {
    if (!nic.bus_id.empty()) {
      physical.push_back(&nic);
    }
  }
  if (physical.empty()) {
    return;  // a host without NICs gets no per-GPU complaint
  }
  for (std::size_t i = 0; i < host.gpus.size(); ++i) {
    const int numa = host.gpus[i].numa_node;
    const int socket = socket_of(host, numa);
    const bool near = std::ranges::any_of(physical, [&](const Nic* nic) {
      return nic->numa_node == numa || (socket >= 0 && socket_of(host, nic->numa_node) == socket);
    });
    if (numa < 0 || near) {
      continue;
    }
    const auto device = gpu_ref(static_cast<int>(i));
    out.push_back({WarningKind::NoLocalNic, device,
                   fmt::format("{}: no NIC on its NUMA node {}{}; its network traffic crosses the CPU interconnect",
                               describe(host, device), numa, socket >= 0 ? fmt::format(" (socket {})", socket) : "")});
  }
}

void nic_not_active(const HostTopology& host, std::vector<Warning>& out) {
  for (std::size_t i = 0; i < host.nics.size(); ++i) {
    const auto& state = host.nics[i].state;
    if (port_state(host.nics[i]) != PortState::Down) {
      continue;  // active, or unknown: not a finding
    }
    const auto device = nic_ref(static_cast<int>(i));
    out.push_back({WarningKind::NicNotActive, device,
                   fmt::format("{}: port state {}, not active", describe(host, device), state)});
  }
}

}  // namespace

std::string_view to_string(WarningKind kind) {
  switch (kind) {
    case WarningKind::PcieBelowMax:
      return "pcie_below_max";
    case WarningKind::NvLinkDown:
      return "nvlink_down";
    case WarningKind::NoLocalNic:
      return "no_local_nic";
    case WarningKind::NicNotActive:
      return "nic_not_active";
  }
  return "unknown";
}

std::vector<Warning> warnings(const HostTopology& host) {
  std::vector<Warning> out;
  pcie_below_max(host, out);
  nvlink_down(host, out);
  no_local_nic(host, out);
  nic_not_active(host, out);
  return out;
}

}  // namespace ccbench::topo
