#pragma once
// What topology discovery found on one host, as plain values (no hwloc or NVML types).
// Written into every result JSON ("topology") and read by the peak model.
// Unknown numbers are 0 / -1 / empty, never guessed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::topo {

struct PciLink {
  int gen_current = 0;  // PCIe generation now (1..6); 0 = unknown
  int gen_max = 0;      // what the device and its slot support
  int width_current = 0;
  int width_max = 0;
};

enum class NvLinkPeer { Unknown, Gpu, NvSwitch, Cpu };

struct NvLink {
  int index = 0;
  bool active = false;
  int version = 0;  // NVLink generation (3 = A100, 4 = H100/H800/H200, 5 = B200); 0 = unknown
  NvLinkPeer peer = NvLinkPeer::Unknown;
  std::string peer_bus_id;  // PCI bus id of the GPU (or switch) at the other end, lower case
};

struct Gpu {
  int index = 0;       // NVML index
  std::string name;    // as NVML reports it: "NVIDIA H100 80GB HBM3"
  std::string bus_id;  // "0000:18:00.0", lower case
  std::uint64_t memory_bytes = 0;
  int numa_node = -1;
  PciLink pcie;
  std::vector<NvLink> nvlinks;
  std::vector<std::string> pci_path;  // bus ids of the PCIe bridges from the host bridge down to the GPU
};

struct Nic {
  std::string name;    // "mlx5_0" (RDMA device) or the netdev name when there is none
  std::string netdev;  // "ib0", "eth0"
  std::string bus_id;  // empty for virtual devices
  int numa_node = -1;
  double rate_Gbps = 0.0;  // per direction, as the port reports it; 0 = unknown
  std::string state;       // "ACTIVE", "up", "DOWN", ...
  std::string link_layer;  // "InfiniBand", "Ethernet"
  std::vector<std::string> pci_path;
  int width = 0;  // InfiniBand lanes, from the rate "100 Gb/sec (2X HDR)"; 0 = not reported
};

struct NumaNode {
  int index = 0;
  std::vector<int> cpus;  // OS cpu indices
  std::uint64_t memory_bytes = 0;
  int socket = -1;  // CPU package (socket) that holds this node; -1 = unknown
};

struct HostTopology {
  std::string hostname;
  std::string cpu_model;
  int sockets = 0;
  std::vector<NumaNode> numa_nodes;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::string gpu_discovery;  // how GPUs were (not) found: "NVML 12.560 driver 560.35", "no GPU found: ..."
};

/// "0000:1b:00.0" from any spelling NVML or sysfs uses ("00000000:1B:00.0"); empty if not a bus id.
std::string normalize_bus_id(std::string_view text);

}  // namespace ccbench::topo
