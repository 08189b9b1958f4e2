#include "ccbench/pattern.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ccbench/dtype_dispatch.hpp"
#include "ccbench/traffic.hpp"

namespace ccbench {
namespace {

/// What a correct collective leaves in output element `index` of `rank`: pattern_math's arithmetic, or for
/// alltoallv the segments of its plan (from each source in rank order, the part of that source's input meant for
/// this rank, as nccl-tests' AlltoAllvInitData lays them out).
class ExpectedOutput {
 public:
  ExpectedOutput(const CaseSpec& spec, int nranks, int rank) : m_params(pattern_params(spec, nranks, rank)) {
    if (info(spec.collective).recv != Span::Plan) {
      return;
    }
    const TrafficPlan plan = plan_of(spec, nranks);
    std::uint64_t at = 0;
    for (int src = 0; src < nranks; ++src) {
      if (const std::uint64_t n = plan.count(src, rank); n > 0) {
        m_segments.push_back({at, src, plan.send_offset(src, rank)});
        at += n;
      }
    }
  }
  std::int64_t operator()(std::uint64_t index) const {
    if (info(m_params.collective).recv != Span::Plan) {
      return pattern_math::expected(m_params, index);
    }
    const auto after = std::upper_bound(m_segments.begin(), m_segments.end(), index,
                                        [](std::uint64_t i, const Segment& s) { return i < s.start; });
    if (after == m_segments.begin()) {
      return 0;
    }
    const Segment& s = *std::prev(after);
    return pattern_math::input(m_params, s.src, s.src_offset + (index - s.start));
  }

