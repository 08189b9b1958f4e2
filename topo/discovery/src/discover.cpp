#include "ccbench/topo/discover.hpp"

#include <algorithm>
#include <cctype>

#include "ccbench/environment.hpp"
#include "platform.hpp"
#include "sysfs.hpp"

namespace ccbench::topo {
namespace {

/// Where a device sits: hwloc's PCI tree when it knows the device, else sysfs; NUMA likewise.
/// A host with a single NUMA node puts every device on it (sysfs says -1 there).
void place(const std::string& bus_id, const detail::HwlocView* hwloc, const DiscoveryInputs& inputs,
           const std::vector<NumaNode>& nodes, std::vector<std::string>& pci_path, int& numa_node) {
  if (bus_id.empty()) {
    return;  // a virtual device
  }
  const detail::PciLocation* from_hwloc = nullptr;
  if (hwloc != nullptr) {
    if (const auto it = hwloc->pci.find(bus_id); it != hwloc->pci.end()) {
      from_hwloc = &it->second;
    }
  }
  const auto from_sysfs = detail::sysfs_pci_location(inputs.sysfs_root, bus_id);
  if (pci_path.empty() && from_hwloc != nullptr) {
    pci_path = from_hwloc->path;
  } else if (pci_path.empty() && from_sysfs) {
    pci_path = from_sysfs->path;
  }
  if (numa_node < 0 && from_hwloc != nullptr) {
    numa_node = from_hwloc->numa_node;
  }
  if (numa_node < 0 && from_sysfs) {
    numa_node = from_sysfs->numa_node;
  }
  if (numa_node < 0 && nodes.size() == 1) {
    numa_node = nodes.front().index;
  }
}

}  // namespace

HostTopology discover_host() { return discover_host(DiscoveryInputs{}); }

HostTopology discover_host(const DiscoveryInputs& inputs) {
  HostTopology host;
  host.hostname = inputs.hostname.value_or(local_hostname());
  auto gpus = inputs.gpu_provider ? inputs.gpu_provider() : query_nvml(inputs.nvml_library);
  host.gpus = std::move(gpus.gpus);
  host.gpu_discovery = std::move(gpus.discovery);
  host.nics = detail::scan_nics(inputs.sysfs_root);

  std::vector<std::string> bus_ids;
  for (const auto& gpu : host.gpus) {
    bus_ids.push_back(gpu.bus_id);
  }
  for (const auto& nic : host.nics) {
    bus_ids.push_back(nic.bus_id);
  }
  std::variant<detail::HwlocView, std::string> hwloc = std::string{"not asked for"};
  if (inputs.use_hwloc || inputs.hwloc_xml) {
    hwloc = detail::hwloc_view(inputs, bus_ids);
  }
  const auto* view = std::get_if<detail::HwlocView>(&hwloc);
  if (view == nullptr && inputs.hwloc_xml) {
    throw DiscoveryError(std::get<std::string>(hwloc));  // asked for explicitly: no silent fallback
  }
  auto cpu = view != nullptr ? view->cpu : detail::sysfs_cpu_info(inputs.sysfs_root, inputs.procfs_root);
  host.cpu_model = std::move(cpu.cpu_model);
  host.sockets = cpu.sockets;
  host.numa_nodes = std::move(cpu.numa_nodes);

  for (auto& gpu : host.gpus) {
    place(gpu.bus_id, view, inputs, host.numa_nodes, gpu.pci_path, gpu.numa_node);
  }
  for (auto& nic : host.nics) {
    place(nic.bus_id, view, inputs, host.numa_nodes, nic.pci_path, nic.numa_node);
  }
  return host;
}

}  // namespace ccbench::topo
