#include "ccbench/pairing.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <stdexcept>
#include <string>

namespace ccbench {
namespace {

std::string describe(const std::vector<std::vector<PairOfRanks>>& rounds) {
  std::string text;
  for (const auto& round : rounds) {
    std::string line;
    for (const auto& [a, b] : round) {
      line += fmt::format("{}{}-{}", line.empty() ? "" : " ", a, b);
    }
    text += line + "\n";
  }
  return text;
}

TEST(Pairing, EveryPairMeetsOnceInDisjointRounds) {
  for (int n = 2; n <= 64; ++n) {
    SCOPED_TRACE(fmt::format("n = {}", n));
    const auto rounds = all_pairs_rounds(n);
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n));
    std::set<PairOfRanks> met;
    for (const auto& round : rounds) {
      EXPECT_EQ(round.size(), static_cast<std::size_t>(n / 2));
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_GE(a, 0);
        EXPECT_LT(b, n);
        EXPECT_TRUE(busy.insert(a).second) << a << " twice in a round";
        EXPECT_TRUE(busy.insert(b).second) << b << " twice in a round";
        EXPECT_TRUE(met.insert({a, b}).second) << a << "-" << b << " met twice";
      }
    }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n * (n - 1) / 2));
  }
}

TEST(Pairing, OddCountsSitEachRankOutOnce) {
  for (int n = 3; n <= 63; n += 2) {
    std::multiset<int> out;
    for (const auto& round : all_pairs_rounds(n)) {
      std::set<int> all;
      for (int r = 0; r < n; ++r) {
        all.insert(r);
      }
      for (const auto& [a, b] : round) {
        all.erase(a);
        all.erase(b);
      }
      ASSERT_EQ(all.size(), 1U);
      out.insert(*all.begin());
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(out.count(r), 1U) << "n = " << n << ", rank " << r;
    }
  }
}

TEST(Pairing, ExamplesForFourAndFive) {
  const auto four = describe(all_pairs_rounds(4));
  const auto five = describe(all_pairs_rounds(5));
  std::cout << "all_pairs_rounds(4):\n" << four << "all_pairs_rounds(5):\n" << five;
  EXPECT_EQ(four, "0-3 1-2\n0-2 1-3\n0-1 2-3\n");
  EXPECT_EQ(five, "1-4 2-3\n0-2 3-4\n0-4 1-3\n0-1 2-4\n0-3 1-2\n");  // 0, 1, 2, 3, 4 sit out
}

TEST(Pairing, SameScheduleEveryCall) { EXPECT_EQ(all_pairs_rounds(17), all_pairs_rounds(17)); }

TEST(Pairing, FewerThanTwoRanksHaveNoRounds) {
  EXPECT_TRUE(all_pairs_rounds(0).empty());
  EXPECT_TRUE(all_pairs_rounds(1).empty());
  EXPECT_TRUE(consecutive_pairs(1).empty());
}

TEST(Pairing, RankCountOutOfRangeThrows) {
  EXPECT_THROW((void)all_pairs_rounds(-1), std::invalid_argument);
  EXPECT_THROW((void)all_pairs_rounds(kMaxPairingRanks + 1), std::invalid_argument);
  EXPECT_THROW((void)consecutive_pairs(-2), std::invalid_argument);
}

TEST(Pairing, ConsecutivePairsLeaveAnOddLastRankOut) {
  EXPECT_EQ(consecutive_pairs(4), (std::vector<PairOfRanks>{{0, 1}, {2, 3}}));
  EXPECT_EQ(consecutive_pairs(5), (std::vector<PairOfRanks>{{0, 1}, {2, 3}}));
  EXPECT_EQ(consecutive_pairs(2), (std::vector<PairOfRanks>{{0, 1}}));
}

}  // namespace
}  // namespace ccbench
