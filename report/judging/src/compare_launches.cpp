// compare between launches (issue 36): each launch of a side contributes its median, the interval of a row's change
// comes from the launches' variation, not from the samples of one launch (the launch is where the variance is), and
// the false-alarm rate is held over all the rows judged together.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "ccbench/errors.hpp"
#include "ccbench/report/compare.hpp"
#include "compare_internal.hpp"
#include "compare_stats.hpp"

namespace ccbench::report {

namespace {

using Cases = std::vector<const CaseResult*>;

/// The case of each launch that holds `key` (launches without it left out).
Cases cases_of(const std::vector<detail::Index>& launches, const RowKey& key) {
  Cases out;
  for (const auto& launch : launches) {
    if (const auto it = launch.find(key); it != launch.end()) {
      out.push_back(it->second);
    }
  }
  return out;
}

bool measured(const CaseResult& r) { return r.status == CaseStatus::Ok && r.time && r.time->p50 > 0.0; }

/// The case that stands for a side in the row's printed figures: a launch that did not measure it, else the launch
/// of the median busbw (the lower middle of an even count): a real launch's row, never a mean of them.
const CaseResult* representative(Cases cases) {
  for (const auto* c : cases) {
    if (!measured(*c)) {
      return c;
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const CaseResult* x, const CaseResult* y) { return x->busbw_GBps < y->busbw_GBps; });
  return cases[(cases.size() - 1) / 2];
}

/// The candidate's launch that breaks the row: wrong elements, or failed or timed out where the baseline measured.
const CaseResult* breaking(const Cases& cand) {
  for (const auto* c : cand) {
    if ((c->status == CaseStatus::Ok && c->wrong_elements.value_or(0) > 0) || c->status == CaseStatus::Failed ||
        c->status == CaseStatus::TimedOut) {
      return c;
    }
  }
  return nullptr;
}

std::vector<double> log_medians(const Cases& cases) {
  std::vector<double> out;
  out.reserve(cases.size());
  for (const auto* c : cases) {
    out.push_back(std::log(c->time->p50));
  }
  return out;
}

RowComparison compare_launch_row(const RowKey& key, const Cases& base, const Cases& cand,
                                 const CompareOptions& options) {
  RowComparison row;
  row.key = key;
  row.base = representative(base);
  row.cand = breaking(cand);
  if (row.cand == nullptr) {
    row.cand = representative(cand);
  }
  if (row.base->busbw_GBps > 0.0) {
    row.measured_ratio = row.cand->busbw_GBps / row.base->busbw_GBps;
  }
  if (row.base->peak_GBps && row.cand->peak_GBps) {
    row.spec_ratio = *row.cand->peak_GBps / *row.base->peak_GBps;
    row.against_spec = std::abs(*row.spec_ratio - 1.0) > 1e-9;
  }
  if (detail::decide_status(row)) {
    return row;
  }
  row.verdict = Verdict::Unsure;
  std::uint64_t fewest = UINT64_MAX;
  for (const auto* c : base) {
    fewest = std::min(fewest, c->time->n);
  }
  for (const auto* c : cand) {
    fewest = std::min(fewest, c->time->n);
  }
  if (fewest < options.min_samples) {
    row.why = fmt::format("too few samples in a launch ({} < {})", fewest, options.min_samples);
    return row;
  }
  const auto a = log_medians(base);
  const auto b = log_medians(cand);
  const double floor = options.launch_noise > 0.0 ? std::log1p(options.launch_noise) : 0.0;
  const auto shift = detail::launch_shift(a, b, options.paired, floor);
  if (!shift) {
    row.why = fmt::format(
        "{} launch{} a side: a change cannot be told from the launches' own variation (run 3 or more a side, or "
        "give --launch-noise PCT)",
        std::min(base.size(), cand.size()), std::min(base.size(), cand.size()) == 1 ? "" : "es");
    return row;
  }
  row.launch = LaunchRow{base.size(), cand.size(), shift->estimate, shift->se, shift->df, shift->from_floor};
  row.method = options.paired ? fmt::format("launch medians, paired over {} interleaved launch pairs", base.size())
                              : fmt::format("launch medians, {} and {} launches", base.size(), cand.size());
  if (shift->from_floor) {
    row.method += fmt::format(", --launch-noise {:g}%", options.launch_noise * 100.0);
  }
  return row;
}

/// A launch row's verdict: SLOWER or FASTER only where the whole interval lies beyond the threshold (a change
/// known to be larger than it, not one merely known to be there: launches of one label share the machine's state of
/// the moment, and a drift of a few percent between two labels is not what a threshold of 5% is asked about); SAME
/// where it lies within; UNSURE where it straddles the threshold or is too wide.
void decide_beyond(RowComparison& row, double threshold) {
  const auto& c = *row.change;
  const auto ci = fmt::format("CI {}..{}", detail::pct_change(c.lo), detail::pct_change(c.hi));
  const auto bound = fmt::format("{:.0f}%", threshold * 100.0);
  if (c.hi < -threshold) {
    row.verdict = Verdict::Slower;
    row.why = fmt::format("{} lies beyond -{}", ci, bound);
  } else if (c.lo > threshold) {
    row.verdict = Verdict::Faster;
    row.why = fmt::format("{} lies beyond +{}", ci, bound);
  } else if (c.lo >= -threshold && c.hi <= threshold) {
    row.verdict = Verdict::Same;
    row.why = fmt::format("{} within ±{}", ci, bound);
  } else if (c.hi < 0.0 || c.lo > 0.0) {
    row.verdict = Verdict::Unsure;
    row.why = fmt::format("{}: a change, not known to be beyond ±{}", ci, bound);
  } else {
    row.verdict = Verdict::Unsure;
    row.why = fmt::format("{} too wide to tell", ci);
  }
}

}  // namespace

Comparison compare_launches(const std::vector<std::vector<LoadedRun>>& base,
                            const std::vector<std::vector<LoadedRun>>& cand, const CompareOptions& options) {
  if (base.empty() || cand.empty()) {
    throw UsageError("compare between launches: a side has no launch");
  }
  if (options.paired && base.size() != cand.size()) {
    throw UsageError(fmt::format("paired launches: {} launch(es) of {} against {} of {}; pairs need as many a side",
                                 base.size(), options.label_a, cand.size(), options.label_b));
  }
  Comparison out;
  out.label_a = options.label_a.empty() ? std::string{"A"} : options.label_a;
  out.label_b = options.label_b.empty() ? std::string{"B"} : options.label_b;
  out.threshold = options.threshold;
  out.min_samples = options.min_samples;
  out.launches_a = base.size();
  out.launches_b = cand.size();
  out.paired = options.paired;
  std::vector<detail::Index> a;
  std::vector<detail::Index> b;
  for (std::size_t k = 0; k < base.size(); ++k) {
    a.push_back(detail::index_of(base[k], fmt::format("BASE launch {}", k + 1)));
  }
  for (std::size_t k = 0; k < cand.size(); ++k) {
    b.push_back(detail::index_of(cand[k], fmt::format("CAND launch {}", k + 1)));
  }
  std::set<RowKey> base_keys;
  for (const auto& launch : a) {
    for (const auto& entry : launch) {
      base_keys.insert(entry.first);
    }
  }
  std::set<RowKey> cand_only;
  for (const auto& launch : b) {
    for (const auto& entry : launch) {
      if (!base_keys.contains(entry.first)) {
        cand_only.insert(entry.first);
      }
    }
  }
  const auto all_skipped = [](const Cases& cases) {
    return std::all_of(cases.begin(), cases.end(), [](const auto* c) { return c->status == CaseStatus::Skipped; });
  };
  for (const auto& key : base_keys) {
    const auto base_cases = cases_of(a, key);
    const auto cand_cases = cases_of(b, key);
    if (cand_cases.size() < b.size() || (options.paired && base_cases.size() < a.size())) {
      out.only_base.push_back(key);  // a launch of the candidate lacks it: MISSING (a pair without it: too)
    } else if (all_skipped(base_cases) && all_skipped(cand_cases)) {
      out.skipped.push_back(key);
    } else {
      out.rows.push_back(compare_launch_row(key, base_cases, cand_cases, options));
      out.against_spec = out.against_spec || out.rows.back().against_spec;
    }
  }
  out.only_cand.assign(cand_only.begin(), cand_only.end());
  return out;
}

void decide_launch_rows(const std::vector<Comparison*>& comparisons, const CompareOptions& options) {
  std::size_t family = 0;
  for (const auto* c : comparisons) {
    family += static_cast<std::size_t>(
        std::count_if(c->rows.begin(), c->rows.end(), [](const RowComparison& r) { return r.launch.has_value(); }));
  }
  const double confidence = family > 0 ? 1.0 - options.alarm_rate / static_cast<double>(family) : 0.95;
  for (auto* c : comparisons) {
    c->family_rows = family;
    c->row_confidence = confidence;
    for (auto& row : c->rows) {
      if (!row.launch) {
        continue;
      }
      const auto& l = *row.launch;
      const double half = detail::t_quantile(confidence, l.df) * l.se;
      const double lo = l.estimate - half;
      const double hi = l.estimate + half;
      // busbw is proportional to 1/time; against the spec it is also divided by the peak.
      const double scale = row.against_spec ? 1.0 / *row.spec_ratio : 1.0;
      row.change =
          Change{std::exp(-l.estimate) * scale - 1.0, std::exp(-hi) * scale - 1.0, std::exp(-lo) * scale - 1.0};
      decide_beyond(row, options.threshold);
    }
  }
}

}  // namespace ccbench::report
