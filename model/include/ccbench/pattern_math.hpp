#pragma once
// The arithmetic of the verification patterns (DESIGN §4), shared by the host (pattern.cpp) and the
// device kernels (kernels/): header-only, no library calls, so nvcc compiles the same functions that
// the unit tests exercise on the CPU. Values are small integers, exact in every element type at any rank
// count, so the expected output is compared bit for bit (tests/unit/pattern_test.cpp emulates NCCL's
// order of operations at 2..4096 ranks).
#include <cstdint>

#include "ccbench/collective.hpp"
#include "ccbench/types.hpp"

#if defined(__CUDACC__)
#define CCBENCH_HD __host__ __device__
#else
#define CCBENCH_HD
#endif

namespace ccbench::pattern_math {

/// One rank's view of a case, in plain values (what a kernel receives by value).
struct Params {
  Collective collective = Collective::AllReduce;
  ReduceOp op = ReduceOp::Sum;
  bool reduces = false;  // info(collective).has_reduce_op
  int root = 0;
  std::uint64_t count = 0;  // nccl-tests' count
  int nranks = 1;
  int rank = 0;
  // A type too narrow for the sum pattern's 3n (FP8 always; bfloat16 from 86 ranks, float16 from 683):
  // every value an integer in [-8, 8], which every type holds exactly, and sums with one contribution per
  // element, so a partial sum in any order and precision NCCL adds them in is exact too.
  bool narrow = false;
  // Integer element types: their width and sign. NCCL averages them as a sum in the type (wrapping), then
  // one division toward zero (ncclDevSumPostDiv); 0 for floating types.
  int int_bits = 0;
  bool int_signed = false;
};

/// The digit of `rank` in base `base` that element `index` carries, for non-reducing collectives: a rank's number
/// spread over positions, digit (index mod D) where D digits hold every rank of the job. Any two ranks differ in a
/// digit, so they differ in some element of every D consecutive ones, at any rank count (an element alone holds
/// too few values: 17 in FP8's pattern). Up to `base` ranks, D = 1 and the digit is the rank.
CCBENCH_HD inline std::uint64_t rank_digit(std::uint64_t rank, int nranks, std::uint64_t base, std::uint64_t index) {
  std::uint64_t digits = 1;
  for (std::uint64_t span = base; span < static_cast<std::uint64_t>(nranks); span *= base) {
    ++digits;
  }
  std::uint64_t r = rank;
  for (std::uint64_t k = index % digits; k > 0; --k) {
    r /= base;
  }
  return r % base;
}

/// Input element `index` of `rank`.
CCBENCH_HD inline std::int64_t input(const Params& p, int rank, std::uint64_t index) {
  const auto r = static_cast<std::uint64_t>(rank);
  if (!p.reduces) {  // tells ranks and positions apart: 5 and 17 are invertible mod 17 and 97
    if (p.narrow) {
      return static_cast<std::int64_t>((rank_digit(r, p.nranks, 17, index) * 5 + index) % 17) - 8;
    }
    return static_cast<std::int64_t>((rank_digit(r, p.nranks, 97, index) * 17 + index) % 97);
  }
  switch (p.op) {
    case ReduceOp::Prod:  // one rank contributes 2, the others 1: the product is 2 for any n
      return (index % static_cast<std::uint64_t>(p.nranks)) == r ? 2 : 1;
    case ReduceOp::Avg:  // the same on every rank: the average is exact
      return static_cast<std::int64_t>(1 + index % 4);
    case ReduceOp::Max:
    case ReduceOp::Min:
      return static_cast<std::int64_t>((r * 3 + index) % (p.narrow ? 9U : 11U));
    case ReduceOp::Sum:
      break;
  }
  if (p.narrow) {  // one rank holds 1..8, the others 0: every partial sum is 0 or that value
    const auto n = static_cast<std::uint64_t>(p.nranks);
    return index % n == r ? static_cast<std::int64_t>(1 + (index / n) % 8) : 0;
  }
  return static_cast<std::int64_t>(1 + (r + index) % 3);  // sum <= 3n: else narrow
}

/// `sum` as an integer type of p.int_bits holds it after wrapping (two's complement).
CCBENCH_HD inline std::int64_t wrapped(const Params& p, std::int64_t sum) {
  if (p.int_bits <= 0 || p.int_bits >= 64) {
    return sum;
  }
  const std::uint64_t mask = (std::uint64_t{1} << p.int_bits) - 1;
  const std::uint64_t bits = static_cast<std::uint64_t>(sum) & mask;
  const bool negative = p.int_signed && (bits >> (p.int_bits - 1)) != 0;
  return negative ? static_cast<std::int64_t>(bits) - static_cast<std::int64_t>(mask) - 1
                  : static_cast<std::int64_t>(bits);
}

/// The reduction over every rank's input element `index`, in int64 (converted to the element type
/// afterwards, so integer wrap-around matches what a library computing in that type produces).
CCBENCH_HD inline std::int64_t reduced(const Params& p, std::uint64_t index) {
  std::int64_t acc = input(p, 0, index);
  for (int q = 1; q < p.nranks; ++q) {
    const std::int64_t v = input(p, q, index);
    switch (p.op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg:
        acc += v;
        break;
      case ReduceOp::Prod:
        acc *= v;
        break;
      case ReduceOp::Max:
        acc = acc > v ? acc : v;
        break;
      case ReduceOp::Min:
        acc = acc < v ? acc : v;
        break;
    }
  }
  // avg: an integer type's sum wraps before NCCL divides it (toward zero, as C++ does); a floating type's is
  // exact here, and -c refuses the cases where NCCL's pre-multiplied sum would not be (pattern.hpp).
  return p.op == ReduceOp::Avg ? wrapped(p, acc) / p.nranks : acc;
}

/// Output element `index` that rank p.rank must hold after the collective.
CCBENCH_HD inline std::int64_t expected(const Params& p, std::uint64_t index) {
  const auto n = static_cast<std::uint64_t>(p.nranks);
  const auto r = static_cast<std::uint64_t>(p.rank);
  switch (p.collective) {
    case Collective::AllReduce:
    case Collective::Reduce:
      return reduced(p, index);
    case Collective::ReduceScatter:
      return reduced(p, r * p.count + index);
    case Collective::AllGather:  // block q of the output is rank q's input
    case Collective::Gather:     // (the root's output only)
      return input(p, static_cast<int>(index / p.count), index % p.count);
    case Collective::Scatter:  // block r of the root's input
      return input(p, p.root, r * p.count + index);
    case Collective::AllToAll:  // block q of the output is block r of rank q's input
      return input(p, static_cast<int>(index / p.count), r * p.count + index % p.count);
    case Collective::AllToAllv:  // segments of every size: the host's (pattern.cpp's ExpectedOutput); no kernel checks
                                 // it
      return 0;
    case Collective::Broadcast:
      return input(p, p.root, index);
    case Collective::SendRecv:
    case Collective::IbWriteBw:  // the peer's buffer, written into ours (n = 2: the previous rank is the peer)
    case Collective::IbWriteLat:
      return input(p, static_cast<int>((r + n - 1) % n), index);
    case Collective::Copy:  // the same rank's input, moved
      return input(p, p.rank, index);
  }
  return 0;
}

}  // namespace ccbench::pattern_math
