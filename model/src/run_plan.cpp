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

void check_layout(const RunConfig& config, int ranks, RunPlan& plan) {
  const auto& coll = info(config.collective);
  if (is_rdma(config.collective) && ranks < 2) {
    plan.errors.push_back(
        fmt::format("{} measures between 2 ranks: start it with mpirun -np 2 (or more, in pairs)", coll.bench));
    return;  // the groups of one rank say nothing about --root
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
        config.split == Split::World
            ? fmt::format("--root {} is not a rank of this job ({} ranks: 0..{})", config.root, n, n - 1)
            : fmt::format("--root {} is not a rank of every group of --split {} (the smallest has {} ranks: 0..{})",
                          config.root, name(config.split), n, n - 1));
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

std::vector<std::vector<GroupPlan>> all_pairs_groups(const std::vector<HostInfo>& hosts, int ranks) {
  std::vector<const std::string*> host_of_rank(static_cast<std::size_t>(std::max(ranks, 0)), nullptr);
  for (const auto& h : hosts) {
    for (const int r : h.ranks) {
      if (r >= 0 && r < ranks) {
        host_of_rank[static_cast<std::size_t>(r)] = &h.hostname;
      }
    }
  }
  const auto host = [&](int r) {
    const std::string* name = host_of_rank[static_cast<std::size_t>(r)];
    return name != nullptr ? *name : std::string{};
  };
  std::vector<std::vector<GroupPlan>> rounds;
  for (const auto& round : all_pairs_rounds(ranks)) {
    auto& groups = rounds.emplace_back();
    groups.reserve(round.size());
    for (const auto& [a, b] : round) {
      GroupPlan g;
      g.color = static_cast<int>(groups.size());
      g.kind = "pair";
      g.id = fmt::format("pair:{}-{}", a, b);
      g.ranks = {a, b};
      g.hosts = {host(a)};
      if (host(b) != g.hosts.front()) {
        g.hosts.push_back(host(b));
      }
      groups.push_back(std::move(g));
    }
  }
  return rounds;
}

RunPlan plan_run(const RunConfig& config, const std::vector<HostInfo>& hosts) {
  RunPlan plan;
  plan.all_pairs = is_rdma(config.collective) && config.rdma.all_pairs;
  if (plan.all_pairs) {
    plan.rounds = all_pairs_groups(hosts, world_size(hosts));
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
