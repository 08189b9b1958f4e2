// Verification patterns: exact values, and a host-side reference of each collective that the
// pattern's expected output must accept (and a corrupted output must fail).
#include "ccbench/pattern.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ccbench/traffic.hpp"
#include "reduce_reference.hpp"

namespace ccbench {
namespace {

using test::reduce;

// Reference implementations of the collectives over per-rank float buffers.
std::vector<std::vector<float>> inputs(const CaseSpec& spec, int n) {
  std::vector<std::vector<float>> in(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    in[static_cast<std::size_t>(r)].resize(send_elements(spec, n, r));
    fill_input(spec, n, r, in[static_cast<std::size_t>(r)].data());
  }
  return in;
}

std::vector<float> reference_output(const CaseSpec& spec, int n, int rank) {
  const auto in = inputs(spec, n);
  const auto c = spec.count;
  const auto r = static_cast<std::size_t>(rank);
  std::vector<float> out(recv_elements(spec, n, rank));
  if (spec.collective == Collective::AllToAllv) {  // from each source in turn, its segment for this rank
    const TrafficPlan plan = plan_of(spec, n);
    std::size_t at = 0;
    for (int q = 0; q < n; ++q) {
      std::size_t from = 0;  // where q's segment for this rank starts in q's input: after those for ranks below
      for (int j = 0; j < rank; ++j) {
        from += plan.count(q, j);
      }
      for (std::uint64_t k = 0; k < plan.count(q, rank); ++k) {
        out[at++] = in[static_cast<std::size_t>(q)][from + k];
      }
    }
    return out;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    switch (spec.collective) {
      case Collective::AllReduce:
      case Collective::Reduce:
      case Collective::ReduceScatter: {
        const std::size_t at = spec.collective == Collective::ReduceScatter ? r * c + i : i;
        float acc = in[0][at];
        for (std::size_t q = 1; q < in.size(); ++q) {
          acc = reduce(spec.op, acc, in[q][at]);
        }
        out[i] = spec.op == ReduceOp::Avg ? acc / static_cast<float>(n) : acc;
        break;
      }
      case Collective::AllGather:
      case Collective::Gather:  // (the root's; the others' output is not checked)
        out[i] = in[i / c][i % c];
        break;
      case Collective::Scatter:
        out[i] = in[static_cast<std::size_t>(spec.root)][r * c + i];
        break;
      case Collective::AllToAll:
        out[i] = in[i / c][r * c + i % c];
        break;
      case Collective::AllToAllv:  // above
        break;
      case Collective::Broadcast:
        out[i] = in[static_cast<std::size_t>(spec.root)][i];
        break;
      case Collective::SendRecv:
      case Collective::IbWriteBw:  // the peer's buffer, written into ours
      case Collective::IbWriteLat:
        out[i] = in[(r + static_cast<std::size_t>(n) - 1) % static_cast<std::size_t>(n)][i];
        break;
      case Collective::Copy:
        out[i] = in[r][i];
        break;
    }
  }
  return out;
}

TEST(Pattern, ReferenceOutputsHaveNoWrongElementsAndCorruptionIsCounted) {
  for (const auto& row : all_collectives()) {
    for (const ReduceOp op : all_reduce_ops()) {
      for (const int n : {2, 3, 4, 8}) {
        const CaseSpec spec{row.id, DType::Float32, op, n - 1, false, 37};
        for (int rank = 0; rank < n; ++rank) {
          auto out = reference_output(spec, n, rank);
          ASSERT_EQ(count_wrong(spec, n, rank, out.data()), 0U) << row.name << " " << name(op) << " n=" << n;
          if (!has_checked_output(spec, rank)) {
            continue;
          }
          out[5] += 1.0F;
          out[out.size() - 1] = -1.0F;
          EXPECT_EQ(count_wrong(spec, n, rank, out.data()), 2U) << row.name << " " << name(op);
        }
      }
    }
  }
}

TEST(Pattern, EveryDtypeRoundTripsThroughFillAndCheck) {
  // Broadcast: the output of every rank is the root's input, so the root's filled buffer
  // must check clean on another rank, in every element type; one flipped byte is one wrong element.
  for (const DType t : all_dtypes()) {
    const int n = 4;
    const CaseSpec spec{Collective::Broadcast, t, ReduceOp::Sum, 2, false, 300};
    std::vector<unsigned char> buf(300 * size_of(t));
    fill_input(spec, n, spec.root, buf.data());
    EXPECT_EQ(count_wrong(spec, n, 1, buf.data()), 0U) << name(t);
    buf[7 * size_of(t)] ^= 0x01;
    EXPECT_EQ(count_wrong(spec, n, 1, buf.data()), 1U) << name(t);
    // And a reduction's expected values are never met by an all-zero output.
    const CaseSpec sum{Collective::AllReduce, t, ReduceOp::Sum, 0, false, 300};
    std::vector<unsigned char> zeros(300 * size_of(t), 0);
    EXPECT_EQ(count_wrong(sum, 8, 0, zeros.data()), 300U) << name(t);
  }
}

TEST(Pattern, HalfAndBfloat16ConversionsAreExactForSmallIntegers) {
  for (int v = -2048; v <= 2048; ++v) {
    EXPECT_EQ(half_to_float(float_to_half(static_cast<float>(v))), static_cast<float>(v));
  }
  for (int v = -256; v <= 256; ++v) {
    EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(static_cast<float>(v))), static_cast<float>(v));
  }
  EXPECT_EQ(float_to_half(1.0F), 0x3c00);
  EXPECT_EQ(float_to_half(65504.0F), 0x7bff);
  EXPECT_EQ(float_to_half(1e6F), 0x7c00);                     // overflow -> inf
  EXPECT_EQ(float_to_half(2049.0F), 0x6800);                  // ties to even: 2048
  EXPECT_EQ(half_to_float(0x0001), 5.9604644775390625e-08F);  // smallest subnormal
  EXPECT_EQ(float_to_bfloat16(1.0F), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(257.0F), 0x4380);  // ties to even: 256
}

