#include "ccbench/topo/discover.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>

#include "platform.hpp"
#include "sysfs.hpp"

namespace ccbench::topo {
namespace {

std::string local_hostname() {
  std::array<char, HOST_NAME_MAX + 1> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) {
    return "unknown";
  }
  return buf.data();
}

bool all_hex(std::string_view text) {
  return !text.empty() &&
         std::ranges::all_of(text, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

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

std::string normalize_bus_id(std::string_view text) {
  // [domain:]bus:device.function in hex; NVML writes an 8-digit domain ("00000000:1B:00.0").
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) {
      break;
    }
    start = colon + 1;
  }
  if (parts.size() != 2 && parts.size() != 3) {
    return {};
  }
  auto domain = parts.size() == 3 ? parts[0] : std::string_view{"0000"};
  const auto bus = parts[parts.size() - 2];
  const auto devfn = parts.back();
  const auto dot = devfn.find('.');
  if (dot == std::string_view::npos) {
    return {};
  }
  const auto dev = devfn.substr(0, dot);
  const auto fn = devfn.substr(dot + 1);
  while (domain.size() > 4 && domain.front() == '0') {
    domain.remove_prefix(1);
  }
  if (!all_hex(domain) || domain.size() > 4 || !all_hex(bus) || bus.size() != 2 || !all_hex(dev) || dev.size() != 2 ||
      !all_hex(fn) || fn.size() != 1) {
    return {};
  }
  std::string out(4 - domain.size(), '0');
  out.append(domain).append(":").append(bus).append(":").append(dev).append(".").append(fn);
  std::ranges::transform(out, out.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

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
