#include "ccbench/report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "compare_internal.hpp"
#include "compare_stats.hpp"

namespace ccbench::report {

namespace {

constexpr std::size_t kMaxSamplesPerSide = 1000;  // Hodges-Lehmann looks at m*n differences

}  // namespace

namespace detail {

Index index_of(const std::vector<LoadedRun>& runs, const std::string& side) {
  Index index;
  std::map<RowKey, const LoadedRun*> owner;
  for (const auto& run : runs) {
    for (const auto& r : run.doc.results) {
      const auto key = key_of(r);
      if (!index.emplace(key, &r).second) {
        throw UsageError(fmt::format("{} holds two results for {} ({} and {}); compare one run per side", side,
                                     describe(key), owner[key]->path, run.path));
      }
      owner[key] = &run;
    }
  }
  return index;
}

}  // namespace detail

namespace {

using detail::index_of;

std::vector<double> log_times(const CaseResult& r) {
  std::vector<double> out;
  out.reserve(r.samples_s.size());
  for (const double s : r.samples_s) {
    out.push_back(std::log(std::max(s, 1e-15)));
  }
  return detail::thin(std::move(out), kMaxSamplesPerSide);
}

/// The shift of log(time) from cand against base, with its CI: from raw samples when both
/// sides kept them, else from the medians and their confidence intervals.
std::optional<detail::Shift> log_time_shift(const CaseResult& base, const CaseResult& cand, std::string& method) {
  if (!base.samples_s.empty() && !cand.samples_s.empty()) {
    method = "Hodges-Lehmann, raw samples";
    return detail::hodges_lehmann(log_times(base), log_times(cand));
  }
  method = "medians' CIs";
  const auto& b = *base.time;
  const auto& c = *cand.time;
  if (!b.p50_ci95 || !c.p50_ci95 || b.p50 <= 0.0 || c.p50 <= 0.0 || b.p50_ci95->lo <= 0.0 || c.p50_ci95->lo <= 0.0) {
    return std::nullopt;
  }
  const auto half = [](const Summary& s) {
    return std::max(std::log(s.p50 / s.p50_ci95->lo), std::log(s.p50_ci95->hi / s.p50));
  };
  const double estimate = std::log(c.p50 / b.p50);
  // sqrt(a² + b²), not std::hypot: hypot@GLIBC_2.35 alone kept the reporter off glibc 2.34 (RHEL 9).
  // The halves are small logarithms: nothing to overflow.
  const double hb = half(b);
  const double hc = half(c);
  const double h = std::sqrt(hb * hb + hc * hc);
  return detail::Shift{estimate, estimate - h, estimate + h};
}

}  // namespace

namespace detail {

std::string pct_change(double change) {
  // An interval from few launches can reach e^40: past +9999% a figure says nothing more than that it is huge.
  return change > 99.99 ? std::string{">+9999%"} : fmt::format("{:+.1f}%", change * 100.0);
}

/// SAME / FASTER / SLOWER / UNSURE from the change of busbw and its CI (see README "compare").
void decide(RowComparison& row, double threshold) {
  const auto& c = *row.change;
  const bool significant = c.hi < 0.0 || c.lo > 0.0;
  const auto ci = fmt::format("CI {}..{}", pct_change(c.lo), pct_change(c.hi));
  if (c.hi < 0.0 && c.estimate < -threshold) {
    row.verdict = Verdict::Slower;
    row.why = fmt::format("{} excludes 0; change beyond -{:.0f}%", ci, threshold * 100.0);
  } else if (c.lo > 0.0 && c.estimate > threshold) {
    row.verdict = Verdict::Faster;
    row.why = fmt::format("{} excludes 0; change beyond +{:.0f}%", ci, threshold * 100.0);
  } else if (c.lo >= -threshold && c.hi <= threshold) {
    row.verdict = Verdict::Same;
    row.why = fmt::format("{} within ±{:.0f}%", ci, threshold * 100.0);
  } else if (significant && std::abs(c.estimate) <= threshold) {
    row.verdict = Verdict::Same;
    row.why = fmt::format("{}: a real change, smaller than {:.0f}%", ci, threshold * 100.0);
  } else {
    row.verdict = Verdict::Unsure;
    row.why = fmt::format("{} too wide to tell", ci);
  }
}

// Rows where one side did not measure: FAILED when the candidate broke, else not comparable.
bool decide_status(RowComparison& row) {
  const auto& b = *row.base;
  const auto& c = *row.cand;
  if (c.status == CaseStatus::Ok && c.wrong_elements.value_or(0) > 0) {
    row.verdict = Verdict::Failed;
    row.why = fmt::format("{} wrong element(s) in the candidate", *c.wrong_elements);
    return true;
  }
  if (b.status == CaseStatus::Ok && (c.status == CaseStatus::Failed || c.status == CaseStatus::TimedOut)) {
    row.verdict = Verdict::Failed;
    row.why = fmt::format("candidate {}: {}", name(c.status), c.reason);
    return true;
  }
  if (b.status != CaseStatus::Ok || c.status != CaseStatus::Ok || !b.time || !c.time) {
    row.verdict = Verdict::Unsure;
    row.why = fmt::format("not measured on both sides (base {}, candidate {})", name(b.status), name(c.status));
    return true;
  }
  return false;
}

}  // namespace detail

namespace {

using detail::decide;
using detail::decide_status;

RowComparison compare_row(const RowKey& key, const CaseResult& base, const CaseResult& cand,
                          const CompareOptions& options) {
  RowComparison row;
  row.key = key;
  row.base = &base;
  row.cand = &cand;
  if (base.busbw_GBps > 0.0) {
    row.measured_ratio = cand.busbw_GBps / base.busbw_GBps;
  }
  if (base.peak_GBps && cand.peak_GBps) {
    row.spec_ratio = *cand.peak_GBps / *base.peak_GBps;
    row.against_spec = std::abs(*row.spec_ratio - 1.0) > 1e-9;
  }
  if (decide_status(row)) {
    return row;
  }
  const auto n = std::min(base.time->n, cand.time->n);
  const auto shift = log_time_shift(base, cand, row.method);
  row.verdict = Verdict::Unsure;
  if (n < options.min_samples) {
    row.why = fmt::format("too few samples ({} < {})", n, options.min_samples);
    return row;
  }
  if (!base.time->p50_ci95 || !cand.time->p50_ci95) {
    row.why = fmt::format("no 95% CI of the median ({} sample{} on a side; it takes 6)", n, n == 1 ? "" : "s");
    return row;
  }
  if (!shift) {
    row.why = "too few samples for a confidence interval";
    return row;
  }
  // busbw is proportional to 1/time; against the spec it is also divided by the peak.
  const double scale = row.against_spec ? 1.0 / *row.spec_ratio : 1.0;
  row.change = Change{std::exp(-shift->estimate) * scale - 1.0, std::exp(-shift->hi) * scale - 1.0,
                      std::exp(-shift->lo) * scale - 1.0};
  decide(row, options.threshold);
  return row;
}

}  // namespace

std::string_view name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Same:
      return "SAME";
    case Verdict::Faster:
      return "FASTER";
    case Verdict::Slower:
      return "SLOWER";
    case Verdict::Unsure:
      return "UNSURE";
    case Verdict::Failed:
      return "FAILED";
  }
  return "UNSURE";
}

