// The refusals that need no GPU to test: the checks take the visible GPU count as input.
#include "backend_registry.hpp"

#include <gtest/gtest.h>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

std::string refusal(BackendChoice choice, int local_size, int gpus, const std::string& problem = "") {
  try {
    check_can_run(choice, RankPlacement{0, local_size}, "node7", GpuProbe{gpus, problem});
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
  // one visible GPU per rank (srun --gpus-per-task=1): each rank drives its own, whatever its local rank
  EXPECT_EQ(refusal(BackendChoice::Nccl, 8, 1), "");
  EXPECT_NE(refusal(BackendChoice::Nccl, 1, 0).find("no CUDA GPU is visible on node7"), std::string::npos);
  EXPECT_EQ(refusal(BackendChoice::Nccl, 1, 0, "cudaErrorInsufficientDriver (...)"),
            "--backend nccl: CUDA cannot start on node7: cudaErrorInsufficientDriver (...)");
}

TEST(BackendRegistry, MpiRunsAnywhere) { EXPECT_EQ(refusal(BackendChoice::Mpi, 64, 0), ""); }

TEST(BackendRegistry, AutoSaysWhyItChoseMpi) {
  const BackendResolution none = resolve_backend(BackendChoice::Auto, GpuProbe{});
  EXPECT_EQ(none.choice, BackendChoice::Mpi);
  const BackendResolution broken = resolve_backend(BackendChoice::Auto, GpuProbe{0, "cudaErrorInsufficientDriver"});
  EXPECT_EQ(broken.choice, BackendChoice::Mpi);
  if (none.why.find("no NCCL backend") != std::string::npos) {
    GTEST_SKIP() << "built without NCCL: " << none.why;
  }
  EXPECT_EQ(none.why, "--backend auto chose mpi: no CUDA GPU is visible");
  EXPECT_EQ(broken.why, "--backend auto chose mpi because CUDA cannot start: cudaErrorInsufficientDriver");
  const BackendResolution gpus = resolve_backend(BackendChoice::Auto, GpuProbe{8, ""});
  EXPECT_EQ(gpus.choice, BackendChoice::Nccl);
  EXPECT_EQ(resolve_backend(BackendChoice::Mpi, GpuProbe{8, ""}).why, "");
}

}  // namespace
}  // namespace ccbench
