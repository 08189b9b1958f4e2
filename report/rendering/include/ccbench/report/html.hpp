#pragma once
// `ccbench-report html FILE... -o report.html`: one self-contained page (no network fetches, no
// scripts) with the tables and SVG plots of busbw against size, runs overlaid, peaks as lines.
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/compare.hpp"
#include "ccbench/report/fleet.hpp"
#include "ccbench/report/input.hpp"

namespace ccbench::report {

struct HtmlOptions {
  std::string title = "ccbench report";
  std::optional<FleetVerdict> fleet;  // the fleet section's verdict (page_fleet_verdict): none, no fleet section
};

/// Deterministic: the same runs give the same bytes (no time stamps, no random ids).
std::string render_html(const std::vector<LoadedRun>& runs, const HtmlOptions& options);

/// The comparison as one self-contained web page (compare --html): a table per section, each side's %peak of its
/// own spec and the measured ratio beside the spec ratio where the peaks differ, the peaks' bases under it.
std::string render_compare_html(const Comparison& comparison, const std::string& title);

}  // namespace ccbench::report
