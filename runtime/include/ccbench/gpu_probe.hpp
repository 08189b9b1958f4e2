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

/// The oldest Linux driver branch that runs a CUDA runtime of this version ("580" for 13.x);
/// empty when not known.
std::string driver_branch_for(int runtime_version);

}  // namespace ccbench
