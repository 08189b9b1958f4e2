#include "ccbench/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <filesystem>
#include <system_error>

#include "ccbench/cuda/error.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench::cuda {

CudaAnswer ask() noexcept {
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

std::optional<int> runtime_version() {
  int version = 0;
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) {
    return std::nullopt;
  }
  return version;
}

std::optional<int> driver_version() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    return std::nullopt;
  }
  return version;
}

std::string device_name(int device) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.name;
}

std::string pci_bus_id(int device) {
  std::array<char, 64> bus_id{};
  check(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device), "cudaDeviceGetPCIBusId");
  return bus_id.data();
}

std::string topo_bus_id(int device) { return topo::normalize_bus_id(pci_bus_id(device)); }

int compute_capability_major(int device) {
  int major = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  return major;
}

}  // namespace ccbench::cuda
