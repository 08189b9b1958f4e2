#pragma once
// The exposition's bookkeeping: families in metric_families()'s order, each series once (a series given again
// replaces the earlier value, and is counted), every line in the text format's syntax.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccbench/report/openmetrics.hpp"

namespace ccbench::report::detail {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

class MetricSet {
 public:
  /// One sample of the family `name` (one of metric_families(): std::logic_error otherwise). A value that is not
  /// finite is left out: Prometheus would take NaN for a measurement.
  void add(std::string_view name, const Labels& labels, double value);
  [[nodiscard]] Exposition exposition() const;

 private:
  struct Samples {
    std::vector<std::string> order;          // label sets, as first given
    std::map<std::string, double> value_of;  // by label set
  };
  std::map<std::string_view, Samples> m_families;
  std::size_t m_replaced = 0;
};

}  // namespace ccbench::report::detail
