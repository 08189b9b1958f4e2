#pragma once
// The words of the verdicts that several formats share, and the commands print beside them. A verdict is decided
// in judging/ (compare.hpp, fleet.hpp); here it is only said.
#include <cstddef>
#include <string>
#include <vector>

#include "ccbench/report/compare.hpp"
#include "ccbench/report/fleet.hpp"

namespace ccbench::report {

/// "12 rows compared: 10 SAME, 0 FASTER, 2 SLOWER, 0 UNSURE, 0 FAILED; 0 MISSING from B, 0 only in B, 0 skipped
/// on both sides": the counts of the verdicts, as the terminal prints them.
std::string summary_line(const Comparison& comparison);
/// What a row's interval is: "95% CI (Hodges-Lehmann on raw samples, ...)", or between launches, at what level.
std::string interval_text(const Comparison& comparison);

/// Pairs the terminal and Markdown tables list in full; a larger sweep lists its LOW pairs (every format
/// that a program reads, CSV and JSON, lists every pair).
inline constexpr std::size_t kFleetPairsListed = 1000;

/// What the verdict names, a line each, as every format says it: FLEET LOW, SPLIT, BAD HOST, LOW GROUP, BAD LINK.
std::vector<std::string> fleet_verdict_lines(const FleetVerdict& verdict);
/// The fabric's evidence of the sweep's hosts: the error counters that moved and the links that trained low, per
/// host (ccbench::fabric_findings), each once; the hosts the verdict names (BAD HOST, a BAD LINK's two, a LOW
/// GROUP's) first. A host whose counters speak though its bandwidth looks fine is in it too: its evidence is
/// printed, the verdict and exit code stay the bandwidth's.
std::vector<std::string> fleet_evidence(const FleetVerdict& verdict);
/// "reference busbw: 0.0055 GB/s (level 0.0055 GB/s, anchor none); anchor: ..." (per local rank when there
/// are several), and what a partial sweep left out.
std::string fleet_reference_text(const FleetVerdict& verdict);

}  // namespace ccbench::report
