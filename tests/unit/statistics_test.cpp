#include "ccbench/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace ccbench {
namespace {

TEST(Statistics, KnownSamples) {
  // numpy: np.percentile([...], [50, 95, 99]), np.mean, np.std(ddof=1)
  const std::vector<double> x{7, 1, 3, 9, 5, 2, 8, 4, 6, 10};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 10U);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_DOUBLE_EQ(s.p95, 9.55);
  EXPECT_DOUBLE_EQ(s.p99, 9.91);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.stdev, 3.0276503540974917, 1e-12);
  // n = 10: the 95% CI of the median is (x(2), x(9)) (binomial coverage 97.9%).
  ASSERT_TRUE(s.p50_ci95);
  EXPECT_DOUBLE_EQ(s.p50_ci95->lo, 2);
  EXPECT_DOUBLE_EQ(s.p50_ci95->hi, 9);
}

TEST(Statistics, MedianCiRanksFromTheBinomialTable) {
  // Conover, Practical Nonparametric Statistics, and scipy's binom.ppf: (j, n+1-j).
  EXPECT_EQ(median_ci95_ranks(6)->lo, 1U);
  EXPECT_EQ(median_ci95_ranks(10)->lo, 2U);
  EXPECT_EQ(median_ci95_ranks(20)->lo, 6U);
  EXPECT_EQ(median_ci95_ranks(20)->hi, 15U);
  EXPECT_EQ(median_ci95_ranks(100)->lo, 40U);
  EXPECT_EQ(median_ci95_ranks(100)->hi, 61U);
}

// Below 6 samples even (min, max) covers the median with only 1 - 2^(1-n) < 95% (93.75% at n = 5):
// there is no 95% interval, and min..max must not be written as one.
TEST(Statistics, NoMedianCiBelowSixSamples) {
  for (std::uint64_t n = 0; n < 6; ++n) {
    EXPECT_FALSE(median_ci95_ranks(n)) << "n=" << n;
  }
  const Summary five = summarize(std::vector<double>{1, 2, 3, 4, 5});
  EXPECT_FALSE(five.p50_ci95);
  EXPECT_EQ(relative_ci_halfwidth(five), INFINITY);  // a stop rule keeps sampling
  EXPECT_TRUE(summarize(std::vector<double>{1, 2, 3, 4, 5, 6}).p50_ci95);
}

TEST(Statistics, MedianCiCoverageIsAtLeast95PercentAcrossN) {
  for (std::uint64_t n = 6; n <= 1000; n += 7) {
    const RankPair r = *median_ci95_ranks(n);
    // P(j <= B <= n - j) for B ~ binomial(n, 1/2), computed independently with lgamma.
    double cover = 0;
    const auto nd = static_cast<double>(n);
    for (std::uint64_t i = r.lo; i <= n - r.lo; ++i) {
      const auto id = static_cast<double>(i);
      cover += std::exp(std::lgamma(nd + 1) - std::lgamma(id + 1) - std::lgamma(nd - id + 1) - nd * std::log(2.0));
    }
    EXPECT_GE(cover, 0.95) << "n=" << n;
    EXPECT_EQ(r.hi, n + 1 - r.lo);
  }
}

TEST(Statistics, NormalApproximationAboveAThousand) {
  const RankPair r = *median_ci95_ranks(10000);
  EXPECT_EQ(r.lo, 4902U);  // floor(5000 - 1.96 * 50)
  EXPECT_EQ(r.hi, 5099U);
}

TEST(Statistics, RelativeHalfWidthUsesTheWiderSide) {
  Summary s;
  s.p50 = 100;
  s.p50_ci95 = Interval{99, 103};
  EXPECT_DOUBLE_EQ(relative_ci_halfwidth(s), 0.03);
}

TEST(Statistics, EmptyAndSingle) {
  EXPECT_EQ(summarize(std::vector<double>{}).n, 0U);
  const Summary one = summarize(std::vector<double>{4.0});
  EXPECT_DOUBLE_EQ(one.p50, 4.0);
  EXPECT_DOUBLE_EQ(one.stdev, 0.0);
  EXPECT_FALSE(one.p50_ci95);
}

}  // namespace
}  // namespace ccbench
