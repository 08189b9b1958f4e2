#pragma once
// Element types and reduction operators, as value enums with names and sizes.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ccbench {

enum class DType {
  Int8,
  Uint8,
  Int32,
  Uint32,
  Int64,
  Uint64,
  Float16,
  Bfloat16,
  Float32,
  Float64,
  Float8e4m3,  // OCP FP8 E4M3 (no infinity, largest 448): NCCL's ncclFloat8e4m3, CUDA's __nv_fp8_e4m3
  Float8e5m2,  // OCP FP8 E5M2 (IEEE-like, largest 57344): ncclFloat8e5m2, __nv_fp8_e5m2
};

enum class ReduceOp { Sum, Prod, Max, Min, Avg };

std::span<const DType> all_dtypes();
std::span<const ReduceOp> all_reduce_ops();

std::string_view name(DType type);
std::string_view name(ReduceOp op);
std::size_t size_of(DType type);
bool is_floating(DType type);
/// The 8-bit floating types (their patterns stay within the integers they hold exactly).
bool is_fp8(DType type);

/// Accepts our names and nccl-tests' aliases (float, half, bf16, int, f8e4m3, ...).
std::optional<DType> parse_dtype(std::string_view text);
std::optional<ReduceOp> parse_reduce_op(std::string_view text);

/// "float32, float64, ..." for error messages.
std::string dtype_names();
std::string reduce_op_names();

}  // namespace ccbench
