#include "ccbench/types.hpp"

#include <array>
#include <utility>

namespace ccbench {
namespace {

struct DTypeRow {
  DType type;
  std::string_view name;
  std::size_t size;
  bool floating;
};

constexpr std::array kDTypes{
    DTypeRow{DType::Int8, "int8", 1, false},
    DTypeRow{DType::Uint8, "uint8", 1, false},
    DTypeRow{DType::Int32, "int32", 4, false},
    DTypeRow{DType::Uint32, "uint32", 4, false},
    DTypeRow{DType::Int64, "int64", 8, false},
    DTypeRow{DType::Uint64, "uint64", 8, false},
    DTypeRow{DType::Float16, "float16", 2, true},
    DTypeRow{DType::Bfloat16, "bfloat16", 2, true},
    DTypeRow{DType::Float32, "float32", 4, true},
    DTypeRow{DType::Float64, "float64", 8, true},
    DTypeRow{DType::Float8e4m3, "float8_e4m3", 1, true},
    DTypeRow{DType::Float8e5m2, "float8_e5m2", 1, true},
};

// nccl-tests' spellings (and PyTorch's for FP8), accepted so habits carry over.
constexpr std::array<std::pair<std::string_view, DType>, 14> kDTypeAliases{{
    {"char", DType::Int8},
    {"int", DType::Int32},
    {"half", DType::Float16},
    {"fp16", DType::Float16},
    {"bf16", DType::Bfloat16},
    {"float", DType::Float32},
    {"fp32", DType::Float32},
    {"double", DType::Float64},
    {"fp64", DType::Float64},
    {"f8e4m3", DType::Float8e4m3},
    {"fp8_e4m3", DType::Float8e4m3},
    {"float8_e4m3fn", DType::Float8e4m3},
    {"f8e5m2", DType::Float8e5m2},
    {"fp8_e5m2", DType::Float8e5m2},
}};

constexpr std::array kOps{ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg};
constexpr std::array<std::string_view, 5> kOpNames{"sum", "prod", "max", "min", "avg"};

const DTypeRow& row(DType type) {
  for (const auto& r : kDTypes) {
    if (r.type == type) {
      return r;
    }
  }
  return kDTypes.front();  // unreachable: every enumerator has a row
}

constexpr std::array<DType, kDTypes.size()> dtype_list() {
  std::array<DType, kDTypes.size()> out{};
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    out[i] = kDTypes[i].type;
  }
  return out;
}

constexpr std::array<DType, kDTypes.size()> kDTypeList = dtype_list();

}  // namespace

std::span<const DType> all_dtypes() { return kDTypeList; }
std::span<const ReduceOp> all_reduce_ops() { return kOps; }

std::string_view name(DType type) { return row(type).name; }
std::size_t size_of(DType type) { return row(type).size; }
bool is_floating(DType type) { return row(type).floating; }
bool is_fp8(DType type) { return type == DType::Float8e4m3 || type == DType::Float8e5m2; }

std::string_view name(ReduceOp op) { return kOpNames[static_cast<std::size_t>(op)]; }

std::optional<DType> parse_dtype(std::string_view text) {
  for (const auto& r : kDTypes) {
    if (r.name == text) {
      return r.type;
    }
  }
  for (const auto& [alias, type] : kDTypeAliases) {
    if (alias == text) {
      return type;
    }
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view text) {
  for (std::size_t i = 0; i < kOps.size(); ++i) {
    if (kOpNames[i] == text) {
      return kOps[i];
    }
  }
  return std::nullopt;
}

std::string dtype_names() {
  std::string out;
  for (const auto& r : kDTypes) {
    out += out.empty() ? "" : ", ";
    out += r.name;
  }
  return out;
}

std::string reduce_op_names() {
  std::string out;
  for (auto n : kOpNames) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

}  // namespace ccbench
