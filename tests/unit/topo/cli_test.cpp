// ccbench-topo itself, on this machine: exit 0 with or without a GPU, JSON that parses, bad
// flags answered with one line on stderr and exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "ccbench/topo/discover.hpp"

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
};

Run run(const std::string& args) {
  const std::string command = std::string{CCBENCH_TOPO_BIN} + " " + args + " 2>&1";
  Run result;
  FILE* pipe = ::popen(command.c_str(), "r");  // NOLINT(cert-env33-c)
  if (pipe == nullptr) {
    return result;
  }
  std::array<char, 4096> buf{};
  for (std::size_t n = 0; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) {
    result.out.append(buf.data(), n);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(CcbenchTopo, PrintsTheHostAndExitsZero) {
  const auto r = run("");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Host: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NUMA node "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPUs: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Warnings"), std::string::npos) << r.out;
  if (r.out.find("GPUs: no GPU found: ") == std::string::npos) {
    EXPECT_NE(r.out.find("Legend:"), std::string::npos) << r.out;
  }
}

TEST(CcbenchTopo, JsonHasTopologyMatrixAndWarnings) {
  const auto r = run("--json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("topology").at("numa_nodes").is_array());
  EXPECT_TRUE(j.at("topology").at("gpu_discovery").is_string());
  EXPECT_TRUE(j.at("matrix").at("rows").is_array());
  EXPECT_TRUE(j.at("warnings").is_array());
}

TEST(CcbenchTopo, ReadsAnHwlocXmlExport) {
  if (!ccbench::topo::hwloc_available()) {
    GTEST_SKIP() << "built without hwloc";
  }
  const auto r = run(std::string{"--hwloc-xml "} + CCBENCH_TOPO_DATA_DIR + "/hwloc_two_socket.xml");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("CPU: Test CPU 9000, 2 sockets, 2 NUMA nodes"), std::string::npos) << r.out;
}

TEST(CcbenchTopo, MissingHwlocXmlIsOneLineAndExitTwo) {
  const auto r = run("--hwloc-xml /nonexistent/topology.xml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
}

TEST(CcbenchTopo, HelpExitsZero) {
  const auto r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
}

TEST(CcbenchTopo, BadFlagIsOneLineAndExitTwo) {
  const auto r = run("--no-such-flag");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  EXPECT_NE(r.out.find("--no-such-flag"), std::string::npos) << r.out;
}

// --links on a DGX H100's sysfs tree (tests/data/fabric/make_dgx_h100.py): every link at its capability, exit 0;
// with GPU 1 at Gen4 x8 and mlx5_5 at 2X NDR, exactly those two named BELOW, exit 1. This machine's own sysfs
// reads too (a virtual PCI bus: no link files, no RDMA port).
TEST(CcbenchTopo, LinksNameWhatTrainedLow) {
  const std::string data = CCBENCH_FABRIC_DATA_DIR;
  const auto good = run("--links --sysfs-root " + data + "/dgx-h100/sys");
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_NE(good.out.find("32 link(s), 0 below capability"), std::string::npos) << good.out;
  const auto low = run("--links --sysfs-root " + data + "/dgx-h100-low/sys");
  EXPECT_EQ(low.exit_code, 1) << low.out;
  EXPECT_NE(low.out.find("32 link(s), 2 below capability"), std::string::npos) << low.out;
  std::size_t below = 0;
  for (std::size_t at = low.out.find("BELOW"); at != std::string::npos; at = low.out.find("BELOW", at + 1)) {
    const std::string line = low.out.substr(at, low.out.find('\n', at) - at);
    EXPECT_TRUE(line.find("mlx5_5 port 1") != std::string::npos || line.find("0000:43:00.0") != std::string::npos)
        << line;
    ++below;
  }
  EXPECT_EQ(below, 2U) << low.out;
  const auto json = run("--links --json --sysfs-root " + data + "/dgx-h100-low/sys");
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(json.out).size(), 32U);
  const auto here = run("--links");
  EXPECT_TRUE(here.exit_code == 0 || here.exit_code == 1) << here.out;
  EXPECT_NE(here.out.find("below capability"), std::string::npos) << here.out;
}

// Issue 35: a --sysfs-root that is missing, a file, or the folder above sys/ read nothing and said "0 link(s), 0
// below", exit 0. Nothing read is bad input: one line, exit 2.
TEST(CcbenchTopo, LinksOfASysfsRootThatHoldsNothingIsExitTwo) {
  const std::string data = CCBENCH_FABRIC_DATA_DIR;
  for (const std::string& root : {std::string{"/nonexistent/sys"}, data + "/README.md", data + "/dgx-h100"}) {
    const auto r = run("--links --sysfs-root " + root);
    EXPECT_EQ(r.exit_code, 2) << root << ": " << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
    EXPECT_NE(r.out.find("--sysfs-root " + root + ": "), std::string::npos) << r.out;
  }
  const auto parent = run("--links --sysfs-root " + data + "/dgx-h100");
  EXPECT_NE(parent.out.find("give the sys folder itself, " + data + "/dgx-h100/sys"), std::string::npos) << parent.out;
}

}  // namespace
