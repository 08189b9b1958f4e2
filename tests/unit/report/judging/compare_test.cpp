#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "ccbench/report/compare.hpp"
#include "ccbench/statistics.hpp"
#include "compare_stats.hpp"

namespace ccbench::report {
namespace {

const std::filesystem::path kRuns = std::filesystem::path(CCBENCH_REPORT_DATA) / "runs";

LoadedRun base_run() { return read_result_file(kRuns / "allreduce-np4-a.json"); }

// A candidate made from the base: every ok case's samples and summary times multiplied by `factor`.
LoadedRun scaled(LoadedRun run, double factor) {
  for (auto& r : run.doc.results) {
    for (auto& s : r.samples_s) {
      s *= factor;
    }
    if (r.time) {
      r.time->p50 *= factor;
      if (r.time->p50_ci95) {
        r.time->p50_ci95->lo *= factor;
        r.time->p50_ci95->hi *= factor;
      }
    }
    r.busbw_GBps /= factor;
  }
  return run;
}

std::vector<Verdict> verdicts(const Comparison& c) {
  std::vector<Verdict> out;
  for (const auto& r : c.rows) {
    out.push_back(r.verdict);
  }
  return out;
}

bool all_are(const Comparison& c, Verdict v) {
  const auto vs = verdicts(c);
  return !vs.empty() && std::all_of(vs.begin(), vs.end(), [v](Verdict x) { return x == v; });
}

TEST(ReportCompareStats, HodgesLehmannFindsAShift) {
  std::vector<double> x;
  std::vector<double> y;
  for (int i = 0; i < 20; ++i) {
    x.push_back(i);
    y.push_back(i + 2.0);
  }
  const auto s = detail::hodges_lehmann(x, y);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->estimate, 2.0);
  EXPECT_LT(s->lo, 2.0);
  EXPECT_GT(s->hi, 2.0);
  EXPECT_GT(s->lo, -4.0);  // 20 against 20 pins the shift well inside the data's spread
}

TEST(ReportCompareStats, NoIntervalFromThreeAgainstThree) {
  const std::vector<double> x = {1, 2, 3};
  EXPECT_FALSE(detail::hodges_lehmann(x, x));
}

TEST(ReportCompareStats, ThinKeepsQuantiles) {
  std::vector<double> v(10000);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(v.size() - i);
  }
  const auto t = detail::thin(v, 100);
  ASSERT_EQ(t.size(), 100U);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_NEAR(t[50], 5000.0, 60.0);
}

TEST(ReportCompare, RunAgainstItselfIsSame) {
  const std::vector<LoadedRun> a = {base_run()};
  const auto c = compare_runs(a, a, {});
  EXPECT_TRUE(all_are(c, Verdict::Same));
  EXPECT_FALSE(c.any_regression());
  EXPECT_TRUE(c.only_base.empty() && c.only_cand.empty());
}

TEST(ReportCompare, ScaledSlowerFasterAndBelowThreshold) {
  const std::vector<LoadedRun> a = {base_run()};
  const auto slower = compare_runs(a, {scaled(base_run(), 1.25)}, {});
  EXPECT_TRUE(all_are(slower, Verdict::Slower));
  EXPECT_TRUE(slower.any_regression());
  EXPECT_NEAR(slower.rows.front().change->estimate, -0.2, 1e-9);
  EXPECT_TRUE(all_are(compare_runs(a, {scaled(base_run(), 0.8)}, {}), Verdict::Faster));
  CompareOptions loose;
  loose.threshold = 0.25;
  EXPECT_TRUE(all_are(compare_runs(a, {scaled(base_run(), 1.25)}, loose), Verdict::Same));
}

TEST(ReportCompare, TooFewSamplesIsUnsure) {
  auto few = base_run();
  for (auto& r : few.doc.results) {
    r.samples_s.resize(std::min<std::size_t>(r.samples_s.size(), 3));
    r.time->n = r.samples_s.size();
  }
  const auto c = compare_runs({base_run()}, {few}, {});
  EXPECT_TRUE(all_are(c, Verdict::Unsure));
  EXPECT_NE(c.rows.front().why.find("too few samples (3 < 5)"), std::string::npos);
}

