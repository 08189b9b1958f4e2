#include "ccbench/groups.hpp"

#include <gtest/gtest.h>

namespace ccbench {
namespace {

// Two hosts with two ranks each (mpirun --map-by node would interleave; by slot is 0,1 | 2,3).
const std::vector<HostInfo> kTwoByTwo{{"a", {0, 1}}, {"b", {2, 3}}};
// Three hosts, uneven: 3 + 1 + 2 ranks, interleaved rank numbers.
const std::vector<HostInfo> kUneven{{"x", {0, 3, 5}}, {"y", {1}}, {"z", {2, 4}}};

TEST(Groups, WorldIsEveryRank) {
  const auto plan = plan_groups(Split::World, kUneven);
  ASSERT_EQ(plan.size(), 1U);
  EXPECT_EQ(plan[0].ranks, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(plan[0].hosts, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(plan[0].id, "world");
}

TEST(Groups, NodeIsOneGroupPerHost) {
  const auto plan = plan_groups(Split::Node, kTwoByTwo);
  ASSERT_EQ(plan.size(), 2U);
  EXPECT_EQ(plan[0].id, "node:a");
  EXPECT_EQ(plan[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(plan[1].color, 1);
  EXPECT_EQ(plan[1].hosts, (std::vector<std::string>{"b"}));
}

TEST(Groups, CrossNodeIsLocalRankZeroOfEachHost) {
  const auto plan = plan_groups(Split::CrossNode, kUneven);
  ASSERT_EQ(plan.size(), 1U);
  EXPECT_EQ(plan[0].ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan[0].hosts.size(), 3U);
  EXPECT_EQ(group_of(plan, 3), nullptr);  // idles
}

TEST(Groups, RailIsTheSameLocalRankAcrossHosts) {
  const auto plan = plan_groups(Split::Rail, kUneven);
  ASSERT_EQ(plan.size(), 3U);
  EXPECT_EQ(plan[0].id, "rail:0");
  EXPECT_EQ(plan[0].ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan[1].ranks, (std::vector<int>{3, 4}));  // y has no local rank 1
  EXPECT_EQ(plan[2].ranks, (std::vector<int>{5}));
  EXPECT_EQ(plan[1].hosts, (std::vector<std::string>{"x", "z"}));
}

TEST(Groups, PairsAreDisjointAndAnOddRankIdles) {
  const auto plan = plan_groups(Split::Pairs, kUneven);
  ASSERT_EQ(plan.size(), 3U);
  EXPECT_EQ(plan[2].id, "pair:4-5");
  EXPECT_EQ(plan[0].hosts, (std::vector<std::string>{"x", "y"}));
  const auto odd = plan_groups(Split::Pairs, {{"h", {0, 1, 2}}});
  ASSERT_EQ(odd.size(), 1U);
  EXPECT_EQ(group_of(odd, 2), nullptr);
  EXPECT_EQ(group_of(odd, 1)->id, "pair:0-1");
}

TEST(Groups, EveryRankInAtMostOneGroup) {
  for (const Split s : {Split::World, Split::Node, Split::CrossNode, Split::Rail, Split::Pairs}) {
    std::vector<int> seen(6, 0);
    for (const auto& g : plan_groups(s, kUneven)) {
      for (int r : g.ranks) {
        ++seen[static_cast<std::size_t>(r)];
      }
    }
    for (int count : seen) {
      EXPECT_LE(count, 1) << name(s);
    }
  }
}

TEST(Groups, Names) {
  EXPECT_EQ(parse_split("cross-node"), Split::CrossNode);
  EXPECT_EQ(parse_split("pairs"), Split::Pairs);
  EXPECT_FALSE(parse_split("socket"));
  EXPECT_EQ(name(Split::Rail), "rail");
}

}  // namespace
}  // namespace ccbench
