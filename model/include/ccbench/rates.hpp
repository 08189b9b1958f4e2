#pragma once
// The rates of a measured case, derived one way for every bench (the collectives, the RDMA pair,
// copy_bench): nccl-tests' algbw = S / median time and busbw = algbw x bus factor, busbw_mean from the
// mean time (as nccl-tests prints it), the share of the expected peak, and, where the workload reports
// it, perftest's "BW peak" (S over the fastest sample).
#include "ccbench/result.hpp"

namespace ccbench {

/// Sets algbw, busbw, busbw_mean, bw_peak (workloads with fastest_sample_rate) and pct_of_peak from
/// `r.time`, `r.size_bytes`, `r.bus_factor` and `r.peak_GBps`. A time of 0 gives a rate of 0.
void derive_rates(CaseResult& r);

/// pct_of_peak alone, for a peak learnt after the rates (a pair's ports): 100 x busbw / peak, unset
/// without a positive peak or without a time.
void derive_pct_of_peak(CaseResult& r);

}  // namespace ccbench
