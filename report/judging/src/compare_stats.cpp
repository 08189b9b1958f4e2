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

namespace {

/// The continued fraction of the regularized incomplete beta function (modified Lentz), for x < (a+1)/(a+b+2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr int kMaxTerms = 300;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::abs(d) < kTiny ? kTiny : d);
  double h = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double m2 = 2.0 * m;
    for (const double num :
         {m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))}) {
      d = 1.0 + num * d;
      d = 1.0 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1.0 + num / c;
      c = std::abs(c) < kTiny ? kTiny : c;
      h *= d * c;
    }
    if (std::abs(d * c - 1.0) < 1e-15) {
      break;
    }
  }
  return h;
}

/// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) {
    return 0.0;
  }
  if (x >= 1.0) {
    return 1.0;
  }
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return front * beta_fraction(a, b, x) / a;
  }
  return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b;
}

/// P(|T| <= t) for Student's t with df degrees of freedom (the normal distribution for an infinite df).
double t_central(double t, double df) {
  if (std::isinf(df)) {
    return std::erf(t / std::sqrt(2.0));
  }
  return 1.0 - incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
}

}  // namespace

double t_quantile(double confidence, double df) {
  double lo = 0.0;
  double hi = 1.0;
  while (t_central(hi, df) < confidence && hi < 1e12) {
    hi *= 2.0;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2.0;
    (t_central(mid, df) < confidence ? lo : hi) = mid;
  }
  return (lo + hi) / 2.0;
}

std::optional<LaunchShift> launch_shift(std::span<const double> x, std::span<const double> y, bool paired,
                                        double noise_floor) {
  if (x.empty() || y.empty() || (paired && x.size() != y.size())) {
    return std::nullopt;
  }
  const auto mean = [](std::span<const double> v) {
    double sum = 0.0;
    for (const double e : v) {
      sum += e;
    }
    return sum / static_cast<double>(v.size());
  };
  const auto squares = [](std::span<const double> v, double m) {
    double sum = 0.0;
    for (const double e : v) {
      sum += (e - m) * (e - m);
    }
    return sum;
  };
  LaunchShift s;
  double variance = 0.0;  // of one launch's median (unpaired) or of one pair's difference (paired)
  double scale = 0.0;     // se = sqrt(variance * scale)
  double floor = noise_floor * noise_floor;
  if (paired) {
    std::vector<double> d(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      d[k] = y[k] - x[k];
    }
    s.estimate = mean(d);
    s.df = static_cast<double>(d.size()) - 1.0;
    variance = s.df > 0.0 ? squares(d, s.estimate) / s.df : 0.0;
    scale = 1.0 / static_cast<double>(d.size());
    floor *= 2.0;  // a difference of two launches
  } else {
    const double mx = mean(x);
    const double my = mean(y);
    s.estimate = my - mx;
    s.df = static_cast<double>(x.size() + y.size()) - 2.0;
    variance = s.df > 0.0 ? (squares(x, mx) + squares(y, my)) / s.df : 0.0;
    scale = 1.0 / static_cast<double>(x.size()) + 1.0 / static_cast<double>(y.size());
  }
  if (s.df <= 0.0) {
    if (floor <= 0.0) {
      return std::nullopt;
    }
    s.df = std::numeric_limits<double>::infinity();
  }
  if (floor > variance) {
    variance = floor;
    s.from_floor = true;
  }
  s.se = std::sqrt(variance * scale);
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
