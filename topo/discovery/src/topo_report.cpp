#include "ccbench/topo/topo_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ccbench/topo/cpulist.hpp"
#include "ccbench/topo/matrix.hpp"

namespace ccbench::topo {
namespace {

std::string gib(std::uint64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return bytes == 0 ? "unknown" : fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
}

std::string plural(std::size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string numa_text(int node) { return node < 0 ? "unknown" : std::to_string(node); }

void cpu_section(const HostTopology& host, std::string& out) {
  out += fmt::format("CPU: {}, {}, {}\n", host.cpu_model.empty() ? "unknown model" : host.cpu_model,
                     plural(static_cast<std::size_t>(host.sockets), "socket"),
                     plural(host.numa_nodes.size(), "NUMA node"));
  for (const auto& node : host.numa_nodes) {
    out +=
        fmt::format("  NUMA node {}: socket {}, CPUs {} ({}), memory {}\n", node.index, numa_text(node.socket),
                    node.cpus.empty() ? "none" : format_cpulist(node.cpus), node.cpus.size(), gib(node.memory_bytes));
  }
}

std::string nvlink_text(const Gpu& gpu) {
  if (gpu.nvlinks.empty()) {
    return "no NVLink";
  }
  const auto version = std::ranges::max(gpu.nvlinks, {}, &NvLink::version).version;
  return fmt::format("NVLink {}/{} active{}", active_nvlinks(gpu), gpu.nvlinks.size(),
                     version > 0 ? fmt::format(" (NVLink{})", version) : "");
}

void gpu_section(const HostTopology& host, std::string& out) {
  out += fmt::format("GPUs: {}\n", host.gpu_discovery.empty() ? "not queried" : host.gpu_discovery);
  for (const auto& gpu : host.gpus) {
    const auto& p = gpu.pcie;
    out += fmt::format("  GPU{}  {}  {}  {}  PCIe Gen{} x{} (max Gen{} x{})  {}  NUMA {}\n", gpu.index, gpu.name,
                       gpu.bus_id, gib(gpu.memory_bytes), p.gen_current, p.width_current, p.gen_max, p.width_max,
                       nvlink_text(gpu), numa_text(gpu.numa_node));
  }
}

void nic_section(const HostTopology& host, std::string& out) {
  if (host.nics.empty()) {
    out += "NICs: none found (no RDMA device, no network interface backed by a device)\n";
    return;
  }
  out += fmt::format("NICs ({}):\n", host.nics.size());
  for (std::size_t i = 0; i < host.nics.size(); ++i) {
    const auto& nic = host.nics[i];
    out += fmt::format("  NIC{}  {}  netdev {}  {}  {}  {}  {}  NUMA {}\n", i, nic.name,
                       nic.netdev.empty() ? "-" : nic.netdev, nic.bus_id.empty() ? "virtual" : nic.bus_id,
                       nic.rate_Gbps > 0 ? fmt::format("{:g} Gb/s", nic.rate_Gbps) : "rate unknown",
                       nic.state.empty() ? "state unknown" : nic.state,
                       nic.link_layer.empty() ? "link layer unknown" : nic.link_layer, numa_text(nic.numa_node));
  }
}

std::string gpu_cpu_affinity(const HostTopology& host, const Gpu& gpu) {
  const auto node = std::ranges::find(host.numa_nodes, gpu.numa_node, &NumaNode::index);
  return node == host.numa_nodes.end() || node->cpus.empty() ? "N/A" : format_cpulist(node->cpus);
}

void legend_section(const HostTopology& host, std::string& out) {
  out += "\nLegend:\n\n";
  for (const auto& entry : connection_legend()) {
    out += fmt::format("  {:<4} = {}\n", entry.code, entry.meaning);
  }
  if (!host.nics.empty()) {
    out += "\nNIC Legend:\n\n";
    for (std::size_t i = 0; i < host.nics.size(); ++i) {
      out += fmt::format("  NIC{}: {}\n", i, host.nics[i].name);
    }
  }
}

void matrix_section(const HostTopology& host, std::string& out) {
  if (host.gpus.empty()) {
    out += "Connection matrix: none (no GPU)\n";
    return;
  }
  const auto m = connection_matrix(host);
  std::size_t width = 4;
  for (const auto& l : m.labels) {
    width = std::max(width, l.size());
  }
  for (const auto& row : m.cells) {
    for (const auto& cell : row) {
      width = std::max(width, cell.size());
    }
  }
  out += "Connection matrix (nvidia-smi topo -m vocabulary):\n" + std::string(width + 2, ' ');
  for (const auto& l : m.labels) {
    out += fmt::format("{:<{}}  ", l, width);
  }
  constexpr std::string_view kAffinity = "CPU Affinity";
  std::size_t affinity_width = kAffinity.size();
  for (const auto& gpu : host.gpus) {
    affinity_width = std::max(affinity_width, gpu_cpu_affinity(host, gpu).size());
  }
  out += fmt::format("{:<{}}  NUMA Affinity\n", kAffinity, affinity_width);
  for (std::size_t i = 0; i < m.cells.size(); ++i) {
    out += fmt::format("{:<{}}  ", m.labels[i], width);
    for (const auto& cell : m.cells[i]) {
      out += fmt::format("{:<{}}  ", cell, width);
    }
    if (m.devices[i].kind == DeviceKind::Gpu) {
      const auto& gpu = host.gpus[static_cast<std::size_t>(m.devices[i].index)];
      out += fmt::format("{:<{}}  {}", gpu_cpu_affinity(host, gpu), affinity_width, numa_text(gpu.numa_node));
    }
    while (!out.empty() && out.back() == ' ') {
      out.pop_back();
    }
    out += '\n';
  }
  legend_section(host, out);
}

void warning_section(const HostTopology& host, std::string& out) {
  const auto found = warnings(host);
  if (found.empty()) {
    out += "Warnings: none\n";
    return;
  }
  out += fmt::format("Warnings ({}):\n", found.size());
  for (const auto& w : found) {
    out += fmt::format("  - [{}] {}\n", to_string(w.kind), w.message);
  }
}

}  // namespace

std::string format_report(const HostTopology& host) {
  std::string out = fmt::format("Host: {}\n", host.hostname);
  cpu_section(host, out);
  gpu_section(host, out);
  nic_section(host, out);
  out += '\n';
  matrix_section(host, out);
  out += '\n';
  warning_section(host, out);
  return out;
}

}  // namespace ccbench::topo
