#pragma once
// What fleet.cpp, fleet_lane.cpp, fleet_groups.cpp and fleet_level.cpp share.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ccbench/report/fleet.hpp"

namespace ccbench::report::detail {

double median_of(std::vector<double> v);

/// A case's figure: busbw (GB/s) or latency (us) of its median sample, or of its fastest (`best`); unset when
/// the case did not measure. Throws InputError for a figure that is no measurement (0 us, a busbw of 0).
std::optional<double> figure(const FleetSweep::Case& c, bool latency, bool best, const FleetSweep& sweep,
                             const std::string& unit);

/// Goodness: higher is better (busbw as it is, latency inverted), so one rule serves both.
inline double goodness(double value, bool higher_is_better) { return higher_is_better ? value : 1.0 / value; }

/// The healthy level of one lane (or of the groups): the median of the goodness values within `threshold` of
/// the best one; unset when there is none.
std::optional<double> healthy_level(const std::vector<double>& goodness, double threshold);

/// What one lane is judged against, from its level and its anchor (both as goodness): sets v.level, v.anchor,
/// v.reference and v.fleet_low for the lane; returns the reference's goodness (unset: nothing measured).
/// `anchor_is_level`: the anchor is an operator's figure (--reference), the level the pairs are judged against
/// unless the fleet is LOW as a whole; else (a spec's share) the reference is the better of the two.
std::optional<double> set_reference(FleetVerdict& v, std::optional<double> level, std::optional<double> anchor,
                                    bool anchor_is_level);

/// The anchor of a lane, as goodness: --reference, else `expect_of_peak` of the median spec peak of `peaks` (those
/// of the cases at the level; busbw only, and only when none of the `measured` cases has its peak `unknown`).
/// Sets v.anchor_basis (also when there is none).
std::optional<double> anchor_of(FleetVerdict& v, const FleetOptions& options, const std::vector<double>& peaks,
                                std::size_t unknown, std::size_t measured);

/// The --hosts-per-group part of evaluate_fleet: fills v.groups, v.hosts and the lane's reference from the cases
/// of kind hosts at v.size_bytes. Throws UsageError (a group twice, a host in no group).
void judge_groups(const FleetSweep& sweep, const FleetOptions& options, const std::set<std::string>& hosts,
                  FleetVerdict& v);

/// The hosts of an --all-pairs sweep, each with its index.
struct Judged {
  std::vector<std::string> names;  // every host, in name order
  std::map<std::string, std::size_t> index;
};

/// One lane: its pairs (indices into v.pairs) and, per host, the pairs it is in.
struct Lane {
  int lane = 0;
  std::vector<std::size_t> pairs;
  std::vector<std::vector<std::size_t>> of_host;
  std::vector<std::size_t> a, b;  // per pair of the lane: its hosts' indices
};

/// Judges one lane (fleet_lane.cpp): its level and reference, its pairs' scores and LOW marks, its SPLIT, BAD HOSTs
/// and the pairs that cannot tell; appends its hosts to v.hosts.
void judge_lane(Lane& lane, const Judged& hosts, const FleetSweep& sweep, const FleetOptions& options, FleetVerdict& v);

}  // namespace ccbench::report::detail
