// The expected-peak model on hand-built topologies, against values computed by hand from DESIGN §4.
#include "ccbench/topo/peak.hpp"

#include <gtest/gtest.h>

#include <string>

#include "topology_fixtures.hpp"

namespace ccbench::topo {
namespace {

using fixtures::hgx_node;

const SpecDatabase& db() { return SpecDatabase::builtin(); }

/// Ranks on GPUs first..first+count-1 of `host`.
std::vector<RankPlace> gpu_ranks(int host, int first, int count) {
  std::vector<RankPlace> out;
  for (int g = first; g < first + count; ++g) {
    out.push_back(RankPlace{host, g});
  }
  return out;
}

std::vector<RankPlace> concat(std::vector<RankPlace> a, const std::vector<RankPlace>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Peak peak(const std::vector<HostTopology>& hosts, const std::vector<RankPlace>& ranks) {
  return expected_peak(db(), hosts, ranks);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// PCIe per direction, from the line rate: GT/s x 128/130 / 8 bits x 16 lanes.
constexpr double kGen3x16 = 8.0 * 128 / 130 / 8 * 16;   // 15.754
constexpr double kGen4x16 = 16.0 * 128 / 130 / 8 * 16;  // 31.51
constexpr double kGen5x16 = 32.0 * 128 / 130 / 8 * 16;  // 63.02

TEST(ExpectedPeak, HgxH100WorldGroupIsNvlink450) {
  const auto p = peak({hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18)}, gpu_ranks(0, 0, 8));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 450.0);  // 18 links x 25 GB/s
  EXPECT_EQ(p.basis, "NVLink4 18 links x 25 GB/s per direction, H100 SXM");
}

TEST(ExpectedPeak, H800NodeIsNvlink200) {
  const auto p = peak({hgx_node("node-a", "NVIDIA H800", 8)}, gpu_ranks(0, 0, 8));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 200.0);  // 8 links x 25 GB/s
  EXPECT_EQ(p.basis, "NVLink4 8 links x 25 GB/s per direction, H800 SXM");
}

TEST(ExpectedPeak, OneLinkDownOnGpu3Gives425) {
  auto node = hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18);
  node.gpus[3].nvlinks[17].active = false;
  const auto p = peak({node}, gpu_ranks(0, 0, 8));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 425.0);  // 17 x 25: the slowest GPU sets the group's bound
  EXPECT_TRUE(contains(p.basis, "NVLink4 17 links x 25 GB/s")) << p.basis;
  EXPECT_TRUE(contains(p.basis, "GPU3: 17 of 18 links usable")) << p.basis;
}

TEST(ExpectedPeak, SubgroupOfAnNvswitchNodeKeepsEveryLink) {
  const auto p = peak({hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18)}, gpu_ranks(0, 2, 2));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 450.0);
}

TEST(ExpectedPeak, PcieBoxOfFourGpusIsGen4x16) {
  const auto p = peak({fixtures::pcie_box("box", "NVIDIA A100-PCIE-40GB")}, gpu_ranks(0, 0, 4));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, kGen4x16);
  EXPECT_TRUE(contains(p.basis, "PCIe Gen4 x16 31.5077 GB/s per direction")) << p.basis;
}

TEST(ExpectedPeak, DowntrainedGpuKeepsTheSpecPeakAndSaysSo) {
  // The peak is what the link should carry (max generation and width of GPU and slot), so a GPU
  // trained at Gen3 in a Gen4 slot shows up as a low %peak, and the basis names it.
  auto box = fixtures::pcie_box("box", "NVIDIA A100-PCIE-40GB");
  box.gpus[2].pcie.gen_current = 3;
  const auto p = peak({box}, gpu_ranks(0, 0, 4));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, kGen4x16);
  EXPECT_TRUE(contains(p.basis, "GPU2: Gen3 x16 at discovery, below its max")) << p.basis;

  auto narrow = fixtures::pcie_box("box", "NVIDIA A100-PCIE-40GB");
  narrow.gpus[1].pcie.width_current = 8;
  const auto q = peak({narrow}, gpu_ranks(0, 0, 4));
  ASSERT_TRUE(q.GBps);
  EXPECT_DOUBLE_EQ(*q.GBps, kGen4x16);
  EXPECT_TRUE(contains(q.basis, "GPU1: Gen4 x8 at discovery, below its max")) << q.basis;
}

