// trend's verdict (trend.hpp): series cut at software changes, Pettitt's test inside each stretch, hosts named where
// every series of theirs drifted, software changes shared by every series reported once.
#include "ccbench/report/trend.hpp"

#include "ccbench/report/accept.hpp"  // epoch_of

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace ccbench::report {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::set<std::string> split_software(const std::string& s) {
  std::set<std::string> parts;
  std::size_t start = 0;
  while (start < s.size()) {
    const auto end = s.find("; ", start);
    parts.insert(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) {
      break;
    }
    start = end + 2;
  }
  return parts;
}

/// What differs between two software lists: ("nccl=2.18.3", "nccl=2.19.4").
std::pair<std::string, std::string> software_diff(const std::string& was, const std::string& now) {
  const auto a = split_software(was);
  const auto b = split_software(now);
  std::vector<std::string> only_a;
  std::vector<std::string> only_b;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
  const auto joined = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string{"(none)"} : fmt::format("{}", fmt::join(v, "; "));
  };
  return {joined(only_a), joined(only_b)};
}

/// The figures of points [first, last) that have one.
std::vector<double> figures(const std::vector<TrendPoint>& points, std::size_t first, std::size_t last) {
  std::vector<double> v;
  for (std::size_t i = first; i < last; ++i) {
    if (points[i].value) {
      v.push_back(*points[i].value);
    }
  }
  return v;
}

/// Pettitt's test on one stretch [first, last) of the series, judged at `alpha`.
Stretch test_stretch(const std::vector<TrendPoint>& points, std::size_t first, std::size_t last, double alpha,
                     double threshold) {
  Stretch s;
  s.first = first;
  s.alpha = alpha;
  std::vector<std::size_t> at;  // the series index of each figure
  std::vector<double> x;
  for (std::size_t i = first; i < last; ++i) {
    if (points[i].value) {
      at.push_back(i);
      x.push_back(*points[i].value);
    }
  }
  s.runs = x.size();
  std::size_t needed = 2;
  while (pettitt_min_p(needed) >= alpha && needed < 100000) {
    ++needed;
  }
  s.needed_runs = needed;
  if (x.size() < needed) {
    s.verdict = StretchVerdict::TooShort;
    return s;
  }
  const auto p = pettitt(x);
  s.p_value = p.p_value;
  s.change = at[p.change];
  const std::vector<double> before(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(p.change));
  const std::vector<double> after(x.begin() + static_cast<std::ptrdiff_t>(p.change), x.end());
  s.before_median = median_of(before);
  s.after_median = median_of(after);
  s.moved = s.before_median > 0 ? s.after_median / s.before_median - 1 : 0;
  const bool drift = p.p_value < alpha && std::abs(s.moved) > threshold;
  s.verdict = drift ? StretchVerdict::Drift : StretchVerdict::Steady;
  // Where it started: the first run beyond the threshold of the old level at or after the change point (Pettitt's
  // estimate can fall one run early, on a run that is low but within the threshold), then back over the runs before
  // it that were already beyond.
  const double down = s.moved < 0 ? 1 : -1;  // +1: the figure fell
  const auto beyond = [&](double v) { return down * (s.before_median - v) > threshold * s.before_median; };
  std::size_t onset = p.change;
  while (drift && onset + 1 < x.size() && !beyond(x[onset])) {
    ++onset;
  }
  while (drift && onset > 1 && beyond(x[onset - 1])) {
    --onset;
  }
  s.onset = at[onset];
  return s;
}

}  // namespace

std::string_view name(StretchVerdict v) {
  switch (v) {
    case StretchVerdict::Steady:
      return "steady";
    case StretchVerdict::Drift:
      return "drift";
    case StretchVerdict::TooShort:
      return "too short";
  }
  return "?";
}

PettittResult pettitt(const std::vector<double>& x) {
  const std::size_t n = x.size();
  const auto sign = [](double d) { return d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0); };
  // U_t = sum over i <= t < j of sgn(x_i - x_j), by U_t = U_{t-1} + sum_j sgn(x_t - x_j).
  PettittResult best;
  double u = 0;
  for (std::size_t t = 0; t + 1 < n; ++t) {
    for (std::size_t j = 0; j < n; ++j) {
      u += sign(x[t] - x[j]);
    }
    if (std::abs(u) > best.k) {
      best.k = std::abs(u);
      best.change = t + 1;
    }
  }
  if (best.change == 0) {
    best.change = n / 2;  // no rank moved at all
  }
  const auto nd = static_cast<double>(n);
  best.p_value = std::min(1.0, 2 * std::exp(-6 * best.k * best.k / (nd * nd * nd + nd * nd)));
  return best;
}

