#include "ccbench/rank_times.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ccbench/result.hpp"
#include "ccbench/statistics.hpp"

namespace ccbench {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : percentile(v, 50);
}

std::string where_rank(const ResultDocument& doc, int rank) {
  const auto& b = doc.environment.binding;
  const auto it = std::find_if(b.begin(), b.end(), [rank](const BindingRecord& r) { return r.rank == rank; });
  if (it == b.end()) {
    return fmt::format("rank {}", rank);
  }
  const std::string device = it->gpu ? fmt::format("GPU {}", *it->gpu) : fmt::format("CPUs {}", it->cpus);
  return fmt::format("rank {} ({}, {})", rank, it->host, device);
}

}  // namespace

std::vector<RankTimes> summarize_ranks(const std::vector<std::vector<double>>& by_rank,
                                       const std::vector<int>& world_ranks) {
  std::vector<RankTimes> out(by_rank.size());
  std::size_t samples = by_rank.empty() ? 0 : by_rank.front().size();
  for (const auto& times : by_rank) {
    samples = std::min(samples, times.size());
  }
  for (std::size_t g = 0; g < by_rank.size(); ++g) {
    RankTimes& t = out[g];
    t.rank = g < world_ranks.size() ? world_ranks[g] : static_cast<int>(g);
    t.samples_s.assign(by_rank[g].begin(), by_rank[g].begin() + static_cast<std::ptrdiff_t>(samples));
    if (samples == 0) {
      continue;
    }
    const Summary s = summarize(t.samples_s);
    t.p50_s = s.p50;
    t.mean_s = s.mean;
    t.min_s = s.min;
    t.max_s = s.max;
    t.cv = s.mean > 0 ? s.stdev / s.mean : 0.0;
  }
  // Per sample: the rank with the shortest time arrived last; the one with the longest waited longest (ties:
  // the lowest group rank).
  for (std::size_t i = 0; i < samples && !out.empty(); ++i) {
    std::size_t fastest = 0;
    std::size_t slowest = 0;
    for (std::size_t g = 1; g < out.size(); ++g) {
      fastest = out[g].samples_s[i] < out[fastest].samples_s[i] ? g : fastest;
      slowest = out[g].samples_s[i] > out[slowest].samples_s[i] ? g : slowest;
    }
    ++out[fastest].last;
    ++out[slowest].slowest;
  }
  return out;
}

std::vector<StragglerVerdict> straggler_verdicts(const std::vector<CaseResult>& results) {
  struct Tally {
    StragglerVerdict v;
    std::map<int, std::uint64_t> last;
    std::map<int, std::vector<double>> ratios;  // per rank: the others' median p50 over its own, case by case
    std::map<int, std::vector<double>> waits;   // ... and less its own
  };
  std::vector<Tally> groups;
  for (const auto& r : results) {
    if (r.per_rank.size() < 2) {
      continue;
    }
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Tally& t) { return t.v.group_id == r.group_id; });
    if (it == groups.end()) {
      groups.push_back({});
      it = groups.end() - 1;
      it->v.group_id = r.group_id;
      it->v.ranks = static_cast<int>(r.per_rank.size());
    }
    for (const auto& t : r.per_rank) {
      it->v.samples += t.last;
      it->last[t.rank] += t.last;
      std::vector<double> others;
      for (const auto& o : r.per_rank) {
        if (o.rank != t.rank) {
          others.push_back(o.p50_s);
        }
      }
      if (t.p50_s > 0) {
        it->ratios[t.rank].push_back(median_of(others) / t.p50_s);
      }
      it->waits[t.rank].push_back(median_of(others) - t.p50_s);
    }
  }
  std::vector<StragglerVerdict> out;
  for (auto& g : groups) {
    StragglerVerdict v = g.v;
    const auto most = std::max_element(g.last.begin(), g.last.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    v.rank = most->first;
    v.share = v.samples > 0 ? static_cast<double>(most->second) / static_cast<double>(v.samples) : 0.0;
    const double fair = 1.0 / static_cast<double>(v.ranks);
    v.threshold = fair + (1.0 - fair) / 2.0;
    v.wait_ratio = median_of(g.ratios[v.rank]);
    v.wait_s = median_of(g.waits[v.rank]);
    v.named = v.samples >= kStragglerMinSamples && v.share >= v.threshold && v.wait_s >= kStragglerMinWaitS;
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> straggler_findings(const ResultDocument& doc) {
  std::vector<std::string> out;
  for (const auto& v : straggler_verdicts(doc.results)) {
    const std::string share = fmt::format("{:.0f}% of {} samples (fair share {:.0f}%, named from {:.0f}%)",
                                          100 * v.share, v.samples, 100.0 / v.ranks, 100 * v.threshold);
    const std::string wait = fmt::format("{:.1f} us", v.wait_s * 1e6);
    if (v.named) {
      out.push_back(
          fmt::format("straggler in {}: {} arrived last in {}: the others waited {} for it ({:.2f}x its op "
                      "time)",
                      v.group_id, where_rank(doc, v.rank), share, wait, v.wait_ratio));
    } else {
      const bool few = v.samples < kStragglerMinSamples || v.share < v.threshold;
      out.push_back(fmt::format("per-rank times of {}: no straggler; {} arrived last most often, in {}{}", v.group_id,
                                where_rank(doc, v.rank), share,
                                few ? std::string{}
                                    : fmt::format(", but the others waited only {} for it (named from {:.0f} us)", wait,
                                                  kStragglerMinWaitS * 1e6)));
    }
  }
  return out;
}

}  // namespace ccbench
