// --per-rank's summaries and the straggler verdict (model/include/ccbench/rank_times.hpp), on times written here.
#include "ccbench/rank_times.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "ccbench/result.hpp"
#include "ccbench/result_json.hpp"

namespace ccbench {
namespace {

// `n` ranks, `samples` samples; in sample i the rank `late(i)` has 5 us, the others 30 us + its rank (ties broken).
std::vector<std::vector<double>> times(int n, int samples, int (*late)(int)) {
  std::vector<std::vector<double>> by_rank(static_cast<std::size_t>(n));
  for (int i = 0; i < samples; ++i) {
    for (int r = 0; r < n; ++r) {
      by_rank[static_cast<std::size_t>(r)].push_back(r == late(i) ? 5e-6 : (30.0 + r) * 1e-6);
    }
  }
  return by_rank;
}

CaseResult case_of(const std::vector<std::vector<double>>& by_rank, const std::vector<int>& world) {
  CaseResult r;
  r.group_id = "world";
  r.per_rank = summarize_ranks(by_rank, world);
  return r;
}

TEST(RankTimes, SummaryAndWhoArrivedLast) {
  const auto by_rank = times(3, 10, [](int i) { return i < 7 ? 1 : 2; });
  const auto s = summarize_ranks(by_rank, {4, 5, 6});
  ASSERT_EQ(s.size(), 3U);
  EXPECT_EQ(s[1].rank, 5);
  EXPECT_EQ(s[1].last, 7U);  // the shortest time: it arrived last
  EXPECT_EQ(s[2].last, 3U);
  EXPECT_EQ(s[0].last, 0U);
  EXPECT_EQ(s[2].slowest, 7U);  // 32 us while rank 1 is late; rank 1 (31 us) never beats it
  EXPECT_EQ(s[1].slowest, 3U);
  EXPECT_DOUBLE_EQ(s[0].p50_s, 30e-6);
  EXPECT_DOUBLE_EQ(s[1].min_s, 5e-6);
  EXPECT_DOUBLE_EQ(s[1].max_s, 31e-6);
  EXPECT_NEAR(s[1].mean_s, (7 * 5e-6 + 3 * 31e-6) / 10, 1e-15);
  EXPECT_EQ(s[1].samples_s.size(), 10U);
  EXPECT_NEAR(s[0].cv, 0.0, 1e-12);  // the same 30 us every sample (rounding aside)
}

TEST(RankTimes, TheRankOthersWaitForIsNamedAndARotationIsNot) {
  // 4 ranks: named from 1/4 + 3/8 = 62.5% of the samples.
  const auto late2 = case_of(times(4, 30, [](int) { return 2; }), {0, 1, 2, 3});
  auto v = straggler_verdicts({late2, late2});
  ASSERT_EQ(v.size(), 1U);
  EXPECT_TRUE(v[0].named);
  EXPECT_EQ(v[0].rank, 2);
  EXPECT_EQ(v[0].samples, 60U);
  EXPECT_DOUBLE_EQ(v[0].share, 1.0);
  EXPECT_DOUBLE_EQ(v[0].threshold, 0.625);
  EXPECT_DOUBLE_EQ(v[0].wait_ratio, 31e-6 / 5e-6);  // the others' median (30, 31, 33 us) over its 5 us
  EXPECT_NEAR(v[0].wait_s, 26e-6, 1e-12);           // ... less it: 26 us, past the 20 us that name it

  const auto rotating = case_of(times(4, 40, [](int i) { return i % 4; }), {0, 1, 2, 3});
  v = straggler_verdicts({rotating});
  ASSERT_EQ(v.size(), 1U);
  EXPECT_FALSE(v[0].named);
  EXPECT_DOUBLE_EQ(v[0].share, 0.25);

  // Late in 60% of the samples: past the fair share, short of the threshold.
  const auto mostly = case_of(times(4, 40, [](int i) { return i % 5 < 3 ? 1 : 3; }), {0, 1, 2, 3});
  v = straggler_verdicts({mostly});
  EXPECT_FALSE(v[0].named);
  EXPECT_EQ(v[0].rank, 1);
  // Always late, but too few samples to say.
  v = straggler_verdicts({case_of(times(4, kStragglerMinSamples - 1, [](int) { return 2; }), {0, 1, 2, 3})});
  EXPECT_FALSE(v[0].named);
  // Always "late", but by a role's few microseconds: the others' 20-21 us against its 10 us.
  std::vector<std::vector<double>> role(4);
  for (int i = 0; i < 30; ++i) {
    role[0].push_back(20e-6);
    role[1].push_back(20.5e-6);
    role[2].push_back(10e-6);
    role[3].push_back(21e-6);
  }
  const auto close = case_of(role, {0, 1, 2, 3});
  v = straggler_verdicts({close});
  EXPECT_DOUBLE_EQ(v[0].share, 1.0);
  EXPECT_NEAR(v[0].wait_s, 10.5e-6, 1e-12);
  EXPECT_FALSE(v[0].named);
}

TEST(RankTimes, FindingsNameHostAndDeviceAndSurviveTheJsonFile) {
  ResultDocument doc;
  doc.environment.binding.resize(2);
  doc.environment.binding[0].rank = 0;
  doc.environment.binding[0].host = "node0";
  doc.environment.binding[0].cpus = "0-3";
  doc.environment.binding[1].rank = 1;
  doc.environment.binding[1].host = "node1";
  doc.environment.binding[1].gpu = "0000:1b:00.0";
  CaseResult r = case_of(times(2, 25, [](int) { return 1; }), {0, 1});
  r.benchmark = "allreduce_bench";
  r.backend = "mpi";
  r.spec = {Collective::AllReduce, DType::Float32, ReduceOp::Sum, 0, false, 256};
  doc.results = {r};
  auto lines = straggler_findings(doc);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0],
            "straggler in world: rank 1 (node1, GPU 0000:1b:00.0) arrived last in 100% of 25 samples "
            "(fair share 50%, named from 75%): the others waited 25.0 us for it (6.00x its op time)");
  const ResultDocument again = document_from_json(to_json(doc));
  EXPECT_EQ(straggler_findings(again), lines);
  EXPECT_EQ(again.results[0].per_rank[1].samples_s.size(), 25U);
  doc.results[0].per_rank = summarize_ranks(times(2, 25, [](int i) { return i % 2; }), {0, 1});
  lines = straggler_findings(doc);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0],
            "per-rank times of world: no straggler; rank 0 (node0, CPUs 0-3) arrived last most often, in "
            "52% of 25 samples (fair share 50%, named from 75%)");
  doc.results[0].per_rank.clear();
  EXPECT_TRUE(straggler_findings(doc).empty());
}

}  // namespace
}  // namespace ccbench
