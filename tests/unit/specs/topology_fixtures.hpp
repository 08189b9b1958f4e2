#pragma once
// Hand-built HostTopology values for the peak-model tests: what discovery would report on an HGX
// node (NVSwitch), a PCIe-only box, and NVLink-bridged PCIe cards.
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo::fixtures {

// Bus ids of the eight GPUs of an HGX H100 board (nvidia-smi in NVIDIA/nccl#1264).
inline constexpr std::array<std::string_view, 8> kHgxBusIds{"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0",
                                                            "0000:5d:00.0", "0000:9a:00.0", "0000:ab:00.0",
                                                            "0000:ba:00.0", "0000:db:00.0"};

inline PciLink pcie_link(int gen, int width) { return PciLink{gen, gen, width, width}; }

inline Gpu make_gpu(int index, std::string name, std::string bus_id, PciLink pcie) {
  Gpu gpu;
  gpu.index = index;
  gpu.name = std::move(name);
  gpu.bus_id = std::move(bus_id);
  gpu.pcie = pcie;
  return gpu;
}

inline Nic ib_nic(int index, double rate_Gbps) {
  Nic nic;
  nic.name = fmt::format("mlx5_{}", index);
  nic.netdev = fmt::format("ibp{}s0", index);
  nic.bus_id = fmt::format("0000:{:02x}:00.0", 0x10 + index);
  nic.rate_Gbps = rate_Gbps;
  nic.state = "ACTIVE";
  nic.link_layer = "InfiniBand";
  return nic;
}

/// The management port every node has: up, Ethernet, no RDMA device; it carries no NCCL traffic.
inline Nic management_nic() {
  Nic nic;
  nic.name = "eno1";
  nic.netdev = "eno1";
  nic.rate_Gbps = 1.0;
  nic.state = "up";
  nic.link_layer = "Ethernet";
  return nic;
}

/// An HGX node: eight GPUs of `nvml_name`, each with `links` active NVLinks to the NVSwitches,
/// PCIe Gen5 x16 to the host, eight InfiniBand NDR (400 Gb/s) NICs and a management port. GPU k
/// and NIC k share a PCIe switch (NIC k is GPU k's rail); GPUs and NICs 0-3 are on NUMA node 0.
inline HostTopology hgx_node(std::string hostname, const std::string& nvml_name, int links) {
  HostTopology host;
  host.hostname = std::move(hostname);
  const auto bridges = [](int k) {
    return std::vector<std::string>{fmt::format("0000:{:02x}:01.0", 0x10 + 0x10 * k),
                                    fmt::format("0000:{:02x}:00.0", 0x11 + 0x10 * k)};
  };
  for (int g = 0; g < 8; ++g) {
    Gpu gpu = make_gpu(g, nvml_name, std::string{kHgxBusIds[static_cast<std::size_t>(g)]}, pcie_link(5, 16));
    for (int l = 0; l < links; ++l) {
      gpu.nvlinks.push_back(NvLink{l, true, 4, NvLinkPeer::NvSwitch, "0000:00:00.0"});
    }
    gpu.pci_path = bridges(g);
    gpu.pci_path.push_back(fmt::format("0000:{:02x}:01.0", 0x12 + 0x10 * g));
    gpu.numa_node = g / 4;
    host.gpus.push_back(std::move(gpu));
  }
  for (int n = 0; n < 8; ++n) {
    host.nics.push_back(ib_nic(n, 400.0));
    host.nics.back().pci_path = bridges(n);
    host.nics.back().pci_path.push_back(fmt::format("0000:{:02x}:02.0", 0x12 + 0x10 * n));
    host.nics.back().numa_node = n / 4;
  }
  host.nics.push_back(management_nic());
  return host;
}

/// A PCIe-only box: four GPUs of `nvml_name` on PCIe Gen4 x16, no NVLink, one 200 Gb/s HDR NIC.
inline HostTopology pcie_box(std::string hostname, const std::string& nvml_name) {
  HostTopology host;
  host.hostname = std::move(hostname);
  for (int g = 0; g < 4; ++g) {
    host.gpus.push_back(make_gpu(g, nvml_name, fmt::format("0000:{:02x}:00.0", 0x41 + g), pcie_link(4, 16)));
  }
  host.nics.push_back(ib_nic(0, 200.0));
  return host;
}

/// Joins two GPUs of a host with `count` direct NVLinks (a bridge or a mesh), peer bus ids written
/// the way NVML writes them (eight-digit domain, upper case), not the way sysfs does.
inline void bridge(HostTopology& host, int a, int b, int count) {
  auto nvml_style = [](const std::string& bus_id) {
    std::string out = "0000" + bus_id;
    for (char& c : out) {
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
  };
  Gpu& ga = host.gpus[static_cast<std::size_t>(a)];
  Gpu& gb = host.gpus[static_cast<std::size_t>(b)];
  for (int l = 0; l < count; ++l) {
    ga.nvlinks.push_back(NvLink{static_cast<int>(ga.nvlinks.size()), true, 4, NvLinkPeer::Gpu, nvml_style(gb.bus_id)});
    gb.nvlinks.push_back(NvLink{static_cast<int>(gb.nvlinks.size()), true, 4, NvLinkPeer::Gpu, nvml_style(ga.bus_id)});
  }
}

}  // namespace ccbench::topo::fixtures
