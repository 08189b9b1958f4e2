#pragma once
// `ccbench-report compare BASE CAND`: per matching row, the change of median busbw and a verdict
// decided from both sample distributions (DESIGN §1, regression).
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/evidence.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/report/rows.hpp"

namespace ccbench::report {

enum class Verdict { Same, Faster, Slower, Unsure, Failed };
std::string_view name(Verdict verdict);  // "SAME", "FASTER", "SLOWER", "UNSURE", "FAILED"

struct CompareOptions {
  double threshold = 0.05;        // a change smaller than this (relative) is SAME
  std::uint64_t min_samples = 5;  // fewer on either side: UNSURE
  std::string label_a;            // names of the two sides; default: the runs' names
  std::string label_b;
  // Between launches (compare_launches, regression):
  bool paired = false;        // launch k of each side ran next to the other's (interleaved): judge the pairs
  double launch_noise = 0.0;  // the operator's figure for one launch's median: relative sd (0.03 = 3%); 0: none
  double alarm_rate = 0.05;   // the false-alarm rate allowed over all the rows judged together (family-wise)
  bool aa = false;            // both sides ran the same software: every SLOWER or FASTER row is a false alarm
};

/// A row compared between launches: the shift of log(median time), B against A, before its interval is drawn
/// (decide_launch_rows), each launch contributing its median.
struct LaunchRow {
  std::size_t launches_a = 0;
  std::size_t launches_b = 0;
  double estimate = 0.0;  // log(time B / time A)
  double se = 0.0;
  double df = 0.0;          // infinite where the variance is the operator's --launch-noise alone
  bool from_floor = false;  // the operator's noise figure was above the launches' own variation
};

/// The relative change of a statistic with its 95% confidence interval: cand/base - 1.
struct Change {
  double estimate = 0.0;
  double lo = 0.0;
  double hi = 0.0;
};

struct RowComparison {
  RowKey key;
  const CaseResult* base = nullptr;
  const CaseResult* cand = nullptr;
  std::optional<Change> change;  // of busbw (or of busbw / peak when the peaks differ)
  std::string method;            // "Hodges-Lehmann on raw samples", "median CIs", ...
  Verdict verdict = Verdict::Unsure;
  std::string why;                       // one line: "too few samples (3 < 5)", "CI -21.3%..-18.7% below -5%"
  std::optional<double> measured_ratio;  // cand busbw / base busbw
  std::optional<double> spec_ratio;      // cand peak / base peak, when both known
  bool against_spec = false;             // the peaks differ: the change is of busbw / peak
  std::optional<LaunchRow> launch;       // compared between launches, with enough of them to draw an interval
};

/// What `compare` renders in every format. Its rows point into the runs compared, which must outlive it.
struct Comparison {
  std::string label_a;
  std::string label_b;
  double threshold = 0.05;  // the options it was made with (CompareOptions)
  std::uint64_t min_samples = 5;
  bool against_spec = false;  // some row's peaks differ: its verdict is on busbw / peak
  std::vector<RowComparison> rows;
  std::vector<RowKey> only_base;  // MISSING: the candidate lacks them (it stopped early?)
  std::vector<RowKey> only_cand;
  std::vector<RowKey> skipped;  // skipped on both sides: nothing to compare
  // Compared between launches (compare_launches): how many a side, and the interval every row was given.
  std::size_t launches_a = 0;  // 0: one run a side, compared on its samples (compare_runs)
  std::size_t launches_b = 0;
  bool paired = false;
  std::size_t family_rows = 0;                // the rows judged together, over which the false-alarm rate is held
  double row_confidence = 0.95;               // each row's interval
  [[nodiscard]] bool any_regression() const;  // any SLOWER or FAILED
  [[nodiscard]] bool any_missing() const { return !only_base.empty(); }
};

/// The rows of a comparison with this verdict.
std::size_t count_rows(const Comparison& comparison, Verdict verdict);

Comparison compare_runs(const std::vector<LoadedRun>& base, const std::vector<LoadedRun>& cand,
                        const CompareOptions& options);
/// Runs compared launch by launch: `base[k]` is the k-th launch of the baseline (its result files), `cand[k]` the
/// candidate's. A row's evidence is its median in each launch; its rows are given intervals by decide_launch_rows.
/// A row FAILED or with wrong elements in any launch of the candidate is FAILED; a row some launch lacks is MISSING.
Comparison compare_launches(const std::vector<std::vector<LoadedRun>>& base,
                            const std::vector<std::vector<LoadedRun>>& cand, const CompareOptions& options);
/// Draws every launch row's interval and verdict, the false-alarm rate `options.alarm_rate` held over all the rows of
/// `comparisons` with an interval (Bonferroni: each row's interval at 1 - rate / rows). Rows without one are UNSURE,
/// saying why (one launch a side).
void decide_launch_rows(const std::vector<Comparison*>& comparisons, const CompareOptions& options);

/// The evidence rule on a comparison of `base` with `cand` (as named on the command line): NO VERDICT when it has
/// no row (none in common, or only rows skipped on both sides: absent), its gap saying which; Judged otherwise.
EvidenceRuling comparison_evidence(const Comparison& comparison, const std::string& base, const std::string& cand);

namespace detail {
/// "+1.2%" (">+9999%" past that): a change as a verdict's reasons and every format's table word it.
std::string pct_change(double change);
}  // namespace detail

}  // namespace ccbench::report
