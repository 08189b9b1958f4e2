#pragma once
// The statistics behind compare's verdicts, as pure functions over samples.
#include <limits>
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

/// The two-sided quantile of Student's t with `df` degrees of freedom: t such that P(|T| <= t) = `confidence`
/// (0 < confidence < 1). An infinite df gives the normal quantile.
double t_quantile(double confidence, double df);

/// The shift of a row's log(median time) between two sets of launches, each launch contributing its median: the
/// estimate, its standard error and degrees of freedom. Paired: launch k of x ran next to launch k of y (equal
/// counts), the shift is the mean of the k differences; else the difference of the means with the launches' pooled
/// variance. `noise_floor` (a log-scale sd of one launch's median, 0 for none) is a floor under the variance, and
/// the whole of it where the launches give none (one a side): then df is infinite.
struct LaunchShift {
  double estimate = 0.0;
  double se = 0.0;
  double df = 0.0;          // infinity when the variance is the operator's noise figure alone
  bool from_floor = false;  // the noise floor was above the launches' own variance
};
std::optional<LaunchShift> launch_shift(std::span<const double> x, std::span<const double> y, bool paired,
                                        double noise_floor);

/// At most `max` values spread evenly over the sorted samples' quantiles (keeps their shape
/// while bounding the m*n differences Hodges-Lehmann looks at).
std::vector<double> thin(std::vector<double> samples, std::size_t max);

}  // namespace ccbench::report::detail
