#include "ccbench/result_json.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ccbench/output_file.hpp"
#include "ccbench/statistics.hpp"

namespace ccbench {
namespace {

ResultDocument sample_document() {
  ResultDocument doc;
  doc.run = {"0123456789abcdef",
             "2026-11-22T04:00:00.000Z",
             "2026-11-22T04:00:01.500Z",
             {"allreduce_bench", "-b", "8"},
             "0.1.0",
             "abc",
             "before-upgrade",
             "allreduce_bench",
             RunSource{"nccl-tests", "2.17.8", "text", {"a.log"}, {"a.log: started_utc is the file's time"}}};
  doc.environment.hosts = {{"node0", {0, 1}}, {"node1", {2, 3}}};
  doc.environment.libraries = {{"mpi", "Open MPI v4.1.4"}};
  doc.environment.variables = {{"NCCL_ALGO", "Ring"}};
  doc.environment.binding = {{0, "node0", BindPolicy::Auto, true, 0, "0-15,32-47", "preferred node 0", "0000:1b:00.0",
                              "mlx5_0", "NCCL_IB_HCA==mlx5_0", ""},
                             {1, "node0", BindPolicy::None, false, std::nullopt, "0-63", "unchanged", std::nullopt,
                              std::nullopt, std::nullopt, "--bind auto would use NUMA node 1 (CPUs 16-31,48-63)"}};
  doc.topology = {{"hosts", {{{"hostname", "node0"}, {"gpus", nlohmann::json::array()}}}}};
  HostFabric fabric;  // 1.8: what each host's counters and links said
  fabric.host = "node0";
  fabric.seconds = 12.5;
  fabric.counters_read = 40;
  fabric.moved = {{"rdma", "mlx5_0", 1, "port_xmit_data", 250, CounterKind::Traffic, false},
                  {"rdma", "mlx5_0", 1, "symbol_error", 3, CounterKind::Error, true}};
  fabric.links = {{"rdma_port",
                   "mlx5_0 port 1",
                   "hca",
                   "MT4129",
                   "200 Gb/sec (2X NDR)",
                   "400 Gb/sec (4X NDR)",
                   true,
                   "4: ACTIVE",
                   "28.39.1002",
                   {}}};
  fabric.warnings = {"mlx5_0 port 1 symbol_error: at its 16-bit maximum 65535"};
  doc.fabric = {fabric};
  CaseResult r;
  r.benchmark = "allreduce_bench";
  r.backend = "mpi";
  r.timing = TimingMode::PerOp;
  r.clock = "host steady_clock";
  r.spec = {Collective::AllReduce, DType::Bfloat16, ReduceOp::Max, 0, true, 1024};
  r.ranks = 4;
  r.nodes = 2;
  r.group = "rail";
  r.group_id = "rail:1";
  r.group_ranks = {1, 3};
  r.group_hosts = {"node0", "node1"};
  r.size_bytes = 2048;
  r.ops_per_sample = 1;
  r.stop_reason = StopReason::TimeBudget;
  r.time = Summary{12, 1e-6, 2e-6, 2.5e-6, 4e-6, 5e-6, 6e-6, 1e-6, Interval{1.5e-6, 3e-6}};
  r.samples_s = {1e-6, 2e-6};
  r.bus_factor = 1.5;
  r.algbw_GBps = 1.024;
  r.busbw_GBps = 1.536;
  r.busbw_mean_GBps = 1.2288;
  r.peak_GBps = 450.0;
  r.pct_of_peak = 0.34;
  r.peak_basis = "given";
  r.wrong_elements = 0;
  r.elapsed_s = 0.25;
  doc.results.push_back(r);
  CaseResult skipped = r;
  skipped.status = CaseStatus::Skipped;
  skipped.reason = "MPI has no bfloat16 type";
  skipped.time.reset();
  skipped.stop_reason.reset();
  skipped.wrong_elements.reset();
  skipped.peak_GBps.reset();
  skipped.pct_of_peak.reset();
  skipped.peak_basis.clear();
  skipped.samples_s.clear();
  doc.results.push_back(skipped);
  CaseResult rdma = r;  // 1.3.0: an ib_write_bw pair
  rdma.benchmark = "ib_write_bw_bench";
  rdma.backend = "verbs";
  rdma.spec = {Collective::IbWriteBw, DType::Uint8, ReduceOp::Sum, 0, false, 65536};
  rdma.time->p999 = 5.5e-6;
  rdma.bw_peak_GBps = 40.5;
  rdma.rdma = RdmaInfo{"RC", 4096, 2, 128, 100, 0, true, "host", {}, std::nullopt, std::nullopt, std::nullopt};
  rdma.rdma->endpoints = {{0, "node0", "mlx5_0", 1, "InfiniBand", std::nullopt, "", "", 7, 400.0, 4096},
                          {1, "node1", "rxe0", 1, "Ethernet", 1, "::ffff:127.0.0.1", "RoCE v2", 0, std::nullopt, 1024}};
  doc.results.push_back(rdma);
  CaseResult one_way = rdma;  // 1.6.0: one direction's whole-run figure
  one_way.rdma->bidir = false;
  one_way.rdma->run_bw_GBps = 39.5;
  one_way.rdma->posted_writes = 1025;  // 1.8.0: 1,024 writes of 64 KiB and one zero-byte fence
  one_way.rdma->posted_bytes = 1024ULL * 65536;
  doc.results.push_back(one_way);
  CaseResult ring = r;  // 1.5.0: a --nccl-variants row, in FP8
  ring.backend = "nccl";
  ring.spec.dtype = DType::Float8e4m3;
  ring.variant = "ring";
  ring.per_rank = summarize_ranks({{1.5e-6, 2e-6, 4e-6}, {3e-6, 1e-6, 2.5e-6}}, {0, 1});  // 1.9.0: --per-rank
  ring.registration = "symmetric";                                                        // 1.10.0: -R 2
  doc.results.push_back(ring);
  return doc;
}

TEST(ResultJson, RoundTripKeepsEveryField) {
  const ResultDocument doc = sample_document();
  const nlohmann::json j = to_json(doc);
  EXPECT_EQ(j.at("schema"), "ccbench.result");
  EXPECT_EQ(j.at("schema_version"), "1.11.0");
  const nlohmann::json again = to_json(document_from_json(nlohmann::json::parse(j.dump())));
  EXPECT_EQ(j, again) << j.dump(2) << "\n---\n" << again.dump(2);
  EXPECT_FALSE(j.at("results").at(0).contains("variant"));  // only --nccl-variants rows carry one
  EXPECT_EQ(j.at("results").back().at("variant"), "ring");
  EXPECT_EQ(j.at("results").back().at("dtype"), "float8_e4m3");
  EXPECT_EQ(j.at("results").back().at("registration"), "symmetric");
  EXPECT_FALSE(j.at("results").at(0).contains("registration"));  // only -R 1 / 2 rows carry one
  EXPECT_EQ(j.at("run").at("source").at("tool"), "nccl-tests");
}

TEST(ResultJson, ReadsA1_0DocumentAsOneWorldGroup) {
  nlohmann::json j = to_json(sample_document());
  j["schema_version"] = "1.0.0";
  j["topology"] = nullptr;
  for (auto& r : j["results"]) {
    r["group"] = "world";
    r.erase("group_id");
    r.erase("group_ranks");
    r.erase("group_hosts");
  }
  const ResultDocument doc = document_from_json(j);
  EXPECT_EQ(doc.results.at(0).group_id, "world");
  EXPECT_TRUE(doc.results.at(0).group_ranks.empty());
  EXPECT_TRUE(doc.topology.is_null());
}

TEST(ResultJson, BindingIsOneEntryPerRankWithNulls) {
  const nlohmann::json j = to_json(sample_document());
  const auto& b = j.at("environment").at("binding");
  ASSERT_EQ(b.size(), 2U);
  EXPECT_EQ(b[0].at("policy"), "auto");
  EXPECT_EQ(b[0].at("nic_applied"), "NCCL_IB_HCA==mlx5_0");
  EXPECT_EQ(b[1].at("numa_node"), nullptr);
  EXPECT_EQ(b[1].at("gpu"), nullptr);
  ResultDocument without = sample_document();  // a document made without ranks (a reader's test) has none
  without.environment.binding.clear();
  EXPECT_FALSE(to_json(without).at("environment").contains("binding"));
}

TEST(ResultJson, ReadsA1_1DocumentWithoutBinding) {
  nlohmann::json j = to_json(sample_document());
  j["schema_version"] = "1.1.0";
  j["environment"].erase("binding");
  EXPECT_TRUE(document_from_json(j).environment.binding.empty());
  j["environment"]["binding"] = {{{"rank", 0}}};
  EXPECT_THROW(document_from_json(j), std::exception);
}

TEST(ResultJson, UnitsAndNullsAsDocumented) {
  const nlohmann::json j = to_json(sample_document());
  const auto& r = j.at("results").at(0);
  EXPECT_DOUBLE_EQ(r.at("time").at("p50_us").get<double>(), 2.0);
  EXPECT_EQ(r.at("redop"), "max");
  EXPECT_EQ(r.at("root"), nullptr);  // all_reduce has no root
  EXPECT_EQ(r.at("timing"), "per_op");
  const auto& s = j.at("results").at(1);
  EXPECT_EQ(s.at("time"), nullptr);
  EXPECT_EQ(s.at("wrong_elements"), nullptr);
  EXPECT_EQ(s.at("peak_GBps"), nullptr);
  EXPECT_EQ(s.at("status"), "skipped");
}

// Below 6 samples the median has no 95% interval: written as null (1.6.0), read back as none.
TEST(ResultJson, MedianCiOfFiveSamplesIsNull) {
  ResultDocument doc = sample_document();
  doc.results.at(0).time = summarize(std::vector<double>{1e-6, 2e-6, 3e-6, 4e-6, 5e-6});
  const nlohmann::json j = to_json(doc);
  const auto& time = j.at("results").at(0).at("time");
  EXPECT_EQ(time.at("p50_ci95_lo_us"), nullptr) << time.dump();
  EXPECT_EQ(time.at("p50_ci95_hi_us"), nullptr) << time.dump();
  EXPECT_EQ(to_json(document_from_json(j)), j);
}

TEST(ResultJson, ForeignAndMalformedDocumentsThrow) {
  nlohmann::json j = to_json(sample_document());
  j["schema"] = "something.else";
  EXPECT_THROW(document_from_json(j), std::runtime_error);
  j = to_json(sample_document());
  j["results"][0]["status"] = "great";
  EXPECT_THROW(document_from_json(j), std::runtime_error);
  j = to_json(sample_document());
  j["results"][0].erase("size_bytes");
  EXPECT_THROW(document_from_json(j), std::exception);
}

TEST(AtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / ("ccbench-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "r.json";
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}), 1);
  EXPECT_THROW(write_file_atomically(dir / "missing" / "r.json", "x"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ccbench