// Five samples a side pass --min-samples 5, but no 95% interval of a median exists below 6: the
// row is UNSURE, not judged on min..max posing as an interval.
TEST(ReportCompare, FiveSamplesHaveNoMedianCiAndAreUnsure) {
  auto five = base_run();
  for (auto& r : five.doc.results) {
    if (r.time) {
      r.samples_s.resize(std::min<std::size_t>(r.samples_s.size(), 5));
      r.time = summarize(r.samples_s);
      r.samples_s.clear();
    }
  }
  CompareOptions options;
  options.min_samples = 5;
  const auto c = compare_runs({five}, {scaled(five, 3.0)}, options);
  EXPECT_TRUE(all_are(c, Verdict::Unsure));
  EXPECT_NE(c.rows.front().why.find("no 95% CI of the median (5 samples"), std::string::npos) << c.rows.front().why;
}

TEST(ReportCompare, MediansCiWhenNoRawSamples) {
  auto a = base_run();
  for (auto& r : a.doc.results) {
    r.samples_s.clear();
  }
  const auto c = compare_runs({a}, {scaled(a, 1.25)}, {});
  EXPECT_TRUE(all_are(c, Verdict::Slower));
  EXPECT_EQ(c.rows.front().method, "medians' CIs");
}

TEST(ReportCompare, BrokenCandidateIsFailed) {
  auto cand = base_run();
  cand.doc.results[2].status = CaseStatus::TimedOut;
  cand.doc.results[3].wrong_elements = 7;
  const auto c = compare_runs({base_run()}, {cand}, {});
  EXPECT_EQ(c.rows[2].verdict, Verdict::Failed);
  EXPECT_EQ(c.rows[3].verdict, Verdict::Failed);
  EXPECT_NE(c.rows[3].why.find("7 wrong element(s)"), std::string::npos);
  EXPECT_TRUE(c.any_regression());
}

TEST(ReportCompare, RowsOnOneSideAreListed) {
  auto cand = base_run();
  cand.doc.results.pop_back();
  const auto c = compare_runs({base_run()}, {cand}, {});
  EXPECT_EQ(c.only_base.size(), 1U);
  EXPECT_TRUE(c.only_cand.empty());
}

TEST(ReportCompare, DifferentTimingModesNeverMatch) {
  auto cand = base_run();
  for (auto& r : cand.doc.results) {
    r.timing = TimingMode::PerOp;
  }
  const auto c = compare_runs({base_run()}, {cand}, {});
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.only_base.size(), base_run().doc.results.size());
}

// --nccl-variants: the ring rows of a run are their own rows, matched only with ring rows; the configured
// rows are what a plain run measures.
TEST(ReportCompare, NcclVariantsAreSeparateRows) {
  auto both = base_run();
  const auto configured_count = both.doc.results.size();
  for (std::size_t i = 0; i < configured_count; ++i) {
    both.doc.results[i].variant = "configured";
    auto ring = both.doc.results[i];
    ring.variant = "ring";
    both.doc.results.push_back(ring);
  }
  const auto itself = compare_runs({both}, {both}, {});
  EXPECT_EQ(itself.rows.size(), 2 * configured_count);
  EXPECT_TRUE(all_are(itself, Verdict::Same));
  auto ring_only = both;
  std::erase_if(ring_only.doc.results, [](const CaseResult& r) { return r.variant != "ring"; });
  const auto c = compare_runs({both}, {ring_only}, {});
  EXPECT_EQ(c.rows.size(), configured_count);
  EXPECT_EQ(c.only_base.size(), configured_count);
  for (const auto& row : c.rows) {
    EXPECT_EQ(row.key.variant, "ring");
  }
  EXPECT_NE(describe(c.rows.front().key).find(" batch ring "), std::string::npos) << describe(c.rows.front().key);
  // A plain baseline is compared with the configured sweep; the ring rows are the candidate's own.
  const auto plain = compare_runs({base_run()}, {both}, {});
  EXPECT_EQ(plain.rows.size(), configured_count);
  EXPECT_TRUE(all_are(plain, Verdict::Same));
  EXPECT_EQ(plain.only_cand.size(), configured_count);
  EXPECT_TRUE(plain.only_base.empty());
}

