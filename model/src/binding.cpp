#include "ccbench/binding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <tuple>

namespace ccbench {

std::string_view name(BindPolicy policy) { return policy == BindPolicy::Auto ? "auto" : "none"; }

std::optional<BindPolicy> parse_bind_policy(std::string_view text) {
  if (text == "none") {
    return BindPolicy::None;
  }
  if (text == "auto") {
    return BindPolicy::Auto;
  }
  return std::nullopt;
}

namespace {

// A NUMA node a rank can run on: memory-only nodes (CXL, HBM) hold no CPUs to bind to.
std::vector<const topo::NumaNode*> nodes_with_cpus(const topo::HostTopology& host) {
  std::vector<const topo::NumaNode*> nodes;
  for (const auto& node : host.numa_nodes) {
    if (!node.cpus.empty()) {
      nodes.push_back(&node);
    }
  }
  return nodes;
}

const topo::NumaNode* node_by_index(const topo::HostTopology& host, int index) {
  const auto nodes = nodes_with_cpus(host);
  const auto it = std::ranges::find(nodes, index, &topo::NumaNode::index);
  return it == nodes.end() ? nullptr : *it;
}

// Firmware often leaves a device's NUMA node at -1 on a one-node host; there it can only be that node.
std::optional<int> known_node(const topo::HostTopology& host, int numa_node) {
  const auto nodes = nodes_with_cpus(host);
  if (numa_node < 0 && nodes.size() == 1) {
    return nodes.front()->index;
  }
  return numa_node < 0 ? std::nullopt : std::optional<int>(numa_node);
}

bool has_rdma_device(const topo::Nic& nic) { return nic.name != nic.netdev; }

// 2 = ACTIVE/up, 1 = not reported, 0 = known not to pass traffic (DOWN, INIT, down, ...).
int state_rank(const topo::Nic& nic) {
  if (nic.state == "ACTIVE" || nic.state == "up") {
    return 2;
  }
  return nic.state.empty() || nic.state == "unknown" ? 1 : 0;
}

bool usable_rdma_port(const topo::Nic& nic) { return has_rdma_device(nic) && state_rank(nic) > 0; }

std::size_t common_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const auto [ai, bi] = std::ranges::mismatch(a, b);
  return static_cast<std::size_t>(ai - a.begin());
}

// NCCL only drives RDMA ports; fall back to every NIC so a host without one still names its nearest.
std::vector<const topo::Nic*> nic_candidates(const topo::HostTopology& host) {
  std::vector<const topo::Nic*> out;
  for (const auto& nic : host.nics) {
    if (usable_rdma_port(nic)) {
      out.push_back(&nic);
    }
  }
  if (out.empty()) {
    for (const auto& nic : host.nics) {
      out.push_back(&nic);
    }
  }
  return out;
}

template <typename Key>
const topo::Nic* best_nic(const std::vector<const topo::Nic*>& candidates, Key key) {
  const topo::Nic* best = nullptr;
  for (const topo::Nic* nic : candidates) {  // strictly better only: ties keep the first listed
    if (best == nullptr || key(*best) < key(*nic)) {
      best = nic;
    }
  }
  return best;
}

void set_nic(BindingPlan& plan, const topo::Nic* nic) {
  if (nic != nullptr) {
    plan.nic = nic->name;
    plan.nic_is_rdma_port = usable_rdma_port(*nic);
  }
}

std::string join(std::string a, std::string_view b) {
  if (b.empty()) {
    return a;
  }
  return a.empty() ? std::string{b} : a + "; " + std::string{b};
}

struct GpuPick {
  const topo::Gpu* gpu = nullptr;
  std::string reason;
};

std::optional<int> parse_index(std::string_view text) {
  while (!text.empty() && text.front() == ' ') {
    text.remove_prefix(1);
  }
  while (!text.empty() && text.back() == ' ') {
    text.remove_suffix(1);
  }
  int value = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && ptr == text.data() + text.size() && value >= 0 ? std::optional<int>(value) : std::nullopt;
}

const topo::Gpu* gpu_by_index(const topo::HostTopology& host, int index) {
  const auto it = std::ranges::find(host.gpus, index, &topo::Gpu::index);
  return it == host.gpus.end() ? nullptr : &*it;
}

// The NVML indices CUDA makes visible, in CUDA's order. CUDA stops at the first entry it cannot
// use, so do we; UUIDs ("GPU-...", "MIG-...") cannot be mapped without NVML's UUIDs.
std::optional<std::vector<int>> visible_indices(const topo::HostTopology& host, const BindingInputs& in,
                                                std::string& why) {
  std::vector<int> out;
  if (!in.cuda_visible_devices) {
    for (const auto& gpu : host.gpus) {
      out.push_back(gpu.index);
    }
    std::ranges::sort(out);
    return out;
  }
  std::string_view list = *in.cuda_visible_devices;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto index = parse_index(list.substr(0, comma));
    if (!index && (list.starts_with("GPU-") || list.starts_with("MIG-"))) {
      why = fmt::format("CUDA_VISIBLE_DEVICES={} names devices by UUID, which discovery does not record",
                        *in.cuda_visible_devices);
      return std::nullopt;
    }
    if (!index || gpu_by_index(host, *index) == nullptr) {
      break;
    }
    out.push_back(*index);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

GpuPick gpu_of_rank(const topo::HostTopology& host, const BindingInputs& in) {
  GpuPick pick;
  if (host.gpus.empty()) {
    pick.reason = "discovery found no GPU (" + host.gpu_discovery + ")";
    return pick;
  }
  const auto visible = visible_indices(host, in, pick.reason);
  if (!visible) {
    return pick;
  }
  if (in.local_rank < 0 || in.local_rank >= static_cast<int>(visible->size())) {
    pick.reason = fmt::format(
        "local rank {} has no GPU: {} of the {} GPU(s) discovery lists are visible{}", in.local_rank, visible->size(),
        host.gpus.size(),
        in.cuda_visible_devices ? " (CUDA_VISIBLE_DEVICES=" + *in.cuda_visible_devices + ")" : std::string{});
    return pick;
  }
  pick.gpu = gpu_by_index(host, (*visible)[static_cast<std::size_t>(in.local_rank)]);
  const bool mixed = std::ranges::any_of(host.gpus, [&](const topo::Gpu& g) { return g.name != host.gpus[0].name; });
  if (mixed && in.cuda_device_order.value_or("") != "PCI_BUS_ID") {
    pick.reason =
        "GPU models differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA's device order may not be "
        "the bus order assumed here";
  }
  return pick;
}

BindingPlan plan_gpu_rank(const topo::HostTopology& host, const BindingInputs& in) {
  BindingPlan plan;
  const GpuPick pick = gpu_of_rank(host, in);
  plan.reason = pick.reason;
  if (pick.gpu == nullptr) {
    return plan;
  }
  plan.gpu_bus_id = pick.gpu->bus_id;
  set_nic(plan, nearest_nic_to_gpu(host, *pick.gpu));
  const auto node_index = known_node(host, pick.gpu->numa_node);
  const topo::NumaNode* node = node_index ? node_by_index(host, *node_index) : nullptr;
  if (node == nullptr) {
    plan.reason = join(plan.reason,
                       fmt::format("the NUMA node of GPU {} is unknown ({})", pick.gpu->bus_id, pick.gpu->numa_node));
    return plan;
  }
  plan.numa_node = node->index;
  plan.cpus = node->cpus;
  return plan;
}

// For host memory any NIC may carry MPI's traffic (TCP too); one known to be down carries none.
const topo::Nic* nic_on_node(const topo::HostTopology& host, int node) {
  std::vector<const topo::Nic*> here;
  for (const auto& nic : host.nics) {
    if (state_rank(nic) > 0 && known_node(host, nic.numa_node) == node) {
      here.push_back(&nic);
    }
  }
  return best_nic(here, [](const topo::Nic& nic) { return std::make_tuple(has_rdma_device(nic), state_rank(nic)); });
}

BindingPlan plan_host_rank(const topo::HostTopology& host, const BindingInputs& in) {
  BindingPlan plan;
  const auto nodes = nodes_with_cpus(host);
  if (nodes.empty()) {
    plan.reason = "discovery found no NUMA node with CPUs";
    return plan;
  }
  if (in.local_rank < 0 || in.local_rank >= in.local_size) {
    plan.reason = fmt::format("local rank {} is outside 0..{}", in.local_rank, in.local_size - 1);
    return plan;
  }
  // Blocks, not round robin: neighbouring local ranks (which talk most in rings and pairs) share a node.
  const auto block = static_cast<std::size_t>(in.local_rank) * nodes.size() / static_cast<std::size_t>(in.local_size);
  const topo::NumaNode& node = *nodes[block];
  plan.numa_node = node.index;
  plan.cpus = node.cpus;
  const topo::Nic* nic = nic_on_node(host, node.index);
  set_nic(plan, nic);
  if (nic == nullptr) {
    plan.reason = fmt::format("no NIC on NUMA node {}", node.index);
  }
  return plan;
}

}  // namespace

const topo::Nic* nearest_nic_to_gpu(const topo::HostTopology& host, const topo::Gpu& gpu) {
  const auto gpu_node = known_node(host, gpu.numa_node);
  return best_nic(nic_candidates(host), [&](const topo::Nic& nic) {
    const bool same_node = gpu_node && known_node(host, nic.numa_node) == gpu_node;
    return std::make_tuple(common_prefix(gpu.pci_path, nic.pci_path), same_node, state_rank(nic));
  });
}

BindingPlan plan_binding(const topo::HostTopology& host, const BindingInputs& in) {
  return in.gpu ? plan_gpu_rank(host, in) : plan_host_rank(host, in);
}

std::optional<int> numa_node_holding(const topo::HostTopology& host, const std::vector<int>& cpus) {
  if (cpus.empty()) {
    return std::nullopt;
  }
  auto wanted = cpus;
  std::ranges::sort(wanted);
  for (const topo::NumaNode* node : nodes_with_cpus(host)) {
    auto have = node->cpus;
    std::ranges::sort(have);
    if (std::ranges::includes(have, wanted)) {
      return node->index;
    }
  }
  return std::nullopt;
}

}  // namespace ccbench
