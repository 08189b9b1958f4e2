#include "ccbench/run_plan.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "ccbench/collective.hpp"
#include "ccbench/pairing.hpp"

namespace ccbench {
namespace {

/// `n` hosts with one rank each: host-0000 holds rank 0, and so on.
std::vector<HostInfo> one_rank_per_host(int n) {
  std::vector<HostInfo> hosts;
  for (int i = 0; i < n; ++i) {
    hosts.push_back({fmt::format("host-{:04}", i), {i}});
  }
  return hosts;
}

RunConfig all_pairs_config(Collective collective = Collective::IbWriteBw) {
  RunConfig c;
  c.collective = collective;
  c.all_pairs = true;
  return c;
}

/// `n` hosts with `per_host` ranks each, numbered host by host (host-0000 holds 0..per_host-1).
std::vector<HostInfo> ranks_per_host(int n, int per_host) {
  std::vector<HostInfo> hosts;
  for (int i = 0; i < n; ++i) {
    auto& h = hosts.emplace_back(HostInfo{fmt::format("host-{:04}", i), {}});
    for (int l = 0; l < per_host; ++l) {
      h.ranks.push_back(i * per_host + l);
    }
  }
  return hosts;
}

/// Checks every round is disjoint and every pair of `n` ranks meets exactly once; returns the pairs seen.
std::size_t check_round_robin(const RunPlan& plan, int n) {
  std::vector<char> met(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0);
  std::size_t pairs = 0;
  for (const auto& round : plan.rounds) {
    std::vector<char> busy(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < round.size(); ++i) {
      const GroupPlan& g = round[i];
      EXPECT_EQ(g.color, static_cast<int>(i));
      EXPECT_EQ(g.kind, "pair");
      if (g.ranks.size() != 2) {
        ADD_FAILURE() << g.id << " has " << g.ranks.size() << " ranks";
        continue;
      }
      const int a = g.ranks[0];
      const int b = g.ranks[1];
      EXPECT_LT(a, b);
      EXPECT_EQ(g.id, fmt::format("pair:{}-{}", a, b));
      EXPECT_EQ(g.hosts, (std::vector<std::string>{fmt::format("host-{:04}", a), fmt::format("host-{:04}", b)}));
      for (const int r : {a, b}) {
        EXPECT_EQ(busy[static_cast<std::size_t>(r)]++, 0) << "rank " << r << " twice in a round";
      }
      EXPECT_EQ(met[static_cast<std::size_t>(a) * static_cast<std::size_t>(n) + static_cast<std::size_t>(b)]++, 0)
          << g.id << " meets twice";
      ++pairs;
    }
  }
  return pairs;
}

// The fleet plan of issue 17, for every kind of bench: 1,024 hosts, no MPI.
TEST(RunPlan, AllPairsOver1024HostsIs1023RoundsOfDisjointPairsEachPairOnce) {
  for (const Collective bench : {Collective::IbWriteBw, Collective::AllReduce, Collective::SendRecv}) {
    SCOPED_TRACE(std::string{info(bench).bench});
    const RunPlan plan = plan_run(all_pairs_config(bench), one_rank_per_host(1024));
    EXPECT_TRUE(plan.errors.empty()) << joined_errors(plan);
    EXPECT_TRUE(plan.all_pairs);
    ASSERT_EQ(plan.rounds.size(), 1023U);
    for (const auto& round : plan.rounds) {
      ASSERT_EQ(round.size(), 512U);
    }
    EXPECT_EQ(check_round_robin(plan, 1024), 1024U * 1023U / 2U);  // 523,776: every pair, once
  }
}

TEST(RunPlan, AllPairsOfHostsPairsTheSameLocalRankOnBoth) {
  const RunPlan plan = plan_run(all_pairs_config(Collective::AllReduce), ranks_per_host(4, 2));
  EXPECT_TRUE(plan.errors.empty()) << joined_errors(plan);
  ASSERT_EQ(plan.rounds.size(), 3U);
  std::set<std::pair<std::string, std::string>> host_pairs;
  for (const auto& round : plan.rounds) {
    ASSERT_EQ(round.size(), 4U);  // 2 pairs of hosts x 2 local ranks
    std::set<int> busy;
    for (const auto& g : round) {
      ASSERT_EQ(g.ranks.size(), 2U);
      ASSERT_EQ(g.hosts.size(), 2U);
      EXPECT_EQ(g.ranks[0] % 2, g.ranks[1] % 2) << g.id << ": local ranks differ";
      EXPECT_EQ(g.hosts[0], fmt::format("host-{:04}", g.ranks[0] / 2));
      EXPECT_EQ(g.hosts[1], fmt::format("host-{:04}", g.ranks[1] / 2));
      for (const int r : g.ranks) {
        EXPECT_TRUE(busy.insert(r).second) << "rank " << r << " twice in a round";
      }
      host_pairs.insert({g.hosts[0], g.hosts[1]});
    }
  }
  EXPECT_EQ(host_pairs.size(), 6U);  // every pair of 4 hosts
  EXPECT_EQ(plan.groups().size(), 12U);
  const auto [a, b] = all_pairs_rounds(4).at(0).at(0);  // the first pair of hosts; its local ranks 0, then 1
  EXPECT_EQ(plan.rounds[0][0].id, fmt::format("pair:{}-{}", 2 * a, 2 * b));
  EXPECT_EQ(plan.rounds[0][1].id, fmt::format("pair:{}-{}", 2 * a + 1, 2 * b + 1));
}

TEST(RunPlan, AllPairsNeedsAsManyRanksOnEveryHost) {
  const RunPlan plan = plan_run(all_pairs_config(Collective::SendRecv), {{"a", {0, 1}}, {"b", {2}}, {"c", {3, 4}}});
  EXPECT_EQ(joined_errors(plan),
            "--all-pairs pairs local rank l of one host with local rank l of the other: every host needs as many "
            "ranks (a has 2, b has 1); start it with --map-by ppr:N:node");
}

TEST(RunPlan, HostsPerGroupPutsEveryRankOfKHostsInAGroupTheLastOneSmaller) {
  RunConfig c;
  c.hosts_per_group = 2;
  const RunPlan plan = plan_run(c, ranks_per_host(5, 2));
  EXPECT_TRUE(plan.errors.empty()) << joined_errors(plan);
  ASSERT_EQ(plan.rounds.size(), 2U);
  ASSERT_EQ(plan.rounds[0].size(), 3U);
  ASSERT_EQ(plan.rounds[1].size(), 3U);
  // Round 2: the first host of each round-1 group (0, 2, 4), then the second (1, 3).
  EXPECT_EQ(plan.rounds[1][0].hosts, (std::vector<std::string>{"host-0000", "host-0002"}));
  EXPECT_EQ(plan.rounds[1][1].hosts, (std::vector<std::string>{"host-0004", "host-0001"}));
  EXPECT_EQ(plan.rounds[1][2].hosts, (std::vector<std::string>{"host-0003"}));
  EXPECT_EQ(plan.rounds[1][0].id, "hosts:3");
  EXPECT_EQ(plan.rounds[0][1].id, "hosts:1");
  EXPECT_EQ(plan.rounds[0][1].kind, "hosts");
  EXPECT_EQ(plan.rounds[0][1].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(plan.rounds[0][1].hosts, (std::vector<std::string>{"host-0002", "host-0003"}));
  EXPECT_EQ(plan.rounds[0][2].hosts, (std::vector<std::string>{"host-0004"}));
  c.collective = Collective::Broadcast;
  c.root = 2;
  EXPECT_EQ(joined_errors(plan_run(c, ranks_per_host(5, 2))),
            "--root 2 is not a rank of every group of --hosts-per-group 2 (the smallest has 2 ranks: 0..1)");
}

// 16 hosts in groups of 4: a 4 x 4 grid, rows in round 1 and columns in round 2, so any two hosts share
// at most one group and every host is the only one its two groups share.
TEST(RunPlan, HostsPerGroupOnAGridMeetsEachPartnerOnce) {
  RunConfig c;
  c.hosts_per_group = 4;
  const RunPlan plan = plan_run(c, one_rank_per_host(16));
  ASSERT_EQ(plan.rounds.size(), 2U);
  std::map<std::string, std::vector<std::set<std::string>>> groups_of;
  for (const auto& round : plan.rounds) {
    ASSERT_EQ(round.size(), 4U);
    std::set<std::string> seen;
    for (const auto& g : round) {
      ASSERT_EQ(g.hosts.size(), 4U);
      for (const auto& h : g.hosts) {
        EXPECT_TRUE(seen.insert(h).second) << h << " twice in a round";
        groups_of[h].emplace_back(g.hosts.begin(), g.hosts.end());
      }
    }
    EXPECT_EQ(seen.size(), 16U);
  }
  for (const auto& [host, groups] : groups_of) {
    ASSERT_EQ(groups.size(), 2U);
    std::vector<std::string> shared;
    std::set_intersection(groups[0].begin(), groups[0].end(), groups[1].begin(), groups[1].end(),
                          std::back_inserter(shared));
    EXPECT_EQ(shared, std::vector<std::string>{host});
  }
}

TEST(RunPlan, FleetFlagsRefuseEachOther) {
  RunConfig c = all_pairs_config(Collective::AllReduce);
  c.split = Split::Node;
  EXPECT_EQ(validate(c).at(0), "--all-pairs and --split node: give one of them (--all-pairs makes its own pairs)");
  c = RunConfig{};
  c.hosts_per_group = 1;
  EXPECT_EQ(validate(c).at(0), "--hosts-per-group 1 must be 2 or more (one host per group is --split node)");
  c.hosts_per_group = 4;
  c.all_pairs = true;
  EXPECT_EQ(validate(c).at(0), "--hosts-per-group and --all-pairs: give one of them");
  c = all_pairs_config(Collective::AllReduce);
  c.nccl_variants = true;
  EXPECT_EQ(validate(c).at(0), "--all-pairs and --nccl-variants: run the ring variant as a sweep of its own");
}

// Issue 35: one machine listed twice under two names made a loopback "pair" that set the fleet's level. A sweep
// refuses two names of one machine identity, naming both; names of unknown identity (older peers) pass.
TEST(RunPlan, ASweepRefusesTwoNamesOfOneMachine) {
  auto hosts = one_rank_per_host(6);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    hosts[i].machine = fmt::format("boot_id b interfaces {:016x} (1 MAC)", i);
  }
  EXPECT_TRUE(plan_run(all_pairs_config(), hosts).errors.empty());
  hosts[5].machine = hosts[4].machine;
  const auto errors = plan_run(all_pairs_config(), hosts).errors;
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_NE(errors[0].find("hosts host-0004 and host-0005 are one machine (boot_id b interfaces"), std::string::npos)
      << errors[0];
  RunConfig groups;
  groups.collective = Collective::AllReduce;
  groups.hosts_per_group = 2;
  EXPECT_FALSE(plan_run(groups, hosts).errors.empty());
  RunConfig world;  // not a sweep: two names of one machine are only two names
  world.collective = Collective::AllReduce;
  EXPECT_TRUE(plan_run(world, hosts).errors.empty());
  hosts[4].machine.clear();
  hosts[5].machine.clear();
  EXPECT_TRUE(plan_run(all_pairs_config(), hosts).errors.empty());
}

TEST(RunPlan, AllPairsOverAnOddCountSitsOneRankOutEachRound) {
  const RunPlan plan = plan_run(all_pairs_config(), one_rank_per_host(7));
  ASSERT_EQ(plan.rounds.size(), 7U);
  for (const auto& round : plan.rounds) {
    EXPECT_EQ(round.size(), 3U);
  }
  EXPECT_EQ(check_round_robin(plan, 7), 21U);
}

TEST(RunPlan, AllPairsOnOneHostNamesThatHostOnce) {
  const RunPlan plan = plan_run(all_pairs_config(), {{"solo", {0, 1, 2, 3}}});
  ASSERT_EQ(plan.rounds.size(), 3U);
  EXPECT_EQ(plan.rounds[0][0].hosts, (std::vector<std::string>{"solo"}));
  EXPECT_EQ(plan.groups().size(), 6U);
}

TEST(RunPlan, WithoutAllPairsACollectiveIsOneWorldGroup) {
  RunConfig c = all_pairs_config(Collective::AllReduce);
  c.all_pairs = false;
  const RunPlan plan = plan_run(c, one_rank_per_host(4));
  EXPECT_FALSE(plan.all_pairs);
  ASSERT_EQ(plan.rounds.size(), 1U);
  ASSERT_EQ(plan.rounds[0].size(), 1U);
  EXPECT_EQ(plan.rounds[0][0].id, "world");
}

TEST(RunPlan, SplitIsOneRoundOfItsGroups) {
  RunConfig c;
  c.split = Split::Node;
  const RunPlan plan = plan_run(c, {{"a", {0, 1}}, {"b", {2, 3}}});
  ASSERT_EQ(plan.rounds.size(), 1U);
  EXPECT_EQ(plan.rounds[0].size(), 2U);
  EXPECT_EQ(plan.groups().size(), 2U);
}

TEST(RunPlan, SizesPlacementsAndVariantsComeFromTheConfig) {
  RunConfig c;
  c.min_bytes = 8;
  c.max_bytes = 1024;
  c.step_factor = 4.0;
  c.placement = Placement::InPlace;
  const RunPlan plain = plan_run(c, one_rank_per_host(2));
  EXPECT_EQ(plain.sizes, (std::vector<std::uint64_t>{8, 32, 128, 512}));  // 2048 is past -e
  EXPECT_EQ(plain.sizes, sweep_sizes(8, 1024, 4.0, 4));
  EXPECT_EQ(plain.placements, (std::vector<bool>{true}));
  EXPECT_EQ(plain.variants, (std::vector<std::string>{""}));
  c.placement = Placement::Both;
  c.nccl_variants = true;
  const RunPlan variants = plan_run(c, one_rank_per_host(2));
  EXPECT_EQ(variants.placements, (std::vector<bool>{false, true}));
  EXPECT_EQ(variants.variants, (std::vector<std::string>{"configured", "ring"}));
}

TEST(RunPlan, RdmaOnOneRankIsRefused) {
  const RunPlan plan = plan_run(all_pairs_config(), one_rank_per_host(1));
  ASSERT_EQ(plan.errors.size(), 1U);
  EXPECT_EQ(plan.errors[0],
            "ib_write_bw_bench measures between 2 ranks: start it with mpirun -np 2 (or more, in pairs)");
}

// One rank with --all-pairs or --split pairs made no group at all, and every rank idled (a segfault, issue 22).
TEST(RunPlan, PairsOfOneRankAreRefused) {
  for (const Collective coll : {Collective::SendRecv, Collective::AllReduce}) {
    EXPECT_EQ(joined_errors(plan_run(all_pairs_config(coll), one_rank_per_host(1))),
              "--all-pairs over 1 rank: no pair to measure; start it with mpirun -np 2 or more");
  }
  RunConfig c;
  c.split = Split::Pairs;
  EXPECT_EQ(joined_errors(plan_run(c, one_rank_per_host(1))),
            "--split pairs over 1 rank: no pair to measure; start it with mpirun -np 2 or more");
  EXPECT_TRUE(plan_run(c, one_rank_per_host(2)).errors.empty());
  c.split = Split::World;  // a one-rank world is a run (NCCL's one-GPU plumbing)
  EXPECT_TRUE(plan_run(c, one_rank_per_host(1)).errors.empty());
}

TEST(RunPlan, HostsPerGroupNeedsFewerHostsPerGroupThanTheJobHas) {
  RunConfig c;
  c.hosts_per_group = 1000000;
  EXPECT_EQ(joined_errors(plan_run(c, one_rank_per_host(1))),
            "--hosts-per-group 1000000 over 1 host: one group would hold every host (the world); give fewer hosts "
            "per group than the job has");
  c.hosts_per_group = 4;
  EXPECT_FALSE(plan_run(c, one_rank_per_host(4)).errors.empty());
  EXPECT_TRUE(plan_run(c, one_rank_per_host(5)).errors.empty());
  c.collective = Collective::SendRecv;
  EXPECT_EQ(validate(c).at(0),
            "--hosts-per-group is for the collective benches; sendrecv_bench measures between the ranks of pairs: "
            "--all-pairs");
}

TEST(RunPlan, RootOutsideTheSmallestGroupIsRefused) {
  RunConfig c;
  c.collective = Collective::Broadcast;
  c.root = 2;
  EXPECT_EQ(joined_errors(plan_run(c, one_rank_per_host(2))), "--root 2 is not a rank of this job (2 ranks: 0..1)");
  c.split = Split::Node;
  EXPECT_EQ(joined_errors(plan_run(c, {{"a", {0, 1, 2}}, {"b", {3, 4}}})),
            "--root 2 is not a rank of every group of --split node (the smallest has 2 ranks: 0..1)");
  c.root = 1;
  EXPECT_TRUE(plan_run(c, {{"a", {0, 1, 2}}, {"b", {3, 4}}}).errors.empty());
  c.collective = Collective::AllReduce;  // no root: --root is not looked at
  c.root = 9;
  EXPECT_TRUE(plan_run(c, one_rank_per_host(2)).errors.empty());
}

}  // namespace
}  // namespace ccbench
