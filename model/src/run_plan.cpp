#include "ccbench/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "ccbench/collective.hpp"
#include "ccbench/pairing.hpp"
#include "ccbench/types.hpp"

namespace ccbench {

namespace {

std::vector<bool> placements_of(Placement placement) {
  switch (placement) {
    case Placement::OutOfPlace:
      return {false};
    case Placement::InPlace:
      return {true};
    case Placement::Both:
      break;
  }
  return {false, true};
}

int world_size(const std::vector<HostInfo>& hosts) {
  std::size_t n = 0;
  for (const auto& h : hosts) {
    n += h.ranks.size();
  }
  return static_cast<int>(n);
}

std::string grouping_flag(const RunConfig& config) {
  if (config.all_pairs) {
    return "--all-pairs";
  }
  if (config.hosts_per_group > 0) {
    return fmt::format("--hosts-per-group {}", config.hosts_per_group);
  }
  return fmt::format("--split {}", name(config.split));
}

void check_layout(const RunConfig& config, int ranks, RunPlan& plan) {
  const auto& coll = info(config.collective);
  if (is_rdma(config.collective) && ranks < 2) {
    plan.errors.push_back(
        fmt::format("{} measures between 2 ranks: start it with mpirun -np 2 (or more, in pairs)", coll.bench));
    return;  // the groups of one rank say nothing about --root
  }
  const bool no_group = std::any_of(plan.rounds.begin(), plan.rounds.end(), [](const auto& r) { return r.empty(); });
  if (plan.rounds.empty() || no_group) {  // every rank would idle: nothing to measure, no one to report it
    plan.errors.push_back(fmt::format("{} over {} rank{}: no pair to measure; start it with mpirun -np 2 or more",
                                      grouping_flag(config), ranks, ranks == 1 ? "" : "s"));
    return;
  }
  std::size_t smallest = 0;
  bool any = false;
  for (const auto& round : plan.rounds) {
    for (const auto& g : round) {
      smallest = any ? std::min(smallest, g.ranks.size()) : g.ranks.size();
      any = true;
    }
  }
  if (any && coll.has_root && config.root >= static_cast<int>(smallest)) {
    const auto n = smallest;
    plan.errors.push_back(
        config.split == Split::World && config.hosts_per_group == 0 && !config.all_pairs
            ? fmt::format("--root {} is not a rank of this job ({} ranks: 0..{})", config.root, n, n - 1)
            : fmt::format("--root {} is not a rank of every group of {} (the smallest has {} ranks: 0..{})",
                          config.root, grouping_flag(config), n, n - 1));
  }
}

}  // namespace

std::vector<GroupPlan> RunPlan::groups() const {
  std::vector<GroupPlan> out;
  for (const auto& round : rounds) {
    out.insert(out.end(), round.begin(), round.end());
  }
  return out;
}

namespace {

GroupPlan pair_group(int color, int a, int b, const std::string& host_a, const std::string& host_b) {
  if (b < a) {
    return pair_group(color, b, a, host_b, host_a);
  }
  GroupPlan g;
  g.color = color;
  g.kind = "pair";
  g.id = fmt::format("pair:{}-{}", a, b);
  g.ranks = {a, b};
  g.hosts = {host_a};
  if (host_b != host_a) {
    g.hosts.push_back(host_b);
  }
  return g;
}

// One host: every pair of its ranks (the GPUs or NICs of a node, pairwise).
std::vector<std::vector<GroupPlan>> rank_pairs(const HostInfo& host) {
  std::vector<std::vector<GroupPlan>> rounds;
  for (const auto& round : all_pairs_rounds(static_cast<int>(host.ranks.size()))) {
    auto& groups = rounds.emplace_back();
    groups.reserve(round.size());
    for (const auto& [a, b] : round) {
      groups.push_back(pair_group(static_cast<int>(groups.size()), host.ranks[static_cast<std::size_t>(a)],
                                  host.ranks[static_cast<std::size_t>(b)], host.hostname, host.hostname));
    }
  }
  return rounds;
}

// Several hosts: every pair of hosts; local rank l of one with local rank l of the other, for every l.
std::vector<std::vector<GroupPlan>> host_pairs(const std::vector<HostInfo>& hosts) {
  const std::size_t lanes = hosts.front().ranks.size();
  std::vector<std::vector<GroupPlan>> rounds;
  for (const auto& round : all_pairs_rounds(static_cast<int>(hosts.size()))) {
    auto& groups = rounds.emplace_back();
    groups.reserve(round.size() * lanes);
    for (const auto& [a, b] : round) {
      const HostInfo& ha = hosts[static_cast<std::size_t>(a)];
      const HostInfo& hb = hosts[static_cast<std::size_t>(b)];
      for (std::size_t l = 0; l < lanes; ++l) {
        groups.push_back(
            pair_group(static_cast<int>(groups.size()), ha.ranks[l], hb.ranks[l], ha.hostname, hb.hostname));
      }
    }
  }
  return rounds;
}

}  // namespace

std::vector<std::vector<GroupPlan>> all_pairs_groups(const std::vector<HostInfo>& hosts,
                                                     std::vector<std::string>& errors) {
  if (hosts.empty()) {
    return {};
  }
  if (hosts.size() == 1) {
    return rank_pairs(hosts.front());
  }
  const auto uneven = std::find_if(hosts.begin(), hosts.end(),
                                   [&](const HostInfo& h) { return h.ranks.size() != hosts.front().ranks.size(); });
  if (uneven != hosts.end()) {
    errors.push_back(fmt::format(
        "--all-pairs pairs local rank l of one host with local rank l of the other: every host needs as many "
        "ranks ({} has {}, {} has {}); start it with --map-by ppr:N:node",
        hosts.front().hostname, hosts.front().ranks.size(), uneven->hostname, uneven->ranks.size()));
    return {};
  }
  if (static_cast<long long>(hosts.size()) > kMaxPairingRanks) {
    errors.push_back(fmt::format("--all-pairs over {} hosts: at most {}", hosts.size(), kMaxPairingRanks));
    return {};
  }
  return host_pairs(hosts);
}

std::vector<std::vector<GroupPlan>> host_groups(const std::vector<HostInfo>& hosts, int hosts_per_group) {
  const std::size_t n = hosts.size();
  const auto k = static_cast<std::size_t>(std::max(hosts_per_group, 1));
  const std::size_t blocks = (n + k - 1) / k;
  std::vector<std::vector<std::size_t>> orders(1);
  for (std::size_t i = 0; i < n; ++i) {
    orders[0].push_back(i);
  }
  if (n > k) {  // the second round: slot s of every first-round group, then slot s + 1, ...
    auto& transposed = orders.emplace_back();
    for (std::size_t s = 0; s < k; ++s) {
      for (std::size_t b = 0; b < blocks; ++b) {
        if (b * k + s < n) {
          transposed.push_back(b * k + s);
        }
      }
    }
  }
  std::vector<std::vector<GroupPlan>> rounds;
  int id = 0;
  for (const auto& order : orders) {
    auto& groups = rounds.emplace_back();
    for (std::size_t first = 0; first < n; first += k) {
      GroupPlan g;
      g.color = static_cast<int>(groups.size());
      g.kind = "hosts";
      g.id = fmt::format("hosts:{}", id++);
      for (std::size_t at = first; at < std::min(first + k, n); ++at) {
        const HostInfo& h = hosts[order[at]];
        g.ranks.insert(g.ranks.end(), h.ranks.begin(), h.ranks.end());
        g.hosts.push_back(h.hostname);
      }
      groups.push_back(std::move(g));
    }
  }
  return rounds;
}

/// Two host names that are one machine (the same machine_identity): a sweep's pair of them would measure a
/// loopback, not a link, and set the fleet's level.
void check_distinct_machines(const std::vector<HostInfo>& hosts, std::vector<std::string>& errors) {
  for (std::size_t a = 0; a < hosts.size(); ++a) {
    for (std::size_t b = a + 1; b < hosts.size(); ++b) {
      if (!hosts[a].machine.empty() && hosts[a].machine == hosts[b].machine) {
        errors.push_back(fmt::format(
            "hosts {} and {} are one machine ({}): a pair of them would measure a loopback, not a link; list each "
            "machine once in the hostfile",
            hosts[a].hostname, hosts[b].hostname, hosts[a].machine));
        return;
      }
    }
  }
}

RunPlan plan_run(const RunConfig& config, const std::vector<HostInfo>& hosts) {
  RunPlan plan;
  plan.all_pairs = config.all_pairs;
  if (config.all_pairs || config.hosts_per_group > 0) {
    check_distinct_machines(hosts, plan.errors);
  }
  if (plan.all_pairs) {
    plan.rounds = all_pairs_groups(hosts, plan.errors);
  } else if (config.hosts_per_group > 0 && !is_rdma(config.collective)) {
    if (static_cast<std::size_t>(config.hosts_per_group) >= hosts.size()) {
      plan.errors.push_back(fmt::format(
          "--hosts-per-group {} over {} host{}: one group would hold every host (the world); give fewer hosts per "
          "group than the job has",
          config.hosts_per_group, hosts.size(), hosts.size() == 1 ? "" : "s"));
    }
    plan.rounds = host_groups(hosts, config.hosts_per_group);
  }
  if (plan.rounds.empty()) {  // a split; or --all-pairs of one rank: a single group of one, skipped as any split's is
    plan.rounds.push_back(plan_groups(plan.all_pairs ? Split::Pairs : config.split, hosts));
  }
  plan.variants = config.nccl_variants ? std::vector<std::string>{"configured", "ring"} : std::vector<std::string>{""};
  plan.sizes = sweep_sizes(config.min_bytes, config.max_bytes, config.step_factor, size_of(config.dtype));
  plan.placements = placements_of(config.placement);
  check_layout(config, world_size(hosts), plan);
  return plan;
}

std::string joined_errors(const RunPlan& plan) { return fmt::format("{}", fmt::join(plan.errors, "; ")); }

}  // namespace ccbench
