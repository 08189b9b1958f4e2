// The families export writes and the text format's syntax (Prometheus text exposition 0.0.4, which is what
// node_exporter's textfile collector, a Pushgateway and promtool read; OpenMetrics' `# EOF` ends it).
#include "exposition.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace ccbench::report {

namespace {

// The order export writes them in; README's table lists each with its labels and NCCL Inspector match.
constexpr std::array kFamilies = {
    // results: one series per row (labels: node, bench, backend, collective, dtype, redop, root, size_bytes,
    // placement, timing, variant, group, nranks, n_nodes)
    MetricFamily{"ccbench_bus_bandwidth_bytes_per_second",
                 "Bus bandwidth (nccl-tests' busbw) of the median sample, bytes per second."},
    MetricFamily{"ccbench_algorithm_bandwidth_bytes_per_second",
                 "Algorithm bandwidth (nccl-tests' algbw: size over time) of the median sample, bytes per second."},
    MetricFamily{"ccbench_exec_time_median_seconds", "Median time per op (slowest rank of each sample), seconds."},
    MetricFamily{"ccbench_exec_time_p95_seconds", "95th percentile of the time per op, seconds."},
    MetricFamily{"ccbench_bus_bandwidth_peak_ratio",
                 "Bus bandwidth over the spec peak of the group's links (%peak / 100), where the peak is known."},
    MetricFamily{"ccbench_wrong_elements", "Elements that did not hold the expected value, in verified rows (-c 1)."},
    MetricFamily{"ccbench_case_status", "1 for the row's status: ok, failed, skipped or timed_out."},
    // runs and their fabric evidence
    MetricFamily{"ccbench_run_timestamp_seconds",
                 "When the run ended (started, for a run cut short), seconds since the Unix epoch."},
    MetricFamily{"ccbench_fabric_reading_interval_seconds", "Seconds between the host's two fabric counter readings."},
    MetricFamily{"ccbench_fabric_moved",
                 "How much a fabric counter moved over the run, in the counter's own unit (InfiniBand port_xmit_data: "
                 "4-byte words); a counter that did not move has no series."},
    MetricFamily{"ccbench_fabric_saturated",
                 "1 where the counter saturated during the run: its delta is a lower bound."},
    // acceptance verdicts (accept --format json)
    MetricFamily{"ccbench_accept_verdict", "1 for the acceptance verdict (pass, fail or waived), 0 for the others."},
    MetricFamily{"ccbench_accept_check_verdict", "1 for the check's verdict (pass, fail or waived), 0 for the others."},
    MetricFamily{"ccbench_accept_check_bus_bandwidth_bytes_per_second",
                 "A busbw check's figure: the lowest bus bandwidth among the rows it selected, bytes per second."},
    MetricFamily{"ccbench_accept_check_min_bus_bandwidth_bytes_per_second",
                 "A busbw check's threshold, bytes per second."},
    MetricFamily{"ccbench_accept_check_peak_ratio",
                 "A busbw check's figure: the lowest share of peak among the rows it selected."},
    MetricFamily{"ccbench_accept_check_min_peak_ratio", "A busbw check's threshold as a share of peak."},
    MetricFamily{"ccbench_accept_check_findings",
                 "What a check other than busbw counted against it (timed-out or failed rows, wrong elements, "
                 "counters over their bound, link readings below capability); it passes at 0."},
    MetricFamily{"ccbench_accept_valid_until_timestamp_seconds",
                 "Until when the acceptance verdict holds, seconds since the Unix epoch."},
    // fleet verdicts (fleet --format json)
    MetricFamily{"ccbench_fleet_verdict", "1 for the fleet verdict (pass, or fail: something named), 0 for the other."},
    MetricFamily{"ccbench_fleet_level_bytes_per_second",
                 "The fleet's level: the median busbw of the pairs near the fastest, bytes per second."},
    MetricFamily{"ccbench_fleet_level_seconds", "The fleet's level of a latency sweep, seconds."},
    MetricFamily{"ccbench_fleet_reference_bytes_per_second",
                 "The busbw each pair is judged against (the level, or the anchor when that is higher)."},
    MetricFamily{"ccbench_fleet_reference_seconds", "The latency each pair of a latency sweep is judged against."},
    MetricFamily{"ccbench_fleet_threshold_ratio", "How far below the reference a pair is LOW (0.2: 20%)."},
    MetricFamily{"ccbench_fleet_low", "1 where the whole fleet is LOW against its anchor (FLEET LOW)."},
    MetricFamily{"ccbench_fleet_measured_pairs", "Pairs (groups, over a --hosts-per-group sweep) measured."},
    MetricFamily{"ccbench_fleet_missing_pairs", "Pairs of the sweep not measured (judged with --partial)."},
    MetricFamily{"ccbench_fleet_findings",
                 "What the fleet verdict named, by finding: bad_host, bad_link, split, low_group, suspicious, "
                 "cannot_tell."},
    MetricFamily{"ccbench_fleet_host_bad", "1 for a BAD HOST."},
    MetricFamily{"ccbench_fleet_host_pairs", "The host's pairs (groups) in the sweep."},
    MetricFamily{"ccbench_fleet_host_low_pairs", "The host's LOW pairs (groups)."},
    MetricFamily{"ccbench_fleet_host_reference_ratio", "The median of the host's pairs over the reference."},
};

/// The family's own name (static storage), or none.
std::optional<std::string_view> family_name(std::string_view name) {
  for (const auto& f : kFamilies) {
    if (f.name == name) {
      return f.name;
    }
  }
  return std::nullopt;
}

/// HELP text's escapes: backslash and newline.
std::string escape_help(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += c == '\\' ? std::string("\\\\") : c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

std::string label_set(const detail::Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", name, escape_label_value(value));
  }
  return out;
}

/// Digits of `text` from `at` as a number, advancing `at`; none unless exactly `digits` of them.
std::optional<int> digits_at(std::string_view text, std::size_t& at, std::size_t digits) {
  int value = 0;
  if (at + digits > text.size()) {
    return std::nullopt;
  }
  const auto* first = text.data() + at;
  const auto [end, ec] = std::from_chars(first, first + digits, value);
  if (ec != std::errc{} || end != first + digits) {
    return std::nullopt;
  }
  at += digits;
  return value;
}

bool expect(std::string_view text, std::size_t& at, std::string_view one_of) {
  if (at < text.size() && one_of.find(text[at]) != std::string_view::npos) {
    ++at;
    return true;
  }
  return false;
}

}  // namespace

