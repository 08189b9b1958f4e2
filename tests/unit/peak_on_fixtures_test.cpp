// Expected peak per split on the fixture topologies of tests/data/topo (their
// sources are in its README.md): the groups come from plan_groups, exactly as --split forms
// them, with local rank k on GPU k. Every value below is computed by hand in its comment.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "ccbench/groups.hpp"
#include "ccbench/topo/peak.hpp"
#include "ccbench/topo/topology_json.hpp"

namespace ccbench {
namespace {

topo::HostTopology load(const std::string& file, const std::string& hostname) {
  std::ifstream in(std::string(CCBENCH_TOPO_DATA_DIR) + "/" + file);
  EXPECT_TRUE(in.good()) << file;
  topo::HostTopology host = topo::host_topology_from_json(nlohmann::json::parse(in));
  host.hostname = hostname;
  return host;
}

struct Cluster {
  std::vector<topo::HostTopology> hosts;
  std::vector<HostInfo> layout;  // ranks by slot: host 0 gets 0..k-1, host 1 k..2k-1, ...
};

Cluster cluster(const std::string& file, int nhosts, int ranks_per_host, bool gpus = true) {
  Cluster c;
  for (int h = 0; h < nhosts; ++h) {
    c.hosts.push_back(load(file, "host" + std::to_string(h)));
    if (!gpus) {
      c.hosts.back().gpus.clear();
    }
    HostInfo info{"host" + std::to_string(h), {}};
    for (int k = 0; k < ranks_per_host; ++k) {
      info.ranks.push_back(h * ranks_per_host + k);
    }
    c.layout.push_back(info);
  }
  return c;
}

/// The peak of every group of the split, by group id; checked to be the same for all seven benches.
std::map<std::string, std::optional<double>> peaks(const Cluster& c, Split split, bool host_memory = false) {
  std::map<std::string, std::optional<double>> out;
  for (const auto& g : plan_groups(split, c.layout)) {
    std::vector<topo::RankPlace> places;
    for (int r : g.ranks) {
      for (std::size_t h = 0; h < c.layout.size(); ++h) {
        const auto& ranks = c.layout[h].ranks;
        const auto it = std::find(ranks.begin(), ranks.end(), r);
        if (it != ranks.end()) {
          places.push_back({static_cast<int>(h), host_memory ? -1 : static_cast<int>(it - ranks.begin())});
        }
      }
    }
    const auto& specs = topo::SpecDatabase::builtin();
    out[g.id] = topo::expected_peak(specs, c.hosts, places).GBps;
  }
  return out;
}

using Peaks = std::map<std::string, std::optional<double>>;

TEST(PeakOnFixtures, DgxH100OneNode) {
  const Cluster c = cluster("dgx_h100.json", 1, 8);
  EXPECT_EQ(peaks(c, Split::World), (Peaks{{"world", 450.0}}));  // NVLink4 18 x 25 GB/s via NVSwitch
  EXPECT_EQ(peaks(c, Split::Node), (Peaks{{"node:host0", 450.0}}));
  // Any two GPUs reach each other through the NVSwitches with all 18 links.
  EXPECT_EQ(peaks(c, Split::Pairs),
            (Peaks{{"pair:0-1", 450.0}, {"pair:2-3", 450.0}, {"pair:4-5", 450.0}, {"pair:6-7", 450.0}}));
}

TEST(PeakOnFixtures, DgxH100TwoNodes) {
  const Cluster c = cluster("dgx_h100.json", 2, 8);
  // 16 ranks across hosts: 8 compute NDR rails x 50 GB/s / 8 ranks per host = 50 (the 4 storage
  // ports share no PCIe switch with a GPU and do not count).
  EXPECT_EQ(peaks(c, Split::World), (Peaks{{"world", 50.0}}));
  EXPECT_EQ(peaks(c, Split::Node), (Peaks{{"node:host0", 450.0}, {"node:host1", 450.0}}));
  // One rank per host: no other local GPU can relay (PXN), so the rank's traffic leaves through
  // its rail, the NDR port on its GPU's PCIe switch: 50 GB/s, not 8 x 50 / 1 (nor its 63 GB/s PCIe).
  EXPECT_EQ(peaks(c, Split::CrossNode), (Peaks{{"cross-node", 50.0}}));
  Peaks rails;
  for (int k = 0; k < 8; ++k) {
    rails["rail:" + std::to_string(k)] = 50.0;  // the same: one rank per host in each rail
  }
  EXPECT_EQ(peaks(c, Split::Rail), rails);
  // Host-memory ranks do not get the rails: the 4 storage ports x 50 / 2 ranks per host = 100.
  EXPECT_EQ(peaks(cluster("dgx_h100.json", 2, 2), Split::World, true), (Peaks{{"world", 100.0}}));
}

TEST(PeakOnFixtures, H800Node) {
  const Cluster c = cluster("h800_nvlink8.json", 1, 8);
  EXPECT_EQ(peaks(c, Split::World), (Peaks{{"world", 200.0}}));  // 8 links x 25 GB/s
  EXPECT_EQ(peaks(c, Split::Pairs).at("pair:6-7"), 200.0);
  // Across two H800 hosts the NIC rates are not in the public matrix (rate 0 = unknown): no peak.
  const Cluster two = cluster("h800_nvlink8.json", 2, 8);
  EXPECT_EQ(peaks(two, Split::World), (Peaks{{"world", std::nullopt}}));
  EXPECT_EQ(peaks(two, Split::Node), (Peaks{{"node:host0", 200.0}, {"node:host1", 200.0}}));
}

TEST(PeakOnFixtures, FourGpuPcieBox) {
  const Cluster c = cluster("pcie_4gpu.json", 1, 4);
  // No NVLink: PCIe Gen4 x16 = 16 GT/s x 128/130 / 8 x 16 = 31.51 GB/s per direction. GPU1 runs at
  // x8 in an x16 slot: the peak stays the link's spec, so the downtrained GPU shows as a low %peak.
  constexpr double kGen4x16 = 16.0 * 128 / 130 / 8 * 16;
  EXPECT_EQ(peaks(c, Split::World), (Peaks{{"world", kGen4x16}}));
  EXPECT_EQ(peaks(c, Split::Pairs), (Peaks{{"pair:0-1", kGen4x16}, {"pair:2-3", kGen4x16}}));
  const Cluster two = cluster("pcie_4gpu.json", 2, 4);
  // One HDR 200 Gb/s port (25 GB/s) per box, shared by its 4 ranks: 6.25.
  EXPECT_EQ(peaks(two, Split::World), (Peaks{{"world", 6.25}}));
  // One rank per box: 25 / 1 = 25, below its PCIe Gen4 x16 (31.51).
  EXPECT_EQ(peaks(two, Split::CrossNode), (Peaks{{"cross-node", 25.0}}));
}

TEST(PeakOnFixtures, NeverInvented) {
  // A GPU the database does not know: no peak, whatever the split.
  Cluster c = cluster("dgx_h100.json", 1, 8);
  for (auto& g : c.hosts[0].gpus) {
    g.name = "NVIDIA GeForce RTX 4090";
  }
  EXPECT_EQ(peaks(c, Split::World), (Peaks{{"world", std::nullopt}}));
  EXPECT_EQ(peaks(c, Split::Pairs).at("pair:0-1"), std::nullopt);
  // Host memory inside one host: no spec for shared-memory copies.
  EXPECT_EQ(peaks(cluster("dgx_h100.json", 1, 4, false), Split::World, true), (Peaks{{"world", std::nullopt}}));
}

}  // namespace
}  // namespace ccbench
