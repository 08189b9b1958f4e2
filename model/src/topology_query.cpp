#include "ccbench/topo/query.hpp"

#include <algorithm>
#include <tuple>

#include "ccbench/text.hpp"

namespace ccbench::topo {

namespace {

int state_rank(const Nic& nic) { return static_cast<int>(port_state(nic)); }

/// The candidate with the greatest key; only a strictly greater key replaces one, so ties keep the first listed.
template <typename Key>
const Nic* best_nic(const std::vector<const Nic*>& candidates, Key key) {
  const Nic* best = nullptr;
  for (const Nic* nic : candidates) {
    if (best == nullptr || key(*best) < key(*nic)) {
      best = nic;
    }
  }
  return best;
}

}  // namespace

std::size_t shared_bridges(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const auto [ai, bi] = std::ranges::mismatch(a, b);
  return static_cast<std::size_t>(ai - a.begin());
}

bool has_rdma_device(const Nic& nic) { return !nic.name.empty() && nic.name != nic.netdev; }

bool usable_rdma_port(const Nic& nic) { return has_rdma_device(nic) && port_state(nic) != PortState::Down; }

PortState port_state(const Nic& nic) {
  const std::string state = lower(nic.state);
  if (state.empty() || state == "unknown") {
    return PortState::Unknown;
  }
  if (state.find("down") != std::string::npos || state.find("inactive") != std::string::npos) {
    return PortState::Down;
  }
  return state.find("active") != std::string::npos || state == "up" ? PortState::Active : PortState::Down;
}

std::vector<const NumaNode*> nodes_with_cpus(const HostTopology& host) {
  std::vector<const NumaNode*> nodes;
  for (const auto& node : host.numa_nodes) {
    if (!node.cpus.empty()) {
      nodes.push_back(&node);
    }
  }
  return nodes;
}

std::optional<int> known_numa_node(const HostTopology& host, int numa_node) {
  const auto nodes = nodes_with_cpus(host);
  if (numa_node < 0 && nodes.size() == 1) {
    return nodes.front()->index;
  }
  return numa_node < 0 ? std::nullopt : std::optional<int>(numa_node);
}

const Nic* nearest_nic(const HostTopology& host, const Gpu& gpu) {
  // NCCL only drives RDMA ports; fall back to every NIC so a host without one still names its nearest.
  std::vector<const Nic*> candidates;
  for (const auto& nic : host.nics) {
    if (usable_rdma_port(nic)) {
      candidates.push_back(&nic);
    }
  }
  if (candidates.empty()) {
    for (const auto& nic : host.nics) {
      candidates.push_back(&nic);
    }
  }
  const auto gpu_node = known_numa_node(host, gpu.numa_node);
  return best_nic(candidates, [&](const Nic& nic) {
    const bool same_node = gpu_node && known_numa_node(host, nic.numa_node) == gpu_node;
    return std::make_tuple(shared_bridges(gpu.pci_path, nic.pci_path), same_node, state_rank(nic));
  });
}

const Nic* nic_on_numa_node(const HostTopology& host, int node) {
  std::vector<const Nic*> here;
  for (const auto& nic : host.nics) {  // for host memory any NIC may carry MPI's traffic (TCP too)
    if (port_state(nic) != PortState::Down && known_numa_node(host, nic.numa_node) == node) {
      here.push_back(&nic);
    }
  }
  return best_nic(here, [](const Nic& nic) { return std::make_tuple(has_rdma_device(nic), state_rank(nic)); });
}

bool near_a_gpu(const Nic& nic, const HostTopology& host) {
  return std::ranges::any_of(host.gpus, [&nic](const Gpu& gpu) {
    return std::ranges::any_of(nic.pci_path, [&gpu](const std::string& bridge) {
      return std::ranges::find(gpu.pci_path, bridge) != gpu.pci_path.end();
    });
  });
}

std::vector<const Nic*> rail_of(const Gpu& gpu, const std::vector<const Nic*>& fabric) {
  std::size_t best = 0;
  for (const Nic* nic : fabric) {
    best = std::max(best, shared_bridges(nic->pci_path, gpu.pci_path));
  }
  std::vector<const Nic*> rail;
  for (const Nic* nic : fabric) {
    if (best > 0 ? shared_bridges(nic->pci_path, gpu.pci_path) == best
                 : (gpu.numa_node >= 0 && nic->numa_node == gpu.numa_node)) {
      rail.push_back(nic);
    }
  }
  return rail.empty() ? fabric : rail;
}

}  // namespace ccbench::topo