std::span<const MetricFamily> metric_families() { return kFamilies; }

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<double> epoch_seconds(std::string_view rfc3339) {
  const std::string_view t = rfc3339;
  std::size_t at = 0;
  const auto year = digits_at(t, at, 4);
  const bool dash1 = expect(t, at, "-");
  const auto month = digits_at(t, at, 2);
  const bool dash2 = expect(t, at, "-");
  const auto day = digits_at(t, at, 2);
  const bool sep = expect(t, at, "Tt ");
  const auto hour = digits_at(t, at, 2);
  const bool colon1 = expect(t, at, ":");
  const auto minute = digits_at(t, at, 2);
  const bool colon2 = expect(t, at, ":");
  const auto second = digits_at(t, at, 2);
  if (!year || !month || !day || !hour || !minute || !second || !dash1 || !dash2 || !sep || !colon1 || !colon2 ||
      *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year{*year}, std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) {
    return std::nullopt;
  }
  double fraction = 0;
  if (expect(t, at, ".")) {
    double scale = 0.1;
    const std::size_t first = at;
    for (; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, scale /= 10) {
      fraction += (t[at] - '0') * scale;
    }
    if (at == first) {
      return std::nullopt;
    }
  }
  int offset_s = 0;
  if (!expect(t, at, "Zz")) {
    const bool east = at < t.size() && t[at] == '+';
    if (!expect(t, at, "+-")) {
      return std::nullopt;
    }
    const auto oh = digits_at(t, at, 2);
    const bool colon = expect(t, at, ":");
    const auto om = digits_at(t, at, 2);
    if (!oh || !colon || !om || *oh > 23 || *om > 59) {
      return std::nullopt;
    }
    offset_s = (east ? 1 : -1) * (*oh * 3600 + *om * 60);
  }
  if (at != t.size()) {
    return std::nullopt;
  }
  const auto days = std::chrono::sys_days{date}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + *hour * 3600.0 + *minute * 60.0 + *second + fraction - offset_s;
}

namespace detail {

void MetricSet::add(std::string_view name, const Labels& labels, double value) {
  const auto family_key = family_name(name);
  if (!family_key) {
    throw std::logic_error(fmt::format("export: {} is no family of metric_families()", name));
  }
  if (!std::isfinite(value)) {
    return;
  }
  auto& family = m_families[*family_key];
  std::string key = label_set(labels);
  const auto [it, inserted] = family.value_of.insert_or_assign(key, value);
  if (inserted) {
    family.order.push_back(std::move(key));
  } else {
    ++m_replaced;
  }
}

Exposition MetricSet::exposition() const {
  Exposition out;
  out.replaced = m_replaced;
  for (const auto& f : kFamilies) {
    const auto it = m_families.find(f.name);
    if (it == m_families.end()) {
      continue;
    }
    ++out.families;
    out.text += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, escape_help(f.help), f.name);
    for (const auto& labels : it->second.order) {
      out.text += fmt::format("{}{}{}{} {}\n", f.name, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}",
                              it->second.value_of.at(labels));
      ++out.series;
    }
  }
  out.text += "# EOF\n";
  return out;
}

}  // namespace detail

}  // namespace ccbench::report