 private:
  struct Segment {
    std::uint64_t start;       // in the output
    int src;                   // whose input
    std::uint64_t src_offset;  // where in it
  };
  pattern_math::Params m_params;
  std::vector<Segment> m_segments;
};

// float16, bfloat16 and FP8 are stored as their bits, from the host's conversion of the value.
template <typename Bits, Bits (*Convert)(float)>
struct Converted {
  Bits bits;
};

template <typename T>
struct Element {
  static T of(std::int64_t v) { return static_cast<T>(v); }
};
template <typename Bits, Bits (*Convert)(float)>
struct Element<Converted<Bits, Convert>> {
  static Converted<Bits, Convert> of(std::int64_t v) { return {Convert(static_cast<float>(v))}; }
};

template <typename T>
void fill_typed(const CaseSpec& spec, int nranks, int rank, void* data) {
  const std::uint64_t n = send_elements(spec, nranks, rank);
  auto* out = static_cast<T*>(data);
  for (std::uint64_t i = 0; i < n; ++i) {
    out[i] = Element<T>::of(pattern_input(spec, nranks, rank, i));
  }
}

template <typename T>
void expected_typed(const CaseSpec& spec, int nranks, int rank, void* data) {
  const std::uint64_t n = recv_elements(spec, nranks, rank);
  const ExpectedOutput expected(spec, nranks, rank);
  auto* out = static_cast<T*>(data);
  for (std::uint64_t i = 0; i < n; ++i) {
    out[i] = Element<T>::of(expected(i));
  }
}

template <typename T>
std::uint64_t wrong_typed(const CaseSpec& spec, int nranks, int rank, const void* output) {
  const std::uint64_t n = recv_elements(spec, nranks, rank);
  const ExpectedOutput expected(spec, nranks, rank);
  const auto* bytes = static_cast<const unsigned char*>(output);
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const T want = Element<T>::of(expected(i));
    // Bitwise on purpose: patterns are exact, so a right value has exactly these bits (+0 only,
    // no NaN), and half/bfloat16 are compared as stored.
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
    wrong += std::memcmp(bytes + i * sizeof(T), &want, sizeof(T)) != 0 ? 1U : 0U;
  }
  return wrong;
}

// The host's element types where they are not plain C++ ones.
struct HostTypes {
  using Float16 = Converted<std::uint16_t, float_to_half>;
  using Bfloat16 = Converted<std::uint16_t, float_to_bfloat16>;
  using Float8e4m3 = Converted<std::uint8_t, float_to_fp8_e4m3>;
  using Float8e5m2 = Converted<std::uint8_t, float_to_fp8_e5m2>;
};

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

namespace {

/// Bits of the significand (with the implicit one) of a floating type; an integer type's width.
int significand_bits(DType type) {
  switch (type) {
    case DType::Float8e5m2:
      return 3;
    case DType::Float8e4m3:
      return 4;
    case DType::Bfloat16:
      return 8;
    case DType::Float16:
      return 11;
    case DType::Float32:
      return 24;
    case DType::Float64:
      return 53;
    default:
      return 8 * static_cast<int>(size_of(type));
  }
}

}  // namespace

pattern_math::Params pattern_params(const CaseSpec& spec, int nranks, int rank) {
  pattern_math::Params p;
  p.collective = spec.collective;
  p.op = spec.op;
  p.reduces = info(spec.collective).has_reduce_op;
  p.root = spec.root;
  p.count = spec.count;
  p.nranks = nranks;
  p.rank = rank;
  // the sum pattern reaches 3n: a floating type whose significand cannot hold it takes the narrow pattern
  const int bits = significand_bits(spec.dtype);
  p.narrow = is_fp8(spec.dtype) || (is_floating(spec.dtype) && bits < 62 &&
                                    3 * static_cast<std::uint64_t>(nranks) > (std::uint64_t{1} << bits));
  if (!is_floating(spec.dtype)) {
    p.int_bits = static_cast<int>(8 * size_of(spec.dtype));
    p.int_signed = spec.dtype == DType::Int8 || spec.dtype == DType::Int32 || spec.dtype == DType::Int64;
  }
  return p;
}

std::int64_t pattern_input(const CaseSpec& spec, int nranks, int rank, std::uint64_t index) {
  return pattern_math::input(pattern_params(spec, nranks, rank), rank, index);
}

bool has_checked_output(const CaseSpec& spec, int rank) {
  return (spec.collective != Collective::Reduce && spec.collective != Collective::Gather) || rank == spec.root;
}

void fill_input(const CaseSpec& spec, int nranks, int rank, void* data) {
  dispatch_dtype<Fill, HostTypes>(
      spec.dtype, [] {}, spec, nranks, rank, data);
}

void fill_expected(const CaseSpec& spec, int nranks, int rank, void* output) {
  dispatch_dtype<Expected, HostTypes>(
      spec.dtype, [] {}, spec, nranks, rank, output);
}

std::uint64_t count_wrong(const CaseSpec& spec, int nranks, int rank, const void* output) {
  if (!has_checked_output(spec, rank)) {
    return 0;
  }
  // A value outside the enum: every element counts as wrong.
  return dispatch_dtype<Wrong, HostTypes>(
      spec.dtype, [&] { return recv_elements(spec, nranks, rank); }, spec, nranks, rank, output);
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

namespace {

// An OCP FP8 format: E exponent bits, M mantissa bits; E4M3 has no infinity (its top code is NaN and
// 0x7e = 448 its largest), E5M2 is IEEE-like (0x7c infinity, 0x7b = 57344 its largest).
struct Fp8Format {
  int exp_bits;
  int mant_bits;
  std::uint8_t max_finite;  // the code of the largest finite value
  bool has_infinity;
  [[nodiscard]] int bias() const { return (1 << (exp_bits - 1)) - 1; }
};
constexpr Fp8Format kE4m3{4, 3, 0x7e, false};
constexpr Fp8Format kE5m2{5, 2, 0x7b, true};

float fp8_to_float(std::uint8_t bits, const Fp8Format& f) {
  const float sign = (bits & 0x80U) != 0 ? -1.0F : 1.0F;
  const int exp = (bits >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int mant = bits & ((1 << f.mant_bits) - 1);
  const int top = (1 << f.exp_bits) - 1;
  if (f.has_infinity ? exp == top : (bits & 0x7fU) == 0x7fU) {
    return f.has_infinity && mant == 0 ? sign * std::numeric_limits<float>::infinity()
                                       : std::numeric_limits<float>::quiet_NaN();
  }
  if (exp == 0) {  // subnormal
    return sign * std::ldexp(static_cast<float>(mant), 1 - f.bias() - f.mant_bits);
  }
  return sign * std::ldexp(static_cast<float>((1 << f.mant_bits) + mant), exp - f.bias() - f.mant_bits);
}

// Round to nearest even; out of range (infinity too) saturates to the largest finite value, as CUDA's
// __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) does; NaN is 0x7f.
std::uint8_t float_to_fp8(float value, const Fp8Format& f) {
  if (std::isnan(value)) {
    return 0x7f;
  }
  const auto sign = static_cast<std::uint8_t>(std::signbit(value) ? 0x80U : 0U);
  const double a = std::fabs(static_cast<double>(value));
  const double largest = fp8_to_float(f.max_finite, f);
  if (a >= largest) {
    return static_cast<std::uint8_t>(sign | f.max_finite);  // rounds to it, or saturates
  }
  if (a == 0.0) {
    return sign;
  }
  const int min_exp = 1 - f.bias();  // of the smallest normal
  int exp = 0;
  (void)std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  exp = std::max(exp - 1, min_exp);
  // The value in units of the last mantissa place at this exponent, rounded (exact scaling by 2^k).
  const auto units = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, f.mant_bits - exp)));
  // Exponent field exp - min_exp + 1 and mantissa units - 2^M, or a subnormal's units (exp = min_exp,
  // units < 2^M: field 0); a carry to 2^(M+1) lands on the next exponent by the same sum.
  const std::uint32_t code = (static_cast<std::uint32_t>(exp - min_exp) << f.mant_bits) + units;
  return static_cast<std::uint8_t>(sign | std::min<std::uint32_t>(code, f.max_finite));
}

}  // namespace

