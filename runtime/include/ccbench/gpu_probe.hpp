#pragma once
// Whether this process can use CUDA GPUs, and if not, whether that is a machine without GPUs (fine:
// host memory) or a GPU machine whose CUDA cannot start (an old driver, a container without the driver
// library): that must never pass as "no GPU".
#include <string>

namespace ccbench {

/// What CUDA answered, as plain values (the NCCL backend asks CUDA; this file needs no CUDA).
struct CudaAnswer {
  bool ok = true;                    // cudaGetDeviceCount succeeded
  bool no_device = false;            // it failed with cudaErrorNoDevice
  int count = 0;                     // devices, when ok
  std::string error_name;            // "cudaErrorInsufficientDriver"
  std::string error_text;            // CUDA's description of it
  int driver_version = 0;            // cudaDriverGetVersion: 0 when no driver library is installed
  int runtime_version = 0;           // cudaRuntimeGetVersion: the runtime this build links (13000)
  bool nvidia_device_nodes = false;  // /dev/nvidiactl exists: the kernel driver is there
};

struct GpuProbe {
  int count = 0;        // usable CUDA devices
  std::string problem;  // empty: `count` is the truth (0: no GPU here); else one line: why CUDA cannot start
};

/// Reads `answer`: no device, or no driver on a machine without NVIDIA device nodes, is "no GPU";
/// every other failure is a problem, named by CUDA's error and what would fix it.
GpuProbe read_cuda_answer(const CudaAnswer& answer);

/// "13.0" for CUDA's 13000.
std::string cuda_version_text(int version);

/// The CUDA device one rank drives, and how it was chosen (for the result); device -1 when none can be:
/// `how` then says why, in one line.
struct DeviceChoice {
  int device = -1;
  std::string how;
};

/// With at least as many visible devices as ranks on the host, the one at the rank's local index (one rank
/// per GPU, as nccl-tests does); with one visible device, that one, whatever the local rank: a launcher that
/// gives every task its own GPU (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES per rank) leaves each rank
/// seeing one (whether two ranks see the same one is known only from their PCI bus ids, which the NCCL
/// backend compares); otherwise more ranks than GPUs: refused.
DeviceChoice choose_device(int local_rank, int local_size, int visible, const std::string& host);

/// The oldest Linux driver branch that runs a CUDA runtime of this version ("580" for 13.x);
/// empty when not known.
std::string driver_branch_for(int runtime_version);

}  // namespace ccbench
