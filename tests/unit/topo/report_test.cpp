#include "ccbench/topo/topo_report.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ccbench::topo {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Report, PcieBoxShowsMatrixAffinityAndWarnings) {
  const auto text = format_report(test::pcie_4gpu());
  EXPECT_TRUE(has(text, "Host: pcie-4gpu\n")) << text;
  EXPECT_TRUE(has(text, "  NUMA node 1: socket 1, CPUs 14-27 (14), memory unknown\n")) << text;
  EXPECT_TRUE(has(text,
                  "  GPU1  NVIDIA A100 80GB PCIe  0000:1b:00.0  80.0 GiB  PCIe Gen4 x8 (max Gen4 x16)  no NVLink  "
                  "NUMA 0\n"))
      << text;
  EXPECT_TRUE(has(text, "  NIC0  mlx5_0  netdev ib0  0000:8a:00.0  200 Gb/s  ACTIVE  InfiniBand  NUMA 1\n")) << text;
  EXPECT_TRUE(has(text, "GPU0  X     PIX   SYS   SYS   SYS   0-13          0\n")) << text;
  EXPECT_TRUE(has(text, "NIC0  SYS   SYS   PHB   PHB   X\n")) << text;
  EXPECT_TRUE(has(text, "  NV#  = Connection traversing a bonded set of # NVLinks\n")) << text;
  EXPECT_TRUE(has(text, "  NIC0: mlx5_0\n")) << text;
  EXPECT_TRUE(has(text, "Warnings (3):\n  - [pcie_below_max] GPU1 (0000:1b:00.0")) << text;
}

TEST(Report, DgxH100ShowsNvLinksAndNoWarnings) {
  const auto text = format_report(test::dgx_h100());
  EXPECT_TRUE(has(text, "NVLink 18/18 active (NVLink4)  NUMA 0\n")) << text;
  EXPECT_TRUE(has(text, "GPU0   X      NV18   NV18")) << text;
  EXPECT_TRUE(has(text, "Warnings: none\n")) << text;
}

TEST(Report, NoGpuSaysSoPlainly) {
  HostTopology host;
  host.hostname = "cpu-only";
  host.numa_nodes = {NumaNode{0, {0, 1}, 0, 0}};
  host.sockets = 1;
  host.gpu_discovery = "no GPU found: libnvidia-ml.so.1 not available (no NVIDIA driver)";
  const auto text = format_report(host);
  EXPECT_TRUE(has(text, "GPUs: no GPU found: libnvidia-ml.so.1 not available (no NVIDIA driver)\n")) << text;
  EXPECT_TRUE(has(text, "NICs: none found")) << text;
  EXPECT_TRUE(has(text, "Connection matrix: none (no GPU)\n")) << text;
  EXPECT_TRUE(has(text, "Warnings: none\n")) << text;
}

}  // namespace
}  // namespace ccbench::topo
