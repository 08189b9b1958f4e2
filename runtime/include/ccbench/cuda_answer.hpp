#pragma once
// ask_cuda(): CUDA's answer about this process's devices, for read_cuda_answer() (gpu_probe.hpp). Header-only,
// for the code that links the CUDA runtime (the NCCL backend, the gpu tests); the runtime library needs no CUDA.
#include <cuda_runtime_api.h>

#include <filesystem>
#include <system_error>

#include "ccbench/gpu_probe.hpp"

namespace ccbench {

inline CudaAnswer ask_cuda() noexcept {
  CudaAnswer answer;
  const cudaError_t result = cudaGetDeviceCount(&answer.count);
  answer.ok = result == cudaSuccess;
  answer.no_device = result == cudaErrorNoDevice;
  if (!answer.ok) {
    answer.count = 0;
    answer.error_name = cudaGetErrorName(result);
    answer.error_text = cudaGetErrorString(result);
    (void)cudaGetLastError();  // clear it, so later CUDA calls do not report it
  }
  (void)cudaDriverGetVersion(&answer.driver_version);
  (void)cudaRuntimeGetVersion(&answer.runtime_version);
  std::error_code ignored;
  answer.nvidia_device_nodes = std::filesystem::exists("/dev/nvidiactl", ignored);
  return answer;
}

}  // namespace ccbench
