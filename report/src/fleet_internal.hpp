#pragma once
// What fleet.cpp and fleet_groups.cpp share.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ccbench/report/fleet.hpp"

namespace ccbench::report::detail {

double median_of(std::vector<double> v);

/// A case's figure: busbw (GB/s) or latency (us) of its median sample, or of its fastest (`best`);
/// unset when the case did not measure.
std::optional<double> figure(const CaseResult& r, bool latency, bool best);

/// The --hosts-per-group part of evaluate_fleet: fills v.groups, v.hosts and v.reference from the
/// results of kind hosts at v.size_bytes. Throws UsageError (a group twice, a host in no group).
void judge_groups(const std::vector<LoadedRun>& runs, bool latency, bool best, const std::set<std::string>& hosts,
                  FleetVerdict& v);

}  // namespace ccbench::report::detail
