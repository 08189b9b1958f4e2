#pragma once
// Splitting the ranks of a job into groups that run the collective side by side (--split).
// A pure function of the rank layout, so every rank computes the same plan.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/host_info.hpp"

namespace ccbench {

enum class Split {
  World,      // all ranks
  Node,       // the ranks of each host, one group per host
  CrossNode,  // one rank per host (its local rank 0); the others idle
  Rail,       // the same local rank across hosts, one group per local rank
  Pairs,      // disjoint pairs of consecutive ranks (0-1, 2-3, ...); an odd last rank idles
};

std::string_view name(Split split);
std::optional<Split> parse_split(std::string_view text);

struct GroupPlan {
  int color = 0;                   // MPI_Comm_split color; groups are numbered 0..n-1
  std::string kind;                // "world", "node", "cross-node", "rail", "pair", "hosts"
  std::string id;                  // "world", "node:host1", "cross-node", "rail:3", "pair:4-5", "hosts:0"
  std::vector<int> ranks;          // world ranks, in group rank order
  std::vector<std::string> hosts;  // distinct hosts of those ranks, in order of appearance
};

/// Every group of the split, from the hosts and the world ranks on each.
std::vector<GroupPlan> plan_groups(Split split, const std::vector<HostInfo>& hosts);

/// The group `world_rank` belongs to, or nullptr when it idles in this split.
const GroupPlan* group_of(const std::vector<GroupPlan>& plan, int world_rank);

}  // namespace ccbench
