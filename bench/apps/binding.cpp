#include "binding.hpp"

#include <fmt/format.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ccbench/result_json.hpp"
#include "ccbench/topo/cpulist.hpp"

namespace ccbench {
namespace {

using Word = unsigned long;  // the kernel's bitmap word for CPU and node masks
constexpr std::size_t kWordBits = sizeof(Word) * CHAR_BIT;
constexpr std::size_t kNodeWords = 16;  // node masks of 1024 nodes, as many as any kernel config allows

std::string errno_text(std::string_view call) { return fmt::format("{}: {}", call, std::strerror(errno)); }

std::string join(std::string a, std::string_view b) {
  if (b.empty()) {
    return a;
  }
  return a.empty() ? std::string{b} : a + "; " + std::string{b};
}

std::string set_affinity(const std::vector<int>& cpus) {
  std::vector<Word> mask;
  for (const int cpu : cpus) {
    const auto c = static_cast<std::size_t>(cpu);
    mask.resize(std::max(mask.size(), c / kWordBits + 1));
    mask[c / kWordBits] |= Word{1} << (c % kWordBits);
  }
  if (::sched_setaffinity(0, mask.size() * sizeof(Word), reinterpret_cast<const cpu_set_t*>(mask.data())) != 0) {
    return errno_text("sched_setaffinity");
  }
  return {};
}

// MPOL_PREFERRED, not BIND: memory comes from the node while it has room, and from elsewhere after
// (a bench must not be OOM-killed because one node is full).
std::string prefer_memory_node(int node) {
  std::array<Word, kNodeWords> mask{};
  if (node < 0 || static_cast<std::size_t>(node) >= kNodeWords * kWordBits) {
    return fmt::format("set_mempolicy: node {} is out of range", node);
  }
  const auto n = static_cast<std::size_t>(node);
  mask.at(n / kWordBits) |= Word{1} << (n % kWordBits);
  // The kernel reads maxnode - 1 bits (it decrements first); libnuma passes one more for the same reason.
  if (::syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask.data(), kNodeWords * kWordBits + 1) != 0) {
    return errno_text("set_mempolicy");
  }
  return {};
}

std::vector<int> bits_of(const std::vector<Word>& words) {
  std::vector<int> out;
  for (std::size_t i = 0; i < words.size() * kWordBits; ++i) {
    if ((words[i / kWordBits] >> (i % kWordBits) & Word{1}) != 0) {
      out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

// The calling thread's memory policy as get_mempolicy reports it: "preferred node 0", "bind nodes 0-1", ...
std::string memory_policy_in_force() {
  int mode = 0;
  std::vector<Word> mask(kNodeWords);
  if (::syscall(SYS_get_mempolicy, &mode, mask.data(), kNodeWords * kWordBits, nullptr, 0) != 0) {
    return "unknown (" + errno_text("get_mempolicy") + ")";
  }
  const std::string nodes = topo::format_cpulist(bits_of(mask));
  switch (mode & ~MPOL_MODE_FLAGS) {
    case MPOL_DEFAULT:
      return "default";
    case MPOL_PREFERRED:
      return nodes.empty() ? "preferred local node" : "preferred node " + nodes;
    case MPOL_BIND:
      return "bind nodes " + nodes;
    case MPOL_INTERLEAVE:
      return "interleave nodes " + nodes;
    case MPOL_LOCAL:
      return "local";
    default:
      return fmt::format("mode {} nodes {}", mode, nodes);
  }
}

// How an operator would point MPI at `nic` for the next run: it chose its NICs in MPI_Init already.
std::string mpi_nic_hint(const topo::Nic& nic) {
  if (nic.name == nic.netdev) {
    return "OMPI_MCA_btl_tcp_if_include=" + nic.name;
  }
  return "UCX_NET_DEVICES=" + nic.name + (nic.name.find(':') == std::string::npos ? ":1" : "");
}

const topo::Nic* nic_named(const topo::HostTopology& host, const std::string& name) {
  const auto it = std::ranges::find(host.nics, name, &topo::Nic::name);
  return it == host.nics.end() ? nullptr : &*it;
}

// NCCL needs one NCCL_IB_HCA for the whole job: ranks that list different NICs cannot build rings across
// nodes. It already pairs each GPU with the NIC nearest it (its rail) from the PCI topology, so --bind
// auto only records that NIC and leaves the variable to the user, who can set one value for every rank.
void note_nccl_nic(BindingRecord& record, const BindingPlan& plan) {
  if (const char* user = std::getenv("NCCL_IB_HCA"); user != nullptr) {
    record.note = join(record.note, fmt::format("NCCL_IB_HCA={} was set by the user: left as is", user));
    return;
  }
  if (!plan.nic_is_rdma_port) {
    record.note = join(record.note, fmt::format("nearest NIC {} is not a usable RDMA port", plan.nic));
    return;
  }
  record.note = join(record.note, fmt::format("NCCL_IB_HCA left unset: NCCL pairs this GPU with its nearest NIC {} "
                                              "itself; to restrict its NICs, give every rank of the job one value "
                                              "(e.g. NCCL_IB_HCA=mlx5)",
                                              plan.nic));
}

void record_nic(BindingRecord& record, const topo::HostTopology& host, const BindingPlan& plan, bool gpu) {
  if (plan.nic.empty()) {
    return;
  }
  record.nic = plan.nic;
  if (gpu) {
    note_nccl_nic(record, plan);
    return;
  }
  const topo::Nic* nic = nic_named(host, plan.nic);
  record.note = join(record.note, fmt::format("MPI chose its NICs in MPI_Init: {} recorded, not applied{}", plan.nic,
                                              nic != nullptr ? " (for the next run: " + mpi_nic_hint(*nic) + ")" : ""));
}

// With --bind none the record still says what --bind auto would have done, to help decide.
std::string auto_would(const BindingPlan& plan) {
  if (!plan.numa_node) {
    return "--bind auto would bind nothing: " + plan.reason;
  }
  return fmt::format("--bind auto would use NUMA node {} (CPUs {}){}", *plan.numa_node, topo::format_cpulist(plan.cpus),
                     plan.nic.empty() ? "" : " and NIC " + plan.nic);
}

void apply_plan(BindingRecord& record, const topo::HostTopology& host, const BindingPlan& plan, bool gpu) {
  if (const std::string error = set_affinity(plan.cpus); !error.empty()) {
    record.note = join(record.note, error);
    return;
  }
  record.applied = true;
  const std::string in_force = topo::format_cpulist(current_affinity());
  record.cpus = in_force;
  if (in_force != topo::format_cpulist(plan.cpus)) {  // a cgroup cpuset narrows what we asked for
    record.note = join(record.note, fmt::format("asked for node {}'s CPUs {}, the kernel allows {}", *plan.numa_node,
                                                topo::format_cpulist(plan.cpus), in_force));
  }
  if (const std::string error = prefer_memory_node(*plan.numa_node); !error.empty()) {
    record.note = join(record.note, error);
  } else {
    record.memory = memory_policy_in_force();
  }
  record_nic(record, host, plan, gpu);
}

}  // namespace

std::vector<int> current_affinity() {
  for (std::size_t words = 16; words <= 4096; words *= 2) {  // 1024 CPUs first; grow for larger hosts
    std::vector<Word> mask(words);
    if (::sched_getaffinity(0, words * sizeof(Word), reinterpret_cast<cpu_set_t*>(mask.data())) == 0) {
      return bits_of(mask);
    }
    if (errno != EINVAL) {
      break;
    }
  }
  return {};
}

BindingRecord bind_rank(BindPolicy policy, const topo::HostTopology& host, const BindingInputs& in) {
  const BindingPlan plan = plan_binding(host, in);
  BindingRecord record;
  record.policy = policy;
  if (!plan.gpu_bus_id.empty()) {
    record.gpu = plan.gpu_bus_id;
  }
  if (policy == BindPolicy::None) {
    record.note = auto_would(plan);
    return record;
  }
  record.note = plan.reason;
  if (plan.numa_node) {
    apply_plan(record, host, plan, in.gpu);
  }
  return record;
}

void read_back_binding(BindingRecord& record, const topo::HostTopology& host, const std::string& backend_bus_id) {
  const std::vector<int> cpus = current_affinity();
  const std::string in_force = topo::format_cpulist(cpus);
  if (record.applied && !record.cpus.empty() && in_force != record.cpus) {
    record.note = join(record.note, fmt::format("set-up changed the affinity from {} to {}", record.cpus, in_force));
  }
  record.cpus = in_force;
  record.numa_node = numa_node_holding(host, cpus);
  const std::string device = topo::normalize_bus_id(backend_bus_id);
  if (device.empty() || device == topo::normalize_bus_id(record.gpu.value_or(""))) {
    return;
  }
  if (record.gpu) {
    record.note = join(record.note, fmt::format("the backend drives GPU {}, not {} as planned (set "
                                                "CUDA_DEVICE_ORDER=PCI_BUS_ID)",
                                                device, *record.gpu));
  }
  record.gpu = device;
}

std::vector<BindingRecord> gather_binding(Group& world, const BindingRecord& mine) {
  std::vector<BindingRecord> all;
  for (const auto& text : world.all_gather(json_text(binding_to_json(mine)))) {
    all.push_back(binding_from_json(nlohmann::json::parse(text)));
  }
  return all;
}

}  // namespace ccbench
