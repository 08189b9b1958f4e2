// ccbench-report baseline: the statistics, the fit over a fleet and its refusals, on real results: the fleet of
// tests/data/baseline (6 namespace hosts, node4's link at half rate; tests/data/baseline/README.md), the VM's runs of
// tests/data/report/runs and the public nccl-tests logs of tests/data/import.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "ccbench/errors.hpp"
#include "ccbench/report/baseline.hpp"
#include "ccbench/report/import.hpp"
#include "ccbench/report/input.hpp"

namespace ccbench::report {
namespace {

std::filesystem::path source_dir() { return CCBENCH_SOURCE_DIR; }
std::filesystem::path fleet_dir() { return source_dir() / "tests/data/baseline"; }
constexpr std::uint64_t k4M = std::uint64_t{4} << 20;

std::vector<LoadedRun> fleet(const std::vector<int>& nodes, bool with_allreduce = false) {
  std::vector<LoadedRun> runs;
  runs.reserve(nodes.size() + 1);
  for (const int k : nodes) {
    runs.push_back(read_result_file(fleet_dir() / ("sendrecv-node" + std::to_string(k) + ".json")));
  }
  if (with_allreduce) {
    runs.push_back(read_result_file(fleet_dir() / "allreduce-node1.json"));
  }
  return runs;
}

/// The busbw a fixture measured at 4 MiB (its one group).
double busbw_4m(const LoadedRun& run) {
  for (const auto& r : run.doc.results) {
    if (r.size_bytes == k4M) {
      return r.busbw_GBps;
    }
  }
  ADD_FAILURE() << run.path << ": no 4 MiB row";
  return 0;
}

std::string refusal(const std::vector<LoadedRun>& runs, const BaselineOptions& options = {}) {
  try {
    learn_baseline(runs, options);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no refusal)";
}

// --- the statistics ------------------------------------------------------------------------------------------------

TEST(BaselineStats, MedianAndMadOfAnOddAndAnEvenCount) {
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2, 100}), 3);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median_of({})));
  const auto fit = robust_fit({4, 1, 3, 2, 100}, 0.01);  // deviations 1 2 0 1 97: MAD 1, whatever the 100 is
  EXPECT_DOUBLE_EQ(fit.centre, 3);
  EXPECT_DOUBLE_EQ(fit.mad, 1);
  EXPECT_DOUBLE_EQ(fit.spread, kMadToSigma);
  EXPECT_FALSE(fit.spread_from_floor);
  EXPECT_EQ(fit.n, 5U);
}

TEST(BaselineStats, AllHostsEqualGiveMadZeroAndTheSpreadFloor) {
  // Five hosts at node5's figure to the digit: MAD 0. A floor at the centre would fail half the fleet's next runs
  // on their noise alone; the spread is the share of the centre instead.
  const double figure = busbw_4m(fleet({5}).at(0));
  const auto fit = robust_fit(std::vector<double>(5, figure), 0.01);
  EXPECT_DOUBLE_EQ(fit.centre, figure);
  EXPECT_DOUBLE_EQ(fit.mad, 0);
  EXPECT_TRUE(fit.spread_from_floor);
  EXPECT_DOUBLE_EQ(fit.spread, 0.01 * figure);
}

// --- the fleet ------------------------------------------------------------------------------------------------------

TEST(Baseline, TheSlowHostIsLeftOutAndTheFloorSitsBelowTheHealthyOnes) {
  const auto runs = fleet({1, 2, 3, 4, 5}, true);
  const auto b = learn_baseline(runs, {});
  ASSERT_EQ(b.checks.size(), 1U);
  const auto& c = b.checks.at(0);
  EXPECT_EQ(c.id, "sendrecv-float32-out-world-2r-2n-busbw-4M");  // each bench's largest size by default
  EXPECT_EQ(c.key.size_bytes, k4M);
  ASSERT_EQ(c.left_out.size(), 1U);
  EXPECT_EQ(c.left_out.at(0).host, "node0,node4");
  EXPECT_LT(c.left_out.at(0).spreads, -b.options.k);
  EXPECT_EQ(c.hosts.size(), 5U);
  EXPECT_EQ(c.fit.n, 4U);
  const double slow = busbw_4m(runs.at(3));
  EXPECT_GT(c.floor_GBps, slow);
  for (const std::size_t i : {0U, 1U, 2U, 4U}) {
    EXPECT_LT(c.floor_GBps, busbw_4m(runs.at(i))) << runs.at(i).path;
  }
  // the healthy pairs agree within 0.5%: the 1% share sets the spread, and the floor is 97% of their median
  EXPECT_TRUE(c.fit.spread_from_floor);
  EXPECT_NEAR(c.floor_GBps / c.fit.centre, 0.97, 0.0005);
  EXPECT_LE(c.floor_GBps, c.fit.centre - 3 * c.fit.spread);  // rounded down, never up
  // the all_reduce of one pair is no evidence for a floor: named, not learned
  ASSERT_EQ(b.not_learned.size(), 1U);
  EXPECT_EQ(b.not_learned.at(0).id, "allreduce-float32-sum-out-world-2r-2n-busbw-4M");
  EXPECT_EQ(b.not_learned.at(0).hosts, std::vector<std::string>{"node0,node1"});
  EXPECT_NE(b.not_learned.at(0).reason.find("1 host with a result, at least 5 needed"), std::string::npos);
  // where it came from
  EXPECT_EQ(b.provenance.results, 6U);
  EXPECT_EQ(b.provenance.hosts.size(), 5U);
  EXPECT_EQ(b.provenance.libraries.at("mpi"), "Open MPI v4.1.4");
  EXPECT_FALSE(b.provenance.from_utc.empty());
  EXPECT_LT(b.provenance.from_utc, b.provenance.to_utc);
}

