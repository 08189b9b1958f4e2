#include "ccbench/gpu_probe.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace ccbench {
namespace {

// CUDA's minor-version compatibility: every runtime of a major version runs on the first driver branch
// released for it (CUDA Toolkit Release Notes, "CUDA Driver" table: 11.x >= 450.80.02, 12.x >= 525.60.13,
// 13.x >= 580.65.06).
constexpr std::array<std::pair<int, const char*>, 3> kDriverBranch{{{11, "450"}, {12, "525"}, {13, "580"}}};

}  // namespace

std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

std::string driver_branch_for(int runtime_version) {
  for (const auto& [major, branch] : kDriverBranch) {
    if (runtime_version / 1000 == major) {
      return branch;
    }
  }
  return {};
}

GpuProbe read_cuda_answer(const CudaAnswer& answer) {
  if (answer.ok) {
    return {answer.count, {}};
  }
  if (answer.no_device || (answer.driver_version == 0 && !answer.nvidia_device_nodes)) {
    return {};  // a machine without NVIDIA GPUs (or without their driver at all): host memory
  }
  std::string problem = fmt::format("{} ({})", answer.error_name, answer.error_text);
  const std::string runtime = cuda_version_text(answer.runtime_version);
  if (answer.driver_version == 0) {
    problem += fmt::format(
        ": /dev/nvidiactl exists but no CUDA driver library (libcuda.so.1) could be used; in a container, "
        "mount the host's driver (NVIDIA Container Toolkit, --gpus)");
  } else if (answer.driver_version < answer.runtime_version) {
    const std::string branch = driver_branch_for(answer.runtime_version);
    problem += fmt::format(": this build's CUDA {} runtime needs {} driver; the installed one supports CUDA {} only",
                           runtime, branch.empty() ? "a newer" : "an R" + branch + " or newer",
                           cuda_version_text(answer.driver_version));
  } else {
    problem += fmt::format(" with CUDA runtime {} and a driver for CUDA {}", runtime,
                           cuda_version_text(answer.driver_version));
  }
  return {0, problem};
}

DeviceChoice choose_device(int local_rank, int local_size, int visible, const std::string& host) {
  if (visible <= 0) {
    return {-1, "no CUDA GPU is visible on " + host +
                    "; use --backend mpi for host memory, or check the driver and CUDA_VISIBLE_DEVICES"};
  }
  if (local_rank >= 0 && local_rank < visible && local_size <= visible) {
    return {local_rank, fmt::format("device {} of {} visible (local rank {} of {} on {})", local_rank, visible,
                                    local_rank, local_size, host)};
  }
  if (visible == 1) {
    return {0, fmt::format("device 0, the one visible to this rank (local rank {} of {} on {}: one GPU per task)",
                           local_rank, local_size, host)};
  }
  return {-1, fmt::format("{} ranks on {} but {} GPU(s) visible; start at most {} rank(s) per node (one rank per "
                          "GPU), or give each rank one GPU of its own (srun --gpus-per-task=1)",
                          local_size, host, visible, visible)};
}

}  // namespace ccbench
