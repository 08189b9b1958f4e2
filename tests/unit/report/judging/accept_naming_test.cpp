// ccbench-report accept names the GPUs and NICs of a failing group from the run's topology. The NIC it
// names is the one --bind auto binds a rank on that GPU to: both ask topo::nearest_nic (query.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ccbench/binding.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/topo/host_json.hpp"

namespace ccbench::report {
namespace {

using nlohmann::json;

const std::filesystem::path kRuns = std::filesystem::path(CCBENCH_REPORT_DATA) / "runs";

CheckOutcome check_one(const json& check, const std::vector<LoadedRun>& runs) {
  const json doc = {{"profile", "ccbench.accept"},
                    {"profile_version", "1.0.0"},
                    {"id", "test"},
                    {"name", "test profile"},
                    {"checks", json::array({check})}};
  const auto outcomes = evaluate(parse_profile(doc.dump(), "test.json"), runs);
  EXPECT_EQ(outcomes.size(), 1U);
  return outcomes.at(0);
}

LoadedRun run_of(const std::string& file) { return read_result_file(kRuns / file); }

TEST(AcceptNaming, NamesGpusAndNicsFromTopology) {
  // The real pairs run, relabelled as an NCCL run on two hosts with a topology that names GPUs and
  // NICs (synthetic bus ids and PCIe paths: this tests the naming, not a measurement).
  auto run = run_of("sendrecv-pairs-np4.json");
  run.doc.environment.hosts = {{"a", {0, 1}}, {"b", {2, 3}}};
  const auto gpu = [](int i, const std::string& bus, const std::string& sw) {
    return json{{"index", i}, {"bus_id", bus}, {"pci_path", {"0000:00:01.0", sw}}};
  };
  const auto nic = [](const std::string& name, const std::string& sw) {
    return json{{"name", name}, {"pci_path", {"0000:00:01.0", sw}}};
  };
  const json host_a = {{"hostname", "a"},
                       {"gpus", {gpu(0, "0000:18:00.0", "0000:10:00.0"), gpu(1, "0000:2a:00.0", "0000:20:00.0")}},
                       {"nics", {nic("mlx5_0", "0000:10:00.0"), nic("mlx5_1", "0000:20:00.0")}}};
  json host_b = host_a;
  host_b["hostname"] = "b";
  run.doc.topology = {{"hosts", {host_a, host_b}}};
  for (auto& r : run.doc.results) {
    r.backend = "nccl";
    if (r.group_id == "pair:2-3") {  // make one group span both hosts: ranks 1 (a) and 2 (b)
      r.group_id = "pair:1-2";
      r.group_ranks = {1, 2};
    }
  }
  const json check = {{"id", "bw"},
                      {"kind", "busbw"},
                      {"select", {{"benchmark", "sendrecv_bench"}}},
                      {"size", "8"},
                      {"min_GBps", 1000}};
  const auto o = check_one(check, {run});
  EXPECT_EQ(o.culprit,
            "group pair:0-1 (ranks 0,1 on a: GPU0 0000:18:00.0, GPU1 0000:2a:00.0); "
            "group pair:1-2 (ranks 1,2 on a: GPU1 0000:2a:00.0 NIC mlx5_1; b: GPU0 0000:18:00.0 NIC mlx5_0)");

  run.doc.environment.variables["CUDA_VISIBLE_DEVICES"] = "3,2,1,0";  // device i is no longer NVML index i
  EXPECT_EQ(check_one(check, {run}).culprit, "group pair:0-1 (ranks 0,1 on a); group pair:1-2 (ranks 1,2 on a, b)");
  run.doc.topology = nullptr;
  EXPECT_EQ(check_one(check, {run}).verdict, CheckVerdict::Fail);
}

/// DGX H100 (a real topology export, tests/data/topo/dgx_h100.json): for every GPU, the NIC named beside
/// it in a FAIL is the NIC --bind auto picks for a rank on it, and the eight GPUs get eight rails.
json dgx_h100() {
  std::ifstream in(std::filesystem::path(CCBENCH_TOPO_DATA_DIR) / "dgx_h100.json");
  return json::parse(in);
}

/// The culprit accept writes for a failing pair 0-1 across two hosts of topology `fixture`, rank 0 the
/// `local`-th rank of host a and rank 1 that of host b.
std::string culprit_on(const json& fixture, int local) {
  // The real pairs run (4 ranks), relabelled as NCCL on two hosts (ranks 100.. fill the local ranks before).
  auto run = run_of("sendrecv-pairs-np4.json");
  std::vector<int> on_a;
  std::vector<int> on_b;
  for (int i = 0; i < local; ++i) {
    on_a.push_back(100 + i);
    on_b.push_back(200 + i);
  }
  on_a.insert(on_a.end(), {0, 2});
  on_b.insert(on_b.end(), {1, 3});
  run.doc.environment.hosts = {{"a", on_a}, {"b", on_b}};
  json host_a = fixture;
  host_a["hostname"] = "a";
  json host_b = fixture;
  host_b["hostname"] = "b";
  run.doc.topology = {{"hosts", {host_a, host_b}}};
  for (auto& r : run.doc.results) {
    r.backend = "nccl";
  }
  const json check = {{"id", "bw"},
                      {"kind", "busbw"},
                      {"select", {{"benchmark", "sendrecv_bench"}}},
                      {"size", "8"},
                      {"min_GBps", 1000}};
  return check_one(check, {run}).culprit;
}

std::string expected_culprit(int local, const BindingPlan& bind) {
  const std::string gpu = fmt::format("GPU{} {}", local, bind.gpu_bus_id);
  return fmt::format("group pair:0-1 (ranks 0,1 on a: {} NIC {}; b: {} NIC {})", gpu, bind.nic, gpu, bind.nic);
}

TEST(AcceptNaming, DgxH100FailNamesTheNicThatBindAutoPicks) {
  const json fixture = dgx_h100();
  const topo::HostTopology dgx = topo::host_topology_from_json(fixture);
  ASSERT_EQ(dgx.gpus.size(), 8U);
  // The rail under each GPU's PCIe switch, read off the fixture's pci_path lists (nvidia-smi topo -m: PIX).
  const std::array<std::string, 8> kRail = {"mlx5_0", "mlx5_3", "mlx5_4",  "mlx5_5",
                                            "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  std::set<std::string> rails;
  for (int local = 0; local < 8; ++local) {
    const BindingPlan bind = plan_binding(dgx, BindingInputs{local, 8, true, std::nullopt, std::nullopt});
    EXPECT_EQ(bind.nic, kRail.at(static_cast<std::size_t>(local))) << "GPU" << local;
    rails.insert(bind.nic);
    const std::string culprit = culprit_on(fixture, local);
    EXPECT_NE(culprit.find(expected_culprit(local, bind)), std::string::npos) << culprit;
    fmt::print("GPU{} {}: --bind auto NIC {}, accept names: {}\n", local, bind.gpu_bus_id, bind.nic,
               culprit.substr(0, culprit.find(';')));
  }
  EXPECT_EQ(rails.size(), 8U);  // one rail per GPU: the check above could not pass by naming one NIC
}

/// GPU0's own port (mlx5_0) DOWN: --bind auto passes it over for another port on GPU0's NUMA node, and
/// accept names that one too (the PCIe path alone, which accept used before, still pointed at mlx5_0).
TEST(AcceptNaming, DgxH100PortDownBothPassItOver) {
  json fixture = dgx_h100();
  for (auto& nic : fixture["nics"]) {
    if (nic["name"] == "mlx5_0") {
      nic["state"] = "DOWN";
    }
  }
  const BindingPlan bind =
      plan_binding(topo::host_topology_from_json(fixture), BindingInputs{0, 8, true, std::nullopt, std::nullopt});
  ASSERT_FALSE(bind.nic.empty());
  EXPECT_EQ(bind.nic, "mlx5_1");  // the other port on GPU0's NUMA node, first listed
  const std::string culprit = culprit_on(fixture, 0);
  EXPECT_NE(culprit.find(expected_culprit(0, bind)), std::string::npos) << culprit;
  fmt::print("mlx5_0 DOWN: --bind auto NIC {}, accept names: {}\n", bind.nic, culprit.substr(0, culprit.find(';')));
}

}  // namespace
}  // namespace ccbench::report
