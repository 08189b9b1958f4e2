#pragma once
// Device kernels (CUDA; built when a CUDA compiler is found, for sm_80 and newer): the verification
// patterns of pattern_math.hpp written and checked on the GPU, an SM copy, and an L2 flush. Host
// functions callable from plain C++; each enqueues on `stream` and returns CUDA's status.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ccbench/pattern_math.hpp"
#include "ccbench/types.hpp"

namespace ccbench::kernels {

/// Writes `elements` input elements of rank p.rank (of `dtype`) at `data` (device memory).
cudaError_t fill_input(const pattern_math::Params& p, DType dtype, void* data, std::uint64_t elements,
                       cudaStream_t stream);

/// Counts the `elements` output elements at `output` that differ bit for bit from the expected
/// ones, reduced on the device into `*device_count` (device memory, zeroed here first). The caller
/// copies the count back after the stream completes.
cudaError_t count_wrong(const pattern_math::Params& p, DType dtype, const void* output, std::uint64_t elements,
                        unsigned long long* device_count, cudaStream_t stream);

/// Copies `bytes` from `src` to `dst` with SM loads and stores (16-byte vectors where both are
/// aligned) on `blocks` blocks of 512 threads (0: four per SM); for copies the copy engines must
/// not do (cudaMemcpy uses them).
cudaError_t sm_copy(void* dst, const void* src, std::size_t bytes, int blocks, cudaStream_t stream);

/// Reads and rewrites `bytes` of `scratch` (at least the L2 size) so that the next kernel finds
/// nothing of its own data in L2.
cudaError_t flush_l2(void* scratch, std::size_t bytes, cudaStream_t stream);

/// The architectures the kernels were compiled for ("80,90,100").
const char* built_architectures();

}  // namespace ccbench::kernels
