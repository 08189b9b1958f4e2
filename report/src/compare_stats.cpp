#include "compare_stats.hpp"

#include <algorithm>
#include <cmath>

namespace ccbench::report::detail {

namespace {

constexpr double kZ95 = 1.959963984540054;  // two-sided 95% normal quantile

// The k-th smallest (1-based) of `values`, which it reorders.
double kth_smallest(std::vector<double>& values, std::size_t k) {
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

}  // namespace

std::optional<Shift> hodges_lehmann(std::span<const double> x, std::span<const double> y) {
  const auto m = static_cast<double>(x.size());
  const auto n = static_cast<double>(y.size());
  const double count = m * n;
  const double k = std::floor(count / 2.0 - kZ95 * std::sqrt(m * n * (m + n + 1.0) / 12.0));
  if (x.empty() || y.empty() || k < 1.0) {
    return std::nullopt;
  }
  std::vector<double> diffs;
  diffs.reserve(x.size() * y.size());
  for (const double xi : x) {
    for (const double yj : y) {
      diffs.push_back(yj - xi);
    }
  }
  const std::size_t total = diffs.size();
  const auto lo_rank = static_cast<std::size_t>(k);
  Shift s;
  s.lo = kth_smallest(diffs, lo_rank);
  s.hi = kth_smallest(diffs, total + 1 - lo_rank);
  if (total % 2 == 1) {
    s.estimate = kth_smallest(diffs, (total + 1) / 2);
  } else {
    s.estimate = (kth_smallest(diffs, total / 2) + kth_smallest(diffs, total / 2 + 1)) / 2.0;
  }
  return s;
}

std::vector<double> thin(std::vector<double> samples, std::size_t max) {
  if (samples.size() <= max || max == 0) {
    return samples;
  }
  std::sort(samples.begin(), samples.end());
  std::vector<double> out;
  out.reserve(max);
  const double step = static_cast<double>(samples.size()) / static_cast<double>(max);
  for (std::size_t i = 0; i < max; ++i) {
    out.push_back(samples[static_cast<std::size_t>((static_cast<double>(i) + 0.5) * step)]);
  }
  return out;
}

}  // namespace ccbench::report::detail
