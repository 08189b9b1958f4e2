// The NCCL backend's abort order (issue: a CUDA graph holding NCCL work must go before ncclCommAbort).
#include "ccbench/abort_sequence.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ccbench {
namespace {

TEST(AbortSequence, ReleasesWhatHoldsTheWorkBeforeAborting) {
  std::string order;
  AbortSequence seq;
  seq.release_first([&] { order += "graph destroyed;"; });
  EXPECT_FALSE(seq.done());
  seq.run([&] { order += "communicator aborted;"; });
  EXPECT_EQ(order, "graph destroyed;communicator aborted;");
  seq.run([&] { order += "again;"; });
  EXPECT_EQ(order, "graph destroyed;communicator aborted;");
  EXPECT_TRUE(seq.done());
}

TEST(AbortSequence, AbortsWithNothingToRelease) {
  int aborts = 0;
  AbortSequence seq;
  seq.run([&] { ++aborts; });
  EXPECT_EQ(aborts, 1);
}

// Issue 38, section 9: done() meant "begun" (set before the release and the abort ran), so a destructor that
// asked it could meet an abort in progress.
TEST(AbortSequence, IsDoneOnlyOnceTheAbortHasReturned) {
  AbortSequence seq;
  bool done_inside = true;
  seq.run([&] { done_inside = seq.done(); });
  EXPECT_FALSE(done_inside);
  EXPECT_TRUE(seq.done());
}

}  // namespace
}  // namespace ccbench
