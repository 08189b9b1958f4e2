// The connection matrix and the warnings on fixtures whose layout comes from public
// `nvidia-smi topo -m` outputs (tests/data/topo/README.md). Expected cells are written by hand
// from those outputs.
#include "ccbench/topo/matrix.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures.hpp"

namespace ccbench::topo {
namespace {

using test::dgx_h100;
using test::h800;
using test::pcie_4gpu;

std::string cell(const HostTopology& host, DeviceRef a, DeviceRef b) { return connection(host, a, b); }

int nic_index(const HostTopology& host, const std::string& name) {
  for (std::size_t i = 0; i < host.nics.size(); ++i) {
    if (host.nics[i].name == name) {
      return static_cast<int>(i);
    }
  }
  throw std::out_of_range("no NIC " + name);
}

// --- DGX H100 (vllm-project/vllm#6746; DGX H100 User Guide network ports) ---

TEST(DgxH100Matrix, EveryGpuPairIsNv18ThroughNvSwitch) {
  const auto host = dgx_h100();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(cell(host, gpu_ref(a), gpu_ref(b)), a == b ? "X" : "NV18") << "GPU" << a << " GPU" << b;
    }
  }
}

TEST(DgxH100Matrix, EachGpuIsPxbToItsOwnComputeNic) {
  const auto host = dgx_h100();
  const std::vector<std::string> own{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(cell(host, gpu_ref(g), nic_ref(nic_index(host, own[static_cast<std::size_t>(g)]))), "PXB") << g;
  }
}

TEST(DgxH100Matrix, RowOfGpu0MatchesPublishedTopoM) {
  // vllm#6746, row GPU0: NIC0 PXB, NIC1..NIC5 NODE, NIC6..NIC11 SYS.
  const auto host = dgx_h100();
  const std::vector<std::string> expected{"PXB", "NODE", "NODE", "NODE", "NODE", "NODE",
                                          "SYS", "SYS",  "SYS",  "SYS",  "SYS",  "SYS"};
  ASSERT_EQ(host.nics.size(), expected.size());
  for (std::size_t n = 0; n < expected.size(); ++n) {
    EXPECT_EQ(cell(host, gpu_ref(0), nic_ref(static_cast<int>(n))), expected[n]) << "NIC" << n;
  }
  EXPECT_EQ(cell(host, gpu_ref(0), nic_ref(nic_index(host, "mlx5_6"))), "SYS");  // GPU4's NIC, other socket
  EXPECT_EQ(cell(host, gpu_ref(4), nic_ref(nic_index(host, "mlx5_6"))), "PXB");
  EXPECT_EQ(cell(host, gpu_ref(5), nic_ref(nic_index(host, "mlx5_6"))), "NODE");
}

TEST(DgxH100Matrix, StoragePortsOfOneCardArePix) {
  const auto host = dgx_h100();
  EXPECT_EQ(cell(host, nic_ref(nic_index(host, "mlx5_1")), nic_ref(nic_index(host, "mlx5_2"))), "PIX");
  EXPECT_EQ(cell(host, nic_ref(nic_index(host, "mlx5_7")), nic_ref(nic_index(host, "mlx5_8"))), "PIX");
  EXPECT_EQ(cell(host, nic_ref(nic_index(host, "mlx5_0")), nic_ref(nic_index(host, "mlx5_1"))), "NODE");
  EXPECT_EQ(cell(host, nic_ref(nic_index(host, "mlx5_0")), nic_ref(nic_index(host, "mlx5_7"))), "SYS");
}

TEST(DgxH100Matrix, MatrixIsSquareSymmetricWithSelfOnTheDiagonal) {
  const auto host = dgx_h100();
  const auto m = connection_matrix(host);
  ASSERT_EQ(m.devices.size(), 20U);
  EXPECT_EQ(m.labels.front(), "GPU0");
  EXPECT_EQ(m.labels[8], "NIC0");
  for (std::size_t i = 0; i < m.cells.size(); ++i) {
    ASSERT_EQ(m.cells[i].size(), m.devices.size());
    for (std::size_t j = 0; j < m.cells.size(); ++j) {
      EXPECT_EQ(m.cells[i][j], m.cells[j][i]);
      EXPECT_EQ(m.cells[i][j] == "X", i == j);
    }
  }
}

