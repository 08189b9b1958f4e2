#include "sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <system_error>

#include "ccbench/topo/cpulist.hpp"
#include "ccbench/topo/discover.hpp"
#include "name_order.hpp"

namespace fs = std::filesystem;

namespace ccbench::topo::detail {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::optional<long long> read_number(const fs::path& file) {
  const auto line = read_line(file);
  if (!line) {
    return std::nullopt;
  }
  long long value = 0;
  const auto text = trim(*line);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{}) {
    return std::nullopt;
  }
  return value;
}

double leading_number(std::string_view text) {
  text = trim(text);
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} ? value : 0.0;
}

/// The lanes of an InfiniBand rate, "100 Gb/sec (2X HDR)" -> 2: the rate alone cannot tell HDR100
/// (2X HDR) from EDR (4X EDR). 0 when the text has no "(NX".
int rate_width(std::string_view rate) {
  const auto open = rate.find('(');
  if (open == std::string_view::npos) {
    return 0;
  }
  const std::string_view rest = rate.substr(open + 1);
  int width = 0;
  const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), width);
  const bool lanes = ec == std::errc{} && ptr != rest.data() + rest.size() && (*ptr == 'X' || *ptr == 'x');
  return lanes && width > 0 ? width : 0;
}

/// Directory entries sorted in natural name order; empty when the directory is missing.
std::vector<fs::path> children(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it{dir, ec}, end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::ranges::sort(out, [](const fs::path& a, const fs::path& b) {
    return name_less(a.filename().string(), b.filename().string());
  });
  return out;
}

/// The nearest PCI device at or above a sysfs device link, e.g. .../pci0000:00/0000:00:03.0/virtio2 -> 0000:00:03.0.
std::string pci_bus_id_of(const fs::path& device_link) {
  std::error_code ec;
  const auto real = fs::canonical(device_link, ec);
  if (ec) {
    return {};
  }
  std::string found;
  for (const auto& part : real) {
    if (auto id = normalize_bus_id(part.string()); !id.empty()) {
      found = std::move(id);
    }
  }
  return found;
}

/// "4: ACTIVE" -> "ACTIVE".
std::string after_colon(const std::string& text) {
  const auto colon = text.find(": ");
  return colon == std::string::npos ? text : text.substr(colon + 2);
}

/// The netdev of an RDMA port: gid_attrs/ndevs/0 (RoCE), else the PCI function's net/ entry whose dev_port matches.
std::string rdma_port_netdev(const fs::path& device, const fs::path& port_dir, long long port) {
  if (auto ndev = read_line(port_dir / "gid_attrs" / "ndevs" / "0"); ndev && !ndev->empty()) {
    return *ndev;
  }
  std::string first;
  for (const auto& net : children(device / "device" / "net")) {
    if (read_number(net / "dev_port") == port - 1) {
      return net.filename().string();
    }
    if (first.empty()) {
      first = net.filename().string();
    }
  }
  return first;
}

std::vector<Nic> scan_rdma(const fs::path& sysfs_root) {
  std::vector<Nic> out;
  for (const auto& device : children(sysfs_root / "class" / "infiniband")) {
    const auto ports = children(device / "ports");
    for (const auto& port_dir : ports) {
      const auto port_name = port_dir.filename().string();
      Nic nic;
      nic.name = device.filename().string() + (ports.size() > 1 ? ":" + port_name : "");
      nic.netdev = rdma_port_netdev(device, port_dir, static_cast<long long>(leading_number(port_name)));
      nic.bus_id = pci_bus_id_of(device / "device");
      if (nic.bus_id.empty() && !nic.netdev.empty()) {  // soft-RoCE (rxe): placed where its netdev is
        nic.bus_id = pci_bus_id_of(sysfs_root / "class" / "net" / nic.netdev / "device");
      }
      const std::string rate = read_line(port_dir / "rate").value_or("");  // "400 Gb/sec (4X NDR)"
      nic.rate_Gbps = leading_number(rate);
      nic.width = rate_width(rate);
      nic.state = after_colon(read_line(port_dir / "state").value_or(""));  // "4: ACTIVE"
      nic.link_layer = read_line(port_dir / "link_layer").value_or("");
      out.push_back(std::move(nic));
    }
  }
  return out;
}

std::string link_layer_of_netdev(const fs::path& net) {
  constexpr long long kEther = 1;        // ARPHRD_ETHER
  constexpr long long kInfiniband = 32;  // ARPHRD_INFINIBAND
  const auto type = read_number(net / "type");
  if (type == kEther) {
    return "Ethernet";
  }
  return type == kInfiniband ? "InfiniBand" : "";
}

