#pragma once
// `ccbench-report html FILE... -o report.html`: one self-contained page (no network fetches, no
// scripts) with the tables and SVG plots of busbw against size, runs overlaid, peaks as lines.
#include <string>
#include <vector>

#include "ccbench/report/input.hpp"

namespace ccbench::report {

struct HtmlOptions {
  std::string title = "ccbench report";
};

/// Deterministic: the same runs give the same bytes (no time stamps, no random ids).
std::string render_html(const std::vector<LoadedRun>& runs, const HtmlOptions& options);

}  // namespace ccbench::report
