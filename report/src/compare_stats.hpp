#pragma once
// The statistics behind compare's verdicts, as pure functions over samples.
#include <optional>
#include <span>
#include <vector>

namespace ccbench::report::detail {

struct Shift {
  double estimate = 0.0;  // Hodges-Lehmann: the median of all differences y_j - x_i
  double lo = 0.0;        // distribution-free 95% confidence interval of the shift
  double hi = 0.0;
};

/// The shift of y against x with its 95% CI from the Mann-Whitney U distribution (normal
/// approximation; Bauer 1972). Nullopt when the samples are too few for such an interval
/// (for 3 against 3 there is none).
std::optional<Shift> hodges_lehmann(std::span<const double> x, std::span<const double> y);

/// At most `max` values spread evenly over the sorted samples' quantiles (keeps their shape
/// while bounding the m*n differences Hodges-Lehmann looks at).
std::vector<double> thin(std::vector<double> samples, std::size_t max);

}  // namespace ccbench::report::detail
