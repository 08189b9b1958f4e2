// copy_bench's plan on the fixture topologies of tests/data/topo: which copies, their names, and the
// spec each is set against (PCIe generation x width, HBM, NVLink or PCIe between two GPUs).
#include "copy_paths.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "ccbench/errors.hpp"
#include "ccbench/topo/topology_json.hpp"

namespace ccbench::copy {
namespace {

topo::HostTopology load(const std::string& file) {
  std::ifstream in(std::string(CCBENCH_TOPO_DATA_DIR) + "/" + file);
  return topo::host_topology_from_json(nlohmann::json::parse(in));
}

std::vector<std::vector<bool>> all_peers(int n) {
  std::vector<std::vector<bool>> m(static_cast<std::size_t>(n), std::vector<bool>(static_cast<std::size_t>(n), true));
  return m;
}

std::vector<int> identity(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(i);
  }
  return v;
}

TEST(CopyPlan, EveryPathOfEightGpusOnceWithItsName) {
  const auto paths = plan_paths(parse_selection("all", "all", "all", 8), all_peers(8));
  std::set<std::string> ids;
  for (const auto& p : paths) {
    EXPECT_TRUE(ids.insert(p.id()).second) << "twice: " << p.id();
  }
  // per GPU: h2d and d2h x pinned/pageable (4), d2d x ce/sm (2); per ordered pair uni x 2 engines;
  // per unordered pair bidir x 2 engines
  EXPECT_EQ(paths.size(), 8U * 6U + 56U * 2U + 28U * 2U);
  EXPECT_TRUE(ids.contains("h2d:pinned:gpu0"));
  EXPECT_TRUE(ids.contains("d2h:pageable:gpu7"));
  EXPECT_TRUE(ids.contains("d2d:sm:gpu3"));
  EXPECT_TRUE(ids.contains("p2p:ce:uni:gpu7-gpu0"));
  EXPECT_TRUE(ids.contains("p2p:sm:bidir:gpu0-gpu7"));
  EXPECT_FALSE(ids.contains("p2p:sm:bidir:gpu7-gpu0"));  // one bidirectional path per pair
}

TEST(CopyPlan, SmCopiesBetweenGpusNeedPeerAccessCopyEnginesDoNot) {
  std::vector<std::vector<bool>> none(2, std::vector<bool>(2, false));
  const auto paths = plan_paths(parse_selection("p2p", "all", "all", 2), none);
  std::set<std::string> ids;
  for (const auto& p : paths) {
    ids.insert(p.id());
  }
  EXPECT_EQ(ids, (std::set<std::string>{"p2p:ce:uni:gpu0-gpu1", "p2p:ce:uni:gpu1-gpu0", "p2p:ce:bidir:gpu0-gpu1"}));
}

TEST(CopyPlan, SelectionsAndTheirErrors) {
  const auto s = parse_selection("h2d,d2d", "sm", "1,3", 4);
  EXPECT_TRUE(s.h2d && s.d2d && !s.d2h && !s.p2p && s.sm && !s.ce);
  EXPECT_EQ(s.devices, (std::vector<int>{1, 3}));
  // h2d is a copy-engine path only: with --engines sm nothing of it is left
  const auto paths = plan_paths(s, all_peers(4));
  ASSERT_EQ(paths.size(), 2U);
  EXPECT_EQ(paths[0].id(), "d2d:sm:gpu1");
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> bad{
      {"h2x", "all", "all", "'h2x' is not one of h2d, d2h, d2d, p2p"},
      {"all", "dma", "all", "'dma' is not ce (copy engine) or sm"},
      {"all", "all", "4", "'4' is not a CUDA device here (0..3)"},
      {"all", "all", "1,1", "device 1 is listed twice"},
      {"all", "all", "-1", "'-1' is not a CUDA device here"},
  };
  for (const auto& [k, e, d, want] : bad) {
    try {
      (void)parse_selection(k, e, d, 4);
      ADD_FAILURE() << "accepted " << k << " " << e << " " << d;
    } catch (const UsageError& err) {
      EXPECT_NE(std::string(err.what()).find(want), std::string::npos) << err.what();
    }
  }
}

TEST(CopyPlan, PeaksFromTheSpecDatabaseOnTheDgxH100Fixture) {
  const auto host = load("dgx_h100.json");
  const auto& specs = topo::SpecDatabase::builtin();
  const auto peak = [&](const Path& p) { return copy_peak(p, specs, host, identity(8)); };
  const auto h2d = peak({Kind::H2D, Engine::CopyEngine, HostMemory::Pinned, false, 0, 0});
  ASSERT_TRUE(h2d.GBps) << h2d.basis;
  EXPECT_NEAR(*h2d.GBps, specs.pcie(5, 16)->GBps, 1e-9);
  EXPECT_NE(h2d.basis.find("Gen5 x16"), std::string::npos) << h2d.basis;
  const auto d2d = peak({Kind::D2D, Engine::Sm, HostMemory::Pinned, false, 0, 0});
  ASSERT_TRUE(d2d.GBps) << d2d.basis;
  EXPECT_NEAR(*d2d.GBps, specs.find_gpu("NVIDIA H100 80GB HBM3")->hbm_GBps, 1e-9);
  const auto uni = peak({Kind::P2P, Engine::CopyEngine, HostMemory::Pinned, false, 0, 5});
  const auto bidir = peak({Kind::P2P, Engine::CopyEngine, HostMemory::Pinned, true, 0, 5});
  ASSERT_TRUE(uni.GBps && bidir.GBps) << uni.basis;
  EXPECT_NEAR(*uni.GBps, specs.find_gpu("NVIDIA H100 80GB HBM3")->nvlink_total_GBps, 1e-9) << uni.basis;
  EXPECT_NEAR(*bidir.GBps, 2.0 * *uni.GBps, 1e-9);
  const Path d2d_path{Kind::D2D, Engine::CopyEngine, HostMemory::Pinned, false, 0, 0};
  EXPECT_DOUBLE_EQ(d2d_path.bus_factor(), 2.0);
  const Path both_ways{Kind::P2P, Engine::Sm, HostMemory::Pinned, true, 0, 1};
  EXPECT_EQ(both_ways.bytes_moved(100), 200U);
}

// An idle GPU trains its link down (H100: Gen1 when idle) and discovery runs before the copies: the peak is
// the link's max, and the basis says what discovery saw.
TEST(CopyPlan, HostCopyPeakIsTheLinksMaxNotItsIdleGeneration) {
  auto host = load("dgx_h100.json");
  host.gpus[2].pcie.gen_current = 1;
  const auto& specs = topo::SpecDatabase::builtin();
  const auto peak =
      copy_peak({Kind::D2H, Engine::CopyEngine, HostMemory::Pageable, false, 2, 2}, specs, host, identity(8));
  ASSERT_TRUE(peak.GBps) << peak.basis;
  EXPECT_NEAR(*peak.GBps, specs.pcie(5, 16)->GBps, 1e-9);
  EXPECT_NE(peak.basis.find("Gen1 x16 at discovery, below its max"), std::string::npos) << peak.basis;
}

TEST(CopyPlan, PcieOnlyGpusAndUnknownGpusOnTheFixtures) {
  const auto& specs = topo::SpecDatabase::builtin();
  const auto pcie = load("pcie_4gpu.json");
  const auto p2p =
      copy_peak({Kind::P2P, Engine::CopyEngine, HostMemory::Pinned, false, 0, 1}, specs, pcie, identity(4));
  ASSERT_TRUE(p2p.GBps) << p2p.basis;
  EXPECT_NEAR(*p2p.GBps, specs.pcie(4, 16)->GBps, 1e-9) << p2p.basis;
  // a CUDA device that discovery did not find: no peak, and the basis says why
  const auto unknown =
      copy_peak({Kind::H2D, Engine::CopyEngine, HostMemory::Pinned, false, 0, 0}, specs, pcie, {-1, 1, 2, 3});
  EXPECT_FALSE(unknown.GBps);
  EXPECT_NE(unknown.basis.find("GPU 0 is not in the discovered topology"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::copy