std::uint8_t float_to_fp8_e4m3(float value) { return float_to_fp8(value, kE4m3); }
float fp8_e4m3_to_float(std::uint8_t bits) { return fp8_to_float(bits, kE4m3); }
std::uint8_t float_to_fp8_e5m2(float value) { return float_to_fp8(value, kE5m2); }
float fp8_e5m2_to_float(std::uint8_t bits) { return fp8_to_float(bits, kE5m2); }

std::optional<std::string> nccl_avg_unverifiable(const CaseSpec& spec, int nranks) {
  if (!info(spec.collective).has_reduce_op || spec.op != ReduceOp::Avg || !is_floating(spec.dtype)) {
    return std::nullopt;
  }
  // With n = 2^m, every product x * 2^-m is exact, and so is every partial sum k * x * 2^-m (k <= n) while
  // its numerator k * x, at most kMaxAvgInput * n for the avg pattern (1..4), fits the significand (FP8 too:
  // E4M3 to 4 ranks, E5M2 to 2; NCCL multiplies FP8 in half precision and rounds back, exact the same way).
  constexpr std::uint64_t kMaxAvgInput = 4;
  const int significand = significand_bits(spec.dtype);
  const auto n = static_cast<std::uint64_t>(nranks);
  const bool power_of_two = nranks > 0 && std::has_single_bit(n);
  if (power_of_two && (significand >= 63 || kMaxAvgInput * n <= (std::uint64_t{1} << significand))) {
    return std::nullopt;
  }
  return "-c cannot check NCCL's " + std::string(name(spec.dtype)) + " avg over " + std::to_string(nranks) +
         " ranks: NCCL sums x * fl(1/" + std::to_string(nranks) +
         "), rounded at every step, which is exact only for a power-of-two rank count whose partial sums fit " +
         std::string(name(spec.dtype)) + "; use -o sum, or -c 0 to time it";
}

}  // namespace ccbench
