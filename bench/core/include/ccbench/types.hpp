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
};

enum class ReduceOp { Sum, Prod, Max, Min, Avg };

std::span<const DType> all_dtypes();
std::span<const ReduceOp> all_reduce_ops();

std::string_view name(DType type);
std::string_view name(ReduceOp op);
std::size_t size_of(DType type);
bool is_floating(DType type);

/// Accepts our names and nccl-tests' aliases (float, half, bf16, int, ...).
std::optional<DType> parse_dtype(std::string_view text);
std::optional<ReduceOp> parse_reduce_op(std::string_view text);

/// "float32, float64, ..." for error messages.
std::string dtype_names();
std::string reduce_op_names();

}  // namespace ccbench
