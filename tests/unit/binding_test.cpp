// --bind auto's plan on the fixture topologies of tests/data/topo (their sources are in its
// README.md): GPU ranks on their GPU's NUMA node with the NIC nearest the GPU, host-memory ranks
// spread over the NUMA nodes in blocks, and no binding (with the reason) where NUMA is unknown.
// Each test prints what every rank got.
#include "ccbench/binding.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "ccbench/topo/cpulist.hpp"
#include "ccbench/topo/query.hpp"
#include "ccbench/topo/topology_json.hpp"

namespace ccbench {
namespace {

topo::HostTopology load(const std::string& file) {
  std::ifstream in(std::string(CCBENCH_TOPO_DATA_DIR) + "/" + file);
  EXPECT_TRUE(in.good()) << file;
  return topo::host_topology_from_json(nlohmann::json::parse(in));
}

BindingInputs gpu_rank(int local_rank, int local_size) { return {local_rank, local_size, true, {}, {}}; }
BindingInputs host_rank(int local_rank, int local_size) { return {local_rank, local_size, false, {}, {}}; }

/// One line per rank: what the plan gives it.
std::vector<BindingPlan> plan_all(const topo::HostTopology& host, int ranks, bool gpu, const std::string& title) {
  std::vector<BindingPlan> plans;
  fmt::print("{}\n", title);
  for (int r = 0; r < ranks; ++r) {
    plans.push_back(plan_binding(host, gpu ? gpu_rank(r, ranks) : host_rank(r, ranks)));
    const auto& p = plans.back();
    fmt::print("  local rank {}: node {} cpus {} gpu {} nic {}{} {}\n", r,
               p.numa_node ? std::to_string(*p.numa_node) : "-", topo::format_cpulist(p.cpus),
               p.gpu_bus_id.empty() ? "-" : p.gpu_bus_id, p.nic.empty() ? "-" : p.nic,
               p.nic_is_rdma_port ? " (rdma)" : "", p.reason);
  }
  return plans;
}

TEST(Binding, PolicyNames) {
  EXPECT_EQ(parse_bind_policy("none"), BindPolicy::None);
  EXPECT_EQ(parse_bind_policy("auto"), BindPolicy::Auto);
  EXPECT_FALSE(parse_bind_policy("numa"));
  EXPECT_EQ(name(BindPolicy::Auto), "auto");
  EXPECT_EQ(name(BindPolicy::None), "none");
}

// DGX H100 User Guide: GPU k's compute port; nvidia-smi topo -m: GPUs 0-3 on node 0, 4-7 on node 1.
TEST(Binding, DgxH100EveryGpuGetsItsNodeAndItsOwnNic) {
  const auto host = load("dgx_h100.json");
  const auto plans = plan_all(host, 8, true, "DGX H100, 8 GPU ranks:");
  const std::vector<std::string> nics{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  for (std::size_t k = 0; k < 8; ++k) {
    const auto& p = plans[k];
    const int node = k < 4 ? 0 : 1;
    EXPECT_EQ(p.numa_node, node) << k;
    EXPECT_EQ(topo::format_cpulist(p.cpus), node == 0 ? "0-55,112-167" : "56-111,168-223") << k;
    EXPECT_EQ(p.gpu_bus_id, host.gpus[k].bus_id);
    EXPECT_EQ(p.nic, nics[k]) << k;
    EXPECT_TRUE(p.nic_is_rdma_port);
    EXPECT_EQ(p.reason, "");
  }
}

// nvidia-smi topo -m of NVIDIA/nccl#933: GPU0/1/2/3 PIX to NIC2/4/6/8, GPU4/5/6/7 to NIC1/3/5/7.
// The fixture's ports report no state: not known to be down, so NCCL may still be pointed at them.
TEST(Binding, H800EveryGpuGetsTheNicOnItsSwitch) {
  const auto host = load("h800_nvlink8.json");
  const auto plans = plan_all(host, 8, true, "8x H800, 8 GPU ranks:");
  const std::vector<std::string> nics{"mlx5_2", "mlx5_4", "mlx5_6", "mlx5_8", "mlx5_1", "mlx5_3", "mlx5_5", "mlx5_7"};
  for (std::size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(plans[k].numa_node, k < 4 ? 0 : 1) << k;
    EXPECT_EQ(plans[k].nic, nics[k]) << k;
    EXPECT_TRUE(plans[k].nic_is_rdma_port) << k;
  }
}

// One NIC on the second socket: every GPU still names it (NCCL would use it), the first socket's
// across the socket link.
TEST(Binding, Pcie4GpuSharesTheOneNic) {
  const auto host = load("pcie_4gpu.json");
  const auto plans = plan_all(host, 4, true, "4x A100 PCIe, 4 GPU ranks:");
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(plans[k].numa_node, k < 2 ? 0 : 1) << k;
    EXPECT_EQ(topo::format_cpulist(plans[k].cpus), k < 2 ? "0-13" : "14-27") << k;
    EXPECT_EQ(plans[k].nic, "mlx5_0") << k;
  }
}

TEST(Binding, HostMemoryRanksSplitOverTheNodesInBlocks) {
  const auto host = load("dgx_h100.json");
  const auto plans = plan_all(host, 8, false, "DGX H100, 8 host-memory ranks:");
  for (std::size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(plans[k].numa_node, k < 4 ? 0 : 1) << k;
    EXPECT_TRUE(plans[k].gpu_bus_id.empty());
    EXPECT_EQ(plans[k].nic, k < 4 ? "mlx5_0" : "mlx5_6") << k;  // the first ACTIVE RDMA port of the node
  }
  const auto three = plan_all(host, 3, false, "DGX H100, 3 host-memory ranks:");  // 0*2/3, 1*2/3, 2*2/3
  EXPECT_EQ(three[0].numa_node, 0);
  EXPECT_EQ(three[1].numa_node, 0);
  EXPECT_EQ(three[2].numa_node, 1);
  EXPECT_EQ(plan_all(host, 1, false, "DGX H100, 1 host-memory rank:")[0].numa_node, 0);
}

TEST(Binding, HostMemoryOnANodeWithoutNicNamesNone) {
  const auto plans = plan_all(load("pcie_4gpu.json"), 2, false, "4x A100 PCIe, 2 host-memory ranks:");
  EXPECT_EQ(plans[0].numa_node, 0);
  EXPECT_EQ(plans[0].nic, "");
  EXPECT_EQ(plans[0].reason, "no NIC on NUMA node 0");
  EXPECT_EQ(plans[1].numa_node, 1);
  EXPECT_EQ(plans[1].nic, "mlx5_0");
}

TEST(Binding, UnknownNumaBindsNothingAndSaysWhy) {
  auto host = load("dgx_h100.json");
  host.gpus[3].numa_node = -1;
  const auto gpu = plan_all(host, 8, true, "DGX H100, GPU3's NUMA node unknown:")[3];
  EXPECT_FALSE(gpu.numa_node);
  EXPECT_TRUE(gpu.cpus.empty());
  EXPECT_EQ(gpu.gpu_bus_id, "0000:61:00.0");
  EXPECT_EQ(gpu.nic, "mlx5_5");  // the PCI path still finds its NIC
  EXPECT_EQ(gpu.reason, "the NUMA node of GPU 0000:61:00.0 is unknown (-1)");
  host.numa_nodes.clear();
  const auto none = plan_all(host, 2, false, "no NUMA node discovered:")[0];
  EXPECT_FALSE(none.numa_node);
  EXPECT_EQ(none.reason, "discovery found no NUMA node with CPUs");
}

// Firmware often says -1 on a one-node host; there every device is on that node.
TEST(Binding, OneNodeHostTakesDevicesAtMinusOne) {
  auto host = load("pcie_4gpu.json");
  host.numa_nodes.resize(1);
  for (auto& g : host.gpus) {
    g.numa_node = -1;
  }
  host.nics[0].numa_node = -1;
  const auto plans = plan_all(host, 2, true, "one node, devices at -1:");
  EXPECT_EQ(plans[1].numa_node, 0);
  EXPECT_EQ(plans[1].nic, "mlx5_0");
  EXPECT_EQ(plan_binding(host, host_rank(0, 1)).nic, "mlx5_0");
}

TEST(Binding, CudaVisibleDevicesPicksTheGpu) {
  const auto host = load("dgx_h100.json");
  BindingInputs in = gpu_rank(1, 2);
  in.cuda_visible_devices = "4,5";
  auto p = plan_binding(host, in);
  fmt::print("CUDA_VISIBLE_DEVICES=4,5 local rank 1: gpu {} node {} nic {}\n", p.gpu_bus_id, p.numa_node.value_or(-1),
             p.nic);
  EXPECT_EQ(p.gpu_bus_id, "0000:c3:00.0");
  EXPECT_EQ(p.numa_node, 1);
  EXPECT_EQ(p.nic, "mlx5_9");
  in.cuda_visible_devices = "0,9,1";  // CUDA stops at the first device it does not have: one visible, GPU 0
  p = plan_binding(host, in);
  EXPECT_EQ(p.gpu_bus_id, plan_binding(host, gpu_rank(0, 1)).gpu_bus_id);
  in = gpu_rank(5, 8);  // srun --gpus-per-task=1: each rank sees its own one, whatever its local rank
  in.cuda_visible_devices = "5";
  p = plan_binding(host, in);
  EXPECT_EQ(p.gpu_bus_id, "0000:c3:00.0");
  EXPECT_EQ(p.numa_node, 1);
  in = gpu_rank(2, 3);
  in.cuda_visible_devices = "4,5";
  p = plan_binding(host, in);
  EXPECT_FALSE(p.numa_node);
  EXPECT_NE(p.reason.find("local rank 2 has no GPU: 2 of the 8 GPU(s)"), std::string::npos) << p.reason;
  in = gpu_rank(1, 2);
  in.cuda_visible_devices = "GPU-5c9b7a5e-0000-1111-2222-333344445555";
  p = plan_binding(host, in);
  EXPECT_FALSE(p.numa_node);
  EXPECT_NE(p.reason.find("names devices by UUID"), std::string::npos) << p.reason;
  fmt::print("CUDA_VISIBLE_DEVICES=GPU-...: {}\n", p.reason);
}

TEST(Binding, MixedGpuModelsWarnAboutCudaDeviceOrder) {
  auto host = load("pcie_4gpu.json");
  host.gpus[2].name = "NVIDIA A40";
  BindingInputs in = gpu_rank(0, 4);
  EXPECT_NE(plan_binding(host, in).reason.find("CUDA_DEVICE_ORDER is not PCI_BUS_ID"), std::string::npos);
  EXPECT_EQ(plan_binding(host, in).numa_node, 0);  // still bound: the order is only maybe wrong
  in.cuda_device_order = "PCI_BUS_ID";
  EXPECT_EQ(plan_binding(host, in).reason, "");
  host.gpus.clear();
  EXPECT_NE(plan_binding(host, in).reason.find("discovery found no GPU"), std::string::npos);
}

TEST(Binding, NicNotKnownToWorkIsPassedOver) {
  auto host = load("dgx_h100.json");
  host.nics[0].state = "DOWN";  // GPU0's own port (mlx5_0)
  const topo::Nic* nic = topo::nearest_nic(host, host.gpus[0]);
  ASSERT_NE(nic, nullptr);
  fmt::print("DGX H100, mlx5_0 DOWN: GPU0 gets {} (node {})\n", nic->name, nic->numa_node);
  EXPECT_NE(nic->name, "mlx5_0");
  EXPECT_EQ(nic->numa_node, 0);  // then the same socket
  for (auto& n : host.nics) {
    n.state = "DOWN";
  }
  const auto p = plan_binding(host, gpu_rank(0, 8));
  EXPECT_EQ(p.nic, "mlx5_0");  // every port down: still the nearest, but not one to point NCCL at
  EXPECT_FALSE(p.nic_is_rdma_port);
  host.nics.clear();
  EXPECT_EQ(topo::nearest_nic(host, host.gpus[0]), nullptr);
}

TEST(Binding, NumaNodeHoldingAnAffinity) {
  const auto host = load("dgx_h100.json");
  EXPECT_EQ(numa_node_holding(host, {0, 1, 112}), 0);
  EXPECT_EQ(numa_node_holding(host, {200, 60}), 1);
  EXPECT_FALSE(numa_node_holding(host, {0, 56}));  // spans both sockets
  EXPECT_FALSE(numa_node_holding(host, {}));
  EXPECT_FALSE(numa_node_holding(host, {500}));
}

}  // namespace
}  // namespace ccbench
