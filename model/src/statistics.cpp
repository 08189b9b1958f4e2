#include "ccbench/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ccbench {

double percentile(std::span<const double> sorted, double p) {
  if (sorted.empty()) {
    return 0.0;
  }
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(pos));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(below);
  return sorted[below] + frac * (sorted[above] - sorted[below]);
}

double mean(std::span<const double> samples) {
  if (samples.empty()) {
    return 0.0;
  }
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stdev(std::span<const double> samples) {
  if (samples.size() < 2) {
    return 0.0;
  }
  const double m = mean(samples);
  double sq = 0.0;
  for (double x : samples) {
    sq += (x - m) * (x - m);
  }
  return std::sqrt(sq / static_cast<double>(samples.size() - 1));
}

namespace {

// Smallest j with P(B <= j) > 0.025 for B ~ binomial(n, 1/2); pmf updated in one pass.
// 2^-n stays a normal double for n <= 1000.
std::uint64_t first_rank_above_tail(std::uint64_t n) {
  const auto nd = static_cast<double>(n);
  double pmf = std::pow(0.5, nd);
  double cdf = pmf;
  std::uint64_t j = 0;
  while (cdf <= 0.025) {
    pmf *= (nd - static_cast<double>(j)) / static_cast<double>(j + 1);
    ++j;
    cdf += pmf;
  }
  return j;
}

}  // namespace

std::optional<RankPair> median_ci95_ranks(std::uint64_t n) {
  if (n < 6) {
    return std::nullopt;
  }
  std::uint64_t j = 0;
  if (n <= 1000) {
    // Largest j with P(B <= j - 1) <= 0.025: then X(j)..X(n+1-j) covers >= 95%.
    j = first_rank_above_tail(n);
  } else {
    const auto nd = static_cast<double>(n);
    j = static_cast<std::uint64_t>(std::floor(nd / 2.0 - 1.959964 * std::sqrt(nd) / 2.0));
  }
  j = std::max<std::uint64_t>(j, 1);
  return RankPair{j, n + 1 - j};
}

std::optional<Interval> median_ci95(std::span<const double> sorted) {
  const auto r = median_ci95_ranks(sorted.size());
  if (!r) {
    return std::nullopt;
  }
  return Interval{sorted[r->lo - 1], sorted[r->hi - 1]};
}

double relative_ci_halfwidth(const Summary& s) {
  if (s.p50 <= 0.0 || !s.p50_ci95) {
    return INFINITY;
  }
  return std::max(s.p50 - s.p50_ci95->lo, s.p50_ci95->hi - s.p50) / s.p50;
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) {
    return s;
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = percentile(sorted, 50);
  s.p95 = percentile(sorted, 95);
  s.p99 = percentile(sorted, 99);
  s.p999 = percentile(sorted, 99.9);
  s.mean = mean(sorted);
  s.stdev = stdev(sorted);
  s.p50_ci95 = median_ci95(sorted);
  return s;
}

}  // namespace ccbench
