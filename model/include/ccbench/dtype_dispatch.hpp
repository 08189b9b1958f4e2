#pragma once
// One switch from a DType to the C++ element type a template is instantiated for, shared by the host
// patterns (pattern.cpp) and the device kernels (kernels/): `Types` names the four types that differ
// between them (the host's bit holders, CUDA's __half, __nv_bfloat16, __nv_fp8_e4m3, __nv_fp8_e5m2).
#include <cstdint>

#include "ccbench/types.hpp"

namespace ccbench {

/// Fn<T>{}(args...) for the element type T of `type`; `otherwise()` for a value outside the enum.
template <template <typename> class Fn, typename Types, typename Otherwise, typename... Args>
auto dispatch_dtype(DType type, Otherwise otherwise, Args&&... args) {
  switch (type) {
    case DType::Int8:
      return Fn<std::int8_t>{}(args...);
    case DType::Uint8:
      return Fn<std::uint8_t>{}(args...);
    case DType::Int32:
      return Fn<std::int32_t>{}(args...);
    case DType::Uint32:
      return Fn<std::uint32_t>{}(args...);
    case DType::Int64:
      return Fn<std::int64_t>{}(args...);
    case DType::Uint64:
      return Fn<std::uint64_t>{}(args...);
    case DType::Float16:
      return Fn<typename Types::Float16>{}(args...);
    case DType::Bfloat16:
      return Fn<typename Types::Bfloat16>{}(args...);
    case DType::Float32:
      return Fn<float>{}(args...);
    case DType::Float64:
      return Fn<double>{}(args...);
    case DType::Float8e4m3:
      return Fn<typename Types::Float8e4m3>{}(args...);
    case DType::Float8e5m2:
      return Fn<typename Types::Float8e5m2>{}(args...);
  }
  return otherwise();
}

}  // namespace ccbench
