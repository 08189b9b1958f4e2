#pragma once
// The fleet section of `ccbench-report html`.
#include <optional>
#include <string>

#include "ccbench/report/fleet.hpp"

namespace ccbench::report::detail {

/// The heatmap, verdict and pair table of a sweep's fleet verdict (page_fleet_verdict); "" for none (the page then
/// has no fleet section).
std::string fleet_section(const std::optional<FleetVerdict>& verdict);

}  // namespace ccbench::report::detail
