#pragma once
// `ccbench-report table`: per run, bench and group, the nccl-tests-like table plus median/p95,
// %peak and wrong elements.
#include <string>
#include <vector>

#include "ccbench/report/input.hpp"
#include "ccbench/report/text.hpp"

namespace ccbench::report {

/// `colour`: ANSI colour for statuses (only when printing to a terminal).
std::string render_tables(const std::vector<LoadedRun>& runs, Format format, bool colour);

}  // namespace ccbench::report