TEST(ExpectedPeak, ASlowerSlotLowersThePcieBound) {
  auto box = fixtures::pcie_box("box", "NVIDIA A100-PCIE-40GB");
  box.gpus[2].pcie.gen_max = 3;  // a Gen3 slot: the link can never do better
  box.gpus[2].pcie.gen_current = 3;
  const auto p = peak({box}, gpu_ranks(0, 0, 4));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, kGen3x16);
  EXPECT_TRUE(contains(p.basis, "slowest GPU: GPU2")) << p.basis;
  const auto healthy_pair = peak({box}, gpu_ranks(0, 0, 2));  // GPU2 not in the group
  ASSERT_TRUE(healthy_pair.GBps);
  EXPECT_DOUBLE_EQ(*healthy_pair.GBps, kGen4x16);
}

TEST(ExpectedPeak, BridgedPcieCardsUseTheBridgeWithNvmlStyleBusIds) {
  auto box = fixtures::pcie_box("box", "NVIDIA H100 PCIe");
  fixtures::bridge(box, 0, 1, 12);  // three NVLink bridges between GPU0 and GPU1
  const auto pair = peak({box}, gpu_ranks(0, 0, 2));
  ASSERT_TRUE(pair.GBps) << pair.basis;
  EXPECT_DOUBLE_EQ(*pair.GBps, 300.0);  // 12 x 25
  EXPECT_EQ(pair.basis, "NVLink4 12 links x 25 GB/s per direction, H100 PCIe");

  const auto all_four = peak({box}, gpu_ranks(0, 0, 4));  // GPU2, GPU3 have no bridge: PCIe
  ASSERT_TRUE(all_four.GBps) << all_four.basis;
  EXPECT_DOUBLE_EQ(*all_four.GBps, kGen4x16);  // the fixture's Gen4 x16 links
}

TEST(ExpectedPeak, DirectMeshCountsOnlyLinksToTheGroup) {
  // Four H200 NVL cards in a 4-way bridge: 6 links to each of the 3 others (18 per GPU).
  auto box = fixtures::pcie_box("box", "NVIDIA H200 NVL");
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      fixtures::bridge(box, a, b, 6);
    }
  }
  EXPECT_DOUBLE_EQ(*peak({box}, gpu_ranks(0, 0, 4)).GBps, 450.0);  // 18 x 25
  EXPECT_DOUBLE_EQ(*peak({box}, gpu_ranks(0, 0, 2)).GBps, 150.0);  // only the 6 links between GPU0 and GPU1
}

TEST(ExpectedPeak, TwoH100NodesEightRanksEachGetTheNicShare) {
  const std::vector<HostTopology> hosts{hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18),
                                        hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)};
  const auto p = peak(hosts, concat(gpu_ranks(0, 0, 8), gpu_ranks(1, 0, 8)));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 50.0);  // 8 NDR x 50 GB/s / 8 ranks; the 1 Gb/s management port is not counted
  EXPECT_EQ(p.basis,
            "NIC share on node-a: 8 x InfiniBand NDR (4x NDR) (50 GB/s) / 8 ranks = 50 GB/s per direction per rank");
}

// One rank per host has no local peer to relay through NVLink (PXN), so its traffic leaves
// through its own rail: NIC k for GPU k, NDR 50 GB/s, below the GPU's PCIe Gen5 x16 (63.02) and far
// below the 8 x 50 GB/s of all the host's rails.
TEST(ExpectedPeak, TwoH100NodesOneRankEachAreBoundByTheirRail) {
  const std::vector<HostTopology> hosts{hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18),
                                        hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)};
  const auto p = peak(hosts, {RankPlace{0, 3}, RankPlace{1, 3}});
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 50.0);
  EXPECT_EQ(p.basis,
            "rail of GPU3 on node-a: 1 x InfiniBand NDR (4x NDR) (50 GB/s) / 1 rank = 50 GB/s per direction per rank");
}

