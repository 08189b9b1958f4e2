#include "ccbench/binding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "ccbench/topo/query.hpp"

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

const topo::NumaNode* node_by_index(const topo::HostTopology& host, int index) {
  const auto nodes = topo::nodes_with_cpus(host);
  const auto it = std::ranges::find(nodes, index, &topo::NumaNode::index);
  return it == nodes.end() ? nullptr : *it;
}

void set_nic(BindingPlan& plan, const topo::Nic* nic) {
  if (nic != nullptr) {
    plan.nic = nic->name;
    plan.nic_is_rdma_port = topo::usable_rdma_port(*nic);
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
  // one visible GPU: the rank's own whatever its local rank (srun --gpus-per-task=1), as the NCCL backend
  // chooses it (choose_device)
  const int index = visible->size() == 1 ? 0 : in.local_rank;
  if (index < 0 || index >= static_cast<int>(visible->size())) {
    pick.reason = fmt::format(
        "local rank {} has no GPU: {} of the {} GPU(s) discovery lists are visible{}", in.local_rank, visible->size(),
        host.gpus.size(),
        in.cuda_visible_devices ? " (CUDA_VISIBLE_DEVICES=" + *in.cuda_visible_devices + ")" : std::string{});
    return pick;
  }
  pick.gpu = gpu_by_index(host, (*visible)[static_cast<std::size_t>(index)]);
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
  set_nic(plan, topo::nearest_nic(host, *pick.gpu));
  const auto node_index = topo::known_numa_node(host, pick.gpu->numa_node);
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

BindingPlan plan_host_rank(const topo::HostTopology& host, const BindingInputs& in) {
  BindingPlan plan;
  const auto nodes = topo::nodes_with_cpus(host);
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
  const topo::Nic* nic = topo::nic_on_numa_node(host, node.index);
  set_nic(plan, nic);
  if (nic == nullptr) {
    plan.reason = fmt::format("no NIC on NUMA node {}", node.index);
  }
  return plan;
}

}  // namespace

BindingPlan plan_binding(const topo::HostTopology& host, const BindingInputs& in) {
  return in.gpu ? plan_gpu_rank(host, in) : plan_host_rank(host, in);
}

std::optional<int> numa_node_holding(const topo::HostTopology& host, const std::vector<int>& cpus) {
  if (cpus.empty()) {
    return std::nullopt;
  }
  auto wanted = cpus;
  std::ranges::sort(wanted);
  for (const topo::NumaNode* node : topo::nodes_with_cpus(host)) {
    auto have = node->cpus;
    std::ranges::sort(have);
    if (std::ranges::includes(have, wanted)) {
      return node->index;
    }
  }
  return std::nullopt;
}

}  // namespace ccbench
