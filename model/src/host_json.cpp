#include "ccbench/topo/host_json.hpp"

#include <array>
#include <string_view>
#include <utility>

#include "ccbench/topo/cpulist.hpp"

using nlohmann::json;

namespace ccbench::topo {
namespace {

constexpr std::array<std::pair<NvLinkPeer, std::string_view>, 4> kPeers{{
    {NvLinkPeer::Unknown, "unknown"},
    {NvLinkPeer::Gpu, "gpu"},
    {NvLinkPeer::NvSwitch, "nvswitch"},
    {NvLinkPeer::Cpu, "cpu"},
}};

std::string_view peer_name(NvLinkPeer peer) {
  for (const auto& [value, name] : kPeers) {
    if (value == peer) {
      return name;
    }
  }
  return "unknown";
}

NvLinkPeer peer_from(std::string_view name) {
  for (const auto& [value, text] : kPeers) {
    if (text == name) {
      return value;
    }
  }
  throw TopologyJsonError("nvlink peer '" + std::string{name} + "' is not one of: unknown, gpu, nvswitch, cpu");
}

json to_json(const PciLink& p) {
  return {{"gen_current", p.gen_current},
          {"gen_max", p.gen_max},
          {"width_current", p.width_current},
          {"width_max", p.width_max}};
}

json to_json(const NvLink& l) {
  return {{"index", l.index},
          {"active", l.active},
          {"version", l.version},
          {"peer", peer_name(l.peer)},
          {"peer_bus_id", l.peer_bus_id}};
}

json to_json(const Gpu& g) {
  json links = json::array();
  for (const auto& l : g.nvlinks) {
    links.push_back(to_json(l));
  }
  return {{"index", g.index},         {"name", g.name},          {"bus_id", g.bus_id}, {"memory_bytes", g.memory_bytes},
          {"numa_node", g.numa_node}, {"pcie", to_json(g.pcie)}, {"nvlinks", links},   {"pci_path", g.pci_path}};
}

json to_json(const Nic& n) {
  json out = {
      {"name", n.name},           {"netdev", n.netdev}, {"bus_id", n.bus_id},         {"numa_node", n.numa_node},
      {"rate_Gbps", n.rate_Gbps}, {"state", n.state},   {"link_layer", n.link_layer}, {"pci_path", n.pci_path}};
  if (n.width > 0) {  // InfiniBand lanes; absent where the port did not report them (Ethernet, older files)
    out["width"] = n.width;
  }
  return out;
}

json to_json(const NumaNode& n) {
  return {
      {"index", n.index}, {"socket", n.socket}, {"cpulist", format_cpulist(n.cpus)}, {"memory_bytes", n.memory_bytes}};
}

template <typename T>
T get(const json& j, const char* key, T fallback) {
  if (!j.is_object()) {
    throw TopologyJsonError(std::string{"expected an object holding '"} + key + "', got " + j.type_name());
  }
  if (!j.contains(key)) {
    return fallback;
  }
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw TopologyJsonError(std::string{"key '"} + key + "': " + e.what());
  }
}

template <typename T, typename Fn>
std::vector<T> list(const json& j, const char* key, Fn&& item) {
  std::vector<T> out;
  if (!j.contains(key)) {
    return out;
  }
  const auto& items = j.at(key);
  if (!items.is_array()) {
    throw TopologyJsonError(std::string{"key '"} + key + "': expected an array, got " + items.type_name());
  }
  for (const auto& element : items) {
    out.push_back(item(element));
  }
  return out;
}

NvLink nvlink_from(const json& j) {
  return {get(j, "index", 0), get(j, "active", false), get(j, "version", 0),
          peer_from(get<std::string>(j, "peer", "unknown")), get<std::string>(j, "peer_bus_id", "")};
}

Gpu gpu_from(const json& j) {
  Gpu g;
  g.index = get(j, "index", 0);
  g.name = get<std::string>(j, "name", "");
  g.bus_id = get<std::string>(j, "bus_id", "");
  g.memory_bytes = get<std::uint64_t>(j, "memory_bytes", 0);
  g.numa_node = get(j, "numa_node", -1);
  const json pcie = get(j, "pcie", json::object());
  g.pcie = {get(pcie, "gen_current", 0), get(pcie, "gen_max", 0), get(pcie, "width_current", 0),
            get(pcie, "width_max", 0)};
  g.nvlinks = list<NvLink>(j, "nvlinks", nvlink_from);
  g.pci_path = get(j, "pci_path", std::vector<std::string>{});
  return g;
}

Nic nic_from(const json& j) {
  return {get<std::string>(j, "name", ""),
          get<std::string>(j, "netdev", ""),
          get<std::string>(j, "bus_id", ""),
          get(j, "numa_node", -1),
          get(j, "rate_Gbps", 0.0),
          get<std::string>(j, "state", ""),
          get<std::string>(j, "link_layer", ""),
          get(j, "pci_path", std::vector<std::string>{}),
          get(j, "width", 0)};
}

NumaNode numa_from(const json& j) {
  NumaNode n;
  n.index = get(j, "index", 0);
  n.socket = get(j, "socket", -1);
  const auto text = get<std::string>(j, "cpulist", "");
  auto cpus = parse_cpulist(text);
  if (!cpus) {
    throw TopologyJsonError("numa_nodes: cpulist '" + text + "' is not a CPU list like 0-55,112-167");
  }
  n.cpus = std::move(*cpus);
  n.memory_bytes = get<std::uint64_t>(j, "memory_bytes", 0);
  return n;
}

}  // namespace

json to_json(const HostTopology& host) {
  json numa = json::array();
  for (const auto& n : host.numa_nodes) {
    numa.push_back(to_json(n));
  }
  json gpus = json::array();
  for (const auto& g : host.gpus) {
    gpus.push_back(to_json(g));
  }
  json nics = json::array();
  for (const auto& n : host.nics) {
    nics.push_back(to_json(n));
  }
  return {{"hostname", host.hostname},
          {"cpu_model", host.cpu_model},
          {"sockets", host.sockets},
          {"numa_nodes", numa},
          {"gpus", gpus},
          {"nics", nics},
          {"gpu_discovery", host.gpu_discovery}};
}

HostTopology host_topology_from_json(const json& j) {
  try {
    if (!j.is_object()) {
      throw TopologyJsonError("a host topology must be a JSON object");
    }
    HostTopology host;
    host.hostname = get<std::string>(j, "hostname", "");
    host.cpu_model = get<std::string>(j, "cpu_model", "");
    host.sockets = get(j, "sockets", 0);
    host.numa_nodes = list<NumaNode>(j, "numa_nodes", numa_from);
    host.gpus = list<Gpu>(j, "gpus", gpu_from);
    host.nics = list<Nic>(j, "nics", nic_from);
    host.gpu_discovery = get<std::string>(j, "gpu_discovery", "");
    return host;
  } catch (const json::exception& e) {
    throw TopologyJsonError(std::string{"host topology JSON: "} + e.what());
  }
}

}  // namespace ccbench::topo
