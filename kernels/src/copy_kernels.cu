// An SM copy (the path of NVLink/PCIe traffic that kernels, not copy engines, generate) and an L2
// flush between timed runs.
#include <cstdint>

#include "ccbench/kernels.hpp"

namespace ccbench::kernels {
namespace {

constexpr int kThreads = 512;

__global__ void copy_vec16(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    dst[i] = src[i];
  }
}

__global__ void copy_bytes(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    dst[i] = src[i];
  }
}

// Each thread adds one to its words: a read and a write of every line, which evicts whatever L2 held.
__global__ void touch(unsigned int* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    data[i] += 1U;
  }
}

int default_blocks() {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
    sms = 32;
  }
  return sms * 4;
}

}  // namespace

cudaError_t sm_copy(void* dst, const void* src, std::size_t bytes, int blocks, cudaStream_t stream) {
  if (bytes == 0) {
    return cudaSuccess;
  }
  const unsigned grid = static_cast<unsigned>(blocks > 0 ? blocks : default_blocks());
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  const std::size_t vectors = (d % 16 == 0 && s % 16 == 0) ? bytes / 16 : 0;
  (void)cudaGetLastError();  // an earlier call's error must not be taken for this launch's
  if (vectors > 0) {
    copy_vec16<<<grid, kThreads, 0, stream>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), vectors);
  }
  const std::size_t done = vectors * 16;
  if (done < bytes) {
    copy_bytes<<<grid, kThreads, 0, stream>>>(static_cast<unsigned char*>(dst) + done,
                                              static_cast<const unsigned char*>(src) + done, bytes - done);
  }
  return cudaGetLastError();
}

cudaError_t flush_l2(void* scratch, std::size_t bytes, cudaStream_t stream) {
  const std::size_t words = bytes / sizeof(unsigned int);
  if (words == 0) {
    return cudaSuccess;
  }
  const auto grid = static_cast<unsigned>(default_blocks());
  (void)cudaGetLastError();  // an earlier call's error must not be taken for this launch's
  touch<<<grid, kThreads, 0, stream>>>(static_cast<unsigned int*>(scratch), words);
  return cudaGetLastError();
}

const char* built_architectures() { return CCBENCH_CUDA_ARCHITECTURES; }

}  // namespace ccbench::kernels