TEST(Pattern, ProdIsTwoForAnyRankCount) {
  for (const int n : {2, 5, 64}) {
    const CaseSpec spec{Collective::AllReduce, DType::Int8, ReduceOp::Prod, 0, false, 130};
    for (std::uint64_t i = 0; i < 130; ++i) {
      std::int64_t prod = 1;
      for (int r = 0; r < n; ++r) {
        prod *= pattern_input(spec, n, r, i);
      }
      EXPECT_EQ(prod, 2);
    }
  }
}

}  // namespace
}  // namespace ccbench

namespace ccbench {
namespace {

using test::reduce;

// fill_expected is what the device kernels' tests feed them: the host check must accept it for every
// type, collective and reduction, and count each corrupted element once.
TEST(Pattern, ExpectedOutputIsAcceptedAndEachCorruptedElementCounted) {
  for (const auto& row : all_collectives()) {
    for (const DType type : all_dtypes()) {
      for (const ReduceOp op : all_reduce_ops()) {
        for (const int n : {2, 5}) {
          const CaseSpec spec{row.id, type, op, n - 1, false, 129};
          const int rank = n - 1;
          const std::size_t size = size_of(type);
          std::vector<std::byte> out(recv_elements(spec, n, rank) * size);
          fill_expected(spec, n, rank, out.data());
          EXPECT_EQ(count_wrong(spec, n, rank, out.data()), 0U) << row.name << " " << name(type) << " n=" << n;
          out[0] ^= std::byte{1};
          out[out.size() - size] ^= std::byte{0x80};
          const std::uint64_t want = has_checked_output(spec, rank) ? 2U : 0U;
          EXPECT_EQ(count_wrong(spec, n, rank, out.data()), want) << row.name << " " << name(type);
        }
      }
    }
  }
}

// The arithmetic the kernels run: pattern_math directly, as a kernel receives it (plain values).
TEST(Pattern, MathParamsMatchTheCaseAndSumIsExactlyTheRanksInputs) {
  const CaseSpec spec{Collective::AllReduce, DType::Bfloat16, ReduceOp::Sum, 0, false, 64};
  const pattern_math::Params p = pattern_params(spec, 8, 3);
  EXPECT_TRUE(p.reduces);
  EXPECT_EQ(p.nranks, 8);
  EXPECT_EQ(p.rank, 3);
  for (std::uint64_t i = 0; i < 64; ++i) {
    std::int64_t sum = 0;
    for (int r = 0; r < 8; ++r) {
      sum += pattern_input(spec, 8, r, i);
    }
    EXPECT_EQ(pattern_math::expected(p, i), sum);
    EXPECT_LE(sum, 3 * 8);
  }
  EXPECT_FALSE(pattern_params({Collective::AllGather, DType::Int8, ReduceOp::Sum, 0, false, 4}, 2, 0).reduces);
}

// FP8: known codes (OCP E4M3 / E5M2), and every finite code back to itself.
TEST(Pattern, Fp8ConversionsMatchTheOcpFormats) {
  EXPECT_EQ(float_to_fp8_e4m3(1.0F), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3(-2.0F), 0xc0);
  EXPECT_EQ(float_to_fp8_e4m3(448.0F), 0x7e);         // the largest; E4M3 has no infinity
  EXPECT_EQ(float_to_fp8_e4m3(1e6F), 0x7e);           // saturates, as __NV_SATFINITE
  EXPECT_EQ(float_to_fp8_e4m3(17.0F), 0x58);          // ties to even: 16
  EXPECT_EQ(float_to_fp8_e4m3(19.0F), 0x5a);          // ties to even: 20
  EXPECT_EQ(fp8_e4m3_to_float(0x01), 0.001953125F);   // smallest subnormal, 2^-9
  EXPECT_EQ(float_to_fp8_e4m3(0.0029296875F), 0x02);  // 1.5 x 2^-9: ties to even, 2 x 2^-9
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7f)));
  EXPECT_EQ(float_to_fp8_e5m2(1.0F), 0x3c);
  EXPECT_EQ(float_to_fp8_e5m2(5.0F), 0x45);
  EXPECT_EQ(float_to_fp8_e5m2(57344.0F), 0x7b);                                // the largest finite
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::infinity()), 0x7b);  // saturates
  EXPECT_EQ(fp8_e5m2_to_float(0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp8_e5m2_to_float(0x01), 1.52587890625e-05F);  // 2^-16
  EXPECT_EQ(float_to_fp8_e5m2(9.0F), 0x48);                // ties to even: 8
  for (unsigned code = 0; code < 256; ++code) {
    const auto c = static_cast<std::uint8_t>(code);
    if ((code & 0x7fU) != 0x7fU) {
      EXPECT_EQ(float_to_fp8_e4m3(fp8_e4m3_to_float(c)), c) << code;
    }
    if ((code & 0x7cU) != 0x7cU) {
      EXPECT_EQ(float_to_fp8_e5m2(fp8_e5m2_to_float(c)), c) << code;
    }
  }
}

