#pragma once
// The reduction of two values by op, in whatever type the test computes in: the reference of the pattern
// tests (pattern_test.cpp) and the step of their emulation of NCCL (pattern_nccl_test.cpp).
#include <algorithm>

#include "ccbench/types.hpp"

namespace ccbench::test {

template <typename T>
T reduce(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return a + b;
    case ReduceOp::Prod:
      return a * b;
    case ReduceOp::Max:
      return std::max(a, b);
    case ReduceOp::Min:
      return std::min(a, b);
  }
  return 0;
}

}  // namespace ccbench::test
