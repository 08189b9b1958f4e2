#include "ccbench/pattern.hpp"

#include <bit>
#include <cstring>
#include <vector>

namespace ccbench {
namespace {

std::int64_t expected_output(const CaseSpec& spec, int nranks, int rank, std::uint64_t index) {
  return pattern_math::expected(pattern_params(spec, nranks, rank), index);
}

template <typename T>
T to_element(std::int64_t v) {
  return static_cast<T>(v);
}

// float16 / bfloat16 are stored as their bits.
struct Half {
  std::uint16_t bits;
};
struct Bfloat16 {
  std::uint16_t bits;
};
template <>
Half to_element<Half>(std::int64_t v) {
  return Half{float_to_half(static_cast<float>(v))};
}
template <>
Bfloat16 to_element<Bfloat16>(std::int64_t v) {
  return Bfloat16{float_to_bfloat16(static_cast<float>(v))};
}

template <typename T>
void fill_typed(const CaseSpec& spec, int nranks, int rank, void* data) {
  const std::uint64_t n = elements(info(spec.collective).send, spec.count, nranks);
  auto* out = static_cast<T*>(data);
  for (std::uint64_t i = 0; i < n; ++i) {
    out[i] = to_element<T>(pattern_input(spec, nranks, rank, i));
  }
}

template <typename T>
void expected_typed(const CaseSpec& spec, int nranks, int rank, void* data) {
  const std::uint64_t n = elements(info(spec.collective).recv, spec.count, nranks);
  auto* out = static_cast<T*>(data);
  for (std::uint64_t i = 0; i < n; ++i) {
    out[i] = to_element<T>(expected_output(spec, nranks, rank, i));
  }
}

template <typename T>
std::uint64_t wrong_typed(const CaseSpec& spec, int nranks, int rank, const void* output) {
  const std::uint64_t n = elements(info(spec.collective).recv, spec.count, nranks);
  const auto* bytes = static_cast<const unsigned char*>(output);
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const T want = to_element<T>(expected_output(spec, nranks, rank, i));
    // Bitwise on purpose: patterns are exact, so a right value has exactly these bits (+0 only,
    // no NaN), and half/bfloat16 are compared as stored.
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
    wrong += std::memcmp(bytes + i * sizeof(T), &want, sizeof(T)) != 0 ? 1U : 0U;
  }
  return wrong;
}

template <template <typename> class Fn, typename... Args>
auto dispatch(DType type, Args&&... args) {
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
      return Fn<Half>{}(args...);
    case DType::Bfloat16:
      return Fn<Bfloat16>{}(args...);
    case DType::Float32:
      return Fn<float>{}(args...);
    case DType::Float64:
      return Fn<double>{}(args...);
  }
  return Fn<float>{}(args...);
}

template <typename T>
struct Fill {
  void operator()(const CaseSpec& s, int n, int r, void* d) const { fill_typed<T>(s, n, r, d); }
};
template <typename T>
struct Expected {
  void operator()(const CaseSpec& s, int n, int r, void* d) const { expected_typed<T>(s, n, r, d); }
};
template <typename T>
struct Wrong {
  std::uint64_t operator()(const CaseSpec& s, int n, int r, const void* d) const { return wrong_typed<T>(s, n, r, d); }
};

}  // namespace

pattern_math::Params pattern_params(const CaseSpec& spec, int nranks, int rank) {
  return {spec.collective, spec.op, info(spec.collective).has_reduce_op, spec.root, spec.count, nranks, rank};
}

std::int64_t pattern_input(const CaseSpec& spec, int nranks, int rank, std::uint64_t index) {
  return pattern_math::input(pattern_params(spec, nranks, rank), rank, index);
}

bool has_checked_output(const CaseSpec& spec, int rank) {
  return spec.collective != Collective::Reduce || rank == spec.root;
}

void fill_input(const CaseSpec& spec, int nranks, int rank, void* data) {
  dispatch<Fill>(spec.dtype, spec, nranks, rank, data);
}

void fill_expected(const CaseSpec& spec, int nranks, int rank, void* output) {
  dispatch<Expected>(spec.dtype, spec, nranks, rank, output);
}

std::uint64_t count_wrong(const CaseSpec& spec, int nranks, int rank, const void* output) {
  if (!has_checked_output(spec, rank)) {
    return 0;
  }
  return dispatch<Wrong>(spec.dtype, spec, nranks, rank, output);
}

std::uint16_t float_to_half(float value) {
  const auto f = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000U);
  const std::int32_t exp = static_cast<std::int32_t>((f >> 23) & 0xffU) - 127 + 15;
  std::uint32_t mant = f & 0x7fffffU;
  if (((f >> 23) & 0xffU) == 0xffU) {  // inf / nan
    return static_cast<std::uint16_t>(sign | 0x7c00U | (mant != 0 ? 0x200U : 0U));
  }
  if (exp >= 31) {
    return static_cast<std::uint16_t>(sign | 0x7c00U);
  }
  if (exp <= 0) {  // subnormal half or zero
    if (exp < -10) {
      return sign;
    }
    mant |= 0x800000U;
    const auto shift = static_cast<std::uint32_t>(14 - exp);
    std::uint32_t half_mant = mant >> shift;
    const std::uint32_t rem = mant & ((1U << shift) - 1U);
    const std::uint32_t halfway = 1U << (shift - 1U);
    if (rem > halfway || (rem == halfway && (half_mant & 1U) != 0)) {
      ++half_mant;
    }
    return static_cast<std::uint16_t>(sign | half_mant);
  }
  std::uint32_t bits = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffU;
  if (rem > 0x1000U || (rem == 0x1000U && (bits & 1U) != 0)) {
    ++bits;  // may carry into the exponent, which is the right answer
  }
  return static_cast<std::uint16_t>(sign | bits);
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000U) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fU;
  std::uint32_t mant = bits & 0x3ffU;
  if (exp == 0x1fU) {
    return std::bit_cast<float>(sign | 0x7f800000U | (mant << 13));
  }
  if (exp == 0) {
    if (mant == 0) {
      return std::bit_cast<float>(sign);
    }
    std::int32_t e = -1;
    do {  // normalise the subnormal
      ++e;
      mant <<= 1;
    } while ((mant & 0x400U) == 0);
    const auto fexp = static_cast<std::uint32_t>(127 - 15 - e);
    return std::bit_cast<float>(sign | (fexp << 23) | ((mant & 0x3ffU) << 13));
  }
  return std::bit_cast<float>(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

std::uint16_t float_to_bfloat16(float value) {
  const auto f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7f800000U) == 0x7f800000U && (f & 0x7fffffU) != 0) {
    return static_cast<std::uint16_t>((f >> 16) | 0x40U);  // quiet nan
  }
  const std::uint32_t rounding = 0x7fffU + ((f >> 16) & 1U);
  return static_cast<std::uint16_t>((f + rounding) >> 16);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

}  // namespace ccbench
