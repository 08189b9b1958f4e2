// export --format openmetrics: each row, run, fabric reading and verdict as gauges (exposition.cpp keeps the
// families and the syntax). Labels are bounded: names of hosts, benches, ops, types, groups, profiles' check ids
// and the sweep's sizes; never a run id, a path or a sentence.
#include <fmt/format.h>

#include <array>
#include <string>

#include "ccbench/report/openmetrics.hpp"
#include "ccbench/report/rows.hpp"
#include "exposition.hpp"

namespace ccbench::report {

namespace {

using detail::Labels;
using detail::MetricSet;

constexpr double kGiga = 1e9;  // GB/s -> B/s
constexpr double kMega = 1e6;  // us -> s (divided: 2.5 us is 2.5e-06 s, not 2.4999999999999998e-06)

/// The hosts of a group (or, in results before schema 1.1, of the run), joined by commas.
std::string hosts_of(const LoadedRun& run, const CaseResult* r) {
  std::vector<std::string> hosts;
  if (r != nullptr) {
    hosts = r->group_hosts;
  }
  if (hosts.empty()) {
    for (const auto& h : run.doc.environment.hosts) {
      hosts.push_back(h.hostname);
    }
  }
  return fmt::format("{}", fmt::join(hosts, ","));
}

Labels with(Labels labels, std::string_view name, std::string value) {
  labels.emplace_back(name, std::move(value));
  return labels;
}

/// node, bench, backend, timing and ranks of a run: what its run-level series (time, fabric) are told apart by.
Labels run_labels(const LoadedRun& run, std::string node) {
  const CaseResult* first = run.doc.results.empty() ? nullptr : &run.doc.results.front();
  std::size_t ranks = 0;
  for (const auto& h : run.doc.environment.hosts) {
    ranks += h.ranks.size();
  }
  return {{"node", std::move(node)},
          {"bench", run.doc.run.benchmark},
          {"backend", first != nullptr ? first->backend : std::string()},
          {"timing", first != nullptr ? std::string(name(first->timing)) : std::string()},
          {"nranks", std::to_string(ranks)}};
}

Labels row_labels(const LoadedRun& run, const CaseResult& r) {
  const RowKey k = key_of(r);
  return {{"node", hosts_of(run, &r)},
          {"bench", k.benchmark},
          {"backend", k.backend},
          {"collective", k.op},
          {"dtype", k.dtype},
          {"redop", k.redop},
          {"root", k.root >= 0 ? std::to_string(k.root) : std::string()},
          {"size_bytes", std::to_string(k.size_bytes)},
          {"placement", std::string(placement_name(k.in_place))},
          {"timing", k.timing},
          {"variant", k.variant},
          {"group", k.group_id},
          {"nranks", std::to_string(r.ranks)},
          {"n_nodes", std::to_string(r.nodes)}};
}

void add_row(MetricSet& m, const LoadedRun& run, const CaseResult& r) {
  const Labels labels = row_labels(run, r);
  m.add("ccbench_case_status", with(labels, "status", std::string(name(r.status))), 1);
  const bool measured = r.status == CaseStatus::Ok || r.status == CaseStatus::Failed;
  if (measured && r.time) {
    m.add("ccbench_bus_bandwidth_bytes_per_second", labels, r.busbw_GBps * kGiga);
    m.add("ccbench_algorithm_bandwidth_bytes_per_second", labels, r.algbw_GBps * kGiga);
    m.add("ccbench_exec_time_median_seconds", labels, r.time->p50);
    m.add("ccbench_exec_time_p95_seconds", labels, r.time->p95);
    if (r.pct_of_peak) {
      m.add("ccbench_bus_bandwidth_peak_ratio", labels, *r.pct_of_peak / 100.0);
    }
  }
  if (r.wrong_elements) {
    m.add("ccbench_wrong_elements", labels, static_cast<double>(*r.wrong_elements));
  }
}

void add_run(MetricSet& m, const LoadedRun& run) {
  const auto& info = run.doc.run;
  if (const auto t = epoch_seconds(info.ended_utc.empty() ? info.started_utc : info.ended_utc)) {
    m.add("ccbench_run_timestamp_seconds", run_labels(run, hosts_of(run, nullptr)), *t);
  }
  for (const auto& host : run.doc.fabric) {
    const Labels labels = run_labels(run, host.host);
    m.add("ccbench_fabric_reading_interval_seconds", labels, host.seconds);
    for (const auto& d : host.moved) {
      Labels counter =
          with(with(with(with(labels, "source", d.source), "device", d.device), "port", std::to_string(d.port)),
               "counter", d.name);
      counter = with(std::move(counter), "kind", std::string(name(d.kind)));
      m.add("ccbench_fabric_moved", counter, static_cast<double>(d.delta));
      if (d.lower_bound) {
        m.add("ccbench_fabric_saturated", counter, 1);
      }
    }
  }
  for (const auto& r : run.doc.results) {
    add_row(m, run, r);
  }
}

void add_optional(MetricSet& m, std::string_view family, const Labels& labels, std::optional<double> value) {
  if (value) {
    m.add(family, labels, *value);
  }
}

constexpr std::array kAcceptVerdicts = {"pass", "fail", "waived", "warning"};

void add_accept(MetricSet& m, const ExportedAccept& a) {
  const Labels profile = {{"profile", a.profile}};
  for (const std::string_view v : kAcceptVerdicts) {
    m.add("ccbench_accept_verdict", with(profile, "verdict", std::string(v)), a.verdict == v ? 1 : 0);
  }
  add_optional(m, "ccbench_accept_valid_until_timestamp_seconds", profile, a.valid_until_s);
  for (const auto& c : a.checks) {
    const Labels check = with(profile, "check", c.id);
    for (const std::string_view v : kAcceptVerdicts) {
      m.add("ccbench_accept_check_verdict", with(with(check, "kind", c.kind), "verdict", std::string(v)),
            c.verdict == v ? 1 : 0);
    }
    add_optional(m, "ccbench_accept_check_bus_bandwidth_bytes_per_second", check, c.busbw_Bps);
    add_optional(m, "ccbench_accept_check_min_bus_bandwidth_bytes_per_second", check, c.min_busbw_Bps);
    add_optional(m, "ccbench_accept_check_peak_ratio", check, c.peak_ratio);
    add_optional(m, "ccbench_accept_check_min_peak_ratio", check, c.min_peak_ratio);
    add_optional(m, "ccbench_accept_check_findings", check, c.findings);
  }
}

void add_fleet(MetricSet& m, const ExportedFleet& f) {
  const Labels sweep = {{"bench", f.bench}, {"size_bytes", std::to_string(f.size_bytes)}};
  for (const std::string_view v : {"pass", "fail"}) {
    m.add("ccbench_fleet_verdict", with(sweep, "verdict", std::string(v)), f.verdict == v ? 1 : 0);
  }
  m.add("ccbench_fleet_threshold_ratio", sweep, f.threshold);
  m.add("ccbench_fleet_measured_pairs", sweep, static_cast<double>(f.measured));
  m.add("ccbench_fleet_missing_pairs", sweep, static_cast<double>(f.missing));
  for (const auto& [finding, count] : f.findings) {
    m.add("ccbench_fleet_findings", with(sweep, "finding", finding), static_cast<double>(count));
  }
  // a latency sweep's figures are microseconds, a bandwidth sweep's GB/s: each in its base unit
  const auto base = [&](double v) { return f.latency ? v / kMega : v * kGiga; };
  const std::string_view level = f.latency ? "ccbench_fleet_level_seconds" : "ccbench_fleet_level_bytes_per_second";
  const std::string_view reference =
      f.latency ? "ccbench_fleet_reference_seconds" : "ccbench_fleet_reference_bytes_per_second";
  for (std::size_t lane = 0; lane < f.level.size(); ++lane) {
    const Labels labels = with(sweep, "local_rank", std::to_string(lane));
    if (f.level[lane]) {
      m.add(level, labels, base(*f.level[lane]));
    }
    if (lane < f.reference.size() && f.reference[lane]) {
      m.add(reference, labels, base(*f.reference[lane]));
    }
    if (lane < f.low.size()) {
      m.add("ccbench_fleet_low", labels, f.low[lane] ? 1 : 0);
    }
  }
  for (const auto& h : f.hosts) {
    const Labels labels = with(with(sweep, "node", h.host), "local_rank", std::to_string(h.local_rank));
    m.add("ccbench_fleet_host_bad", labels, h.bad ? 1 : 0);
    m.add("ccbench_fleet_host_pairs", labels, static_cast<double>(h.pairs));
    m.add("ccbench_fleet_host_low_pairs", labels, static_cast<double>(h.low));
    add_optional(m, "ccbench_fleet_host_reference_ratio", labels, h.of_reference);
  }
}

}  // namespace

Exposition render_openmetrics(const ExportInput& input) {
  MetricSet m;
  for (const auto& run : input.runs) {
    add_run(m, run);
  }
  for (const auto& a : input.accepts) {
    add_accept(m, a);
  }
  for (const auto& f : input.fleets) {
    add_fleet(m, f);
  }
  return m.exposition();
}

}  // namespace ccbench::report
