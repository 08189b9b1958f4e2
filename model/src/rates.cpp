#include "ccbench/rates.hpp"

#include "ccbench/collective.hpp"

namespace ccbench {

namespace {

double gbps(double bytes, double seconds) { return seconds > 0.0 ? bytes / seconds / 1e9 : 0.0; }

}  // namespace

void derive_rates(CaseResult& r) {
  if (!r.time) {
    return;
  }
  const auto bytes = static_cast<double>(r.size_bytes);
  r.algbw_GBps = gbps(bytes, r.time->p50);
  r.busbw_GBps = r.algbw_GBps * r.bus_factor;
  r.busbw_mean_GBps = gbps(bytes, r.time->mean) * r.bus_factor;
  if (info(r.spec.collective).fastest_sample_rate && r.time->min > 0.0) {
    r.bw_peak_GBps = gbps(bytes, r.time->min);
  }
  derive_pct_of_peak(r);
}

void derive_pct_of_peak(CaseResult& r) {
  if (r.time && r.peak_GBps && *r.peak_GBps > 0.0) {
    r.pct_of_peak = 100.0 * r.busbw_GBps / *r.peak_GBps;
  }
}

}  // namespace ccbench
