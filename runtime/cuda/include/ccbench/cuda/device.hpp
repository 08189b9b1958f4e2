#pragma once
// What CUDA says about this process and its devices: whether CUDA can start at all, the versions of the
// runtime and the driver, and a device's identity.
#include <optional>
#include <string>

#include "ccbench/gpu_probe.hpp"

namespace ccbench::cuda {

/// CUDA's answer about this process's devices, for read_cuda_answer() (gpu_probe.hpp). Never throws.
CudaAnswer ask() noexcept;

/// cudaRuntimeGetVersion: 13000 for CUDA 13.0; empty when the call fails.
std::optional<int> runtime_version();
/// cudaDriverGetVersion: the newest CUDA the driver runs (0: no driver library); empty when the call fails.
std::optional<int> driver_version();

/// "NVIDIA H100 80GB HBM3". Throws BackendError.
std::string device_name(int device);

/// CUDA's PCI bus id of `device` as CUDA writes it ("0000:1B:00.0"). Throws BackendError.
std::string pci_bus_id(int device);

/// "0000:1b:00.0": the PCI bus id as topology discovery writes them (topo::normalize_bus_id), the form to
/// compare. Throws BackendError.
std::string topo_bus_id(int device);

/// 9 for an H100 (compute capability 9.0). Throws BackendError.
int compute_capability_major(int device);

}  // namespace ccbench::cuda
