#include "ccbench/topo/topology_json.hpp"

#include <gtest/gtest.h>

#include "ccbench/topo/cpulist.hpp"
#include "fixtures.hpp"

namespace ccbench::topo {
namespace {

using nlohmann::json;

class FixtureRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(FixtureRoundTrip, JsonToHostToJsonIsExact) {
  const auto document = test::fixture_json(GetParam());
  const auto host = host_topology_from_json(document);
  EXPECT_EQ(to_json(host), document);
  EXPECT_EQ(to_json(host_topology_from_json(to_json(host))), document);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureRoundTrip,
                         ::testing::Values("dgx_h100.json", "h800_nvlink8.json", "pcie_4gpu.json"));

TEST(TopologyJson, FieldsSurviveTheRoundTrip) {
  HostTopology host;
  host.hostname = "n1";
  host.cpu_model = "CPU";
  host.sockets = 2;
  host.numa_nodes = {NumaNode{1, {0, 1, 2, 7}, 123456789012ULL, 1}};
  Gpu g;
  g.index = 3;
  g.name = "NVIDIA H100 80GB HBM3";
  g.bus_id = "0000:1b:00.0";
  g.memory_bytes = 85520809984ULL;
  g.numa_node = 1;
  g.pcie = {4, 5, 8, 16};
  g.nvlinks = {{0, true, 4, NvLinkPeer::NvSwitch, ""},
               {1, false, 0, NvLinkPeer::Unknown, ""},
               {2, true, 3, NvLinkPeer::Gpu, "0000:43:00.0"},
               {3, true, 2, NvLinkPeer::Cpu, "0000:00:00.0"}};
  g.pci_path = {"0000:15:01.0", "0000:16:00.0"};
  host.gpus = {g};
  host.nics = {Nic{"mlx5_0", "ibp24s0", "0000:18:00.0", 1, 400.0, "ACTIVE", "InfiniBand", {"0000:15:01.0"}},
               Nic{"rxe0", "eth0", "", -1, 12.5, "DOWN", "Ethernet", {}}};
  host.gpu_discovery = "NVML, driver 560.35.03, 1 GPU";

  const auto j = to_json(host);
  EXPECT_EQ(j.at("gpus").at(0).at("memory_bytes"), 85520809984ULL);
  EXPECT_EQ(j.at("nics").at(0).at("rate_Gbps"), 400.0);
  EXPECT_EQ(j.at("numa_nodes").at(0).at("cpulist"), "0-2,7");
  EXPECT_EQ(j.at("gpus").at(0).at("nvlinks").at(0).at("peer"), "nvswitch");
  const auto back = host_topology_from_json(j);
  EXPECT_EQ(back.numa_nodes.at(0).cpus, (std::vector<int>{0, 1, 2, 7}));
  EXPECT_EQ(back.numa_nodes.at(0).socket, 1);
  EXPECT_EQ(back.gpus.at(0).nvlinks.at(3).peer, NvLinkPeer::Cpu);
  EXPECT_EQ(back.gpus.at(0).pcie.width_current, 8);
  EXPECT_EQ(back.nics.at(1).rate_Gbps, 12.5);
  EXPECT_EQ(to_json(back), j);
}

TEST(TopologyJson, EmptyHostRoundTrips) {
  const HostTopology empty;
  EXPECT_EQ(to_json(host_topology_from_json(to_json(empty))), to_json(empty));
}

TEST(TopologyJson, MissingKeysReadAsUnknown) {
  const auto host = host_topology_from_json(json::parse(R"({"gpus": [{"bus_id": "0000:01:00.0"}], "nics": [{}]})"));
  ASSERT_EQ(host.gpus.size(), 1U);
  EXPECT_EQ(host.gpus[0].numa_node, -1);
  EXPECT_EQ(host.gpus[0].memory_bytes, 0U);
  EXPECT_EQ(host.nics.at(0).numa_node, -1);
  EXPECT_EQ(host.nics.at(0).rate_Gbps, 0.0);
}

TEST(TopologyJson, WrongTypesNameTheKey) {
  const auto fails_with = [](const char* text) -> std::string {
    try {
      (void)host_topology_from_json(json::parse(text));
    } catch (const TopologyJsonError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(fails_with(R"({"sockets": "two"})").find("'sockets'"), std::string::npos);
  EXPECT_NE(fails_with(R"({"gpus": {}})").find("'gpus'"), std::string::npos);
  EXPECT_NE(fails_with(R"({"gpus": [{"nvlinks": [{"peer": "bridge"}]}]})").find("bridge"), std::string::npos);
  EXPECT_NE(fails_with(R"({"numa_nodes": [{"cpulist": "3-1"}]})").find("3-1"), std::string::npos);
  EXPECT_NE(fails_with("[]").find("object"), std::string::npos);
}

TEST(TopologyJson, ReportHasTopologyMatrixAndWarnings) {
  const auto report = host_report_json(test::pcie_4gpu());
  EXPECT_EQ(report.at("topology"), test::fixture_json("pcie_4gpu.json"));
  EXPECT_EQ(report.at("matrix").at("labels"), (json{"GPU0", "GPU1", "GPU2", "GPU3", "NIC0"}));
  EXPECT_EQ(report.at("matrix").at("rows").at(0).at(1), "PIX");
  EXPECT_EQ(report.at("warnings").size(), 3U);
  EXPECT_EQ(report.at("warnings").at(0).at("kind"), "pcie_below_max");
  EXPECT_EQ(report.at("warnings").at(0).at("device"), "GPU1");
}

TEST(Cpulist, ParsesAndFormatsTheKernelFormat) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist(""), std::vector<int>{});
  EXPECT_FALSE(parse_cpulist("1-"));
  EXPECT_FALSE(parse_cpulist("a"));
  EXPECT_FALSE(parse_cpulist("4-2"));
  EXPECT_EQ(format_cpulist({11, 10, 8, 3, 2, 1, 0}), "0-3,8,10-11");
  EXPECT_EQ(format_cpulist({}), "");
  EXPECT_EQ(format_cpulist({5}), "5");
}

}  // namespace
}  // namespace ccbench::topo
