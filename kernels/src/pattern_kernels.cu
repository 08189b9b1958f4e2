// The verification patterns on the device: the same pattern_math.hpp arithmetic as the host's
// pattern.cpp, converted to each element type on the GPU and compared bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstring>

#include "ccbench/dtype_dispatch.hpp"
#include "ccbench/kernels.hpp"

namespace ccbench::kernels {
namespace {

constexpr int kThreads = 256;

// The element type's bits for a small integer (exact in every type).
template <typename T>
struct Element {
  using Bits = T;
  __device__ static Bits of(std::int64_t v) { return static_cast<T>(v); }
};
template <>
struct Element<__half> {
  using Bits = unsigned short;
  __device__ static Bits of(std::int64_t v) { return __half_as_ushort(__float2half_rn(static_cast<float>(v))); }
};
template <>
struct Element<__nv_bfloat16> {
  using Bits = unsigned short;
  __device__ static Bits of(std::int64_t v) { return __bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(v))); }
};
template <>
struct Element<__nv_fp8_e4m3> {
  using Bits = __nv_fp8_storage_t;
  __device__ static Bits of(std::int64_t v) {
    return __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E4M3);
  }
};
template <>
struct Element<__nv_fp8_e5m2> {
  using Bits = __nv_fp8_storage_t;
  __device__ static Bits of(std::int64_t v) {
    return __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E5M2);
  }
};
template <>
struct Element<float> {
  using Bits = unsigned int;
  __device__ static Bits of(std::int64_t v) { return __float_as_uint(static_cast<float>(v)); }
};
template <>
struct Element<double> {
  using Bits = unsigned long long;
  __device__ static Bits of(std::int64_t v) { return static_cast<Bits>(__double_as_longlong(static_cast<double>(v))); }
};

template <typename T>
__global__ void fill_kernel(pattern_math::Params p, typename Element<T>::Bits* data, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    data[i] = Element<T>::of(pattern_math::input(p, p.rank, i));
  }
}

template <typename T>
__global__ void wrong_kernel(pattern_math::Params p, const typename Element<T>::Bits* data, std::uint64_t n,
                             unsigned long long* count) {
  unsigned long long mine = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    mine += data[i] != Element<T>::of(pattern_math::expected(p, i)) ? 1ULL : 0ULL;
  }
  for (int offset = 16; offset > 0; offset /= 2) {  // warp sum, then one atomic per warp
    mine += __shfl_down_sync(0xffffffffU, mine, offset);
  }
  if ((threadIdx.x & 31U) == 0 && mine != 0) {
    atomicAdd(count, mine);
  }
}

unsigned blocks_for(std::uint64_t n) {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
    sms = 32;
  }
  const std::uint64_t wanted = (n + kThreads - 1) / kThreads;
  const auto most = static_cast<std::uint64_t>(sms) * 8;
  return static_cast<unsigned>(wanted < most ? (wanted > 0 ? wanted : 1) : most);
}

template <typename T>
cudaError_t fill_typed(const pattern_math::Params& p, void* data, std::uint64_t n, cudaStream_t stream) {
  const unsigned grid = blocks_for(n);
  (void)cudaGetLastError();  // an earlier call's error must not be taken for this launch's
  fill_kernel<T><<<grid, kThreads, 0, stream>>>(p, static_cast<typename Element<T>::Bits*>(data), n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t wrong_typed(const pattern_math::Params& p, const void* data, std::uint64_t n, unsigned long long* count,
                        cudaStream_t stream) {
  const unsigned grid = blocks_for(n);
  (void)cudaGetLastError();  // an earlier call's error must not be taken for this launch's
  wrong_kernel<T><<<grid, kThreads, 0, stream>>>(p, static_cast<const typename Element<T>::Bits*>(data), n, count);
  return cudaGetLastError();
}

// CUDA's element types where they are not plain C++ ones.
struct DeviceTypes {
  using Float16 = __half;
  using Bfloat16 = __nv_bfloat16;
  using Float8e4m3 = __nv_fp8_e4m3;
  using Float8e5m2 = __nv_fp8_e5m2;
};
constexpr auto kUnknownType = [] { return cudaErrorInvalidValue; };

template <typename T>
struct Fill {
  cudaError_t operator()(const pattern_math::Params& p, void* d, std::uint64_t n, cudaStream_t s) const {
    return fill_typed<T>(p, d, n, s);
  }
};
template <typename T>
struct Wrong {
  cudaError_t operator()(const pattern_math::Params& p, const void* d, std::uint64_t n, unsigned long long* c,
                         cudaStream_t s) const {
    return wrong_typed<T>(p, d, n, c, s);
  }
};

}  // namespace

cudaError_t fill_input(const pattern_math::Params& p, DType dtype, void* data, std::uint64_t elements,
                       cudaStream_t stream) {
  if (elements == 0) {
    return cudaSuccess;
  }
  return dispatch_dtype<Fill, DeviceTypes>(dtype, kUnknownType, p, data, elements, stream);
}

cudaError_t count_wrong(const pattern_math::Params& p, DType dtype, const void* output, std::uint64_t elements,
                        unsigned long long* device_count, cudaStream_t stream) {
  if (const cudaError_t e = cudaMemsetAsync(device_count, 0, sizeof(*device_count), stream); e != cudaSuccess) {
    return e;
  }
  if (elements == 0) {
    return cudaSuccess;
  }
  return dispatch_dtype<Wrong, DeviceTypes>(dtype, kUnknownType, p, output, elements, device_count, stream);
}

}  // namespace ccbench::kernels