// Without PCIe paths the rail is the NICs on the GPU's NUMA node; a faster rail leaves the GPU's
// own PCIe link as the bound.
TEST(ExpectedPeak, LoneRankRailByNumaNodeThenCappedByItsPcieLink) {
  std::vector<HostTopology> hosts{hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18),
                                  hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)};
  for (auto& host : hosts) {
    for (auto& nic : host.nics) {
      nic.pci_path.clear();
    }
    for (auto& gpu : host.gpus) {
      gpu.pci_path.clear();
    }
  }
  const auto numa = peak(hosts, {RankPlace{0, 5}, RankPlace{1, 5}});
  ASSERT_TRUE(numa.GBps) << numa.basis;
  EXPECT_DOUBLE_EQ(*numa.GBps, kGen5x16);  // 4 x 50 on node 1, capped by PCIe
  EXPECT_TRUE(contains(numa.basis, "PCIe Gen5 x16 63.0154 GB/s per direction")) << numa.basis;
  EXPECT_TRUE(contains(numa.basis, "GPU5 on node-a's own PCIe link to the NICs")) << numa.basis;
}

TEST(ExpectedPeak, NicDownLowersTheShareAndTheSlowestHostWins) {
  auto a = hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18);
  auto b = hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18);
  b.nics[5].state = "DOWN";
  const auto p = peak({a, b}, concat(gpu_ranks(0, 0, 8), gpu_ranks(1, 0, 8)));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 43.75);  // 7 x 50 / 8
  EXPECT_TRUE(contains(p.basis, "node-b: 7 x InfiniBand NDR (4x NDR)")) << p.basis;
}

TEST(ExpectedPeak, CrossHostIsCappedByTheIntraHostBound) {
  // Four PCIe Gen3-downtrained GPUs per host behind one 200 Gb/s HDR NIC... the NIC share (25/4)
  // is lower; make the PCIe bound the lower one with many NICs instead.
  auto a = fixtures::pcie_box("box-a", "NVIDIA A100-PCIE-40GB");
  auto b = fixtures::pcie_box("box-b", "NVIDIA A100-PCIE-40GB");
  for (auto* host : {&a, &b}) {
    host->nics.clear();
    for (int n = 0; n < 8; ++n) {
      host->nics.push_back(fixtures::ib_nic(n, 800.0));  // 8 x XDR = 800 GB/s, 400 per rank
    }
  }
  b.gpus[1].pcie.gen_current = 3;
  b.gpus[1].pcie.gen_max = 3;  // in a Gen3 slot
  const auto p = peak({a, b}, concat(gpu_ranks(0, 0, 2), gpu_ranks(1, 0, 2)));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, kGen3x16);
  EXPECT_TRUE(contains(p.basis, "GPU1 on box-b")) << p.basis;
}

TEST(ExpectedPeak, RoceAndPlainEthernet) {
  auto a = fixtures::pcie_box("eth-a", "NVIDIA A100-PCIE-40GB");
  auto b = fixtures::pcie_box("eth-b", "NVIDIA A100-PCIE-40GB");
  a.nics = {fixtures::management_nic()};
  a.nics[0].rate_Gbps = 25.0;  // plain 25 GbE, no RDMA device: rate / 8
  b.nics = {fixtures::ib_nic(0, 200.0)};
  b.nics[0].link_layer = "Ethernet";  // RoCE 200
  const auto p = peak({a, b}, {RankPlace{0, -1}, RankPlace{1, -1}});
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 3.125);
  EXPECT_TRUE(contains(p.basis, "Ethernet 25 Gb/s")) << p.basis;
}

TEST(ExpectedPeak, HostMemoryOnOneHostIsUnknown) {
  const auto p = peak({hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18)}, {RankPlace{0, -1}, RankPlace{0, -1}});
  EXPECT_FALSE(p.GBps);
  EXPECT_EQ(p.basis, "host memory: no spec for shared-memory copies");
}

