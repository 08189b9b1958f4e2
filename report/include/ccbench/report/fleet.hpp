#pragma once
// `ccbench-report fleet FILE...`: the verdict of an --all-pairs (or --hosts-per-group) sweep that names the part. Each
// pair of hosts is set against the fleet's own reference (the median over hosts of each host's median pair), a host
// whose pairs are low nearly everywhere is a BAD HOST, and a low pair between two hosts that are fine elsewhere is a
// BAD LINK. Bad input (other benches or sizes mixed, fewer than 3 hosts, a pair missing or measured twice) throws
// InputError: exit 2.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/input.hpp"
#include "ccbench/report/text.hpp"

namespace ccbench::report {

struct FleetOptions {
  double threshold = 0.2;             // a pair more than this fraction worse than the reference is LOW
  std::optional<std::uint64_t> size;  // the size judged; unset: the largest size of the sweep
  bool best = false;                  // --stat best: each pair's fastest sample, not its median
};

/// One pair of hosts at one local rank (a lane: local rank l of both hosts).
struct FleetPair {
  std::string host_a;
  std::string host_b;
  int rank_a = 0;
  int rank_b = 0;
  int lane = 0;
  std::string device_a;  // "GPU3 0000:1b:00.0 NIC mlx5_3" from the results' topology, or ""
  std::string device_b;
  std::string status;           // the case's status: ok, failed, timeout, ...
  std::optional<double> value;  // busbw (GB/s) or latency (us); unset when the case did not measure
  double score = 0.0;           // against the lane's reference: 1 typical, below 1 worse; 0 when not ok
  bool low = false;
  std::string explained_by;  // a LOW pair's BAD HOST; empty for a BAD LINK (and for a pair that is fine)
  std::string file;

  /// "ok", "BAD LINK" or "LOW (BAD HOST node2)", as every printer says it.
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
  std::vector<std::optional<double>> reference;  // per lane; unset when no pair of the lane measured
  std::vector<FleetHost> hosts;                  // lane by lane, hosts in name order
  std::vector<FleetPair> pairs;                  // lane by lane, pairs in name order
  std::vector<FleetGroup> groups;                // a --hosts-per-group sweep (then no pairs), by id
  std::vector<std::string> files;

  [[nodiscard]] std::vector<const FleetHost*> bad_hosts() const;
  [[nodiscard]] std::vector<const FleetPair*> bad_links() const;
  /// LOW groups of a --hosts-per-group sweep that hold no BAD HOST.
  [[nodiscard]] std::vector<const FleetGroup*> low_groups() const;
  [[nodiscard]] bool grouped() const { return !groups.empty(); }
  /// A BAD HOST, a BAD LINK or a LOW GROUP: exit 1.
  [[nodiscard]] bool anything_named() const;
  /// The rule, in words, as every output format states it.
  [[nodiscard]] std::string rule() const;
};

/// " (local rank 3)" when the sweep pairs several local ranks per host, else "".
std::string lane_suffix(int lane, int lanes);

/// Judges the --all-pairs results of `runs`. Throws InputError on bad input (exit 2).
FleetVerdict evaluate_fleet(const std::vector<LoadedRun>& runs, const FleetOptions& options);

std::string render_fleet(const FleetVerdict& verdict, Format format, bool colour);
/// JUnit XML: one testcase per host (per lane) and one per BAD LINK.
std::string render_fleet_junit(const FleetVerdict& verdict);

}  // namespace ccbench::report
