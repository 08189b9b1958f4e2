#pragma once
// What the NCCL backend records about its GPU and libraries: the bus id, the compute capability, and the
// versions and settings behind the numbers (the result's environment.libraries).
#include <map>
#include <string>

namespace ccbench::nccl_detail {

/// "0000:18:00.0": CUDA's PCI bus id in lower case, as topology discovery writes them.
std::string pci_bus_id(int device);

int compute_capability_major(int device);

/// NCCL and CUDA versions, the GPU, the communicator's mode and what steered NCCL's algorithm choice.
std::map<std::string, std::string> collect_versions(int device, int nccl_version, bool blocking);

}  // namespace ccbench::nccl_detail
