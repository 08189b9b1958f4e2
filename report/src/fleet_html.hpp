#pragma once
// The fleet section of `ccbench-report html`.
#include <string>
#include <vector>

#include "ccbench/report/input.hpp"

namespace ccbench::report::detail {

/// The heatmap, verdict and pair table of an --all-pairs sweep over 3 hosts or more; "" when `runs`
/// are not one such sweep (the page then has no fleet section).
std::string fleet_section(const std::vector<LoadedRun>& runs);

}  // namespace ccbench::report::detail
