// The fleet's level, its anchor and the reference a lane is judged against; the verdict's own queries and rule.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "fleet_internal.hpp"

namespace ccbench::report {

namespace detail {

double median_of(std::vector<double> v) {
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) {
    return *mid;
  }
  return (*std::max_element(v.begin(), mid) + *mid) / 2.0;
}

std::optional<double> figure(const FleetSweep::Case& c, bool latency, bool best, const FleetSweep& sweep,
                             const std::string& unit) {
  if (!c.measured()) {
    return std::nullopt;
  }
  double value = c.busbw_GBps;
  if (latency) {
    value = (best ? c.min_s : c.p50_s) * 1e6;
  } else if (best && c.min_s > 0.0 && c.p50_s > 0.0) {
    value = c.busbw_GBps * c.p50_s / c.min_s;
  }
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw InputError(sweep.files().at(c.file).path, "",
                     fmt::format("{} is ok with a {} of {:g} {}: not a measurement", c.group_id,
                                 latency ? "latency" : "busbw", value, unit));
  }
  return value;
}

std::optional<double> healthy_level(const std::vector<double>& goodness, double threshold) {
  if (goodness.empty()) {
    return std::nullopt;
  }
  std::vector<double> sorted = goodness;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  // A level that one case alone holds must stand twice the threshold clear of the next, else that case is
  // taken for noise (a sample lucky while a neighbour paused) and the level is looked for among the rest.
  std::size_t first = 0;
  while (first + 1 < sorted.size() && sorted[first + 1] < (1.0 - threshold) * sorted[first] &&
         sorted[first + 1] >= (1.0 - 2.0 * threshold) * sorted[first]) {
    ++first;
  }
  std::vector<double> top;
  for (std::size_t i = first; i < sorted.size() && sorted[i] >= (1.0 - threshold) * sorted[first]; ++i) {
    top.push_back(sorted[i]);
  }
  return median_of(std::move(top));
}

std::optional<double> anchor_of(FleetVerdict& v, const FleetOptions& options, const std::vector<double>& peaks,
                                std::size_t unknown, std::size_t measured) {
  if (options.reference) {
    v.anchor_basis = fmt::format("--reference {:g} {}", *options.reference, v.unit);
    return goodness(*options.reference, v.higher_is_better);
  }
  if (!v.higher_is_better) {
    v.anchor_basis = "a latency has no spec peak: give --reference US";
    return std::nullopt;
  }
  if (peaks.empty() || unknown > 0) {
    v.anchor_basis = fmt::format(
        "the spec peak is unknown for {} of the {} measured {}: give --reference GBPS, or run the bench with "
        "--peak-GBps",
        unknown, measured, v.grouped() ? "groups" : "pairs");
    return std::nullopt;
  }
  const double peak = median_of(peaks);
  v.anchor_basis = fmt::format("{:g}% of the spec peak {:.4g} GB/s (the median peak_GBps at the level)",
                               100.0 * options.expect_of_peak, peak);
  return options.expect_of_peak * peak;
}

std::optional<double> set_reference(FleetVerdict& v, std::optional<double> level, std::optional<double> anchor,
                                    bool anchor_is_level) {
  const auto value = [&](std::optional<double> g) {
    return g ? std::optional<double>(goodness(*g, v.higher_is_better)) : std::nullopt;  // its own inverse
  };
  const bool low = level && anchor && *level < (1.0 - v.threshold) * *anchor;
  std::optional<double> reference = level;
  if (level && anchor && !low) {
    // An operator's figure is the level itself; a spec's share is a floor under the fleet's own level.
    reference = anchor_is_level ? *anchor : std::max(*level, *anchor);
  }
  v.level.push_back(value(level));
  v.anchor.push_back(value(anchor));
  v.reference.push_back(value(reference));
  v.fleet_low.push_back(low);
  return reference;
}

}  // namespace detail

std::string FleetPair::verdict() const {
  if (!low) {
    return suspicious.empty() ? "ok" : "SUSPICIOUS";
  }
  if (across_split) {
    return "LOW (SPLIT)";
  }
  if (!explained_by.empty()) {
    return "LOW (BAD HOST " + explained_by + ")";
  }
  return cannot_tell ? "CANNOT TELL" : "BAD LINK";
}

std::string FleetGroup::verdict() const { return !low ? "ok" : explained ? "LOW (holds a BAD HOST)" : "LOW GROUP"; }

std::string lane_suffix(int lane, int lanes) { return lanes > 1 ? fmt::format(" (local rank {})", lane) : ""; }

std::string pair_name(const std::string& host_a, const std::string& host_b) {
  return fmt::format("{}<->{}", host_a, host_b);
}

std::vector<const FleetHost*> FleetVerdict::bad_hosts() const {
  std::vector<const FleetHost*> out;
  for (const auto& h : hosts) {
    if (h.bad) {
      out.push_back(&h);
    }
  }
  return out;
}