TEST(DgxH100Warnings, HealthyNodeHasNone) { EXPECT_TRUE(warnings(dgx_h100()).empty()); }

TEST(DgxH100Warnings, LinkDownAndPortDownAreNamed) {
  auto host = dgx_h100();
  host.gpus[3].nvlinks[5].active = false;
  const int nic = nic_index(host, "mlx5_5");
  host.nics[static_cast<std::size_t>(nic)].state = "DOWN";
  EXPECT_EQ(cell(host, gpu_ref(3), gpu_ref(0)), "NV17");
  EXPECT_EQ(cell(host, gpu_ref(1), gpu_ref(0)), "NV18");
  const auto found = warnings(host);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].kind, WarningKind::NvLinkDown);
  EXPECT_EQ(found[0].device, gpu_ref(3));
  EXPECT_EQ(found[0].message,
            "GPU3 (0000:61:00.0, NVIDIA H100 80GB HBM3): NVLink 5 is inactive while 17 others are active");
  EXPECT_EQ(found[1].kind, WarningKind::NicNotActive);
  EXPECT_EQ(found[1].device, nic_ref(nic));
  EXPECT_EQ(found[1].message, "NIC5 (mlx5_5, 0000:5e:00.0): port state DOWN, not active");
}

// --- H800 (NVIDIA/nccl#933) ---

TEST(H800Matrix, EveryGpuPairIsNv8) {
  const auto host = h800();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(cell(host, gpu_ref(a), gpu_ref(b)), a == b ? "X" : "NV8");
    }
  }
}

TEST(H800Matrix, GpuRowsMatchPublishedTopoM) {
  // nccl#933: rows GPU0, GPU1 and GPU4 over NIC0..NIC8.
  const auto host = h800();
  const std::vector<std::vector<std::string>> rows{
      {"NODE", "SYS", "PIX", "SYS", "NODE", "SYS", "NODE", "SYS", "NODE"},
      {"NODE", "SYS", "NODE", "SYS", "PIX", "SYS", "NODE", "SYS", "NODE"},
      {"SYS", "PIX", "SYS", "NODE", "SYS", "NODE", "SYS", "NODE", "SYS"},
  };
  const std::vector<int> gpus{0, 1, 4};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t n = 0; n < rows[r].size(); ++n) {
      EXPECT_EQ(cell(host, gpu_ref(gpus[r]), nic_ref(static_cast<int>(n))), rows[r][n])
          << "GPU" << gpus[r] << " NIC" << n;
    }
  }
  EXPECT_EQ(cell(host, gpu_ref(3), nic_ref(8)), "PIX");
  EXPECT_EQ(cell(host, gpu_ref(6), nic_ref(5)), "PIX");
}

TEST(H800Warnings, NoneWhenStatesAreUnknown) { EXPECT_TRUE(warnings(h800()).empty()); }

// --- 4x A100 PCIe (layout of lattice/quda#669; GPU1 trained down to x8) ---

TEST(PcieBoxMatrix, PairsUnderOneSwitchArePixAcrossSocketsSys) {
  const auto host = pcie_4gpu();
  EXPECT_EQ(cell(host, gpu_ref(0), gpu_ref(1)), "PIX");
  EXPECT_EQ(cell(host, gpu_ref(2), gpu_ref(3)), "PIX");
  EXPECT_EQ(cell(host, gpu_ref(0), gpu_ref(2)), "SYS");
  EXPECT_EQ(cell(host, gpu_ref(1), gpu_ref(3)), "SYS");
  EXPECT_EQ(cell(host, gpu_ref(2), nic_ref(0)), "PHB");
  EXPECT_EQ(cell(host, gpu_ref(3), nic_ref(0)), "PHB");
  EXPECT_EQ(cell(host, gpu_ref(0), nic_ref(0)), "SYS");
}