TEST(ReportCompare, DifferentPeaksCompareAgainstSpec) {
  const auto a = read_result_file(kRuns / "allreduce-np2-peak20.json");
  const auto b = read_result_file(kRuns / "allreduce-np2-peak10.json");
  const auto c = compare_runs({a}, {b}, {});
  ASSERT_FALSE(c.rows.empty());
  EXPECT_TRUE(c.against_spec);
  const auto& r = c.rows.back();
  EXPECT_DOUBLE_EQ(*r.spec_ratio, 0.5);
  ASSERT_TRUE(r.change && r.measured_ratio);
  // The change is of busbw / peak: the measured ratio over the spec ratio, up to the estimator.
  EXPECT_NEAR(1.0 + r.change->estimate, *r.measured_ratio / 0.5, 0.1 * *r.measured_ratio / 0.5);
}

TEST(ReportCompare, DuplicateRowsOnOneSideAreRefused) {
  EXPECT_THROW(compare_runs({base_run(), base_run()}, {base_run()}, {}), UsageError);
}

}  // namespace
}  // namespace ccbench::report

// Between launches (issue 36): each launch contributes its median; the interval comes from the launches' variation.
namespace ccbench::report {
namespace {

TEST(ReportCompareStats, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(detail::t_quantile(0.95, 1), 12.7062, 1e-3);
  EXPECT_NEAR(detail::t_quantile(0.95, 4), 2.7764, 1e-3);
  EXPECT_NEAR(detail::t_quantile(0.95, 10), 2.2281, 1e-3);
  EXPECT_NEAR(detail::t_quantile(0.99, 8), 3.3554, 1e-3);
  EXPECT_NEAR(detail::t_quantile(0.95, std::numeric_limits<double>::infinity()), 1.95996, 1e-4);
  EXPECT_NEAR(detail::t_quantile(0.999, std::numeric_limits<double>::infinity()), 3.29053, 1e-4);
}

TEST(ReportCompareStats, LaunchShiftPooledPairedAndFloor) {
  const std::vector<double> x = {0.0, 0.1, 0.2};
  const std::vector<double> y = {0.1, 0.2, 0.3};
  const auto pooled = detail::launch_shift(x, y, false, 0.0);
  ASSERT_TRUE(pooled);
  EXPECT_NEAR(pooled->estimate, 0.1, 1e-12);
  EXPECT_NEAR(pooled->se, std::sqrt(0.01 * 2.0 / 3.0), 1e-12);  // pooled variance 0.01, 1/3 + 1/3
  EXPECT_EQ(pooled->df, 4.0);
  const auto paired = detail::launch_shift(x, y, true, 0.0);
  ASSERT_TRUE(paired);
  EXPECT_NEAR(paired->se, 0.0, 1e-12);  // every pair moved by the same 0.1: the launches' drift cancels
  EXPECT_EQ(paired->df, 2.0);
  const auto floored = detail::launch_shift(x, y, true, 0.05);
  ASSERT_TRUE(floored);
  EXPECT_TRUE(floored->from_floor);
  EXPECT_NEAR(floored->se, std::sqrt(2.0 * 0.05 * 0.05 / 3.0), 1e-12);
  const std::vector<double> one = {0.0};
  EXPECT_FALSE(detail::launch_shift(one, one, false, 0.0));  // one launch a side: no variation to go on
  const auto given = detail::launch_shift(one, one, false, 0.05);
  ASSERT_TRUE(given);
  EXPECT_TRUE(std::isinf(given->df));
  EXPECT_FALSE(detail::launch_shift(x, one, true, 0.0));  // pairs need as many a side
}

std::vector<std::vector<LoadedRun>> launches_of(std::initializer_list<double> factors) {
  std::vector<std::vector<LoadedRun>> out;
  for (const double f : factors) {
    out.push_back({scaled(base_run(), f)});
  }
  return out;
}

Comparison decided(const std::vector<std::vector<LoadedRun>>& a, const std::vector<std::vector<LoadedRun>>& b,
                   const CompareOptions& options = {}) {
  auto c = compare_launches(a, b, options);
  decide_launch_rows({&c}, options);
  return c;
}

TEST(ReportCompareLaunches, LaunchNoiseIsNotARegression) {
  // One launch a side 12% apart is what one launch's samples call SLOWER; launches that move as much are not.
  const auto one = compare_runs({base_run()}, {scaled(base_run(), 1.12)}, {});
  EXPECT_TRUE(all_are(one, Verdict::Slower));
  const auto c = decided(launches_of({1.0, 1.12, 0.95}), launches_of({1.12, 0.97, 1.05}));
  EXPECT_FALSE(c.any_regression());
  EXPECT_TRUE(all_are(c, Verdict::Unsure)) << c.rows.front().why;
  EXPECT_EQ(c.launches_a, 3U);
  EXPECT_EQ(c.family_rows, c.rows.size());
  EXPECT_NEAR(c.row_confidence, 1.0 - 0.05 / static_cast<double>(c.rows.size()), 1e-12);
}

TEST(ReportCompareLaunches, AChangeBeyondTheLaunchesVariationIsSlower) {
  const auto c = decided(launches_of({1.0, 1.02, 0.99}), launches_of({1.25, 1.27, 1.24}));
  EXPECT_TRUE(all_are(c, Verdict::Slower));
  EXPECT_NEAR(c.rows.front().change->estimate, 1.0 / (1.253333 / 1.003333) - 1.0, 0.01);
  const auto same = decided(launches_of({1.0, 1.01, 0.99}), launches_of({1.0, 0.995, 1.005}));
  EXPECT_TRUE(all_are(same, Verdict::Same)) << same.rows.front().why;
}

TEST(ReportCompareLaunches, PairsCancelADriftTheLaunchesShare) {
  // The machine drifts from launch to launch by 20%, the same for both sides; B is 10% slower in every pair.
  const auto a = launches_of({1.0, 1.2, 0.9, 1.1});
  const auto b = launches_of({1.1, 1.32, 0.99, 1.21});
  EXPECT_TRUE(all_are(decided(a, b), Verdict::Unsure));  // unpaired, the drift hides it
  CompareOptions paired;
  paired.paired = true;
  EXPECT_TRUE(all_are(decided(a, b, paired), Verdict::Slower));
  EXPECT_THROW(compare_launches(a, launches_of({1.0}), paired), UsageError);
}

TEST(ReportCompareLaunches, OneLaunchASideIsUnsureUnlessTheOperatorGivesTheNoise) {
  const auto c = decided(launches_of({1.0}), launches_of({1.25}));
  EXPECT_TRUE(all_are(c, Verdict::Unsure));
  EXPECT_NE(c.rows.front().why.find("1 launch a side: a change cannot be told from the launches' own variation"),
            std::string::npos)
      << c.rows.front().why;
  CompareOptions noise;
  noise.launch_noise = 0.03;
  const auto given = decided(launches_of({1.0}), launches_of({1.25}), noise);
  EXPECT_TRUE(all_are(given, Verdict::Slower)) << given.rows.front().why;
  EXPECT_NE(given.rows.front().method.find("--launch-noise 3%"), std::string::npos) << given.rows.front().method;
}

TEST(ReportCompareLaunches, SlowerOnlyWhereTheWholeIntervalIsBeyondTheThreshold) {
  // 6% slower with an interval of about ±1.3%: a change, but not one known to be beyond 5%: UNSURE, not a false
  // alarm for a drift between two labels; 8% slower is SLOWER.
  CompareOptions noise;
  noise.launch_noise = 0.003;
  const auto near = decided(launches_of({1.0}), launches_of({1.06}), noise);
  EXPECT_TRUE(all_are(near, Verdict::Unsure)) << near.rows.front().why;
  EXPECT_NE(near.rows.front().why.find("a change, not known to be beyond ±5%"), std::string::npos)
      << near.rows.front().why;
  EXPECT_TRUE(all_are(decided(launches_of({1.0}), launches_of({1.09}), noise), Verdict::Slower));
  EXPECT_TRUE(all_are(decided(launches_of({1.0}), launches_of({1.0 / 1.09}), noise), Verdict::Faster));
}

TEST(ReportCompareLaunches, ALaunchWithoutARowIsMissing) {
  auto b = launches_of({1.0, 1.0});
  b[1][0].doc.results.pop_back();
  const auto c = decided(launches_of({1.0, 1.0}), b);
  EXPECT_TRUE(c.any_missing());
  EXPECT_EQ(c.only_base.size(), 1U);
}

}  // namespace
}  // namespace ccbench::report
