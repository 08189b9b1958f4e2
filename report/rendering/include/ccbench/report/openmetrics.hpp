#pragma once
// `ccbench-report export --format openmetrics`: results and verdicts as Prometheus metrics, in the text exposition
// format that node_exporter's textfile collector and a Pushgateway read (gauges only, no timestamps on samples,
// OpenMetrics' `# EOF` at the end). The renderer words what it is given: the rows as measured, and the verdicts as
// accept and fleet decided them (the command reads them back from their JSON). Every family, its labels, unit and
// the NCCL Inspector series it matches: README, "export".
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/report/input.hpp"

namespace ccbench::report {

/// One check of an acceptance verdict as `accept --format json` wrote it, with the figures its words state.
struct ExportedCheck {
  std::string id;
  std::string kind;                      // busbw, no_wrong_elements, no_timed_out, no_failed, counters, links
  std::string verdict;                   // pass | fail | waived
  std::optional<double> busbw_Bps;       // busbw: the lowest busbw measured, bytes per second
  std::optional<double> min_busbw_Bps;   // busbw: the threshold
  std::optional<double> peak_ratio;      // busbw: the lowest share of peak measured (0..1)
  std::optional<double> min_peak_ratio;  // busbw: the threshold
  std::optional<double> findings;        // the other kinds: what it counted against it (PASS needs 0)
};

struct ExportedAccept {
  std::string profile;  // the profile's id
  std::string verdict;  // pass | fail | waived
  std::vector<ExportedCheck> checks;
  std::optional<double> valid_until_s;  // until when the verdict holds (seconds since the epoch), where it says
};

struct ExportedFleetHost {
  std::string host;
  int local_rank = 0;
  bool bad = false;  // a BAD HOST
  std::uint64_t pairs = 0;
  std::uint64_t low = 0;
  std::optional<double> of_reference;  // the median of its pairs over the reference
};

/// A fleet verdict as `fleet --format json` wrote it; per local rank (lane) where the verdict has lanes.
struct ExportedFleet {
  std::string bench;
  std::uint64_t size_bytes = 0;
  bool latency = false;  // the figure is a latency (us in the verdict), else a busbw (GB/s)
  std::string verdict;   // pass | fail
  double threshold = 0;  // a ratio: 0.2 for 20%
  std::vector<std::optional<double>> level;
  std::vector<std::optional<double>> reference;
  std::vector<bool> low;  // FLEET LOW
  std::uint64_t measured = 0;
  std::uint64_t missing = 0;
  std::map<std::string, std::uint64_t> findings;  // bad_host, bad_link, split, low_group, suspicious, cannot_tell
  std::vector<ExportedFleetHost> hosts;
};

/// What one export words. A series given twice keeps the later value (the command puts older runs first).
struct ExportInput {
  std::vector<LoadedRun> runs;
  std::vector<ExportedAccept> accepts;
  std::vector<ExportedFleet> fleets;
};

struct Exposition {
  std::string text;
  std::size_t families = 0;
  std::size_t series = 0;
  std::size_t replaced = 0;  // series given twice (the later value kept)
};

/// A metric family of the exposition: its name (unit in the name, base units) and its HELP text.
struct MetricFamily {
  std::string_view name;
  std::string_view help;
};

/// Every family export may write, in the order it writes them.
std::span<const MetricFamily> metric_families();

Exposition render_openmetrics(const ExportInput& input);

/// Seconds since the Unix epoch of an RFC 3339 time ("2026-11-22T07:38:06.916Z", "2026-11-22T08:38:06+01:00");
/// none when the text is not one.
std::optional<double> epoch_seconds(std::string_view rfc3339);

/// A label value as the exposition writes it between its quotes: backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);

}  // namespace ccbench::report