TEST(Baseline, ASizeAskedForIsLearnedAndWhereTheMadSetsTheSpread) {
  BaselineOptions o;
  o.sizes = {std::uint64_t{2} << 20};
  const auto b = learn_baseline(fleet({1, 2, 3, 4, 5}), o);
  ASSERT_EQ(b.checks.size(), 1U);
  const auto& c = b.checks.at(0);
  EXPECT_EQ(c.key.size_bytes, std::uint64_t{2} << 20);
  EXPECT_FALSE(c.first.spread_from_floor);  // at 2 MiB the pairs spread wider than 1%: 1.4826 x MAD
  ASSERT_EQ(c.left_out.size(), 1U);
  EXPECT_EQ(c.left_out.at(0).host, "node0,node4");
  o.sizes = {std::uint64_t{8} << 20};
  EXPECT_NE(refusal(fleet({1, 2, 3, 4, 5}), o).find("--size 8M: no result measured that size"), std::string::npos);
}

TEST(Baseline, TooFewHostsIsRefused) {
  const auto message = refusal(fleet({1, 2, 3, 4}));
  EXPECT_NE(message.find("baseline: 4 hosts in the results"), std::string::npos) << message;
  EXPECT_NE(message.find("at least 5 needed (--min-hosts)"), std::string::npos) << message;
  BaselineOptions three;
  three.min_hosts = 3;
  const auto b = learn_baseline(fleet({1, 2, 3, 4}), three);  // asked for: 3 kept of 4, node4 left out
  ASSERT_EQ(b.checks.size(), 1U);
  EXPECT_EQ(b.checks.at(0).left_out.at(0).host, "node0,node4");
}

TEST(Baseline, MixedKindsAreRefused) {
  // the VM's shared-memory run among the cluster's TCP runs: another transport (OMPI_MCA_btl), another kind
  auto runs = fleet({1, 2, 3, 4, 5});
  runs.push_back(read_result_file(source_dir() / "tests/data/report/runs/sendrecv-pairs-np4.json"));
  const auto message = refusal(runs);
  EXPECT_NE(message.find("are results of different kinds (variable OMPI_MCA_btl"), std::string::npos) << message;
  EXPECT_NE(message.find("sendrecv-pairs-np4.json"), std::string::npos) << message;
}

TEST(Baseline, AnH800IsNeverAveragedWithAnH100) {
  const auto imported = [](const std::string& log) {
    const auto logs =
        read_logs({(source_dir() / "tests/data/import/nccl-tests" / log).string()}, std::uintmax_t{1} << 24);
    ImportOptions options;
    options.test = "all_reduce";
    return LoadedRun{log, "1.11.0", import_logs(logs, options)};
  };
  const std::vector<LoadedRun> runs = {imported("h800x8_all_reduce_float_panlichen_run0.txt"),
                                       imported("h100x8_1node_all_reduce_float_dgxc-benchmarking.log")};
  const auto message = refusal(runs);
  EXPECT_NE(message.find("are results of different kinds"), std::string::npos) << message;
  EXPECT_NE(message.find("never one floor for both"), std::string::npos) << message;
}

TEST(Baseline, ThePairsOfAnAllPairsSweepAreItsHosts) {
  // fleet-link.json: sendrecv --all-pairs over 4 namespace hosts, only node1<->node3 at half rate (tests/data/report)
  const auto b = learn_baseline({read_result_file(source_dir() / "tests/data/report/runs/fleet-link.json")}, {});
  ASSERT_EQ(b.checks.size(), 1U);
  const auto& c = b.checks.at(0);
  EXPECT_EQ(c.hosts.size(), 6U);
  ASSERT_EQ(c.left_out.size(), 1U);
  EXPECT_EQ(c.left_out.at(0).host, "node1,node3");
  EXPECT_LT(c.floor_GBps, c.fit.centre);
  EXPECT_GT(c.floor_GBps, c.left_out.at(0).GBps);
  for (const auto& h : c.hosts) {
    if (h.host != "node1,node3") {
      EXPECT_GT(h.GBps, c.floor_GBps) << h.host;
    }
  }
}

TEST(Baseline, AFleetHalfSlowGivesNoFloor) {
  // fleet-host.json: node2 at half rate, in 3 of the 6 pairs: the median falls between the two levels, no pair is
  // beyond 3 spreads, and 3 spreads below the median is below 0. No floor, so no profile (never one that passes all).
  const auto message = refusal({read_result_file(source_dir() / "tests/data/report/runs/fleet-host.json")});
  EXPECT_NE(message.find("baseline: no check could be learned (sendrecv-float32-out-pair-2r-2n-busbw-2M: the hosts "
                         "spread too far for a floor"),
            std::string::npos)
      << message;
}

TEST(Baseline, CheckIdsAreProfileIds) {
  BaselineKey key{"allreduce_bench", "nccl", "all_reduce", "bfloat16", "sum", true, "cross-node", 16, 2, 16ULL << 30};
  EXPECT_EQ(check_id(key), "allreduce-bfloat16-sum-in-cross-node-16r-2n-busbw-16G");
  key.size_bytes = 1000;
  key.redop = "";
  EXPECT_EQ(check_id(key), "allreduce-bfloat16-in-cross-node-16r-2n-busbw-1000");
}

}  // namespace
}  // namespace ccbench::report
