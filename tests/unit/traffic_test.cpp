// alltoallv's traffic (issue 27): nccl-tests 2.19's per-peer sizes (src/alltoallv.cu), worked by hand, its matrix
// files, and the S and bus factor that follow.
#include "ccbench/traffic.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

CaseSpec alltoallv(std::uint64_t count, std::shared_ptr<const Traffic> traffic, DType type = DType::Float32) {
  CaseSpec spec{Collective::AllToAllv, type, ReduceOp::Sum, 0, false, count};
  spec.traffic = std::move(traffic);
  return spec;
}

std::shared_ptr<const Traffic> spread(double s) {
  auto t = std::make_shared<Traffic>();
  t->spread = s;
  return t;
}

TEST(Traffic, SpreadBytesByHand) {
  // 4 ranks, 4096 B a rank: d = (j - i) mod 4, n(n-1)/2 = 6; spread 1: 4096 d / 6 aligned down to 16 B
  EXPECT_EQ(spread_bytes(0, 0, 4, 4096, 1.0), 0U);
  EXPECT_EQ(spread_bytes(0, 1, 4, 4096, 1.0), 672U);   // 682.67
  EXPECT_EQ(spread_bytes(0, 2, 4, 4096, 1.0), 1360U);  // 1365.33
  EXPECT_EQ(spread_bytes(0, 3, 4, 4096, 1.0), 2048U);
  EXPECT_EQ(spread_bytes(3, 0, 4, 4096, 1.0), 672U);  // d = 1 again
  // spread 0: every peer (itself too) 4096 / 4
  EXPECT_EQ(spread_bytes(2, 2, 4, 4096, 0.0), 1024U);
  // spread 0.5: 512 + 0.5 x 4096 d / 6
  EXPECT_EQ(spread_bytes(0, 0, 4, 4096, 0.5), 512U);
  EXPECT_EQ(spread_bytes(0, 1, 4, 4096, 0.5), 848U);   // 853.33
  EXPECT_EQ(spread_bytes(0, 2, 4, 4096, 0.5), 1184U);  // 1194.67
  EXPECT_EQ(spread_bytes(0, 3, 4, 4096, 0.5), 1536U);
  EXPECT_EQ(spread_bytes(0, 0, 1, 4100, 1.0), 4096U);  // one rank: all of it, aligned
}

TEST(Traffic, CaseSizesAndFactor) {
  // -b 4K on 4 ranks of float32: count = 4096 / 4 / 4 = 256 per peer (a multiple of 16 / 4), total 4096 B a rank
  const auto generated = alltoallv(0, spread(1.0));
  EXPECT_EQ(case_count(generated, 4096, 4), 256U);
  EXPECT_EQ(case_count(generated, 4100, 4), 256U);  // 256.25 -> 256
  EXPECT_EQ(case_count(generated, 4096 + 64, 4), 260U);
  EXPECT_EQ(case_count(alltoallv(0, spread(1.0), DType::Float64), 4096 + 64, 4), 130U);  // 130 = 16 B / 8 B x 65
  const auto spec = alltoallv(256, spread(1.0));
  // S: the busiest rank's bytes, 672 + 1360 + 2048 = 4080 (each rank sends and receives that much)
  EXPECT_EQ(case_bytes(spec, 4), 4080U);
  EXPECT_EQ(send_elements(spec, 4, 1), 1020U);
  EXPECT_EQ(recv_elements(spec, 4, 2), 1020U);
  EXPECT_EQ(case_bytes(alltoallv(256, spread(0.0)), 4), 4096U);
  EXPECT_EQ(case_bytes(alltoallv(256, spread(0.5)), 4), 512U + 848U + 1184U + 1536U);
  // busbw = algbw x (n - 1) / n, as nccl-tests' AlltoAllvGetBw
  EXPECT_DOUBLE_EQ(bus_factor(info(Collective::AllToAllv).factor, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(info(Collective::AllToAllv).factor, 8), 0.875);
}

TEST(Traffic, PlanOffsetsInPeerOrder) {
  const TrafficPlan plan = plan_of(alltoallv(256, spread(1.0)), 4);
  // rank 1 sends 0 to itself, then (d = 1, 2, 3 for ranks 2, 3, 0): rank 0's 512 elements come last
  EXPECT_EQ(plan.count(1, 0), 512U);
  EXPECT_EQ(plan.count(1, 2), 168U);
  EXPECT_EQ(plan.send_offset(1, 0), 0U);
  EXPECT_EQ(plan.send_offset(1, 2), 512U);
  EXPECT_EQ(plan.send_offset(1, 3), 512U + 168U);
  // rank 2 receives from 0 (d = 2), 1 (d = 1), 2 (none), 3 (d = 3), in that order
  EXPECT_EQ(plan.recv_offset(2, 1), 340U);
  EXPECT_EQ(plan.recv_offset(2, 3), 340U + 168U);
  EXPECT_EQ(plan.most(), 1020U);
}

TEST(Traffic, MatrixAsNcclTestsReadsIt) {
  // nccl-tests' own example (src/alltoallv.cu), each value aligned down to 16 B
  const Traffic t = parse_traffic_matrix("100  200  150\n50   100  75\n300  150  200\n", "example.txt", 1.0);
  ASSERT_EQ(t.dim, 3);
  EXPECT_EQ(t.matrix, (std::vector<std::uint64_t>{96, 192, 144, 48, 96, 64, 288, 144, 192}));
  auto shared = std::make_shared<Traffic>(t);
  const auto spec = alltoallv(0, shared);
  // sends: 432, 208, 624; receives: 432, 432, 400: S = 624 B, the count its 156 float32 elements
  EXPECT_EQ(case_count(spec, 12345, 3), 156U);
  EXPECT_EQ(case_bytes(alltoallv(156, shared), 3), 624U);
  EXPECT_EQ(recv_elements(alltoallv(156, shared), 3, 2), 100U);
  // two ranks use the top-left 2 x 2
  EXPECT_EQ(case_bytes(alltoallv(1, shared), 2), 288U);
  const Traffic scaled = parse_traffic_matrix("100 200\n50 1\n", "s.txt", 2.5);
  EXPECT_EQ(scaled.matrix, (std::vector<std::uint64_t>{240, 496, 112, 0}));
}

TEST(Traffic, BadMatricesAreRefusedWithOneLine) {
  EXPECT_THROW(parse_traffic_matrix("", "e.txt", 1.0), UsageError);
  EXPECT_THROW(parse_traffic_matrix("1 2\n3\n", "r.txt", 1.0), UsageError);
  EXPECT_THROW(parse_traffic_matrix("1 2 3\n4 5 6\n", "w.txt", 1.0), UsageError);
  EXPECT_THROW(parse_traffic_matrix("1 -2\n3 4\n", "n.txt", 1.0), UsageError);
  EXPECT_THROW(parse_traffic_matrix("1 x\n3 4\n", "x.txt", 1.0), UsageError);
  try {
    parse_traffic_matrix("1 2\n3 four\n", "m.txt", 1.0);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "m.txt: row 2 column 2: 'four' is not a non-negative number of bytes");
  }
  auto small = std::make_shared<Traffic>(parse_traffic_matrix("16 16\n16 16\n", "small.txt", 1.0));
  EXPECT_THROW(plan_of(alltoallv(1, small), 3), UsageError);  // 2 rows for 3 ranks
}

}  // namespace
}  // namespace ccbench
