#include "device_facts.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdlib>

#include "ccbench/cuda/device.hpp"
#include "ccbench/gpu_probe.hpp"
#include "ccbench/nccl/nccl_backend.hpp"
#include "ccbench/version.hpp"
#include "nccl_api.hpp"
#include "nccl_compat.hpp"
#if CCBENCH_NCCL_KERNELS
#include "ccbench/kernels.hpp"
#endif

namespace ccbench::nccl_detail {
namespace {

/// "NVIDIA H100 80GB HBM3 (0000:18:00.0)".
std::string gpu_description(int device) { return cuda::device_name(device) + " (" + cuda::topo_bus_id(device) + ")"; }

}  // namespace

std::map<std::string, std::string> collect_versions(int device, int nccl_version, bool blocking) {
  std::map<std::string, std::string> versions;
  versions["nccl"] = version_string(nccl_version);
  versions["nccl_compiled"] = version_string(NCCL_VERSION_CODE);
  versions["nccl_library"] = nccl().file;
  if (const auto runtime = cuda::runtime_version()) {
    versions["cuda_runtime"] = cuda_version_text(*runtime);
  }
  if (const auto driver = cuda::driver_version()) {
    versions["cuda_driver"] = cuda_version_text(*driver);
  }
  versions["gpu"] = gpu_description(device);
  versions["nccl_communicator"] = blocking ? "blocking" : "non-blocking (CCBENCH_NCCL_BLOCKING=0)";
  // Provenance of the numbers: what steered NCCL's choice of algorithm and protocol (as set here; NCCL's
  // own choice per size is not exposed by its API; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs it).
  const auto steered = [](const char* name, const char* otherwise) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::string(name) + "=" + value : std::string(otherwise);
  };
  versions["nccl_algo"] = steered("NCCL_ALGO", "not forced (NCCL_ALGO unset: NCCL's tuner chooses per size)");
  versions["nccl_proto"] = steered("NCCL_PROTO", "not forced (NCCL_PROTO unset: NCCL's tuner chooses per size)");
  versions["nccl_nvls"] =
      steered("NCCL_NVLS_ENABLE", "NCCL's default (NVLS where NVSwitch supports it; NCCL_NVLS_ENABLE unset)");
#if CCBENCH_NCCL_KERNELS
  versions["check"] = std::string("device kernels (sm ") + kernels::built_architectures() + ")";
#else
  versions["check"] = "host (buffers copied back; built without the kernels)";
#endif
  return versions;
}

}  // namespace ccbench::nccl_detail

namespace ccbench {

LibraryLines nccl_library_lines() {
  const auto runtime = cuda::runtime_version();
  const auto driver = cuda::driver_version();
  const bool has_driver = driver && *driver > 0;
  LibraryLines lines;
  lines.emplace_back("cuda",
                     fmt::format("runtime {} (linked statically; built with {}), driver {}",
                                 runtime ? cuda_version_text(*runtime) : "unknown", cuda_version_text(CUDART_VERSION),
                                 has_driver ? cuda_version_text(*driver) : "none (no libcuda.so.1 here)"));
  const std::string built = nccl_detail::version_string(NCCL_VERSION_CODE);
  if (const auto* api = nccl_detail::nccl_api()) {
    lines.emplace_back("nccl",
                       fmt::format("{} loaded from {}, built with {}",
                                   nccl_detail::version_string(nccl_detail::loaded_version()), api->file, built));
  } else {
    lines.emplace_back("nccl", fmt::format("none loaded: {}; built with {}", nccl_detail::nccl_load_error(), built));
  }
  return lines;
}

}  // namespace ccbench
