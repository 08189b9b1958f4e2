#pragma once
// Statistics as named pure functions over samples (google/benchmark style).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ccbench {

struct Interval {
  double lo = 0.0;
  double hi = 0.0;
};

struct Summary {
  std::uint64_t n = 0;
  double min = 0.0;
  double p50 = 0.0;
  double mean = 0.0;
  double p95 = 0.0;
  double p99 = 0.0;
  double max = 0.0;
  double stdev = 0.0;                // sample standard deviation (n - 1)
  std::optional<Interval> p50_ci95;  // distribution-free 95% CI of the median; none below 6 samples
  double p999 = 0.0;                 // the 99.9th percentile (perftest's 99.9% for latency)
};

/// Percentile p in [0, 100] of sorted samples, linear interpolation between closest ranks
/// (numpy's default, R type 7).
double percentile(std::span<const double> sorted, double p);
double mean(std::span<const double> samples);
double stdev(std::span<const double> samples);

/// 1-based order statistics (j, k) with P(X(j) <= median <= X(k)) >= 0.95, from the
/// binomial(n, 1/2) distribution (exact for n <= 1000, normal approximation above).
/// For n < 6 no such pair exists (even min..max covers only 1 - 2^(1-n) < 95%): nullopt.
struct RankPair {
  std::uint64_t lo = 1;
  std::uint64_t hi = 1;
};
std::optional<RankPair> median_ci95_ranks(std::uint64_t n);

/// Confidence interval of the median of sorted samples; nullopt below 6 samples.
std::optional<Interval> median_ci95(std::span<const double> sorted);

/// Half-width of the median's CI relative to the median: max(p50 - lo, hi - p50) / p50; infinite
/// when there is no CI (too few samples), so that a stop rule keeps sampling.
double relative_ci_halfwidth(const Summary& s);

Summary summarize(std::span<const double> samples);

}  // namespace ccbench
