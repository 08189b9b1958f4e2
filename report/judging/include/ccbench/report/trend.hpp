#pragma once
// trend: each series of the history (a row of a bench on a set of hosts: history_index.hpp) over its runs, with a
// drift verdict (docs/history.md "The drift test"). A series is cut where the software its runs recorded changes
// (libraries, GPU driver, HCA firmware): a move at such a cut is a software change, reported as one, and never a
// host's drift. Inside each stretch of one software, Pettitt's rank test (Pettitt 1979) finds the most likely change
// point and its significance; a change is drift when it is significant at the suite's false-alarm rate (Bonferroni
// over the stretches tested) and the medians either side differ by more than the threshold. A stretch too short for
// the test to reach that significance even on a perfect step is not judged: NO VERDICT, never "no drift".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/evidence.hpp"
#include "ccbench/report/history_index.hpp"

namespace ccbench::report {

struct TrendOptions {
  double threshold = 0.05;   // a change of the median smaller than this share is no drift
  double alarm_rate = 0.05;  // the false-alarm rate over every stretch tested together
  bool partial = false;      // --partial: judge what can be judged; the stretches too short are listed, not a gap
  /// --max-age: a series whose latest run started longer ago than this before `now_s` (or at no known time) is
  /// stale, and the verdict NO VERDICT whatever else it holds (a host that stopped reporting is never "no drift").
  std::optional<std::int64_t> max_age_s;
  std::int64_t now_s = 0;  // seconds since the epoch
};

/// One run of the history: shared by the points of its rows (a fleet's year is 10^5 runs and 10^6 rows).
struct TrendRun {
  std::string run_id;
  std::string started_utc;
  std::string label;
  std::string path;
  std::string software;
};

struct TrendPoint {
  std::shared_ptr<const TrendRun> run;
  std::optional<double> value;  // busbw GB/s; unset: the row did not measure in that run
};

/// Where a series' software changed, and how far its figure moved there (median after over median before - 1).
struct SoftwareChange {
  std::size_t at = 0;  // index of the first run with the new software
  std::string started_utc;
  std::string label;
  std::string was;  // only what differs: "nccl=2.18.3"
  std::string now;  // "nccl=2.19.4"
  std::optional<double> moved;
};

enum class StretchVerdict { Steady, Drift, TooShort };
std::string_view name(StretchVerdict v);  // "steady", "drift", "too short"

/// One stretch of a series run on one software.
struct Stretch {
  std::size_t first = 0;  // index of its first run in the series
  std::size_t runs = 0;   // runs in it (with a figure)
  StretchVerdict verdict = StretchVerdict::TooShort;
  std::size_t change = 0;       // Pettitt's change point: index of the first run of the new level (drift, steady)
  std::size_t onset = 0;        // the first run beyond the threshold of the old level, walking back from `change`
  double p_value = 1.0;         // Pettitt's approximation, 2 exp(-6K^2 / (T^3 + T^2)), at most 1
  double alpha = 0;             // the significance it had to reach
  double before_median = 0;     // of the runs before `change`
  double after_median = 0;      // from `change` on
  double moved = 0;             // after / before - 1
  std::size_t needed_runs = 0;  // TooShort: the runs a perfect step would need to reach alpha
};

struct SeriesTrend {
  std::string series;
  std::string bench;
  std::string hosts;
  std::string row;
  std::vector<TrendPoint> points;
  std::vector<Stretch> stretches;
  std::vector<SoftwareChange> software_changes;
  std::size_t unmeasured = 0;  // runs whose row has no figure (failed, skipped, timed out)
  [[nodiscard]] bool drifted() const;
  [[nodiscard]] bool judged() const;  // its latest stretch (the software it runs now) was long enough
};

/// A software change every series that ran across it shows at once (an NCCL upgrade): reported once, as such.
struct FleetSoftwareChange {
  std::string was;
  std::string now;
  std::string first_utc;  // the earliest run with the new software
  std::size_t series = 0;
  std::optional<double> median_moved;
};

struct HostDrift {
  std::string host;
  std::vector<std::string> series;  // its series that drifted (all it had that were judged)
  std::string onset_utc;            // the earliest onset among them
  std::string onset_label;
  std::string onset_run;
  double moved = 0;  // the largest move among them (signed)
};

struct TrendVerdict {
  std::vector<SeriesTrend> series;
  std::vector<HostDrift> hosts;    // hosts whose every judged series drifted
  bool fleet_shift = false;        // every host of 2 or more drifted: no host is named, the fleet moved
  std::size_t drifted_series = 0;  // series that drifted, a host named or not: any of them is drift
  std::size_t duplicate_runs = 0;  // points left out: a run already in its series (a copy of a result file)
  std::vector<FleetSoftwareChange> software;
  std::size_t stretches_tested = 0;
  std::size_t too_short = 0;
  std::vector<IndexedProblem> problems;  // from the index: unreadable results (a gap), files that are no result
  EvidenceRuling ruling;
  TrendOptions options;
  /// 0 no drift, 1 drift (a series moved: a host named, the fleet, or a series alone), 2 NO VERDICT (stale
  /// evidence: whatever was found).
  [[nodiscard]] int exit_code() const;
};

/// Judges the history the index holds, read row by row (the rows are not kept, only each series' figures and its runs).
TrendVerdict judge_trend(const HistoryIndex& index, const TrendOptions& options);

/// Pettitt's statistic over `x`: the change point t (the first index of the second part, 1..n-1) maximising
/// |U_t|, with K = max |U_t| and its approximate p-value. Pure; n >= 2.
struct PettittResult {
  std::size_t change = 0;
  double k = 0;
  double p_value = 1.0;
};
PettittResult pettitt(const std::vector<double>& x);
/// The smallest p-value Pettitt's approximation can give for n values (a perfect step at the middle).
double pettitt_min_p(std::size_t n);

}  // namespace ccbench::report
