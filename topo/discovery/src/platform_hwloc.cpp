// The one file that uses hwloc (CCBENCH_HAVE_HWLOC is always defined, 0 or 1).
#include "platform.hpp"

#include <fmt/format.h>

#include "ccbench/topo/discover.hpp"
#include "ccbench/version.hpp"

#if CCBENCH_HAVE_HWLOC
#include <hwloc.h>

#include <algorithm>
#include <memory>
#endif

namespace ccbench::topo {

bool hwloc_available() { return CCBENCH_HAVE_HWLOC != 0; }

LibraryLines library_lines() {
  LibraryLines lines;
#if CCBENCH_HAVE_HWLOC
  const auto text = [](unsigned v) { return fmt::format("{}.{}.{}", v >> 16U, (v >> 8U) & 0xffU, v & 0xffU); };
  const std::string file = library_file_of(reinterpret_cast<const void*>(&hwloc_get_api_version));
  lines.emplace_back("hwloc", fmt::format("API {} loaded from {}, built with API {}", text(hwloc_get_api_version()),
                                          file.empty() ? "the program (static)" : file, text(HWLOC_API_VERSION)));
#else
  lines.emplace_back("hwloc", "not built in (sysfs alone)");
#endif
  lines.emplace_back("nvml", "loaded at run time (libnvidia-ml.so.1, the driver's), not linked");
  lines.emplace_back("cuda, nccl, mpi, verbs", "not linked: ccbench-topo needs none of them");
  return lines;
}

}  // namespace ccbench::topo

namespace ccbench::topo::detail {

#if CCBENCH_HAVE_HWLOC
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::variant<Topology, std::string> load_topology(const DiscoveryInputs& inputs) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return std::string{"hwloc_topology_init failed"};
  }
  Topology topology{raw};
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);  // bridges and every PCI device
#if HWLOC_API_VERSION >= 0x00020100
  // The Linux backend reads the PCI tree from sysfs itself; the libpciaccess plugin adds nothing
  // here and leaks on unload (LeakSanitizer reports it).
  hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
#endif
  if (inputs.hwloc_xml && hwloc_topology_set_xml(raw, inputs.hwloc_xml->c_str()) != 0) {
    return fmt::format("hwloc cannot read {}", inputs.hwloc_xml->string());
  }
  if (hwloc_topology_load(raw) != 0) {
    return inputs.hwloc_xml ? fmt::format("hwloc cannot load {}", inputs.hwloc_xml->string())
                            : std::string{"hwloc_topology_load failed"};
  }
  return topology;
}

std::vector<int> cpus_of(hwloc_const_bitmap_t cpuset) {
  std::vector<int> cpus;
  for (int cpu = hwloc_bitmap_first(cpuset); cpu >= 0; cpu = hwloc_bitmap_next(cpuset, cpu)) {
    cpus.push_back(cpu);
  }
  return cpus;
}

CpuInfo cpu_info(hwloc_topology_t topology) {
  CpuInfo info;
  info.sockets = std::max(0, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE));
  if (hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0); package != nullptr) {
    if (const char* model = hwloc_obj_get_info_by_name(package, "CPUModel"); model != nullptr) {
      info.cpu_model = model;
    }
  }
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node != nullptr;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    NumaNode numa;
    numa.index = static_cast<int>(node->os_index);
    numa.cpus = cpus_of(node->cpuset);
    numa.memory_bytes = node->attr->numanode.local_memory;
    if (hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, node); package != nullptr) {
      numa.socket = static_cast<int>(package->os_index);
    }
    info.numa_nodes.push_back(std::move(numa));
  }
  std::ranges::sort(info.numa_nodes, {}, &NumaNode::index);
  return info;
}

std::string bus_id_text(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
}

/// The bridges above a PCI device up to (not including) its host bridge, and its NUMA node.
std::optional<PciLocation> locate(hwloc_topology_t topology, const std::string& bus_id) {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned dev = 0;
  unsigned func = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &func) != 4) {  // NOLINT(cert-err34-c)
    return std::nullopt;
  }
  hwloc_obj_t device = hwloc_get_pcidev_by_busid(topology, domain, bus, dev, func);
  if (device == nullptr) {
    return std::nullopt;
  }
  PciLocation location;
  for (hwloc_obj_t up = device->parent; up != nullptr && up->type == HWLOC_OBJ_BRIDGE; up = up->parent) {
    if (up->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI) {
      break;  // the host bridge
    }
    location.path.insert(location.path.begin(), bus_id_text(up->attr->bridge.upstream.pci));
  }
  hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(topology, device);
  if (cpu_side != nullptr && cpu_side->nodeset != nullptr && hwloc_bitmap_weight(cpu_side->nodeset) == 1) {
    location.numa_node = hwloc_bitmap_first(cpu_side->nodeset);
  }
  return location;
}

}  // namespace

std::variant<HwlocView, std::string> hwloc_view(const DiscoveryInputs& inputs,
                                                const std::vector<std::string>& bus_ids) {
  auto loaded = load_topology(inputs);
  if (auto* why = std::get_if<std::string>(&loaded)) {
    return *why;
  }
  hwloc_topology_t topology = std::get<Topology>(loaded).get();
  HwlocView view;
  view.cpu = cpu_info(topology);
  for (const auto& bus_id : bus_ids) {
    if (auto location = locate(topology, bus_id)) {
      view.pci.emplace(bus_id, std::move(*location));
    }
  }
  return view;
}

#else

std::variant<HwlocView, std::string> hwloc_view(const DiscoveryInputs& /*inputs*/,
                                                const std::vector<std::string>& /*bus_ids*/) {
  return std::string{"built without hwloc (install libhwloc-dev and reconfigure)"};
}

#endif

}  // namespace ccbench::topo::detail
