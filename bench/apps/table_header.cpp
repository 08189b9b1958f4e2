#include "table_header.hpp"

#include <fmt/format.h>

#include "ccbench/runner.hpp"  // SamplingPolicy
#include "ccbench/version.hpp"

namespace ccbench {

TableHeader make_table_header(const HeaderFacts& f) {
  const RunConfig& c = f.config;
  const auto& versions = f.versions;
  const std::string& backend = f.backend;
  // The sampling policy's own figures, not copies of them.
  const std::string target = fmt::format("~{:g} ms", SamplingPolicy::kTargetSampleS * 1e3);
  TableHeader h;
  h.title = fmt::format("{}  {}  ({})", version_string(), f.coll.bench, f.coll.name);
  const auto lib = versions.find(backend);
  h.backend = lib == versions.end() ? backend : fmt::format("{} ({})", backend, lib->second);
  if (const auto why = versions.find("backend_choice"); why != versions.end() && backend != "nccl") {
    h.backend += fmt::format(" [{}]", why->second);  // a run that could have been on GPUs says why it is not
  }
  if (const auto granted = versions.find("nccl_registration"); granted != versions.end() && backend == "nccl") {
    h.registration = granted->second;  // -R: what NCCL registered (agreed across ranks), not what was asked
  }
  h.ranks = f.ranks;
  h.hosts = f.hosts;
  if (f.plan.all_pairs) {
    h.groups =
        fmt::format("--all-pairs: {} pair(s) of {} in {} round(s), the pairs of a round side by side", f.groups.size(),
                    f.hosts > 1 ? "hosts (local rank l with local rank l)" : "ranks on one host", f.plan.rounds.size());
  } else if (c.hosts_per_group > 0) {
    h.groups = fmt::format("--hosts-per-group {}: {} group(s) in {} round(s), the groups of a round side by side",
                           c.hosts_per_group, f.groups.size(), f.plan.rounds.size());
  } else if (c.split != Split::World) {
    h.groups = fmt::format("--split {}: {} group(s) side by side", name(c.split), f.groups.size());
  }
  const std::string batch = c.batch_ops ? fmt::format("{} ops per sample", *c.batch_ops)
                                        : fmt::format("ops per sample calibrated to {}", target);
  for (const auto& g : f.groups) {
    if (c.peak_GBps) {
      h.peaks.push_back(fmt::format("{:g} GB/s (--peak-GBps)", *c.peak_GBps));
      break;
    }
    if (const auto p = f.peaks.find(g.id); p != f.peaks.end()) {
      const std::string value = p->second.GBps ? fmt::format("{:g} GB/s", *p->second.GBps) : std::string{"unknown"};
      h.peaks.push_back(fmt::format("{}: {} ({})", g.id, value, p->second.basis));
    }
  }
  const std::string per_sample = c.timing == TimingMode::Batch ? batch
                                 : c.timing == TimingMode::Graph
                                     ? (c.batch_ops ? fmt::format("{} ops per CUDA graph launch", *c.batch_ops)
                                                    : fmt::format("ops per CUDA graph calibrated to {}", target))
                                     : std::string{"one op per sample"};
  h.timing = fmt::format("{} ({}), {}", name(c.timing), per_sample, f.clock);
  h.stopping = c.iters
                   ? fmt::format("{} samples per size", *c.iters)
                   : fmt::format(
                         "samples until the median's 95% CI is within ±{:g}% (at least {}, at most {} "
                         "per size; sooner at the noise floor)",
                         c.target_ci * 100, c.min_samples,
                         c.time_budget_s ? fmt::format("{:g} s", *c.time_budget_s)
                                         : fmt::format("{} samples' time or {:g} s", SamplingPolicy::kAutoBudgetSamples,
                                                       SamplingPolicy::kAutoBudgetMaxS));
  return h;
}

}  // namespace ccbench