std::vector<const FleetPair*> FleetVerdict::bad_links() const {
  std::vector<const FleetPair*> out;
  for (const auto& p : pairs) {
    if (p.low && !p.across_split && p.explained_by.empty() && !p.cannot_tell) {
      out.push_back(&p);
    }
  }
  return out;
}

std::vector<const FleetPair*> FleetVerdict::cannot_tell() const {
  std::vector<const FleetPair*> out;
  for (const auto& p : pairs) {
    if (p.low && !p.across_split && p.explained_by.empty() && p.cannot_tell) {
      out.push_back(&p);
    }
  }
  return out;
}

std::vector<const FleetPair*> FleetVerdict::suspicious() const {
  std::vector<const FleetPair*> out;
  for (const auto& p : pairs) {
    if (!p.low && !p.suspicious.empty()) {
      out.push_back(&p);
    }
  }
  return out;
}

std::vector<const FleetGroup*> FleetVerdict::low_groups() const {
  std::vector<const FleetGroup*> out;
  for (const auto& g : groups) {
    if (g.low && !g.explained) {
      out.push_back(&g);
    }
  }
  return out;
}

bool FleetVerdict::any_fleet_low() const {
  return std::find(fleet_low.begin(), fleet_low.end(), true) != fleet_low.end();
}

bool FleetVerdict::anything_named() const {
  return any_fleet_low() || !splits.empty() || !bad_hosts().empty() || !bad_links().empty() || !low_groups().empty() ||
         !cannot_tell().empty() || !suspicious().empty();
}

std::string FleetVerdict::rule() const {
  const double pct = 100.0 * (1.0 - threshold);
  const std::string unit_noun = grouped() ? "group" : "pair";
  const std::string low_text = higher_is_better ? fmt::format("below {:g}% of the reference", pct)
                                                : fmt::format("above the reference latency / {:g}%", pct);
  const std::string sample = stat == "best" ? "of its fastest sample" : "of its median sample";
  const std::string level_text = fmt::format(
      "the fleet's level is the median of the {0}s within {1:g}% of the {2} one (a fault only slows a {0} down, so "
      "the {2} are the healthy ones, however many hosts are bad; a {0} alone at the top must stand {3:g}% clear of "
      "the next, else it is taken for noise and the level is found among the rest){4}",
      unit_noun, 100.0 * threshold, higher_is_better ? "fastest" : "quickest", 200.0 * threshold,
      grouped() ? ""
                : "; fastest pairs whose hosts are fewer than half the fleet and not all fine among themselves (3 "
                  "hosts at least) are no level unless the anchor confirms them: the level is then the rest's, and "
                  "those pairs, and any faster than their link's spec, are SUSPICIOUS (a loopback, one machine under "
                  "two names, a misplaced rank)");
  const bool anchored = std::any_of(anchor.begin(), anchor.end(), [](const auto& a) { return a.has_value(); });
  const std::string anchored_text =
      anchored ? fmt::format(
                     "the anchor is {}: the reference is {}, and a level "
                     "{} of the anchor is LOW as a whole (FLEET LOW: its {}s are then judged against the "
                     "level)",
                     anchor_basis,
                     anchor_basis.starts_with("--reference") ? "the anchor itself (an operator's figure is the level)"
                                                             : "the better of the level and the anchor",
                     higher_is_better ? fmt::format("below {:g}%", pct) : fmt::format("above the anchor / {:g}%", pct),
                     unit_noun)
               : fmt::format(
                     "there is no anchor ({}): the reference is the level, so a fleet slow everywhere reads as "
                     "fine",
                     anchor_basis);
  if (grouped()) {
    return fmt::format(
        "each group's {} {}; {}; {}; a group is LOW {}, or when it did not measure; a host is a BAD HOST when "
        "every one of its groups (2 at least: one per round) is LOW; a LOW group that holds no BAD HOST is a LOW "
        "GROUP (a slow link inside it, or a host slow in one round only)",
        metric, sample, level_text, anchored_text, low_text);
  }
  return fmt::format(
      "each pair's {} {}; {}; {}; a pair is LOW {}{}, or when it did not measure; hosts joined by pairs that are "
      "not LOW form parts, and two parts or more of 2 hosts or more are a SPLIT (fine inside, LOW between: a path "
      "they share); a host is a BAD HOST when more than half of its pairs with hosts not named already are LOW "
      "(2 such pairs at least; the worst host first; pairs across a SPLIT not counted); a LOW pair between two "
      "hosts that are not BAD HOSTs is a BAD LINK, unless one of them has no other pair measured (CANNOT TELL: "
      "one pair cannot tell the host from the link)",
      metric, sample, level_text, anchored_text, low_text, lanes > 1 ? " (per local rank)" : "");
}

}  // namespace ccbench::report
