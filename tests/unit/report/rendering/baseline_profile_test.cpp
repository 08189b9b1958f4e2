// ccbench-report baseline's profile: what it writes is a profile accept reads unchanged (profile_version 1.2.0, its
// provenance under /baseline), and that profile FAILs the fleet's slow host and PASSes the rest, on the real fleet
// of tests/data/baseline (tests/data/baseline/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ccbench/report/accept.hpp"
#include "ccbench/report/baseline.hpp"
#include "ccbench/report/baseline_profile.hpp"
#include "ccbench/report/input.hpp"

namespace ccbench::report {
namespace {

std::filesystem::path fleet_dir() { return std::filesystem::path(CCBENCH_SOURCE_DIR) / "tests/data/baseline"; }

LoadedRun node(int k) { return read_result_file(fleet_dir() / ("sendrecv-node" + std::to_string(k) + ".json")); }

TEST(BaselineProfile, AcceptReadsItUnchangedAndFailsTheSlowHostAlone) {
  std::vector<LoadedRun> runs;
  for (int k = 1; k <= 5; ++k) {
    runs.push_back(node(k));
  }
  runs.push_back(read_result_file(fleet_dir() / "allreduce-node1.json"));
  const auto learned = learn_baseline(runs, {});
  const auto doc = baseline_profile(learned, "fleet-test", "a learned profile");
  EXPECT_EQ(doc.at("profile_version"), "1.2.0");
  EXPECT_EQ(doc.at("baseline").at("checks").at(0).at("left_out").at(0).at("host"), "node0,node4");
  EXPECT_EQ(doc.at("baseline").at("not_learned").at(0).at("hosts").at(0), "node0,node1");
  EXPECT_EQ(doc.at("baseline").at("results"), 6);
  const Profile profile = parse_profile(doc.dump(2), "fleet-test.json");
  ASSERT_EQ(profile.checks.size(), 1U);
  EXPECT_EQ(profile.checks.at(0).min_GBps, learned.checks.at(0).floor_GBps);
  EXPECT_EQ(profile.sources.at(profile.checks.at(0).source).note.find("1.4826 x MAD") != std::string::npos, true);
  for (int k = 1; k <= 5; ++k) {
    const auto outcomes = evaluate(profile, {node(k)});
    ASSERT_EQ(outcomes.size(), 1U);
    EXPECT_EQ(outcomes.at(0).verdict, k == 4 ? CheckVerdict::Fail : CheckVerdict::Pass) << "node" << k;
    if (k == 4) {
      EXPECT_NE(outcomes.at(0).culprit.find("node4"), std::string::npos) << outcomes.at(0).culprit;
    }
  }
  // a result the profile's check does not select is no PASS: the all_reduce alone FAILs (no result matched)
  const auto unmatched = evaluate(profile, {runs.back()});
  EXPECT_EQ(unmatched.at(0).verdict, CheckVerdict::Fail);
}

TEST(BaselineProfile, TheSummaryNamesTheFloorAndWhoWasLeftOut) {
  std::vector<LoadedRun> runs;
  for (int k = 1; k <= 5; ++k) {
    runs.push_back(node(k));
  }
  const auto text = baseline_summary(learn_baseline(runs, {}), "out.json");
  EXPECT_NE(text.find("sendrecv-float32-out-world-2r-2n-busbw-4M: floor 0.0226 GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("  left out: node0,node4 at 0.01117 GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("profile written: out.json (1 check, 0 not learned)"), std::string::npos) << text;
}

}  // namespace
}  // namespace ccbench::report
