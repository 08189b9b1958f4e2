#pragma once
// One measured case (a collective on its data) and whether a backend can run it.
#include <cstdint>
#include <memory>
#include <string>

#include "ccbench/collective.hpp"
#include "ccbench/types.hpp"

namespace ccbench {

struct Traffic;  // traffic.hpp

/// One measured case: which collective, on which data, in place or not.
struct CaseSpec {
  Collective collective = Collective::AllReduce;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  bool in_place = false;
  std::uint64_t count = 0;                   // nccl-tests' count (see collective.hpp)
  std::shared_ptr<const Traffic> traffic{};  // alltoallv: who sends whom how much (traffic.hpp); else null
};

struct Support {
  bool supported = true;
  std::string reason;  // why not, when not
};

/// What no backend measures, with the same reason on each: a size below one element per rank (count 0,
/// which NCCL accepts and returns from at once, so its time would pass for a result).
inline Support generic_support(const CaseSpec& spec) {
  if (spec.count == 0) {
    return Support{false, "size is below one element per rank"};
  }
  return Support{};
}

}  // namespace ccbench