std::size_t count_rows(const Comparison& comparison, Verdict verdict) {
  return static_cast<std::size_t>(std::count_if(comparison.rows.begin(), comparison.rows.end(),
                                                [verdict](const RowComparison& r) { return r.verdict == verdict; }));
}

bool Comparison::any_regression() const {
  return std::any_of(rows.begin(), rows.end(),
                     [](const auto& r) { return r.verdict == Verdict::Slower || r.verdict == Verdict::Failed; });
}

Comparison compare_runs(const std::vector<LoadedRun>& base, const std::vector<LoadedRun>& cand,
                        const CompareOptions& options) {
  const auto side_name = [](const std::vector<LoadedRun>& runs, const std::string& given, const char* fallback) {
    return !given.empty() ? given : runs.size() == 1 ? runs.front().name() : std::string(fallback);
  };
  Comparison out;
  out.label_a = side_name(base, options.label_a, "A");
  out.label_b = side_name(cand, options.label_b, "B");
  out.threshold = options.threshold;
  out.min_samples = options.min_samples;
  const auto a = index_of(base, "BASE");
  const auto b = index_of(cand, "CAND");
  for (const auto& [key, base_case] : a) {
    const auto it = b.find(key);
    if (it == b.end()) {
      out.only_base.push_back(key);
    } else if (base_case->status == CaseStatus::Skipped && it->second->status == CaseStatus::Skipped) {
      out.skipped.push_back(key);
    } else {
      out.rows.push_back(compare_row(key, *base_case, *it->second, options));
      out.against_spec = out.against_spec || out.rows.back().against_spec;
    }
  }
  for (const auto& [key, cand_case] : b) {
    if (!a.contains(key)) {
      out.only_cand.push_back(key);
    }
  }
  return out;
}

EvidenceRuling comparison_evidence(const Comparison& comparison, const std::string& base, const std::string& cand) {
  std::vector<Gap> gaps;
  if (comparison.rows.empty()) {
    gaps.push_back(
        {Lack::Absent,
         comparison.skipped.empty()
             ? fmt::format("no row in common: {} and {} measured different things (bench, op, dtype, group, "
                           "size, placement); nothing compared",
                           base, cand)
             : fmt::format("no row to compare: the {} row(s) {} and {} share were skipped in both; nothing compared",
                           comparison.skipped.size(), base, cand)});
  }
  return rule_on(Stakes::Comparison, std::move(gaps));
}

}  // namespace ccbench::report