// FP8 holds few integers exactly (E5M2: 0..8, then even numbers): its patterns stay in [-8, 8] and a sum
// has one contribution per element, so NCCL's partial results are exact in whatever order it adds the
// ranks. Reduced here in FP8 itself, rounding after every step, starting from several ranks.
TEST(Pattern, Fp8ReductionsAreExactInAnyOrder) {
  const auto round_e5m2 = [](float v) { return fp8_e5m2_to_float(float_to_fp8_e5m2(v)); };
  for (const int n : {1, 2, 3, 8, 64}) {
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
      const CaseSpec spec{Collective::AllReduce, DType::Float8e5m2, op, 0, false, 96};
      const pattern_math::Params p = pattern_params(spec, n, 0);
      ASSERT_TRUE(p.narrow);
      for (std::uint64_t i = 0; i < spec.count; ++i) {
        for (const int start : {0, 1 % n, n / 2, n - 1}) {  // a ring starts its reduction anywhere
          auto acc = static_cast<float>(pattern_input(spec, n, start, i));
          ASSERT_EQ(round_e5m2(acc), acc);
          for (int k = 1; k < n; ++k) {
            acc = round_e5m2(reduce(op, acc, static_cast<float>(pattern_input(spec, n, (start + k) % n, i))));
          }
          ASSERT_EQ(acc, static_cast<float>(pattern_math::expected(p, i)))
              << name(op) << " n=" << n << " index " << i << " from rank " << start;
        }
      }
    }
  }
  // Data movement: every value an integer in [-8, 8].
  const CaseSpec gather{Collective::AllGather, DType::Float8e4m3, ReduceOp::Sum, 0, false, 100};
  for (int r = 0; r < 8; ++r) {
    for (std::uint64_t i = 0; i < 100; ++i) {
      const std::int64_t v = pattern_input(gather, 8, r, i);
      EXPECT_TRUE(v >= -8 && v <= 8) << v;
    }
  }
  // The same case in bfloat16 is not narrow: sums there reach 3n (exact to n = 85).
  EXPECT_FALSE(pattern_params({Collective::AllReduce, DType::Bfloat16, ReduceOp::Sum, 0, false, 4}, 8, 0).narrow);
}

// NCCL's avg of a floating type, as its kernels compute it (ncclDevPreMulSum): each rank's value times
// fl(1/n), rounded to the type, then summed in ring order, rounded at every step. Simulated in bfloat16.
float nccl_avg_bf16(float value, int nranks) {
  const auto round = [](float x) { return bfloat16_to_float(float_to_bfloat16(x)); };
  const float scale = round(1.0F / static_cast<float>(nranks));
  float sum = 0.0F;
  for (int r = 0; r < nranks; ++r) {
    sum = round(sum + round(value * scale));
  }
  return sum;
}

