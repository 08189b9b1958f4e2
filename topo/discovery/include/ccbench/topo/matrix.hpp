#pragma once
// The GPU x GPU and GPU x NIC connection matrix in the vocabulary of `nvidia-smi topo -m`, and
// the findings an operator acts on. Pure functions over a HostTopology.
#include <compare>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {

enum class DeviceKind { Gpu, Nic };

/// A GPU or NIC of a HostTopology, by position in its gpus / nics vector.
struct DeviceRef {
  DeviceKind kind = DeviceKind::Gpu;
  int index = 0;
  friend auto operator<=>(const DeviceRef&, const DeviceRef&) = default;
};
constexpr DeviceRef gpu_ref(int index) { return {DeviceKind::Gpu, index}; }
constexpr DeviceRef nic_ref(int index) { return {DeviceKind::Nic, index}; }

/// "GPU0", "NIC3".
std::string label(DeviceRef device);
/// "GPU0 (0000:1b:00.0, NVIDIA H100 80GB HBM3)", "NIC3 (mlx5_3, 0000:40:00.0)". Throws std::out_of_range.
std::string describe(const HostTopology& host, DeviceRef device);

/// How a and b are connected: "X" (same device), "NV#" (# active NVLinks between two GPUs; through
/// NVSwitch every pair shows the links of the GPU, as nvidia-smi does), "PIX" (at most one PCIe
/// bridge / switch), "PXB" (several bridges, not through the host bridge), "PHB" (through a PCIe
/// host bridge), "NODE" (between host bridges of one NUMA node), "SYS" (across the SMP
/// interconnect between NUMA nodes). Throws std::out_of_range for an index outside the host.
std::string connection(const HostTopology& host, DeviceRef a, DeviceRef b);

struct Matrix {
  std::vector<DeviceRef> devices;               // GPUs in NVML order, then NICs
  std::vector<std::string> labels;              // label(devices[i])
  std::vector<std::vector<std::string>> cells;  // cells[i][j] = connection(devices[i], devices[j])
};
Matrix connection_matrix(const HostTopology& host);

struct LegendEntry {
  std::string_view code;
  std::string_view meaning;
};
/// The legend, worded like nvidia-smi's.
std::span<const LegendEntry> connection_legend();

/// Number of active NVLinks of a GPU.
int active_nvlinks(const Gpu& gpu);

enum class WarningKind {
  PcieBelowMax,  // PCIe link trained below what the device supports (generation or width)
  NvLinkDown,    // an NVLink inactive while others of the GPU are active
  NoLocalNic,    // a GPU with no NIC on its NUMA node or socket (only when the host has NICs)
  NicNotActive,  // a NIC port that is not ACTIVE / up
};
std::string_view to_string(WarningKind kind);  // "pcie_below_max", ...

struct Warning {
  WarningKind kind = WarningKind::PcieBelowMax;
  DeviceRef device;
  std::string message;  // names the device: index, bus id, name
};
std::vector<Warning> warnings(const HostTopology& host);

}  // namespace ccbench::topo
