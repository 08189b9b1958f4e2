#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

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
