#pragma once
// `ccbench-report compare BASE CAND`: per matching row, the change of median busbw and a verdict
// decided from both sample distributions (DESIGN §1, regression).
#include <optional>
#include <string>
#include <vector>

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
  std::vector<RowKey> skipped;                // skipped on both sides: nothing to compare
  [[nodiscard]] bool any_regression() const;  // any SLOWER or FAILED
  [[nodiscard]] bool any_missing() const { return !only_base.empty(); }
};

Comparison compare_runs(const std::vector<LoadedRun>& base, const std::vector<LoadedRun>& cand,
                        const CompareOptions& options);
/// Why a comparison of `base` with `cand` (as named on the command line) has no verdict: no row in common, or
/// only rows skipped on both sides; unset when it has rows.
std::optional<std::string> why_nothing_compared(const Comparison& comparison, const std::string& base,
                                                const std::string& cand);
/// "12 rows compared: 10 SAME, 0 FASTER, 2 SLOWER, 0 UNSURE, 0 FAILED; 0 MISSING from B, 0 only in B, 0 skipped
/// on both sides": the counts of the verdicts, as the terminal prints them.
std::string summary_line(const Comparison& comparison);

/// The comparison as one self-contained web page (compare --html): a table per section, each side's %peak of its
/// own spec and the measured ratio beside the spec ratio where the peaks differ, the peaks' bases under it.
std::string render_compare_html(const Comparison& comparison, const std::string& title);

}  // namespace ccbench::report
