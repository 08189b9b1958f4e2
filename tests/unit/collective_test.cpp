// S and busbw factors against nccl-tests' doc/PERFORMANCE.md, for n = 2, 4, 8.
#include "ccbench/collective.hpp"

#include <gtest/gtest.h>

#include "ccbench/backend.hpp"

namespace ccbench {
namespace {

struct Expected {
  Collective coll;
  int n;
  double factor;          // nccl-tests: allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; else 1
  std::uint64_t s_bytes;  // S for count = 1000 float32 elements
};

class CollectiveTable : public ::testing::TestWithParam<Expected> {};

TEST_P(CollectiveTable, FactorAndAlgbwBytesMatchNcclTests) {
  const Expected e = GetParam();
  const auto& row = info(e.coll);
  EXPECT_DOUBLE_EQ(bus_factor(row.factor, e.n), e.factor) << row.name << " n=" << e.n;
  EXPECT_EQ(algbw_bytes(row, 1000, 4, e.n), e.s_bytes) << row.name << " n=" << e.n;
}

INSTANTIATE_TEST_SUITE_P(
    NcclTests, CollectiveTable,
    ::testing::Values(Expected{Collective::AllReduce, 2, 1.0, 4000}, Expected{Collective::AllReduce, 4, 1.5, 4000},
                      Expected{Collective::AllReduce, 8, 1.75, 4000}, Expected{Collective::AllGather, 2, 0.5, 8000},
                      Expected{Collective::AllGather, 4, 0.75, 16000}, Expected{Collective::AllGather, 8, 0.875, 32000},
                      Expected{Collective::ReduceScatter, 2, 0.5, 8000},
                      Expected{Collective::ReduceScatter, 4, 0.75, 16000},
                      Expected{Collective::ReduceScatter, 8, 0.875, 32000},
                      Expected{Collective::AllToAll, 2, 0.5, 8000}, Expected{Collective::AllToAll, 4, 0.75, 16000},
                      Expected{Collective::AllToAll, 8, 0.875, 32000}, Expected{Collective::Broadcast, 2, 1.0, 4000},
                      Expected{Collective::Broadcast, 4, 1.0, 4000}, Expected{Collective::Broadcast, 8, 1.0, 4000},
                      Expected{Collective::Reduce, 2, 1.0, 4000}, Expected{Collective::Reduce, 4, 1.0, 4000},
                      Expected{Collective::Reduce, 8, 1.0, 4000}, Expected{Collective::SendRecv, 2, 1.0, 4000},
                      Expected{Collective::SendRecv, 4, 1.0, 4000}, Expected{Collective::SendRecv, 8, 1.0, 4000},
                      // nccl-tests 2.19 src/gather.cu and src/scatter.cu (GatherGetBw, ScatterGetBw): algbw =
                      // count x n x type size / time with count per rank, busbw = algbw x (n-1)/n. By hand: 1000
                      // floats a rank on 4 ranks: the root's buffer 16,000 B, factor 3/4.
                      Expected{Collective::Gather, 2, 0.5, 8000}, Expected{Collective::Gather, 4, 0.75, 16000},
                      Expected{Collective::Gather, 8, 0.875, 32000}, Expected{Collective::Scatter, 2, 0.5, 8000},
                      Expected{Collective::Scatter, 4, 0.75, 16000}, Expected{Collective::Scatter, 8, 0.875, 32000}));

TEST(CollectiveTable, CountForBytesIsPerRankForGatherScatterAndAlltoall) {
  // nccl-tests: the size is the whole buffer; count is per rank (per peer for alltoall).
  EXPECT_EQ(count_for_bytes(info(Collective::AllGather), 4096, 4, 4), 256U);
  EXPECT_EQ(count_for_bytes(info(Collective::ReduceScatter), 4096, 4, 8), 128U);
  EXPECT_EQ(count_for_bytes(info(Collective::AllToAll), 4096, 4, 2), 512U);
  EXPECT_EQ(count_for_bytes(info(Collective::Gather), 4096, 4, 4), 256U);  // nccl-tests: count/nranks
  EXPECT_EQ(count_for_bytes(info(Collective::Scatter), 4096, 4, 8), 128U);
  EXPECT_EQ(count_for_bytes(info(Collective::AllReduce), 4096, 4, 8), 1024U);
  EXPECT_EQ(count_for_bytes(info(Collective::AllGather), 8, 4, 4), 0U);  // below one element per rank
}

TEST(CollectiveTable, BufferSpans) {
  EXPECT_EQ(elements(info(Collective::AllGather).send, 10, 4), 10U);
  EXPECT_EQ(elements(info(Collective::AllGather).recv, 10, 4), 40U);
  EXPECT_EQ(elements(info(Collective::ReduceScatter).send, 10, 4), 40U);
  EXPECT_EQ(elements(info(Collective::ReduceScatter).recv, 10, 4), 10U);
  EXPECT_EQ(elements(info(Collective::AllToAll).recv, 10, 4), 40U);
  EXPECT_EQ(elements(info(Collective::Gather).send, 10, 4), 10U);  // each rank's block
  EXPECT_EQ(elements(info(Collective::Gather).recv, 10, 4), 40U);  // the root's buffer
  EXPECT_EQ(elements(info(Collective::Scatter).send, 10, 4), 40U);
  EXPECT_EQ(elements(info(Collective::Scatter).recv, 10, 4), 10U);
}

TEST(CollectiveTable, NamesRoundTrip) {
  for (const auto& row : all_collectives()) {
    EXPECT_EQ(parse_collective(row.name), row.id);
    EXPECT_EQ(parse_collective(row.bench), row.id);
    EXPECT_EQ(&info(row.id), &row);
  }
  EXPECT_FALSE(parse_collective("allreduce"));
}

// A size below one element per rank gives count 0, which NCCL accepts and returns from at once: every
// backend skips it with the same reason instead of timing nothing (the NCCL backend asks generic_support).
TEST(Collective, SizesBelowOneElementPerRankAreSkippedAlike) {
  const auto& rs = info(Collective::ReduceScatter);
  const std::uint64_t count = count_for_bytes(rs, 16, 4, 8);  // 16 B of float32 over 8 ranks
  EXPECT_EQ(count, 0U);
  const Support s =
      generic_support(CaseSpec{Collective::ReduceScatter, DType::Float32, ReduceOp::Sum, 0, false, count});
  EXPECT_FALSE(s.supported);
  EXPECT_EQ(s.reason, "size is below one element per rank");
  EXPECT_TRUE(
      generic_support(CaseSpec{Collective::ReduceScatter, DType::Float32, ReduceOp::Sum, 0, false, 1}).supported);
}

}  // namespace
}  // namespace ccbench
