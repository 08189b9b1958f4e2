#pragma once
// `ccbench-report fleet FILE...`: the verdict of an --all-pairs (or --hosts-per-group) sweep that names the part.
// Each pair of hosts is set against the fleet's healthy level: a fault only slows a pair down, so the level is that
// of the fastest hosts, however many hosts are bad. An anchor (--reference, or each pair's spec peak) says whether
// that level is itself low: a fleet far below it is LOW as a whole. A host whose pairs are low nearly everywhere is
// a BAD HOST; hosts fine among themselves and slow across are a SPLIT; a low pair between two hosts fine elsewhere
// is a BAD LINK. Bad input (other benches or sizes mixed, fewer than 3 hosts, a pair missing or measured twice,
// nothing measured) throws InputError or UsageError: exit 2.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/evidence.hpp"
#include "ccbench/report/fleet_sweep.hpp"
#include "ccbench/report/input.hpp"

namespace ccbench::report {

struct FleetOptions {
  double threshold = 0.2;             // a pair more than this fraction worse than the reference is LOW
  std::optional<std::uint64_t> size;  // the size judged; unset: the largest size of the sweep
  bool best = false;                  // --stat best: each pair's fastest sample, not its median
  std::optional<double> reference;    // --reference: a healthy pair's figure (GB/s, or us for latency)
  double expect_of_peak = 0.8;        // --expect-pct-of-peak / 100: a healthy pair's share of its spec peak
  bool partial = false;               // --partial: judge the pairs measured (a sweep that timed out)
};

/// One pair of hosts at one local rank (a lane: local rank l of both hosts).
struct FleetPair {
  std::string host_a;
  std::string host_b;
  int rank_a = 0;
  int rank_b = 0;
  int lane = 0;
  std::string status;               // the case's status: ok, failed, timed_out, ...
  std::optional<double> value;      // busbw (GB/s) or latency (us); unset when the case did not measure
  std::optional<double> peak_GBps;  // the spec's, when the result knew it
  double score = 0.0;               // against the lane's reference: 1 typical, below 1 worse; 0 when not ok
  bool low = false;
  bool across_split = false;  // a LOW pair between two parts of a SPLIT
  std::string explained_by;   // a LOW pair's BAD HOST; empty for a BAD LINK (and for a pair that is fine)
  bool cannot_tell = false;   // a LOW pair one of whose hosts has no other pair measured: host or link, unknown
  std::string suspicious;     // why a pair faster than the fleet can go is not believed (a loopback, an alias), or ""
  std::uint32_t file = 0;     // index into FleetVerdict::files
  // A BAD LINK's or a CANNOT TELL pair's evidence: each host's median score over its other pairs of the lane,
  // leaving out pairs with BAD HOSTs (unset where it has none), and for CANNOT TELL the host without one.
  std::optional<double> elsewhere_a;
  std::optional<double> elsewhere_b;
  std::string alone;

  /// "ok", "BAD LINK", "CANNOT TELL", "SUSPICIOUS", "LOW (SPLIT)" or "LOW (BAD HOST node2)", as every printer says it.
  [[nodiscard]] std::string verdict() const;
  /// The score when the pair measured; unset when it did not.
  [[nodiscard]] std::optional<double> of_reference() const { return value ? std::optional(score) : std::nullopt; }
};

/// One group of a --hosts-per-group sweep.
struct FleetGroup {
  std::string id;  // hosts:3
  std::vector<std::string> hosts;
  std::vector<int> ranks;
  std::string status;
  std::optional<double> value;
  double score = 0.0;
  bool low = false;
  bool explained = false;  // a LOW group that holds a BAD HOST
  std::string file;

