#include "ccbench/table_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace ccbench {
namespace {

constexpr std::string_view kCellHeader = "      time   algbw   busbw  %peak  #wrong";

std::string_view unit_name(RateUnit unit) { return unit == RateUnit::Gbps ? "Gb/s" : "GB/s"; }
double in_unit(double GBps, RateUnit unit) { return unit == RateUnit::Gbps ? GBps * 8.0 : GBps; }

}  // namespace

std::string TablePrinter::cell(const CaseResult& r) const {
  if (r.status == CaseStatus::Skipped || r.status == CaseStatus::TimedOut || !r.time) {
    return fmt::format("  {:>39}", r.status == CaseStatus::TimedOut ? "timed out" : "skipped");
  }
  const std::string wrong = r.wrong_elements ? fmt::format("{}", *r.wrong_elements) : "n/a";
  const std::string pct = r.pct_of_peak ? fmt::format("{:.1f}", *r.pct_of_peak) : "-";
  return fmt::format(" {:>9.2f} {:>7.2f} {:>7.2f} {:>6} {:>7}", r.time->p50 * 1e6, in_unit(r.algbw_GBps, m_unit),
                     in_unit(r.busbw_GBps, m_unit), pct, wrong);
}

constexpr int kGroupWidth = 18;

TablePrinter::TablePrinter(std::FILE* out, std::vector<bool> placements_in_place, bool show_group, RateUnit unit)
    : m_out(out), m_in_place(std::move(placements_in_place)), m_show_group(show_group), m_unit(unit) {}

void TablePrinter::header(const TableHeader& h) const {
  fmt::print(m_out, "# {}\n", h.title);
  fmt::print(m_out, "# backend {}  ranks {}  hosts {}\n", h.backend, h.ranks, h.hosts);
  if (!h.groups.empty()) {
    fmt::print(m_out, "# {}\n", h.groups);
  }
  if (!h.registration.empty()) {
    fmt::print(m_out, "# registration {}\n", h.registration);
  }
  fmt::print(m_out, "# timing {}; {}\n", h.timing, h.stopping);
  fmt::print(m_out, "# time = median per op (slowest rank); rates in {}; sizes in bytes\n",
             m_unit == RateUnit::Gbps ? "Gb/s (1 Gb = 1e9 bit; the JSON keeps GB/s)" : "GB/s (1 GB = 1e9 B)");
  for (const auto& p : h.peaks) {
    fmt::print(m_out, "# peak {}\n", p);
  }
  fmt::print(m_out, "#\n");
  const int gw = m_show_group ? kGroupWidth + 1 : 0;
  std::string groups = fmt::format("# {:>{}}{:>46}", "", gw, "");
  std::string names = fmt::format("# {:<{}}{:>12} {:>12} {:>8} {:>6} {:>5}", m_show_group ? "group" : "", gw, "size",
                                  "count", "type", "redop", "root");
  std::string units = fmt::format("# {:>{}}{:>12} {:>12} {:>8} {:>6} {:>5}", "", gw, "(B)", "(elements)", "", "", "");
  for (bool in_place : m_in_place) {
    groups += fmt::format(" {:^41}", in_place ? "in-place" : "out-of-place");
    names += kCellHeader;
    units += fmt::format("      (us)  ({})  ({})               ", unit_name(m_unit), unit_name(m_unit));
  }
  fmt::print(m_out, "{}\n{}\n{}\n", groups, names, units);
  std::fflush(m_out);
}

void TablePrinter::row(const std::vector<CaseResult>& cells) const {
  if (cells.empty()) {
    return;
  }
  const auto& first = cells.front();
  const auto& coll = info(first.spec.collective);
  const std::string group = m_show_group ? fmt::format("{:<{}} ", first.group_id, kGroupWidth) : std::string{};
  std::string line = fmt::format("  {}{:>12} {:>12} {:>8} {:>6} {:>5}", group, first.size_bytes, first.spec.count,
                                 name(first.spec.dtype), coll.has_reduce_op ? name(first.spec.op) : "-",
                                 coll.has_root ? fmt::format("{}", first.spec.root) : "-");
  std::string reason;
  for (const auto& c : cells) {
    line += cell(c);
    if (c.status == CaseStatus::Skipped && !c.reason.empty()) {
      reason = c.reason;
    }
  }
  fmt::print(m_out, "{}\n", line);
  for (const auto& c : cells) {
    if (c.rdma && c.rdma->run_bw_GBps) {
      fmt::print(m_out, "#   {}whole run: {:.2f} {} (the streams' bytes over their time: perftest's BW average)\n",
                 m_show_group ? c.group_id + " " : "", in_unit(*c.rdma->run_bw_GBps, m_unit), unit_name(m_unit));
    }
  }
  if (!reason.empty() && reason != m_last_reason) {
    fmt::print(m_out, "#   skipped: {}\n", reason);
    m_last_reason = reason;
  }
  std::fflush(m_out);
}

void TablePrinter::rows(const std::vector<CaseResult>& cells) const {
  std::vector<std::string> order;
  for (const auto& c : cells) {
    if (std::find(order.begin(), order.end(), c.group_id) == order.end()) {
      order.push_back(c.group_id);
    }
  }
  for (const auto& id : order) {
    std::vector<CaseResult> mine;
    std::copy_if(cells.begin(), cells.end(), std::back_inserter(mine),
                 [&](const CaseResult& c) { return c.group_id == id; });
    row(mine);
  }
}

void TablePrinter::footer(const std::vector<CaseResult>& all, const std::string& result_path) const {
  double sum = 0.0;
  int measured = 0;
  std::uint64_t wrong = 0;
  int checked = 0;
  for (const auto& r : all) {
    if (r.status == CaseStatus::Ok || r.status == CaseStatus::Failed) {
      sum += r.busbw_GBps;
      ++measured;
    }
    if (r.wrong_elements) {
      wrong += *r.wrong_elements;
      ++checked;
    }
  }
  if (checked > 0) {
    fmt::print(m_out, "# wrong elements: {} (in {} checked cases)\n", wrong, checked);
  } else {
    fmt::print(m_out, "# wrong elements: not checked (add -c 1)\n");
  }
  fmt::print(m_out, "# avg bus bandwidth: {:.3f} {} (mean over {} cases; gate on one large size, not this)\n",
             in_unit(measured > 0 ? sum / measured : 0.0, m_unit), unit_name(m_unit), measured);
  if (!result_path.empty()) {
    fmt::print(m_out, "# results: {}\n", result_path);
  }
  std::fflush(m_out);
}

}  // namespace ccbench
