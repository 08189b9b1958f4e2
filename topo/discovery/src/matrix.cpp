#include "ccbench/topo/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "ccbench/topo/query.hpp"

namespace ccbench::topo {
namespace {

/// What the PCIe classification needs of a GPU or a NIC.
struct Place {
  const std::string* bus_id;
  const std::vector<std::string>* pci_path;
  int numa_node;
};

Place place_of(const HostTopology& host, DeviceRef device) {
  if (device.kind == DeviceKind::Gpu) {
    const auto& gpu = host.gpus.at(static_cast<std::size_t>(device.index));
    return {&gpu.bus_id, &gpu.pci_path, gpu.numa_node};
  }
  const auto& nic = host.nics.at(static_cast<std::size_t>(device.index));
  return {&nic.bus_id, &nic.pci_path, nic.numa_node};
}

/// The host bridge a device hangs off, as the domain:bus of its root bus: the first bridge of its
/// path (the root port) sits on that bus, or the device itself when it is on the root bus.
std::string host_bridge(const Place& p) {
  const auto& first = p.pci_path->empty() ? *p.bus_id : p.pci_path->front();
  constexpr std::size_t kDomainBus = 7;  // "0000:15"
  return first.substr(0, kDomainBus);
}

std::string across_host_bridges(const Place& a, const Place& b) {
  return a.numa_node >= 0 && b.numa_node >= 0 && a.numa_node != b.numa_node ? "SYS" : "NODE";
}

std::string pcie_connection(const Place& a, const Place& b) {
  if (a.bus_id->empty() || b.bus_id->empty()) {
    return across_host_bridges(a, b);  // a virtual device: only its NUMA node is known
  }
  if (host_bridge(a) != host_bridge(b)) {
    return across_host_bridges(a, b);
  }
  const auto& pa = *a.pci_path;
  const auto& pb = *b.pci_path;
  const auto common = shared_bridges(pa, pb);
  if (common == 0) {
    return "PHB";
  }
  // Meeting below one switch (each device at most one bridge below the shared one) is PIX.
  return pa.size() - common <= 1 && pb.size() - common <= 1 ? "PIX" : "PXB";
}

int links_to(const Gpu& from, const std::string& bus_id) {
  return static_cast<int>(std::ranges::count_if(from.nvlinks, [&](const NvLink& l) {
    return l.active && l.peer != NvLinkPeer::NvSwitch && !l.peer_bus_id.empty() && l.peer_bus_id == bus_id;
  }));
}

int switch_links(const Gpu& gpu) {
  return static_cast<int>(
      std::ranges::count_if(gpu.nvlinks, [](const NvLink& l) { return l.active && l.peer == NvLinkPeer::NvSwitch; }));
}

/// Active NVLinks between two GPUs: direct links, plus the switch links both have (every GPU on an
/// NVSwitch reaches every other through all its links; the smaller count bounds the pair).
int nvlinks_between(const Gpu& a, const Gpu& b) {
  const int direct = std::max(links_to(a, b.bus_id), links_to(b, a.bus_id));
  return direct + std::min(switch_links(a), switch_links(b));
}

constexpr std::array<LegendEntry, 7> kLegend{{
    {"X", "Self"},
    {"SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)"},
    {"NODE", "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node"},
    {"PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"},
    {"PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"},
    {"PIX", "Connection traversing at most a single PCIe bridge"},
    {"NV#", "Connection traversing a bonded set of # NVLinks"},
}};

}  // namespace

std::string label(DeviceRef device) {
  return fmt::format("{}{}", device.kind == DeviceKind::Gpu ? "GPU" : "NIC", device.index);
}

std::string describe(const HostTopology& host, DeviceRef device) {
  if (device.kind == DeviceKind::Gpu) {
    const auto& gpu = host.gpus.at(static_cast<std::size_t>(device.index));
    return fmt::format("{} ({}, {})", label(device), gpu.bus_id.empty() ? "no bus id" : gpu.bus_id, gpu.name);
  }
  const auto& nic = host.nics.at(static_cast<std::size_t>(device.index));
  return fmt::format("{} ({}, {})", label(device), nic.name, nic.bus_id.empty() ? "virtual" : nic.bus_id);
}

std::string connection(const HostTopology& host, DeviceRef a, DeviceRef b) {
  const auto pa = place_of(host, a);  // validates both indices first
  const auto pb = place_of(host, b);
  if (a == b) {
    return "X";
  }
  if (a.kind == DeviceKind::Gpu && b.kind == DeviceKind::Gpu) {
    const int links =
        nvlinks_between(host.gpus[static_cast<std::size_t>(a.index)], host.gpus[static_cast<std::size_t>(b.index)]);
    if (links > 0) {
      return fmt::format("NV{}", links);
    }
  }
  return pcie_connection(pa, pb);
}

Matrix connection_matrix(const HostTopology& host) {
  Matrix m;
  for (std::size_t i = 0; i < host.gpus.size(); ++i) {
    m.devices.push_back(gpu_ref(static_cast<int>(i)));
  }
  for (std::size_t i = 0; i < host.nics.size(); ++i) {
    m.devices.push_back(nic_ref(static_cast<int>(i)));
  }
  for (const auto& row : m.devices) {
    m.labels.push_back(label(row));
    auto& cells = m.cells.emplace_back();
    for (const auto& column : m.devices) {
      cells.push_back(connection(host, row, column));
    }
  }
  return m;
}

std::span<const LegendEntry> connection_legend() { return kLegend; }

int active_nvlinks(const Gpu& gpu) {
  return static_cast<int>(std::ranges::count_if(gpu.nvlinks, [](const NvLink& l) { return l.active; }));
}

}  // namespace ccbench::topo