TEST(PcieBoxWarnings, DowntrainedGpuAndGpusFarFromTheNic) {
  const auto found = warnings(pcie_4gpu());
  ASSERT_EQ(found.size(), 3U);
  EXPECT_EQ(found[0].kind, WarningKind::PcieBelowMax);
  EXPECT_EQ(found[0].device, gpu_ref(1));
  EXPECT_EQ(found[0].message,
            "GPU1 (0000:1b:00.0, NVIDIA A100 80GB PCIe): PCIe link runs at Gen4 x8, below the Gen4 x16 it supports");
  EXPECT_EQ(found[1].kind, WarningKind::NoLocalNic);
  EXPECT_EQ(found[1].device, gpu_ref(0));
  EXPECT_EQ(found[1].message,
            "GPU0 (0000:1a:00.0, NVIDIA A100 80GB PCIe): no NIC on its NUMA node 0 (socket 0); its network traffic "
            "crosses the CPU interconnect");
  EXPECT_EQ(found[2].kind, WarningKind::NoLocalNic);
  EXPECT_EQ(found[2].device, gpu_ref(1));
}

TEST(PcieBoxWarnings, GenerationBelowMaxMentionsIdlePowerSaving) {
  auto host = pcie_4gpu();
  host.gpus[1].pcie.width_current = 16;
  host.gpus[2].pcie.gen_current = 1;
  const auto found = warnings(host);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].device, gpu_ref(2));
  EXPECT_NE(found[0].message.find("Gen1 x16, below the Gen4 x16"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("check under load"), std::string::npos);
}

// --- rules on small hand-made hosts ---

HostTopology two_gpus_linked(int direct_links) {
  HostTopology host;
  host.numa_nodes = {NumaNode{0, {0}, 0, 0}};
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.bus_id = i == 0 ? "0000:01:00.0" : "0000:02:00.0";
    g.numa_node = 0;
    g.pci_path = {i == 0 ? "0000:00:01.0" : "0000:00:02.0"};
    host.gpus.push_back(g);
  }
  for (int l = 0; l < direct_links; ++l) {
    host.gpus[0].nvlinks.push_back({l, true, 3, NvLinkPeer::Gpu, "0000:02:00.0"});
    host.gpus[1].nvlinks.push_back({l, true, 3, NvLinkPeer::Gpu, "0000:01:00.0"});
  }
  return host;
}

TEST(ConnectionRules, DirectNvLinksCountPerPair) {
  EXPECT_EQ(connection(two_gpus_linked(4), gpu_ref(0), gpu_ref(1)), "NV4");
  EXPECT_EQ(connection(two_gpus_linked(0), gpu_ref(0), gpu_ref(1)), "PHB");  // two root ports of one host bridge
}

TEST(ConnectionRules, UnknownNumaAcrossHostBridgesIsNode) {
  auto host = two_gpus_linked(0);
  host.gpus[1].pci_path = {"0000:80:01.0"};
  host.gpus[1].bus_id = "0000:81:00.0";
  EXPECT_EQ(connection(host, gpu_ref(0), gpu_ref(1)), "NODE");
  host.gpus[1].numa_node = 1;
  EXPECT_EQ(connection(host, gpu_ref(0), gpu_ref(1)), "SYS");
}

TEST(ConnectionRules, IndexOutsideTheHostThrows) {
  const auto host = two_gpus_linked(0);
  EXPECT_THROW((void)connection(host, gpu_ref(0), gpu_ref(2)), std::out_of_range);
  EXPECT_THROW((void)connection(host, nic_ref(0), gpu_ref(0)), std::out_of_range);
}

TEST(ConnectionRules, LegendHasEveryCode) {
  std::vector<std::string> codes;
  for (const auto& entry : connection_legend()) {
    codes.emplace_back(entry.code);
  }
  EXPECT_EQ(codes, (std::vector<std::string>{"X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#"}));
}

}  // namespace
}  // namespace ccbench::topo