double pettitt_min_p(std::size_t n) {
  const auto nd = static_cast<double>(n);
  const double k = std::floor(nd / 2) * std::ceil(nd / 2);
  return std::min(1.0, 2 * std::exp(-6 * k * k / (nd * nd * nd + nd * nd)));
}

bool SeriesTrend::drifted() const {
  return std::any_of(stretches.begin(), stretches.end(),
                     [](const Stretch& s) { return s.verdict == StretchVerdict::Drift; });
}

bool SeriesTrend::judged() const {
  // The software it runs now: a stretch judged before an upgrade says nothing of the runs after it.
  return !stretches.empty() && stretches.back().verdict != StretchVerdict::TooShort;
}

int TrendVerdict::exit_code() const {
  const bool stale =
      std::any_of(ruling.gaps.begin(), ruling.gaps.end(), [](const Gap& g) { return g.lack == Lack::Stale; });
  if (stale) {
    return ruling.exit_code(0);  // no verdict is drawn on stale evidence, drift included
  }
  if (!hosts.empty() || fleet_shift || drifted_series > 0) {
    return 1;  // evidence against: what could be judged moved, whatever else could not be
  }
  return ruling.exit_code(0);
}

namespace {

// A run counts once in a series: a copy of a result file (the same run id under another path) is left out, or its
// runs would pass for agreement and for runs enough to judge.
std::vector<SeriesTrend> group_series(const HistoryIndex& index, std::size_t& duplicates) {
  std::vector<SeriesTrend> out;
  std::unordered_map<std::int64_t, std::shared_ptr<const TrendRun>> runs;
  std::set<std::string> seen;  // the run ids of the series being filled
  index.for_each_point([&](HistoryPoint&& p) {
    if (out.empty() || out.back().series != p.series) {
      out.push_back({std::move(p.series), std::move(p.bench), std::move(p.hosts), std::move(p.row), {}, {}, {}, 0});
      seen.clear();
    }
    if (!p.run_id.empty() && !seen.insert(p.run_id).second) {
      ++duplicates;
      return;
    }
    auto& run = runs[p.file_id];
    if (!run) {
      run = std::make_shared<const TrendRun>(TrendRun{std::move(p.run_id), std::move(p.started_utc), std::move(p.label),
                                                      std::move(p.path), std::move(p.software)});
    }
    out.back().points.push_back({run, p.busbw_GBps});
    if (!p.busbw_GBps) {
      ++out.back().unmeasured;
    }
  });
  std::sort(out.begin(), out.end(), [](const SeriesTrend& a, const SeriesTrend& b) { return a.series < b.series; });
  return out;
}

/// The stretches of one software: [first, last) pairs, and the changes between them.
std::vector<std::pair<std::size_t, std::size_t>> cut_at_software(SeriesTrend& s) {
  std::vector<std::pair<std::size_t, std::size_t>> cuts;
  std::size_t first = 0;
  for (std::size_t i = 1; i <= s.points.size(); ++i) {
    if (i == s.points.size() || s.points[i].run->software != s.points[i - 1].run->software) {
      cuts.emplace_back(first, i);
      if (i < s.points.size()) {
        const auto [was, now] = software_diff(s.points[i - 1].run->software, s.points[i].run->software);
        SoftwareChange c{i, s.points[i].run->started_utc, s.points[i].run->label, was, now, std::nullopt};
        s.software_changes.push_back(c);
      }
      first = i;
    }
  }
  // How far the figure moved at each change: the medians of the stretches either side.
  for (std::size_t k = 0; k < s.software_changes.size(); ++k) {
    const auto before = figures(s.points, cuts[k].first, cuts[k].second);
    const auto after = figures(s.points, cuts[k + 1].first, cuts[k + 1].second);
    if (!before.empty() && !after.empty() && median_of(before) > 0) {
      s.software_changes[k].moved = median_of(after) / median_of(before) - 1;
    }
  }
  return cuts;
}

void name_hosts(TrendVerdict& v) {
  struct Tally {
    std::size_t judged = 0;
    std::vector<const SeriesTrend*> drifted;
  };
  std::map<std::string, Tally> hosts;
  for (const auto& s : v.series) {
    std::stringstream list(s.hosts);
    for (std::string h; std::getline(list, h, ',');) {
      auto& t = hosts[h];
      if (s.judged()) {
        ++t.judged;
      }
      if (s.drifted()) {
        t.drifted.push_back(&s);
      }
    }
  }
  std::vector<HostDrift> named;
  std::size_t judged_hosts = 0;
  for (const auto& [host, t] : hosts) {
    judged_hosts += t.judged > 0 ? 1 : 0;
    if (t.judged == 0 || t.drifted.size() < t.judged) {
      continue;
    }
    HostDrift d{host, {}, {}, {}, {}, 0};
    for (const auto* s : t.drifted) {
      d.series.push_back(s->series);
      for (const auto& st : s->stretches) {
        if (st.verdict != StretchVerdict::Drift) {
          continue;
        }
        const auto& p = *s->points[st.onset].run;
        if (d.onset_utc.empty() || p.started_utc < d.onset_utc) {
          d.onset_utc = p.started_utc;
          d.onset_label = p.label;
          d.onset_run = p.run_id;
        }
        if (std::abs(st.moved) > std::abs(d.moved)) {
          d.moved = st.moved;
        }
      }
    }
    named.push_back(std::move(d));
  }
  if (judged_hosts >= 2 && named.size() == judged_hosts) {
    v.fleet_shift = true;  // everything moved: no host can be told from the others
    return;
  }
  v.hosts = std::move(named);
}

void fleet_software(TrendVerdict& v) {
  struct Tally {
    std::size_t series = 0;
    std::string first_utc;
    std::vector<double> moved;
  };
  std::map<std::pair<std::string, std::string>, Tally> changes;
  for (const auto& s : v.series) {
    for (const auto& c : s.software_changes) {
      auto& t = changes[{c.was, c.now}];
      ++t.series;
      if (t.first_utc.empty() || c.started_utc < t.first_utc) {
        t.first_utc = c.started_utc;
      }
      if (c.moved) {
        t.moved.push_back(*c.moved);
      }
    }
  }
  for (const auto& [what, t] : changes) {
    FleetSoftwareChange f{what.first, what.second, t.first_utc, t.series, std::nullopt};
    if (!t.moved.empty()) {
      f.median_moved = median_of(t.moved);
    }
    v.software.push_back(f);
  }
}

}  // namespace

