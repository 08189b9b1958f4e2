// The evidence rule (judging/evidence.hpp) and every judge that goes through it, each fed absent evidence: accept's
// row and fabric checks FAIL (WAIVED only by --waive-unjudged, which the outcome records), compare, regression and
// fleet have NO VERDICT and exit 2 (fleet judges what it has only under --partial, which the verdict records).
#include "ccbench/report/evidence.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "accept_test_util.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/report/compare.hpp"
#include "ccbench/report/fleet.hpp"
#include "ccbench/report/regression.hpp"

namespace ccbench::report {
namespace {

using accept_test::check_one;
using accept_test::run_of;
namespace fs = std::filesystem;

TEST(EvidenceRule, NoGapIsJudgedAndTheJudgeKeepsItsExitCode) {
  for (const auto stakes : {Stakes::Acceptance, Stakes::Comparison}) {
    const auto r = rule_on(stakes, {});
    EXPECT_EQ(r.ruling, Ruling::Judged);
    EXPECT_FALSE(r.lacked());
    EXPECT_EQ(r.word(), "");
    EXPECT_EQ(r.exit_code(kExitFailure), kExitFailure);
    EXPECT_EQ(r.exit_code(kExitOk), kExitOk);
    EXPECT_EQ(rule_on(stakes, {}, "--partial").ruling, Ruling::Judged);  // a flag with nothing lacked changes nothing
  }
}

TEST(EvidenceRule, AGapFailsAnAcceptanceAndLeavesAComparisonWithoutVerdict) {
  for (const auto lack : {Lack::Absent, Lack::Unjudgeable, Lack::Inconsistent}) {
    const auto accept = rule_on(Stakes::Acceptance, {{lack, "host n1 unread"}});
    EXPECT_EQ(accept.ruling, Ruling::Fail) << name(lack);
    EXPECT_EQ(accept.word(), "FAIL");
    EXPECT_EQ(accept.exit_code(kExitOk), kExitFailure) << "a judge's own PASS cannot outvote the rule";
    const auto compare = rule_on(Stakes::Comparison, {{lack, "no row in common"}});
    EXPECT_EQ(compare.ruling, Ruling::NoVerdict) << name(lack);
    EXPECT_EQ(compare.word(), "NO VERDICT");
    EXPECT_EQ(compare.exit_code(kExitOk), kExitUsage);
    EXPECT_THROW(stop_at_no_verdict(compare), NoVerdictError);
    try {
      stop_at_no_verdict(compare);
    } catch (const UsageError& e) {  // exit 2, its first gap as the one line
      EXPECT_STREQ(e.what(), "no row in common");
    }
  }
}

TEST(EvidenceRule, AnOverrideIsRecordedAndNeverAPass) {
  const auto waived = rule_on(Stakes::Acceptance, {{Lack::Absent, "no fabric evidence"}}, "--waive-unjudged");
  EXPECT_EQ(waived.ruling, Ruling::Overridden);
  EXPECT_EQ(waived.word(), "WAIVED");
  EXPECT_EQ(waived.overridden_by, "--waive-unjudged");
  ASSERT_EQ(waived.gaps.size(), 1U);  // what it lacked stays on record
  const auto partial = rule_on(Stakes::Comparison, {{Lack::Absent, "2 of 6 pairs missing"}}, "--partial");
  EXPECT_EQ(partial.ruling, Ruling::Overridden);
  EXPECT_EQ(partial.overridden_by, "--partial");
  EXPECT_EQ(partial.exit_code(kExitFailure), kExitFailure);  // the judge then judges what it has
}

// --- accept: a check without its evidence FAILs through the rule ---------------------------------------

TEST(EvidenceRule, AcceptRowCheckWithoutItsResultFails) {
  const auto o = check_one({{"id", "big"},
                            {"kind", "busbw"},
                            {"select", {{"benchmark", "allreduce_bench"}}},
                            {"size", "16G"},
                            {"min_GBps", 1}},
                           {run_of("allreduce-np4-a.json")});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  EXPECT_EQ(o.evidence.ruling, Ruling::Fail);
  ASSERT_EQ(o.evidence.gaps.size(), 1U);
  EXPECT_EQ(o.evidence.gaps[0].lack, Lack::Absent);
  EXPECT_EQ(o.detail, o.evidence.gaps[0].what);
  EXPECT_EQ(o.detail.rfind("no result for allreduce_bench", 0), 0U) << o.detail;
}

TEST(EvidenceRule, AcceptFabricChecksWithoutReadingsFailAndOnlyTheFlagWaivesThem) {
  const auto profile =
      accept_test::one_check({{"id", "acks"},
                              {"kind", "counters"},
                              {"rates", {{{"counter", "local_ack_timeout_err"}, {"max", 4}, {"per", "GB"}}}}});
  auto outcomes = evaluate(profile, {run_of("allreduce-np4-a.json")});  // a run with no fabric readings
  ASSERT_EQ(outcomes.size(), 1U);
  EXPECT_EQ(outcomes[0].verdict, CheckVerdict::Fail);
  EXPECT_EQ(outcomes[0].evidence.ruling, Ruling::Fail);
  EXPECT_EQ(outcomes[0].evidence.gaps.at(0).lack, Lack::Absent);
  EXPECT_FALSE(all_passed(outcomes));
  waive_unjudged(outcomes, {"acks"});
  EXPECT_EQ(outcomes[0].verdict, CheckVerdict::Waived);
  EXPECT_EQ(outcomes[0].evidence.ruling, Ruling::Overridden);
  EXPECT_EQ(outcomes[0].evidence.overridden_by, "--waive-unjudged");
  const auto links =
      evaluate(accept_test::one_check({{"id", "links"}, {"kind", "links"}}), {run_of("allreduce-np4-a.json")});
  EXPECT_EQ(links.at(0).evidence.ruling, Ruling::Fail);
}

TEST(EvidenceRule, AcceptCountersReadTwiceAreInconsistent) {
  auto run = run_of("allreduce-np4-a.json");
  ASSERT_FALSE(run.doc.environment.hosts.empty());
  HostFabric reading;
  reading.host = run.doc.environment.hosts[0].hostname;
  run.doc.fabric = {reading, reading};  // one host read twice, nothing moved
  const auto o = check_one({{"id", "acks"}, {"kind", "counters"}, {"fatal", {"link_downed"}}}, {run});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  ASSERT_EQ(o.evidence.ruling, Ruling::Fail);
  EXPECT_TRUE(std::any_of(o.evidence.gaps.begin(), o.evidence.gaps.end(),
                          [](const Gap& g) { return g.lack == Lack::Inconsistent; }));
}

// --- compare: no row in common is NO VERDICT -----------------------------------------------------------

TEST(EvidenceRule, CompareWithNoRowInCommonHasNoVerdict) {
  const auto base = std::vector<LoadedRun>{run_of("allreduce-np4-a.json")};
  const auto cand = std::vector<LoadedRun>{run_of("allgather-np4.json")};
  const auto r = comparison_evidence(compare_runs(base, cand, CompareOptions{}), "a.json", "b.json");
  EXPECT_EQ(r.ruling, Ruling::NoVerdict);
  EXPECT_EQ(r.exit_code(kExitOk), kExitUsage);
  EXPECT_EQ(r.gaps.at(0).lack, Lack::Absent);
  EXPECT_EQ(r.gaps.at(0).what.rfind("no row in common: a.json and b.json", 0), 0U) << r.gaps.at(0).what;
  EXPECT_EQ(comparison_evidence(compare_runs(base, base, CompareOptions{}), "a", "a").ruling, Ruling::Judged);
}

// --- regression: a candidate that holds nothing is NO VERDICT, never "no regression" -------------------------

TEST(EvidenceRule, RegressionOfAnEmptyCandidateHasNoVerdict) {
  const fs::path root = fs::temp_directory_path() / ("ccbench-evidence-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "a");
  fs::create_directories(root / "b");
  fs::copy_file(fs::path(CCBENCH_REPORT_DATA) / "runs" / "allreduce-np4-a.json", root / "a" / "allreduce_bench.json");
  const auto v = compare_run_folders(root / "a", root / "b", CompareOptions{}, kDefaultMaxFileBytes);
  fs::remove_all(root);
  EXPECT_EQ(v.outcome, RegressionVerdict::Outcome::NoVerdict);
  EXPECT_EQ(v.exit_code(), kExitUsage);
  EXPECT_EQ(v.evidence.ruling, Ruling::NoVerdict);
  ASSERT_FALSE(v.evidence.gaps.empty());
  EXPECT_EQ(v.evidence.gaps[0].lack, Lack::Absent);
  EXPECT_EQ(v.text(), "NO VERDICT (" + v.evidence.gaps[0].what + ")");
}

// --- fleet: pairs missing are NO VERDICT unless --partial, which the verdict records -----------------------

TEST(EvidenceRule, FleetWithAPairMissingHasNoVerdictUnlessPartial) {
  auto run = run_of("fleet-link.json");  // 4 hosts, 6 pairs
  auto& results = run.doc.results;
  const auto before = results.size();
  std::erase_if(results, [](const CaseResult& r) { return r.group_id == "pair:0-3"; });
  ASSERT_LT(results.size(), before);
  FleetOptions options;
  EXPECT_THROW(evaluate_fleet({run}, options), NoVerdictError);
  options.partial = true;
  const auto v = evaluate_fleet({run}, options);
  EXPECT_EQ(v.evidence.ruling, Ruling::Overridden);
  EXPECT_EQ(v.evidence.overridden_by, "--partial");
  EXPECT_EQ(v.evidence.gaps.at(0).lack, Lack::Absent);
  EXPECT_EQ(v.missing, 1U);
  EXPECT_EQ(evaluate_fleet({run_of("fleet-link.json")}, FleetOptions{}).evidence.ruling, Ruling::Judged);
}

TEST(EvidenceRule, FleetOfTwoHostsHasNoVerdict) {
  auto run = run_of("fleet-link.json");
  std::erase_if(run.doc.results, [](const CaseResult& r) { return r.group_id != "pair:0-1"; });
  EXPECT_THROW(evaluate_fleet({run}, FleetOptions{}), NoVerdictError);
}

}  // namespace
}  // namespace ccbench::report
