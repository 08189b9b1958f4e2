// Acceptance checks: evaluation against result rows. The naming of the failing group (ranks, hosts, and the GPUs
// and NICs the topology names) is in accept_naming.cpp, the printers in accept_render.cpp.
#include "ccbench/report/accept.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "accept_checks.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

namespace {

using detail::capped;
using detail::case_label;
using detail::describe_group;
using detail::input_summary;
using detail::lacked;
using detail::Row;

bool measured(const CaseResult& r) { return r.status == CaseStatus::Ok || r.status == CaseStatus::Failed; }

bool matches(const RowFilter& f, const CaseResult& r) {
  const auto& g = f.groups;
  return (!f.benchmark || r.benchmark == *f.benchmark) && (!f.backend || r.backend == *f.backend) &&
         (!f.op || r.spec.collective == *f.op) && (!f.dtype || r.spec.dtype == *f.dtype) &&
         (!f.redop || (info(r.spec.collective).has_reduce_op && r.spec.op == *f.redop)) &&
         (!f.in_place || r.spec.in_place == *f.in_place) &&
         (g.empty() || std::find(g.begin(), g.end(), r.group) != g.end()) && (!f.ranks || r.ranks == *f.ranks) &&
         (!f.nodes || r.nodes == *f.nodes);
}

std::vector<Row> select_rows(const std::vector<LoadedRun>& runs, const RowFilter& filter) {
  std::vector<Row> rows;
  for (const auto& run : runs) {
    for (const auto& r : run.doc.results) {
      if (matches(filter, r)) {
        rows.push_back({&run, &r, runs.size() > 1});
      }
    }
  }
  return rows;
}

std::string group_key(const CaseResult& r) { return fmt::format("{}@{}", r.group_id, fmt::join(r.group_hosts, ",")); }

std::string count_of(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string gbps(double value) { return fmt::format("{:.{}f} GB/s", value, value >= 100 ? 1 : value >= 1 ? 2 : 3); }

// --- the checks ----------------------------------------------------------------------------------

/// Why one row fails a busbw check, or "" when it passes.
std::string busbw_problem(const AcceptCheck& c, const CaseResult& r) {
  if (!measured(r)) {
    return fmt::format("status {}{}", name(r.status), r.reason.empty() ? "" : ": " + r.reason);
  }
  std::vector<std::string> problems;
  if (c.min_GBps && !(r.busbw_GBps >= *c.min_GBps)) {
    problems.push_back(fmt::format("{} < {} GB/s", gbps(r.busbw_GBps), *c.min_GBps));
  }
  if (c.min_pct_of_peak && !r.pct_of_peak) {
    problems.emplace_back("peak unknown; give --peak-GBps or run on hardware ccbench knows, or gate on min_GBps");
  } else if (c.min_pct_of_peak && !(*r.pct_of_peak >= *c.min_pct_of_peak)) {
    problems.push_back(
        fmt::format("{:.1f}% of peak {} GB/s < {}%", *r.pct_of_peak, r.peak_GBps.value_or(0.0), *c.min_pct_of_peak));
  }
  return fmt::format("{}", fmt::join(problems, "; "));
}

std::string sizes_present(const std::vector<Row>& rows) {
  std::set<std::uint64_t> sizes;
  for (const auto& row : rows) {
    sizes.insert(row.r->size_bytes);
  }
  if (sizes.empty()) {
    return "";
  }
  return sizes.size() == 1 ? format_size(*sizes.begin(), SizeStyle::Binary)
                           : fmt::format("{}..{}", format_size(*sizes.begin(), SizeStyle::Binary),
                                         format_size(*sizes.rbegin(), SizeStyle::Binary));
}

std::string busbw_measured(const AcceptCheck& c, const std::vector<Row>& rows) {
  std::optional<double> low_gbps;
  std::optional<double> low_pct;
  for (const auto& row : rows) {
    if (!measured(*row.r)) {
      continue;
    }
    low_gbps = std::min(low_gbps.value_or(row.r->busbw_GBps), row.r->busbw_GBps);
    if (row.r->pct_of_peak) {
      low_pct = std::min(low_pct.value_or(*row.r->pct_of_peak), *row.r->pct_of_peak);
    }
  }
  std::vector<std::string> parts;
  if (low_gbps && (c.min_GBps || !low_pct)) {
    parts.push_back(gbps(*low_gbps));
  }
  if (c.min_pct_of_peak) {
    parts.push_back(low_pct ? fmt::format("{:.1f}% of peak", *low_pct) : std::string("peak unknown"));
  }
  return low_gbps ? fmt::format("{}", fmt::join(parts, ", ")) : std::string();
}

void evaluate_busbw(const AcceptCheck& c, const std::vector<Row>& all, const std::vector<LoadedRun>& runs,
                    CheckOutcome& out) {
  std::vector<Row> rows;
  std::copy_if(all.begin(), all.end(), std::back_inserter(rows),
               [&](const Row& row) { return row.r->size_bytes == c.size_bytes; });
  out.threshold = threshold_text(c);
  if (rows.empty()) {
    const std::string sizes = sizes_present(all);
    lacked(out, {{Lack::Absent,
                  fmt::format("no result for {} at {} ({})", describe(c.select),
                              format_size(c.size_bytes, SizeStyle::Binary),
                              sizes.empty() ? "the input has: " + input_summary(runs) : "sizes measured: " + sizes)}});
    return;
  }
  out.measured = busbw_measured(c, rows);
  std::vector<std::string> culprits;
  std::vector<std::string> problems;
  std::set<std::string> failing_groups;
  std::set<std::string> groups;
  for (const auto& row : rows) {
    groups.insert(group_key(*row.r));
    const std::string problem = busbw_problem(c, *row.r);
    if (problem.empty()) {
      continue;
    }
    problems.push_back(fmt::format("{} {}: {}", row.r->group_id, case_label(row), problem));
    if (failing_groups.insert(group_key(*row.r)).second) {
      culprits.push_back(describe_group(row));
    }
  }
  const bool few_groups = c.min_groups > 0 && groups.size() < static_cast<std::size_t>(c.min_groups);
  out.verdict = problems.empty() && !few_groups ? CheckVerdict::Pass : CheckVerdict::Fail;
  out.culprit = capped(culprits, "; ");
  std::vector<std::string> detail;
  if (!problems.empty()) {
    detail.push_back(fmt::format("{} of {} rows fail: {}", problems.size(), rows.size(), capped(problems, "; ")));
  }
  if (few_groups) {
    std::vector<std::string> ids;
    std::transform(groups.begin(), groups.end(), std::back_inserter(ids),
                   [](const auto& k) { return k.substr(0, k.find('@')); });
    detail.push_back(fmt::format("found {} group{} ({}), expected at least {}", groups.size(),
                                 groups.size() == 1 ? "" : "s", fmt::join(ids, ", "), c.min_groups));
  }
  if (detail.empty()) {
    detail.push_back(fmt::format("{} in {} at {}", count_of(rows.size(), "row"), count_of(groups.size(), "group"),
                                 format_size(c.size_bytes, SizeStyle::Binary)));
  }
  out.detail = fmt::format("{}", fmt::join(detail, "; "));
}

void evaluate_status(const std::vector<Row>& rows, CaseStatus bad, CheckOutcome& out) {
  std::vector<std::string> culprits;
  std::vector<std::string> reasons;
  for (const auto& row : rows) {
    if (row.r->status == bad) {
      culprits.push_back(fmt::format("{} in {}", case_label(row), describe_group(row)));
      reasons.push_back(row.r->reason.empty() ? std::string(name(bad)) : row.r->reason);
    }
  }
  out.threshold = fmt::format("0 {}", bad == CaseStatus::TimedOut ? "timed-out ops" : "failed cases");
  out.measured = fmt::format("{} of {} rows", culprits.size(), rows.size());
  out.verdict = culprits.empty() ? CheckVerdict::Pass : CheckVerdict::Fail;
  out.culprit = capped(culprits, "; ");
  out.detail = culprits.empty() ? count_of(rows.size(), "row") + " looked at" : capped(reasons, "; ");
  if (!culprits.empty()) {
    out.next_step = detail::step_for_rows(bad == CaseStatus::TimedOut ? CheckKind::NoTimedOut : CheckKind::NoFailed,
                                          culprits.front(), false);
  }
}

void evaluate_wrong(const AcceptCheck& c, const std::vector<Row>& all, CheckOutcome& out) {
  std::uint64_t wrong_total = 0;
  std::size_t checked = 0;
  std::vector<std::string> wrong;
  std::vector<std::string> unchecked;
  for (const auto& row : all) {
    if (!measured(*row.r)) {
      continue;
    }
    if (!row.r->wrong_elements) {
      unchecked.push_back(fmt::format("{} in {}", case_label(row), describe_group(row)));
      continue;
    }
    ++checked;
    if (*row.r->wrong_elements > 0) {
      wrong_total += *row.r->wrong_elements;
      wrong.push_back(fmt::format("{} in {} ({} wrong)", case_label(row), describe_group(row), *row.r->wrong_elements));
    }
  }
  out.threshold = c.require_checked ? "0 wrong elements, every row verified" : "0 wrong elements";
  out.measured = fmt::format("{} wrong in {} verified rows", wrong_total, checked);
  const bool unverified = c.require_checked && !unchecked.empty();
  out.verdict =
      wrong.empty() && !unverified && checked + unchecked.size() > 0 ? CheckVerdict::Pass : CheckVerdict::Fail;
  if (!wrong.empty() || unverified) {
    out.next_step =
        detail::step_for_rows(CheckKind::NoWrongElements, wrong.empty() ? "" : wrong.front(), wrong.empty());
  }
  if (!wrong.empty()) {
    out.culprit = capped(wrong, "; ");
    out.detail = fmt::format("{} rows hold wrong elements", wrong.size());
  } else if (checked + unchecked.size() == 0) {
    lacked(out, {{Lack::Absent,
                  fmt::format("nothing was measured ({}: timed out or skipped)", count_of(all.size(), "row"))}});
  } else if (unverified) {
    out.culprit = capped(unchecked, "; ");
    out.detail =
        fmt::format("{} of {} rows were not verified: run with -c 1", unchecked.size(), checked + unchecked.size());
  } else {
    out.detail = count_of(checked, "row") + " verified" +
                 (unchecked.empty() ? std::string() : fmt::format(", {} not verified (allowed)", unchecked.size()));
  }
}

CheckOutcome evaluate_check(const Profile& profile, const AcceptCheck& c, const std::vector<LoadedRun>& runs) {
  CheckOutcome out;
  out.id = c.id;
  out.kind = std::string(name(c.kind));
  out.description = describe(c);
  if (const auto it = profile.sources.find(c.source); it != profile.sources.end()) {
    out.source = it->second.url.empty() ? it->second.title : fmt::format("{} <{}>", it->second.title, it->second.url);
  }
  if (c.kind == CheckKind::Counters) {  // the hosts' evidence, not result rows
    detail::evaluate_counters(c, runs, out);
    return out;
  }
  if (c.kind == CheckKind::Links) {
    detail::evaluate_links(c, runs, out);
    return out;
  }
  const auto rows = select_rows(runs, c.select);
  if (rows.empty() && c.kind != CheckKind::Busbw) {
    lacked(out, {{Lack::Absent,
                  fmt::format("no result for {} (the input has: {})", describe(c.select), input_summary(runs))}});
    return out;
  }
  switch (c.kind) {
    case CheckKind::Busbw:
      evaluate_busbw(c, rows, runs, out);
      break;
    case CheckKind::NoWrongElements:
      evaluate_wrong(c, rows, out);
      break;
    case CheckKind::NoTimedOut:
      evaluate_status(rows, CaseStatus::TimedOut, out);
      break;
    case CheckKind::NoFailed:
      evaluate_status(rows, CaseStatus::Failed, out);
      break;
    case CheckKind::Counters:
    case CheckKind::Links:
      break;  // evaluated above
  }
  return out;
}

}  // namespace

namespace detail {

CheckVerdict verdict_on(const EvidenceRuling& evidence) {
  switch (evidence.ruling) {
    case Ruling::Judged:
      return CheckVerdict::Pass;
    case Ruling::Overridden:
      return CheckVerdict::Waived;
    case Ruling::Fail:
    case Ruling::NoVerdict:
      break;
  }
  return CheckVerdict::Fail;
}

void lacked(CheckOutcome& out, std::vector<Gap> gaps) {
  out.detail = gaps.front().what;
  out.evidence = rule_on(Stakes::Acceptance, std::move(gaps));
  out.verdict = verdict_on(out.evidence);
}

}  // namespace detail

bool all_passed(const std::vector<CheckOutcome>& outcomes) {
  return std::none_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.verdict == CheckVerdict::Fail; });
}