TrendVerdict judge_trend(const HistoryIndex& index, const TrendOptions& options) {
  TrendVerdict v;
  v.options = options;
  v.problems = index.problems();
  v.series = group_series(index, v.duplicate_runs);
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> cuts;
  for (auto& s : v.series) {
    cuts.push_back(cut_at_software(s));
    v.stretches_tested += cuts.back().size();
  }
  const double alpha = options.alarm_rate / static_cast<double>(std::max<std::size_t>(1, v.stretches_tested));
  std::vector<Gap> gaps;
  for (std::size_t k = 0; k < v.series.size(); ++k) {
    auto& s = v.series[k];
    for (const auto& [first, last] : cuts[k]) {
      s.stretches.push_back(test_stretch(s.points, first, last, alpha, options.threshold));
      if (s.stretches.back().verdict == StretchVerdict::TooShort) {
        ++v.too_short;
      }
    }
    if (!s.judged()) {
      const auto& st = s.stretches.back();
      gaps.push_back(
          {Lack::Unjudgeable, fmt::format("{}: {} run(s) on its latest software, {} needed to tell a change at {:.2g}",
                                          s.series, st.runs, st.needed_runs, alpha)});
    }
  }
  for (const auto& s : v.series) {
    if (!s.points.back().value) {
      gaps.push_back({Lack::Absent, fmt::format("{}: its latest run ({}) measured nothing", s.series,
                                                s.points.back().run->started_utc)});
    }
    v.drifted_series += s.drifted() ? 1U : 0U;
  }
  if (options.max_age_s) {
    for (const auto& s : v.series) {
      const auto& latest = s.points.back().run->started_utc;
      const auto t = epoch_of(latest);
      if (!t || options.now_s - *t > *options.max_age_s) {
        gaps.push_back({Lack::Stale, fmt::format("{}: its latest run started {}, longer ago than --max-age", s.series,
                                                 latest.empty() ? std::string{"at no known time"} : latest)});
      }
    }
  }
  for (const auto& p : v.problems) {
    if (p.unreadable) {
      gaps.push_back({Lack::Inconsistent, fmt::format("{}: a result that cannot be read: {}", p.path, p.message)});
    }
  }
  if (v.series.empty()) {
    gaps.push_back({Lack::Absent, "no result row in the history"});
  }
  name_hosts(v);
  fleet_software(v);
  // --partial judges what could be judged: with nothing judged there is nothing to pass on, whatever the flag.
  const bool any_judged =
      std::any_of(v.series.begin(), v.series.end(), [](const SeriesTrend& s) { return s.judged(); });
  if (!any_judged && !v.series.empty()) {
    gaps.insert(gaps.begin(), {Lack::Unjudgeable, "no series has runs enough to be judged"});
  }
  v.ruling = rule_on(Stakes::Comparison, std::move(gaps), options.partial && any_judged ? "--partial" : "");
  return v;
}

}  // namespace ccbench::report
