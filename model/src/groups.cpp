#include "ccbench/groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

namespace ccbench {
namespace {

constexpr std::array<std::pair<Split, std::string_view>, 5> kNames{{
    {Split::World, "world"},
    {Split::Node, "node"},
    {Split::CrossNode, "cross-node"},
    {Split::Rail, "rail"},
    {Split::Pairs, "pairs"},
}};

std::string host_of(const std::vector<HostInfo>& hosts, int rank) {
  for (const auto& h : hosts) {
    if (std::find(h.ranks.begin(), h.ranks.end(), rank) != h.ranks.end()) {
      return h.hostname;
    }
  }
  return {};
}

void add_group(std::vector<GroupPlan>& plan, const std::vector<HostInfo>& hosts, std::string kind, std::string id,
               std::vector<int> ranks) {
  GroupPlan g;
  g.color = static_cast<int>(plan.size());
  g.kind = std::move(kind);
  g.id = std::move(id);
  g.ranks = std::move(ranks);
  for (int r : g.ranks) {
    auto h = host_of(hosts, r);
    if (std::find(g.hosts.begin(), g.hosts.end(), h) == g.hosts.end()) {
      g.hosts.push_back(std::move(h));
    }
  }
  plan.push_back(std::move(g));
}

std::vector<int> all_ranks(const std::vector<HostInfo>& hosts) {
  std::vector<int> ranks;
  for (const auto& h : hosts) {
    ranks.insert(ranks.end(), h.ranks.begin(), h.ranks.end());
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace

std::string_view name(Split split) {
  for (const auto& [s, n] : kNames) {
    if (s == split) {
      return n;
    }
  }
  return "world";
}

std::optional<Split> parse_split(std::string_view text) {
  for (const auto& [s, n] : kNames) {
    if (n == text || (s == Split::Pairs && text == "pair")) {
      return s;
    }
  }
  return std::nullopt;
}

std::vector<GroupPlan> plan_groups(Split split, const std::vector<HostInfo>& hosts) {
  std::vector<GroupPlan> plan;
  switch (split) {
    case Split::World:
      add_group(plan, hosts, "world", "world", all_ranks(hosts));
      break;
    case Split::Node:
      for (const auto& h : hosts) {
        add_group(plan, hosts, "node", "node:" + h.hostname, h.ranks);
      }
      break;
    case Split::CrossNode: {
      std::vector<int> leaders;
      leaders.reserve(hosts.size());
      for (const auto& h : hosts) {
        leaders.push_back(h.ranks.front());
      }
      add_group(plan, hosts, "cross-node", "cross-node", leaders);
      break;
    }
    case Split::Rail: {
      std::map<std::size_t, std::vector<int>> rails;
      for (const auto& h : hosts) {
        for (std::size_t local = 0; local < h.ranks.size(); ++local) {
          rails[local].push_back(h.ranks[local]);
        }
      }
      for (auto& [local, ranks] : rails) {
        add_group(plan, hosts, "rail", fmt::format("rail:{}", local), std::move(ranks));
      }
      break;
    }
    case Split::Pairs: {
      const auto ranks = all_ranks(hosts);
      for (std::size_t i = 0; i + 1 < ranks.size(); i += 2) {
        add_group(plan, hosts, "pair", fmt::format("pair:{}-{}", ranks[i], ranks[i + 1]), {ranks[i], ranks[i + 1]});
      }
      break;
    }
  }
  return plan;
}

const GroupPlan* group_of(const std::vector<GroupPlan>& plan, int world_rank) {
  for (const auto& g : plan) {
    if (std::find(g.ranks.begin(), g.ranks.end(), world_rank) != g.ranks.end()) {
      return &g;
    }
  }
  return nullptr;
}

}  // namespace ccbench