  /// "ok", "LOW GROUP" or "LOW (holds a BAD HOST)".
  [[nodiscard]] std::string verdict() const;
  /// The score when the group measured; unset when it did not.
  [[nodiscard]] std::optional<double> of_reference() const { return value ? std::optional(score) : std::nullopt; }
};

/// One host at one lane.
struct FleetHost {
  std::string name;
  int lane = 0;
  int rank = 0;
  std::string device;
  std::size_t pairs = 0;
  std::size_t low = 0;
  std::optional<double> median_score;  // over its pairs that measured
  bool bad = false;
};

/// Hosts fine among themselves and LOW between: the parts of one lane (two or more, of 2 hosts or more each).
struct FleetSplit {
  int lane = 0;
  std::vector<std::vector<std::string>> parts;
  std::size_t pairs_across = 0;         // LOW pairs between two parts
  std::optional<double> median_across;  // their median score
};

/// What `fleet` renders in every format. JUnit XML has one testcase per host (per lane), per BAD LINK, per LOW GROUP,
/// per SPLIT and per lane LOW as a whole.
struct FleetVerdict {
  std::string benchmark;
  std::string metric;  // "busbw" or "latency"
  std::string stat;    // "median" or "best" (the fastest sample)
  std::string unit;    // "GB/s" or "us"
  bool higher_is_better = true;
  std::uint64_t size_bytes = 0;
  bool in_place = false;
  int lanes = 1;
  double threshold = 0.2;
  std::vector<std::optional<double>> level;      // per lane: the healthy level of the data; unset: none measured
  std::vector<std::optional<double>> anchor;     // per lane: what a healthy pair reaches (--reference, spec)
  std::vector<std::optional<double>> reference;  // per lane: what the pairs are judged against
  std::vector<bool> fleet_low;                   // per lane: the level below the anchor's LOW line
  std::vector<std::string> level_notes;          // per lane set aside: why the fastest pairs are not the level
  std::string anchor_basis;        // "--reference 0.006 GB/s", "80% of each pair's spec peak", or why there is none
  std::vector<FleetHost> hosts;    // lane by lane, hosts in name order
  std::vector<FleetPair> pairs;    // lane by lane, pairs in name order
  std::vector<FleetGroup> groups;  // a --hosts-per-group sweep (then no pairs), by id
  std::vector<FleetSplit> splits;
  std::vector<std::string> files;
  std::vector<HostFabric> fabric;  // every file's hosts' fabric evidence (result schema 1.8.0), file by file
  bool partial = false;            // --partial: a sweep that did not reach every pair
  EvidenceRuling evidence;         // the evidence rule's ruling: Judged, or Overridden by --partial (pairs missing)
  std::size_t missing = 0;         // the pairs it did not reach (--partial)
  std::size_t measured = 0;        // pairs (or groups) with a figure

  [[nodiscard]] std::vector<const FleetHost*> bad_hosts() const;
  [[nodiscard]] std::vector<const FleetPair*> bad_links() const;
  /// LOW pairs that one of whose hosts has no other pair measured (a --partial sweep): host or link, unknown.
  [[nodiscard]] std::vector<const FleetPair*> cannot_tell() const;
  /// Pairs faster than the fleet can go, or than their link's spec: not believed, named.
  [[nodiscard]] std::vector<const FleetPair*> suspicious() const;
  /// LOW groups of a --hosts-per-group sweep that hold no BAD HOST.
  [[nodiscard]] std::vector<const FleetGroup*> low_groups() const;
  [[nodiscard]] bool grouped() const { return !groups.empty(); }
  /// Any lane whose level is below its anchor's LOW line.
  [[nodiscard]] bool any_fleet_low() const;
  /// A BAD HOST, a BAD LINK, a pair it cannot tell, a SUSPICIOUS pair, a LOW GROUP, a SPLIT or a fleet LOW as a
  /// whole: exit 1.
  [[nodiscard]] bool anything_named() const;
  /// The rule, in words, as every output format states it.
  [[nodiscard]] std::string rule() const;
};

/// " (local rank 3)" when the sweep pairs several local ranks per host, else "".
std::string lane_suffix(int lane, int lanes);
/// How every printer names a pair: "node1<->node3" (a hyphen is part of many host names).
std::string pair_name(const std::string& host_a, const std::string& host_b);

/// Judges a sweep. Throws InputError or UsageError on bad input (exit 2).
FleetVerdict evaluate_fleet(const FleetSweep& sweep, const FleetOptions& options);
/// The same, of documents in memory.
FleetVerdict evaluate_fleet(const std::vector<LoadedRun>& runs, const FleetOptions& options);
/// The fleet verdict a page of these runs shows (`html`): with the default options, of runs that are one sweep
/// (--all-pairs or --hosts-per-group) over 3 hosts or more; unset for any other runs (no fleet section).
std::optional<FleetVerdict> page_fleet_verdict(const std::vector<LoadedRun>& runs);

}  // namespace ccbench::report