void waive_unjudged(std::vector<CheckOutcome>& outcomes, const std::vector<std::string>& ids) {
  const bool all = std::find(ids.begin(), ids.end(), "all") != ids.end();
  for (const auto& id : ids) {
    if (id != "all" && std::none_of(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.id == id; })) {
      std::vector<std::string> known;
      known.reserve(outcomes.size());
      for (const auto& o : outcomes) {
        known.push_back(o.id);
      }
      throw UsageError(
          fmt::format("--waive-unjudged {}: the profile has no such check ({}, or all)", id, fmt::join(known, ", ")));
    }
  }
  for (auto& o : outcomes) {
    const bool named = all || std::find(ids.begin(), ids.end(), o.id) != ids.end();
    if (named && o.evidence.ruling == Ruling::Fail) {
      o.evidence = rule_on(Stakes::Acceptance, std::move(o.evidence.gaps), "--waive-unjudged");
      o.verdict = detail::verdict_on(o.evidence);
      o.detail += "; WAIVED by --waive-unjudged: the check lacked its evidence, and the operator accepted that";
    }
  }
}

std::vector<CheckOutcome> evaluate(const Profile& profile, const std::vector<LoadedRun>& runs) {
  std::vector<CheckOutcome> outcomes;
  outcomes.reserve(profile.checks.size());
  for (const auto& check : profile.checks) {
    outcomes.push_back(evaluate_check(profile, check, runs));
  }
  detail::finish(profile, outcomes);
  return outcomes;
}

}  // namespace ccbench::report