// Host-memory (MPI) ranks do not get the GPUs' rails: only the ports that are no GPU's rail count.
TEST(ExpectedPeak, HostMemoryAcrossHostsGetsTheNonRailPorts) {
  std::vector<HostTopology> hosts{hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18),
                                  hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)};
  for (auto& host : hosts) {
    host.nics.push_back(fixtures::ib_nic(8, 400.0));  // a storage port, on no GPU's PCIe switch
  }
  const auto p = peak(hosts, {RankPlace{0, -1}, RankPlace{0, -1}, RankPlace{1, -1}, RankPlace{1, -1}});
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 25.0);  // 1 x 50 / 2 ranks, not 8 rails x 50 / 2
  EXPECT_EQ(p.basis,
            "NIC share on node-a (ports that are no GPU's rail): 1 x InfiniBand NDR (4x NDR) (50 GB/s) / 2 ranks = 25 "
            "GB/s per direction per rank");
}

TEST(ExpectedPeak, HostMemoryWhereEveryPortIsARailIsUnknown) {
  const std::vector<HostTopology> hosts{hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18),
                                        hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)};
  const auto p = peak(hosts, {RankPlace{0, -1}, RankPlace{1, -1}});
  EXPECT_FALSE(p.GBps) << "not 8 rails x 50 GB/s for one MPI rank";
  EXPECT_TRUE(contains(p.basis, "host memory on node-a: every active port is a GPU's rail")) << p.basis;
}

// The PCIe figure is the encoded line rate; the basis says that data gets near 85-90% of it.
TEST(ExpectedPeak, PcieBasisSaysPacketOverheadKeepsDataBelowTheLineRate) {
  const auto p = peak({fixtures::pcie_box("box", "NVIDIA A100-PCIE-40GB")}, gpu_ranks(0, 0, 2));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_TRUE(contains(p.basis, "packet overhead")) << p.basis;
  EXPECT_TRUE(contains(p.basis, "85-90%")) << p.basis;
}

// A peak is never invented: an unknown GPU model gives null, inside a host and across hosts.
TEST(ExpectedPeak, UnknownGpuModelIsNull) {
  const auto inside = peak({fixtures::pcie_box("box", "NVIDIA GeForce RTX 4090")}, gpu_ranks(0, 0, 4));
  EXPECT_FALSE(inside.GBps);
  EXPECT_TRUE(contains(inside.basis, "GPU model \"NVIDIA GeForce RTX 4090\" is not in the spec database"))
      << inside.basis;

  auto mixed = hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18);
  mixed.gpus[0].name = "Tesla V100-SXM2-32GB";
  const auto across =
      peak({hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18), mixed}, concat(gpu_ranks(0, 0, 8), gpu_ranks(1, 0, 8)));
  EXPECT_FALSE(across.GBps);
  EXPECT_TRUE(contains(across.basis, "GPU0 on node-b")) << across.basis;
}

TEST(ExpectedPeak, MissingPiecesAreNull) {
  auto box = fixtures::pcie_box("box", "NVIDIA A100-PCIE-40GB");
  box.gpus[1].pcie = PciLink{};  // discovery could not read the link
  const auto no_pcie = peak({box}, gpu_ranks(0, 0, 4));
  EXPECT_FALSE(no_pcie.GBps);
  EXPECT_TRUE(contains(no_pcie.basis, "GPU1: PCIe link generation/width not known")) << no_pcie.basis;

  auto unnamed_peer = hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18);
  unnamed_peer.gpus[4].nvlinks[0].peer = NvLinkPeer::Unknown;  // NVML could not say what is at the far end
  const auto no_peer = peak({unnamed_peer}, gpu_ranks(0, 0, 8));
  EXPECT_FALSE(no_peer.GBps) << "not a silent fall-back to PCIe";
  EXPECT_TRUE(contains(no_peer.basis, "GPU4: NVLink 0 is active but its peer is not known")) << no_peer.basis;

  auto a = hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18);
  a.nics[2].rate_Gbps = 0.0;
  const auto no_rate =
      peak({a, hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)}, concat(gpu_ranks(0, 0, 8), gpu_ranks(1, 0, 8)));
  EXPECT_FALSE(no_rate.GBps);
  EXPECT_TRUE(contains(no_rate.basis, "NIC mlx5_2 on node-a: rate not known")) << no_rate.basis;

  auto fdr = hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18);
  fdr.nics[0].rate_Gbps = 56.0;
  EXPECT_FALSE(peak({fdr, hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)}, {RankPlace{0, 0}, RankPlace{1, 0}}).GBps);

  auto no_nics = hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18);
  no_nics.nics.clear();
  EXPECT_FALSE(
      peak({no_nics, hgx_node("node-b", "NVIDIA H100 80GB HBM3", 18)}, {RankPlace{0, 0}, RankPlace{1, 0}}).GBps);
}

