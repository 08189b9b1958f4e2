#pragma once
// What hwloc says about this host: CPUs and NUMA nodes, and where each PCI device of interest
// sits. Internal to ccbench_topo_discovery; the only file that includes hwloc is platform_hwloc.cpp.
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ccbench/topo/discover.hpp"
#include "sysfs.hpp"

namespace ccbench::topo::detail {

struct HwlocView {
  CpuInfo cpu;
  std::map<std::string, PciLocation> pci;  // by bus id, for the bus ids asked about that hwloc knows
};

/// hwloc's view (of the live machine, or of inputs.hwloc_xml), or why there is none
/// ("built without hwloc", "hwloc could not load ...").
std::variant<HwlocView, std::string> hwloc_view(const DiscoveryInputs& inputs, const std::vector<std::string>& bus_ids);

}  // namespace ccbench::topo::detail