std::vector<Nic> scan_netdevs(const fs::path& sysfs_root, const std::set<std::string>& taken) {
  std::vector<Nic> out;
  constexpr double kMbPerGb = 1000.0;
  for (const auto& net : children(sysfs_root / "class" / "net")) {
    const auto name = net.filename().string();
    std::error_code ec;
    if (taken.contains(name) || !fs::exists(net / "device", ec)) {
      continue;  // the netdev of an RDMA port, or a virtual one (lo, veth, bridge, ifb, ...)
    }
    Nic nic;
    nic.name = name;
    nic.netdev = name;
    nic.bus_id = pci_bus_id_of(net / "device");
    const auto speed_mbps = read_number(net / "speed").value_or(0);  // -1 or unreadable when the link is down
    nic.rate_Gbps = speed_mbps > 0 ? static_cast<double>(speed_mbps) / kMbPerGb : 0.0;
    nic.state = read_line(net / "operstate").value_or("");
    nic.link_layer = link_layer_of_netdev(net);
    out.push_back(std::move(nic));
  }
  return out;
}

/// "MemTotal:  16318436 kB" (procfs) or "Node 0 MemTotal:  16318436 kB" (sysfs node meminfo), in bytes.
std::uint64_t mem_total(const fs::path& meminfo) {
  std::ifstream in{meminfo};
  constexpr std::string_view kKey = "MemTotal:";
  constexpr std::uint64_t kKiB = 1024;
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(kKey);
    if (at != std::string::npos) {
      return static_cast<std::uint64_t>(leading_number(std::string_view{line}.substr(at + kKey.size()))) * kKiB;
    }
  }
  return 0;
}

std::string cpu_model(const fs::path& procfs_root) {
  std::ifstream in{procfs_root / "cpuinfo"};
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name") || line.starts_with("Model")) {  // x86 / arm64
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        return std::string{trim(std::string_view{line}.substr(colon + 1))};
      }
    }
  }
  return {};
}

int package_of_cpu(const fs::path& sysfs_root, int cpu) {
  const auto id = read_number(sysfs_root / "devices" / "system" / "cpu" / ("cpu" + std::to_string(cpu)) / "topology" /
                              "physical_package_id");
  return id ? static_cast<int>(*id) : -1;
}

}  // namespace

std::optional<std::string> read_line(const fs::path& file) {
  std::ifstream in{file};
  std::string line;
  if (!in || !std::getline(in, line)) {
    return std::nullopt;
  }
  return line;
}

std::vector<Nic> scan_nics(const fs::path& sysfs_root) {
  auto nics = scan_rdma(sysfs_root);
  std::set<std::string> taken;
  for (const auto& nic : nics) {
    taken.insert(nic.netdev);
  }
  auto netdevs = scan_netdevs(sysfs_root, taken);
  nics.insert(nics.end(), std::make_move_iterator(netdevs.begin()), std::make_move_iterator(netdevs.end()));
  return nics;
}

std::optional<PciLocation> sysfs_pci_location(const fs::path& sysfs_root, const std::string& bus_id) {
  std::error_code ec;
  const auto real = fs::canonical(sysfs_root / "bus" / "pci" / "devices" / bus_id, ec);
  if (ec || bus_id.empty()) {
    return std::nullopt;
  }
  PciLocation location;
  for (const auto& part : real) {  // .../devices/pci0000:15/0000:15:01.0/0000:16:00.0/.../<bus_id>
    if (auto id = normalize_bus_id(part.string()); !id.empty() && id != bus_id) {
      location.path.push_back(std::move(id));
    }
  }
  location.numa_node = static_cast<int>(read_number(real / "numa_node").value_or(-1));
  return location;
}

CpuInfo sysfs_cpu_info(const fs::path& sysfs_root, const fs::path& procfs_root) {
  CpuInfo info;
  info.cpu_model = cpu_model(procfs_root);
  for (const auto& dir : children(sysfs_root / "devices" / "system" / "node")) {
    const auto name = dir.filename().string();
    if (!name.starts_with("node") || name.size() == 4 || std::isdigit(static_cast<unsigned char>(name[4])) == 0) {
      continue;
    }
    NumaNode node;
    node.index = static_cast<int>(leading_number(std::string_view{name}.substr(4)));
    node.cpus = parse_cpulist(read_line(dir / "cpulist").value_or("")).value_or(std::vector<int>{});
    node.memory_bytes = mem_total(dir / "meminfo");
    info.numa_nodes.push_back(std::move(node));
  }
  if (info.numa_nodes.empty()) {  // kernel without NUMA: one node holding every CPU
    NumaNode node;
    node.cpus = parse_cpulist(read_line(sysfs_root / "devices" / "system" / "cpu" / "online").value_or(""))
                    .value_or(std::vector<int>{});
    node.memory_bytes = mem_total(procfs_root / "meminfo");
    info.numa_nodes.push_back(std::move(node));
  }
  std::set<int> packages;
  for (auto& node : info.numa_nodes) {
    node.socket = node.cpus.empty() ? -1 : package_of_cpu(sysfs_root, node.cpus.front());
    for (int cpu : node.cpus) {
      if (const int package = package_of_cpu(sysfs_root, cpu); package >= 0) {
        packages.insert(package);
      }
    }
  }
  info.sockets = static_cast<int>(packages.size());
  return info;
}

}  // namespace ccbench::topo::detail
