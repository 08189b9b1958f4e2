#pragma once
// Every difference between NCCL versions that the backend cares about, and the only place that
// looks at NCCL_VERSION_CODE. The rest of the backend asks these flags and helpers.
#include <nccl.h>

#include <optional>
#include <string>

#include "ccbench/types.hpp"
#include "nccl_api.hpp"

// ncclConfig_t, ncclCommInitRankConfig and ncclCommFinalize (the communicator's set-up and orderly end)
// appeared in 2.14.
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error \
    "ccbench's NCCL backend needs NCCL 2.14 or newer; set NCCL_HOME to a newer NCCL or configure with -DCCBENCH_NCCL=OFF"
#endif

namespace ccbench::nccl_detail {

/// A version as nccl.h's NCCL_VERSION() encodes it (the encoding changed after 2.8).
constexpr int version_code(int major, int minor, int patch) {
  return (major <= 2 && minor <= 8) ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
}

/// "2.28.9" for a code from ncclGetVersion() or NCCL_VERSION_CODE.
inline std::string version_string(int code) {
  const bool old_encoding = code < 10000;
  const int major = old_encoding ? code / 1000 : code / 10000;
  const int minor = old_encoding ? (code % 1000) / 100 : (code % 10000) / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

/// The oldest library this backend runs with (checked at run time too: libnccl.so.2 may be older
/// than the nccl.h it was built with).
inline constexpr int kMinimumVersion = version_code(2, 14, 0);

/// ncclAlltoAll (count = elements per peer) appeared in 2.28; older versions get grouped
/// ncclSend/ncclRecv, which is what nccl-tests times for alltoall.
inline constexpr int kAlltoAllSince = version_code(2, 28, 0);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
inline constexpr bool kHasAlltoAll = true;
#else
inline constexpr bool kHasAlltoAll = false;
#endif

/// Whether the native all-to-all can be called with the library loaded at run time.
constexpr bool use_native_alltoall(int runtime_version) { return kHasAlltoAll && runtime_version >= kAlltoAllSince; }

/// ncclAlltoAll where this NCCL has it; ncclInvalidUsage otherwise (callers ask
/// use_native_alltoall() first).
inline ncclResult_t native_alltoall(const void* sendbuff, void* recvbuff, std::size_t count, ncclDataType_t type,
                                    ncclComm_t comm, cudaStream_t stream) {
  const auto alltoall = nccl().AlltoAll;
  return alltoall != nullptr ? alltoall(sendbuff, recvbuff, count, type, comm, stream) : ncclInvalidUsage;
}

/// The NCCL element type of `type`, when this NCCL has one.
inline std::optional<ncclDataType_t> to_nccl(DType type) {
  switch (type) {
    case DType::Int8:
      return ncclInt8;
    case DType::Uint8:
      return ncclUint8;
    case DType::Int32:
      return ncclInt32;
    case DType::Uint32:
      return ncclUint32;
    case DType::Int64:
      return ncclInt64;
    case DType::Uint64:
      return ncclUint64;
    case DType::Float16:
      return ncclFloat16;
    case DType::Bfloat16:  // ncclBfloat16 exists only where nccl.h saw CUDA's bfloat16 types
#if defined(__CUDA_BF16_TYPES_EXIST__)
      return ncclBfloat16;
#else
      return std::nullopt;
#endif
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
    case DType::Float8e4m3:  // 2.24 and newer (reductions on sm_90 and newer only: fp8_reduces_on)
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
      return ncclFloat8e4m3;
#else
      return std::nullopt;
#endif
    case DType::Float8e5m2:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
      return ncclFloat8e5m2;
#else
      return std::nullopt;
#endif
  }
  return std::nullopt;
}

/// FP8 appeared in 2.24: a library older than that, loaded at run time, rejects the type.
inline constexpr int kFp8Since = version_code(2, 24, 0);
constexpr bool has_fp8(int runtime_version) { return runtime_version >= kFp8Since; }

/// NCCL reduces FP8 on compute capability 9.0 and newer only (it moves it anywhere).
constexpr bool fp8_reduces_on(int compute_capability_major) { return compute_capability_major >= 9; }

/// The NCCL reduction of `op` (ncclAvg exists since 2.10, below our minimum).
inline std::optional<ncclRedOp_t> to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Prod:
      return ncclProd;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Avg:
      return ncclAvg;
  }
  return std::nullopt;
}

}  // namespace ccbench::nccl_detail
