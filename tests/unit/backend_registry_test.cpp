// The refusals that need no GPU to test: the checks take the visible GPU count as input.
#include "backend_registry.hpp"

#include <gtest/gtest.h>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

std::string refusal(BackendChoice choice, int local_size, int gpus) {
  try {
    check_can_run(choice, RankPlacement{0, local_size}, "node7", gpus);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BackendRegistry, NcclNeedsAGpuPerRank) {
  if (refusal(BackendChoice::Nccl, 1, 1).find("no NCCL backend") != std::string::npos) {
    GTEST_SKIP() << "built without NCCL: the GPU-count checks are not reached";
  }
  EXPECT_EQ(refusal(BackendChoice::Nccl, 1, 1), "");
  EXPECT_EQ(refusal(BackendChoice::Nccl, 8, 8), "");
  EXPECT_NE(refusal(BackendChoice::Nccl, 4, 2).find("4 ranks on node7 but 2 GPU(s) visible"), std::string::npos);
  EXPECT_NE(refusal(BackendChoice::Nccl, 1, 0).find("no CUDA GPU is visible on node7"), std::string::npos);
}

TEST(BackendRegistry, MpiRunsAnywhere) { EXPECT_EQ(refusal(BackendChoice::Mpi, 64, 0), ""); }

TEST(BackendRegistry, AutoPicksMpiWithoutAGpu) {
  if (visible_gpus() > 0) {
    GTEST_SKIP() << "a GPU is visible";
  }
  EXPECT_EQ(resolve_backend(BackendChoice::Auto), BackendChoice::Mpi);
}

}  // namespace
}  // namespace ccbench
