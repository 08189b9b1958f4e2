// The NCCL backend's choice of its rank's GPU, agreed across the group before the communicator is made.
#include "device_select.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <exception>
#include <string>

#include "ccbench/cuda/device.hpp"
#include "ccbench/cuda/error.hpp"
#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "nccl_api.hpp"
#include "nccl_compat.hpp"

namespace ccbench::nccl_detail {
namespace {

/// What stops this rank from running on its GPU, as one line that says how to fix it; empty if
/// nothing does. Whether there are GPUs enough for the ranks is the caller's check (the app's
/// check_can_run, before any collective); cudaSetDevice below is the backstop.
std::string local_problem(int local_rank, int local_size, int nccl_version) {
  if (local_rank < 0 || local_rank >= local_size) {
    return "local rank " + std::to_string(local_rank) + " is outside 0.." + std::to_string(local_size - 1) +
           " on host " + local_hostname() + "; start the benchmark with mpirun or srun";
  }
  if (nccl_api() == nullptr) {
    return "host " + local_hostname() + ": " + nccl_load_error();
  }
  if (nccl_version < kMinimumVersion) {
    return "the NCCL library loaded on host " + local_hostname() + " (" + version_string(nccl_version) +
           ") is older than " + version_string(kMinimumVersion) + "; point LD_LIBRARY_PATH at a newer libnccl.so.2";
  }
  return {};
}

/// One rank's readiness as all_gather carries it: empty when ready, else a kind letter and one
/// line. A usage problem ends the run with exit code 2, a failed call with 1.
enum class ProblemKind : char { Usage = 'U', Failure = 'F' };

/// Chooses the rank's GPU (choose_device) and makes it current; `chosen` gets the choice.
std::string select_device(int local_rank, int local_size, int nccl_version, DeviceChoice& chosen) {
  const std::string usage = local_problem(local_rank, local_size, nccl_version);
  if (!usage.empty()) {
    return static_cast<char>(ProblemKind::Usage) + usage;
  }
  int visible = 0;
  if (const cudaError_t counted = cudaGetDeviceCount(&visible); counted != cudaSuccess) {
    return static_cast<char>(ProblemKind::Failure) +
           cuda::error_message(counted, "cudaGetDeviceCount on host " + local_hostname());
  }
  chosen = choose_device(local_rank, local_size, visible, local_hostname());
  if (chosen.device < 0) {
    return static_cast<char>(ProblemKind::Usage) + chosen.how;
  }
  const cudaError_t result = cudaSetDevice(chosen.device);
  if (result != cudaSuccess) {
    const std::string what = "cudaSetDevice(" + std::to_string(chosen.device) + ") on host " + local_hostname();
    return static_cast<char>(ProblemKind::Failure) + cuda::error_message(result, what);
  }
  return {};
}

}  // namespace

DeviceChoice select_device_everywhere(Group& group, int local_rank, int local_size, int nccl_version) {
  DeviceChoice chosen;
  for (const std::string& problem : group.all_gather(select_device(local_rank, local_size, nccl_version, chosen))) {
    if (problem.empty()) {
      continue;
    }
    if (problem.front() == static_cast<char>(ProblemKind::Usage)) {
      throw UsageError(problem.substr(1));
    }
    throw BackendError(problem.substr(1));
  }
  std::string bus_id;
  try {
    bus_id = cuda::topo_bus_id(chosen.device);
  } catch (const std::exception&) {
    bus_id = "device " + std::to_string(chosen.device) + " of rank " + std::to_string(group.rank());  // unique
  }
  const auto places = group.all_gather(local_hostname() + " " + bus_id);
  for (std::size_t a = 0; a < places.size(); ++a) {
    for (std::size_t b = a + 1; b < places.size(); ++b) {
      if (places[a] == places[b]) {
        const auto space = places[a].find(' ');
        throw UsageError(fmt::format(
            "ranks {} and {} of a group on {} both drive the GPU at {}: give each rank a GPU of its own (one rank "
            "per GPU, or srun --gpus-per-task=1 / CUDA_VISIBLE_DEVICES per rank)",
            a, b, places[a].substr(0, space), places[a].substr(space + 1)));
      }
    }
  }
  return chosen;
}

}  // namespace ccbench::nccl_detail