TEST(ExpectedPeak, OneRankOrBadPlacesAreNull) {
  const std::vector<HostTopology> hosts{hgx_node("node-a", "NVIDIA H100 80GB HBM3", 18)};
  const auto one = peak(hosts, {RankPlace{0, 0}});
  EXPECT_FALSE(one.GBps);
  EXPECT_EQ(one.basis, "one rank: no link");
  EXPECT_FALSE(peak(hosts, {}).GBps);
  EXPECT_FALSE(peak(hosts, {RankPlace{0, 0}, RankPlace{1, 0}}).GBps);
  EXPECT_FALSE(peak(hosts, {RankPlace{0, 0}, RankPlace{0, 8}}).GBps);
  EXPECT_FALSE(peak(hosts, {RankPlace{0, 3}, RankPlace{0, 3}}).GBps);  // both ranks on one GPU
}

TEST(ExpectedPeak, B200NodeIsNvlink900) {
  const auto p = peak({hgx_node("node-a", "NVIDIA B200", 18)}, gpu_ranks(0, 0, 8));
  ASSERT_TRUE(p.GBps) << p.basis;
  EXPECT_DOUBLE_EQ(*p.GBps, 900.0);  // 18 x 50 GB/s
  EXPECT_EQ(p.basis, "NVLink5 18 links x 50 GB/s per direction, B200");
}

// An RDMA pair: the slower port bounds it; a port the database does not rate leaves the peak unknown,
// named (the values of a 400G NDR port and a 200G RoCE port, as ibv_query_port reports them).
RdmaEndpoint port_of(std::string host, std::string device, std::string link_layer, std::optional<double> rate_Gbps) {
  RdmaEndpoint e;
  e.host = std::move(host);
  e.device = std::move(device);
  e.link_layer = std::move(link_layer);
  e.rate_Gbps = rate_Gbps;
  return e;
}

TEST(RdmaPairPeak, SlowerPortBoundsAndAnUnratedPortIsNamed) {
  const RdmaEndpoint ndr = port_of("a", "mlx5_0", "InfiniBand", 400);
  const RdmaEndpoint roce = port_of("b", "mlx5_1", "Ethernet", 200);
  Peak p = rdma_pair_peak(db(), {ndr, roce});
  ASSERT_TRUE(p.GBps);
  EXPECT_DOUBLE_EQ(*p.GBps, 25.0);
  EXPECT_EQ(p.basis, db().nic(200, "Ethernet")->name + " (mlx5_1 port 1 on b)");
  RdmaEndpoint rxe = port_of("b", "rxe0", "Ethernet", std::nullopt);
  p = rdma_pair_peak(db(), {ndr, rxe});
  EXPECT_FALSE(p.GBps);
  EXPECT_EQ(p.basis, "rxe0 port 1 on b: its rate is unknown, which is not a rated port in the spec database");
  rxe.rate_Gbps = 10;
  EXPECT_EQ(rdma_pair_peak(db(), {ndr, rxe}).basis,
            "rxe0 port 1 on b: Ethernet 10 Gb/s is not a rated port in the spec database");
}

}  // namespace
}  // namespace ccbench::topo
