#pragma once
// Verification patterns (DESIGN §4): small integers whose reduced values are exact in every
// element type, so a check compares bit for bit. Host-side over pattern_math.hpp, whose same
// arithmetic the device kernels (kernels/) run; a backend without them copies its buffers here.
//
// Logical layout: a rank's input holds elements(info.send, count, n) elements, its output
// elements(info.recv, count, n). A backend whose in-place layout differs (NCCL's
// reduce_scatter output at rank*count) passes the right pointers; the values do not change.
#include <cstdint>
#include <optional>
#include <string>

#include "ccbench/case_spec.hpp"
#include "ccbench/pattern_math.hpp"

namespace ccbench {

/// The case as the pattern arithmetic (and a device kernel) takes it.
pattern_math::Params pattern_params(const CaseSpec& spec, int nranks, int rank);

/// Input element `index` of `rank` (a small integer).
std::int64_t pattern_input(const CaseSpec& spec, int nranks, int rank, std::uint64_t index);

/// Whether `rank` has an output to check (non-root ranks of reduce and gather have none).
bool has_checked_output(const CaseSpec& spec, int rank);

/// Writes the input pattern of `rank` into `data` (elements(info.send, count, n) of spec.dtype).
void fill_input(const CaseSpec& spec, int nranks, int rank, void* data);

/// Writes the output that a correct collective leaves on `rank` (elements(info.recv, count, n)); for
/// tests of a checker (a device kernel's count of this must be zero).
void fill_expected(const CaseSpec& spec, int nranks, int rank, void* output);

/// Counts output elements of `rank` that differ from the expected result.
std::uint64_t count_wrong(const CaseSpec& spec, int nranks, int rank, const void* output);

/// Why -c cannot check NCCL's avg of this case exactly, or nullopt. NCCL averages floating types as a sum
/// of x * fl(1/n), rounded to the type at every step: exact only when n is a power of two (bfloat16, 7 ranks
/// of 1: 0.9921875) and the partial sums fit the significand (bfloat16 to 64 ranks, FP8 E4M3 to 4, E5M2
/// to 2). Integer types are never refused: pattern_math computes their wrapped sum and division as NCCL does.
std::optional<std::string> nccl_avg_unverifiable(const CaseSpec& spec, int nranks);

/// IEEE half and bfloat16 from/to float (round to nearest even), for host-side patterns.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t bits);
/// OCP FP8 E4M3 / E5M2 from/to float (round to nearest even, saturating to the largest finite value as
/// CUDA's __NV_SATFINITE conversion does; NaN is 0x7f).
std::uint8_t float_to_fp8_e4m3(float value);
float fp8_e4m3_to_float(std::uint8_t bits);
std::uint8_t float_to_fp8_e5m2(float value);
float fp8_e5m2_to_float(std::uint8_t bits);

}  // namespace ccbench
