#pragma once
// What the NCCL backend records about its GPU and libraries: the versions and settings behind the numbers
// (the result's environment.libraries). The GPU's bus id and compute capability come from ccbench::cuda.
#include <map>
#include <string>

namespace ccbench::nccl_detail {

/// NCCL and CUDA versions, the GPU, the communicator's mode and what steered NCCL's algorithm choice.
std::map<std::string, std::string> collect_versions(int device, int nccl_version, bool blocking);

}  // namespace ccbench::nccl_detail
