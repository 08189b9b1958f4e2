#pragma once
// The run planner: what a run will measure, decided before any process connects to another. A pure
// function of the config and the layout of ranks on hosts, so every rank computes the same plan, and the
// tests inspect it without MPI.
#include <cstdint>
#include <string>
#include <vector>

#include "ccbench/config.hpp"
#include "ccbench/groups.hpp"
#include "ccbench/host_info.hpp"

namespace ccbench {

struct RunPlan {
  /// The groups that run side by side in each round. One round, the groups of --split; two of
  /// --hosts-per-group (see host_groups); --all-pairs has a round for each set of disjoint pairs (every
  /// pair of hosts meets once; of ranks, on one host).
  std::vector<std::vector<GroupPlan>> rounds;
  std::vector<std::string> variants;  // {""}, or {"configured", "ring"} under --nccl-variants
  std::vector<std::uint64_t> sizes;   // the sweep, bytes (-b, -e, -f, rounded to whole elements)
  std::vector<bool> placements;       // in_place of each case at a size, in order (--placement)
  std::vector<std::string> errors;    // what the layout refuses, each one line; empty when the plan runs
  bool all_pairs = false;             // the rounds are those of --all-pairs

  /// Every group of every round, in order.
  [[nodiscard]] std::vector<GroupPlan> groups() const;
};

/// The plan of `config` over `hosts` (each host's world ranks). Checks once, and reports together, all
/// that depends on the layout: an RDMA bench needs 2 ranks; --root must be a rank of every group.
RunPlan plan_run(const RunConfig& config, const std::vector<HostInfo>& hosts);

/// --all-pairs: every pair, in rounds of disjoint pairs side by side, each round's pairs numbered from 0.
/// Over several hosts the pairs are of hosts: local rank l of one host with local rank l of the other
/// (the same GPU and NIC rail on both ends), for every l, so n hosts take n-1 rounds (n for odd n) of
/// n/2 x L pairs. Every host needs the same number of ranks L; else a line in `errors` and no rounds.
/// On one host, every pair of its ranks.
std::vector<std::vector<GroupPlan>> all_pairs_groups(const std::vector<HostInfo>& hosts,
                                                     std::vector<std::string>& errors);

/// --hosts-per-group K: groups of K hosts (every rank of each), the last group of a round the hosts left
/// over. Round 1 takes consecutive hosts; round 2 (when there are more than K hosts) the first host of
/// every round-1 group, then the second of each, ..., so that a host meets other partners and a bad one
/// is where a LOW group of each round meets. Ids hosts:0, hosts:1, ... across the rounds.
std::vector<std::vector<GroupPlan>> host_groups(const std::vector<HostInfo>& hosts, int hosts_per_group);

/// The errors of a plan as the one line a usage error prints ("; " between them).
std::string joined_errors(const RunPlan& plan);

}  // namespace ccbench
