#pragma once
// Reading the Linux sysfs / procfs trees (under a root that tests replace with a fake tree).
// Internal to ccbench_topo_discovery.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo::detail {

/// Where a PCI device sits: the bridges from its host bridge down (pci_path) and its NUMA node.
struct PciLocation {
  std::vector<std::string> path;
  int numa_node = -1;
};

/// CPUs and memory of the host.
struct CpuInfo {
  std::string cpu_model;
  int sockets = 0;
  std::vector<NumaNode> numa_nodes;
};

/// The first line of a file, without its newline; nullopt when it cannot be read.
std::optional<std::string> read_line(const std::filesystem::path& file);

/// RDMA ports (/sys/class/infiniband/*/ports/*) and physical netdevs (/sys/class/net/* with a
/// device link, not the netdev of an RDMA port), sorted by name. NUMA and pci_path are left unknown.
std::vector<Nic> scan_nics(const std::filesystem::path& sysfs_root);

/// The PCI location of a bus id from /sys/bus/pci/devices/<bus id> (its path and numa_node);
/// nullopt when the device is not there.
std::optional<PciLocation> sysfs_pci_location(const std::filesystem::path& sysfs_root, const std::string& bus_id);

/// NUMA nodes (cpulist, MemTotal), sockets (physical_package_id) and the CPU model (/proc/cpuinfo).
CpuInfo sysfs_cpu_info(const std::filesystem::path& sysfs_root, const std::filesystem::path& procfs_root);

}  // namespace ccbench::topo::detail
