#pragma once
// One checking helper for the CUDA runtime: a failed call throws BackendError naming the call and CUDA's own
// words for the error. Nothing here prints.
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace ccbench::cuda {

/// "cudaErrorNoDevice: no CUDA-capable device is detected": CUDA's name and description of `result`.
std::string error_text(cudaError_t result);

/// "what failed: cudaErrorX (description)".
std::string error_message(cudaError_t result, std::string_view what);

/// Throws BackendError(error_message(result, what)).
[[noreturn]] void throw_error(cudaError_t result, std::string_view what);

/// Throws on anything but cudaSuccess. Inline: it checks every call of a timed loop.
inline void check(cudaError_t result, std::string_view what) {
  if (result != cudaSuccess) {
    throw_error(result, what);
  }
}

}  // namespace ccbench::cuda