TEST(Pattern, NcclAvgIsExactOnlyForPowerOfTwoRankCounts) {
  EXPECT_EQ(nccl_avg_bf16(1.0F, 7), 0.9921875F);  // the case -c would report as wrong elements
  EXPECT_EQ(nccl_avg_bf16(1.0F, 10), 1.0078125F);
  EXPECT_EQ(nccl_avg_bf16(3.0F, 128), 3.3125F);   // a power of two, but 3 x 86 / 128 needs 9 bits
  for (const int n : {1, 2, 4, 8, 16, 32, 64}) {  // the avg pattern's inputs, 1..4: exact up to 64 ranks
    for (const float v : {1.0F, 2.0F, 3.0F, 4.0F}) {
      EXPECT_EQ(nccl_avg_bf16(v, n), v) << n << " ranks of " << v;
    }
  }
  const auto avg = [](DType t) { return CaseSpec{Collective::AllReduce, t, ReduceOp::Avg, 0, false, 64}; };
  for (const DType t : {DType::Float16, DType::Bfloat16, DType::Float32, DType::Float64}) {
    const auto why = nccl_avg_unverifiable(avg(t), 7);
    ASSERT_TRUE(why) << name(t);
    EXPECT_NE(why->find("fl(1/7)"), std::string::npos) << *why;
    EXPECT_FALSE(nccl_avg_unverifiable(avg(t), 8)) << name(t);
    EXPECT_FALSE(nccl_avg_unverifiable(avg(t), 1)) << name(t);
    EXPECT_FALSE(nccl_avg_unverifiable(avg(t), 64)) << name(t);
  }
  EXPECT_TRUE(nccl_avg_unverifiable(avg(DType::Bfloat16), 128));
  EXPECT_FALSE(nccl_avg_unverifiable(avg(DType::Float16), 512));
  EXPECT_TRUE(nccl_avg_unverifiable(avg(DType::Float16), 1024));
  EXPECT_FALSE(nccl_avg_unverifiable(avg(DType::Int32), 7));  // integers: a sum, then one division
  CaseSpec sum = avg(DType::Bfloat16);
  sum.op = ReduceOp::Sum;
  EXPECT_FALSE(nccl_avg_unverifiable(sum, 7));
  EXPECT_FALSE(nccl_avg_unverifiable({Collective::AllGather, DType::Float32, ReduceOp::Avg, 0, false, 64}, 7));
}

// Issue 38 §6: a non-reducing collective's blocks (and a broadcast that never arrived) must tell every pair of ranks
// apart at any rank count: FP8's 17 values and the others' 97 repeated with the rank before.
TEST(Pattern, NonReducingBlocksTellEveryPairOfRanksApart) {
  for (const bool narrow : {true, false}) {
    for (const int n : {32, 128, 4096}) {
      pattern_math::Params p;
      p.collective = Collective::AllGather;
      p.narrow = narrow;
      p.nranks = n;
      const std::uint64_t window = n <= 17 || (!narrow && n <= 97) ? 1 : n <= 289 || !narrow ? 2 : 3;
      const auto differ = [&](int q, int other) {
        for (std::uint64_t i = 0; i < window; ++i) {
          if (pattern_math::input(p, q, i) != pattern_math::input(p, other, i)) {
            return true;
          }
        }
        return false;
      };
      int pairs = 0;
      for (int q = 0; q < n; ++q) {
        const int step = n <= 128 ? 1 : 0;  // 4096: the old periods and their powers, from every rank
        for (const int other : step == 1 ? std::vector<int>{} : std::vector<int>{q + 17, q + 289, q + 97, q + 1}) {
          if (other < n) {
            ASSERT_TRUE(differ(q, other)) << "ranks " << q << " and " << other << " of " << n << " narrow " << narrow;
            ++pairs;
          }
        }
        for (int other = q + 1; step == 1 && other < n; ++other) {
          ASSERT_TRUE(differ(q, other)) << "ranks " << q << " and " << other << " of " << n << " narrow " << narrow;
          ++pairs;
        }
      }
      EXPECT_GT(pairs, 0);
    }
  }
}

// The same through the host's check: an all-gather whose blocks of ranks 1 and 18 (and 1 and 98) were swapped has
// wrong elements, at 32, 128 and 4,096 ranks.
TEST(Pattern, SwappedAllGatherBlocksAreWrongElements) {
  for (const int n : {32, 128, 4096}) {
    const CaseSpec spec{Collective::AllGather, DType::Float32, ReduceOp::Sum, 0, false, 4};
    for (const int other : {18, 98}) {
      if (other >= n) {
        continue;
      }
      auto out = reference_output(spec, n, 0);
      ASSERT_EQ(count_wrong(spec, n, 0, out.data()), 0U);
      for (std::size_t k = 0; k < spec.count; ++k) {
        std::swap(out[1 * spec.count + k], out[static_cast<std::size_t>(other) * spec.count + k]);
      }
      EXPECT_GT(count_wrong(spec, n, 0, out.data()), 0U) << "ranks 1 and " << other << " of " << n;
    }
  }
}

}  // namespace
}  // namespace ccbench
