#pragma once
// The NCCL backend's choice of its rank's GPU (choose_device of gpu_probe.hpp), made current and agreed
// across the group before the communicator is made.
#include "ccbench/gpu_probe.hpp"
#include "ccbench/group.hpp"

namespace ccbench::nccl_detail {

/// Every rank chooses its GPU and makes it current, then learns every rank's problem, so all of them throw the
/// same error (UsageError: exit 2; BackendError: a failed CUDA call) and none is left waiting for the others in
/// communicator set-up. No two ranks of the group may drive one GPU (by PCI bus id): with one visible device
/// each, two ranks may still see the same one (a launcher that did not split the GPUs).
DeviceChoice select_device_everywhere(Group& group, int local_rank, int local_size, int nccl_version);

}  // namespace ccbench::nccl_detail
