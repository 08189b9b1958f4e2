// The compact cases of a fleet sweep, from documents or streamed files, with the checks that make them one sweep.
#include "ccbench/report/fleet_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ccbench::report {

namespace {

bool is_pair_result(const CaseResult& r) { return r.group == "pair" && r.group_ranks.size() == 2; }
bool is_fleet_result(const CaseResult& r) { return is_pair_result(r) || r.group == "hosts"; }

}  // namespace

FleetSweep FleetSweep::of(const std::vector<LoadedRun>& runs) {
  FleetSweep sweep;
  for (const auto& run : runs) {
    sweep.begin_file(run.path);
    for (const auto& r : run.doc.results) {
      sweep.add_result(r);
    }
    LoadedRun head;
    head.path = run.path;
    head.schema_version = run.schema_version;
    head.doc.run = run.doc.run;
    head.doc.environment = run.doc.environment;
    head.doc.topology = run.doc.topology;
    sweep.end_file(std::move(head));
  }
  return sweep;
}

FleetSweep FleetSweep::read(const std::vector<std::string>& paths, std::uintmax_t max_bytes) {
  FleetSweep sweep;
  for (const auto& path : result_file_paths(paths)) {
    sweep.begin_file(path.string());
    LoadedRun head = stream_result_file(path, max_bytes, [&](CaseResult&& r, std::size_t) { sweep.add_result(r); });
    sweep.end_file(std::move(head));
  }
  return sweep;
}

void FleetSweep::begin_file(std::string path) {
  m_files.push_back({std::move(path), {}});
  m_file_sizes.clear();
}

std::uint32_t FleetSweep::host_index(const std::string& name) {
  const auto [it, added] = m_host_index.emplace(name, static_cast<std::uint32_t>(m_host_names.size()));
  if (added) {
    m_host_names.push_back(name);
  }
  return it->second;
}

void FleetSweep::add_result(const CaseResult& r) {
  if (!is_fleet_result(r)) {
    return;
  }
  const std::string& path = m_files.back().path;
  if (m_benchmark.empty()) {
    m_benchmark = r.benchmark;
    m_first_file = path;
    m_kind = r.group;
  } else if (r.group != m_kind) {
    throw InputError(path, "",
                     fmt::format("{} results beside {}'s {} results: one sweep at a time (--all-pairs or "
                                 "--hosts-per-group)",
                                 r.group, m_first_file, m_kind));
  } else if (r.benchmark != m_benchmark) {
    throw InputError(path, "",
                     fmt::format("{} results beside {}'s {}: a fleet verdict judges one bench's sweep", r.benchmark,
                                 m_first_file, m_benchmark));
  }
  Case c;
  c.file = static_cast<std::uint32_t>(m_files.size() - 1);
  c.first_rank = static_cast<std::uint32_t>(m_ranks.size());
  c.rank_count = static_cast<std::uint32_t>(r.group_ranks.size());
  c.first_host = static_cast<std::uint32_t>(m_hosts.size());
  c.host_count = static_cast<std::uint32_t>(r.group_hosts.size());
  c.group_id = r.group_id;
  c.status = r.status;
  c.size_bytes = r.size_bytes;
  c.in_place = r.spec.in_place;
  if (r.status == CaseStatus::Ok) {
    c.busbw_GBps = r.busbw_GBps;
    if (r.time) {
      c.p50_s = r.time->p50;
      c.min_s = r.time->min;
    }
  }
  c.peak_GBps = r.peak_GBps.value_or(kNone);
  m_ranks.insert(m_ranks.end(), r.group_ranks.begin(), r.group_ranks.end());
  for (const auto& host : r.group_hosts) {
    m_hosts.push_back(host_index(host));
  }
  m_file_sizes.insert(r.size_bytes);
  m_has_out_of_place = m_has_out_of_place || !r.spec.in_place;
  m_cases.push_back(std::move(c));
}

void FleetSweep::end_file(LoadedRun head) {
  File& file = m_files.back();
  if (m_file_sizes.empty()) {
    throw InputError(file.path, "",
                     "no pair results: a fleet verdict reads the results of a sweep run with --all-pairs (or "
                     "--hosts-per-group)");
  }
  if (m_sizes.empty()) {
    m_sizes = m_file_sizes;
    m_sizes_file = file.path;
  } else if (m_file_sizes != m_sizes) {
    throw InputError(file.path, "",
                     fmt::format("sizes {} differ from {}'s {}: a fleet verdict sets the pairs of one sweep "
                                 "against each other",
                                 fmt::join(m_file_sizes, ","), m_sizes_file, fmt::join(m_sizes, ",")));
  }
  auto& hosts = m_file_hosts.emplace_back();
  for (const auto& h : head.doc.environment.hosts) {
    hosts[h.hostname] = h.ranks;
  }
  file.head = std::move(head);
}

std::set<std::string> FleetSweep::all_hosts() const {
  std::set<std::string> out;
  for (const auto& f : m_files) {
    for (const auto& h : f.head.doc.environment.hosts) {
      out.insert(h.hostname);
    }
  }
  return out;
}

int FleetSweep::lanes() const {
  std::size_t lanes = 0;
  for (const auto& f : m_files) {
    for (const auto& h : f.head.doc.environment.hosts) {
      lanes = lanes == 0 ? h.ranks.size() : std::min(lanes, h.ranks.size());
    }
  }
  return static_cast<int>(std::max<std::size_t>(lanes, 1));
}

int FleetSweep::local_rank(std::uint32_t file, const std::string& host, int rank) const {
  const auto& hosts = m_file_hosts.at(file);
  const auto h = hosts.find(host);
  if (h == hosts.end()) {
    return -1;
  }
  const auto it = std::find(h->second.begin(), h->second.end(), rank);
  return it == h->second.end() ? -1 : static_cast<int>(it - h->second.begin());
}

}  // namespace ccbench::report
