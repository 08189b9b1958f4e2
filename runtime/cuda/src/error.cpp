#include "ccbench/cuda/error.hpp"

#include <fmt/format.h>

#include "ccbench/errors.hpp"

namespace ccbench::cuda {

std::string error_text(cudaError_t result) {
  return fmt::format("{}: {}", cudaGetErrorName(result), cudaGetErrorString(result));
}

std::string error_message(cudaError_t result, std::string_view what) {
  return fmt::format("{} failed: {} ({})", what, cudaGetErrorName(result), cudaGetErrorString(result));
}

void throw_error(cudaError_t result, std::string_view what) { throw BackendError(error_message(result, what)); }

}  // namespace ccbench::cuda
