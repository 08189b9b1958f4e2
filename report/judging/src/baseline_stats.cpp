// The baseline's statistics: the median, the MAD and the fit (docs/baseline.md says why these).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ccbench/report/baseline.hpp"

namespace ccbench::report {

double median_of(std::vector<double> values) {
  if (values.empty()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

RobustFit robust_fit(const std::vector<double>& values, double min_spread_fraction) {
  if (values.empty()) {
    throw std::logic_error("robust_fit of no value");
  }
  RobustFit fit;
  fit.n = values.size();
  fit.centre = median_of(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (const double v : values) {
    deviations.push_back(std::abs(v - fit.centre));
  }
  fit.mad = median_of(deviations);
  const double from_mad = kMadToSigma * fit.mad;
  const double least = min_spread_fraction * std::abs(fit.centre);
  fit.spread_from_floor = from_mad < least;
  fit.spread = std::max(from_mad, least);
  return fit;
}

}  // namespace ccbench::report
