#pragma once
// `ccbench-report baseline FILE... -o PROFILE.json`: an acceptance profile learned from a fleet's own results
// (docs/baseline.md). Per busbw check (bench, placement, group, size), each host's figure; the centre is their
// median, the spread 1.4826 x MAD (at least a share of the centre); a host more than k spreads from the centre is
// left out and named, the rest refitted, and the floor set k spreads below the new centre. Evidence it does not
// have gives no floor: too few hosts refuses the profile, a check with too few is left out and named, a fleet of
// mixed kinds (libraries, ccbench, communication variables, timing) is refused.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/input.hpp"

namespace ccbench::report {

/// The scale that makes the median absolute deviation estimate a normal distribution's standard deviation
/// (1 / Phi^-1(3/4); Rousseeuw & Croux 1993, Leys et al. 2013).
inline constexpr double kMadToSigma = 1.4826;

/// A robust centre and spread of some hosts' figures.
struct RobustFit {
  double centre = 0;  // the median
  double mad = 0;     // median absolute deviation from it, unscaled
  double spread = 0;  // max(kMadToSigma x mad, min_spread_fraction x centre)
  std::size_t n = 0;
  bool spread_from_floor = false;  // the share of the centre set the spread (MAD was smaller; 0 when half agree)
};

/// The median (mean of the middle two for an even count) of `values`; NaN for none.
double median_of(std::vector<double> values);
/// The fit of `values` (at least one); `min_spread_fraction` keeps a fleet whose hosts agree to the digit (MAD 0)
/// from giving a floor at its centre, which would fail half of it on the next run's noise.
RobustFit robust_fit(const std::vector<double>& values, double min_spread_fraction);

struct BaselineOptions {
  double k = 3;                      // spreads: outliers beyond it on either side, the floor below the centre
  int min_hosts = 5;                 // hosts with a figure: fewer refuses the profile, and leaves a check out
  double min_spread_pct = 1;         // the spread is at least this share of the centre
  std::vector<std::uint64_t> sizes;  // the sizes to learn; empty: each bench's largest
};

/// What one check selects: the accept profile's select keys, and the size.
struct BaselineKey {
  std::string benchmark;
  std::string backend;
  std::string op;
  std::string dtype;
  std::string redop;  // "" where the op has none
  bool in_place = false;
  std::string group;  // the group kind: world, node, pair, ...
  int ranks = 0;
  int nodes = 0;
  std::uint64_t size_bytes = 0;
  // NOLINTNEXTLINE(readability-implicit-bool-conversion,modernize-use-nullptr): false positives on the defaulted <=>
  auto operator<=>(const BaselineKey&) const = default;
};

/// "sendrecv-float32-out-world-2r-2n-busbw-4M": a check id (letters, digits, '.', '_', '-').
std::string check_id(const BaselineKey& key);
/// "sendrecv_bench mpi float32 out-of-place group world of 2 ranks on 2 nodes at 4 MiB".
std::string describe(const BaselineKey& key);

/// A host's figure for a check: the lowest busbw of its groups in a result (accept gates every group), the median
/// over its results when it has several. A host is what a group spans: one host for a node's own run, "a,b" for
/// a pair across two.
struct HostFigure {
  std::string host;
  double GBps = 0;
  double spreads = 0;  // (GBps - centre) / spread of the first fit: how far from the fleet it stands
};

struct LearnedCheck {
  BaselineKey key;
  std::string id;
  std::vector<HostFigure> hosts;     // every host with a figure, in name order
  std::vector<HostFigure> left_out;  // beyond k spreads of the first fit: not in the floor
  RobustFit first;                   // over every host
  RobustFit fit;                     // over the hosts kept
  double floor_GBps = 0;             // fit.centre - k x fit.spread
};

/// A check the results hold but the baseline gives no floor: too few hosts, no majority kept, a floor <= 0.
struct NotLearned {
  BaselineKey key;
  std::string id;
  std::vector<std::string> hosts;  // the hosts that had a figure
  std::string reason;
};

/// Where the profile came from.
struct Provenance {
  std::size_t results = 0;
  std::vector<std::string> files;
  std::vector<std::string> hosts;                // the hosts (as groups span them) with a figure for any check
  std::string from_utc;                          // the earliest run's start
  std::string to_utc;                            // the latest run's end
  std::string tool_version;                      // ccbench's, shared by every result
  std::map<std::string, std::string> libraries;  // shared by every result
  std::map<std::string, std::string> variables;  // shared by every result
};

struct Baseline {
  BaselineOptions options;
  Provenance provenance;
  std::vector<LearnedCheck> checks;
  std::vector<NotLearned> not_learned;
};

/// Learns the floors. Throws UsageError (one line, exit 2) for results of mixed kinds (naming the two files and
/// what differs), fewer than `min_hosts` hosts, a --size no result measured, or no check learned (naming why).
Baseline learn_baseline(const std::vector<LoadedRun>& runs, const BaselineOptions& options);

}  // namespace ccbench::report
