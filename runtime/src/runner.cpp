#include "ccbench/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ccbench/errors.hpp"
#include "ccbench/rates.hpp"

namespace ccbench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The interval's relative half-width at the latest earlier decision with at most half of `n`
// samples; unset before there was one.
std::optional<double> width_with_half(const std::vector<std::pair<std::uint64_t, double>>& earlier, std::uint64_t n) {
  std::optional<double> width;
  for (const auto& [samples, w] : earlier) {
    if (2 * samples <= n) {
      width = w;
    }
  }
  return width;
}

}  // namespace

SamplingPolicy sampling_policy(const RunConfig& config) {
  SamplingPolicy p;
  p.timing = config.timing;
  p.warmup_iters = config.warmup_iters;
  p.batch_ops = config.batch_ops;
  p.fixed_samples = config.iters;
  p.target_ci = config.target_ci;
  p.time_budget_s = config.time_budget_s;
  p.min_samples = config.min_samples;
  p.max_samples = config.max_samples;
  p.check = config.check;
  p.keep_samples = config.keep_samples;
  p.per_rank = config.per_rank;
  return p;
}

double budget_samples(const SamplingPolicy& policy, std::uint64_t n, double elapsed_s) {
  const double seconds = policy.time_budget_s.value_or(SamplingPolicy::kAutoBudgetMaxS);
  const double by_time =
      elapsed_s > 0.0 ? static_cast<double>(n) * seconds / elapsed_s : std::numeric_limits<double>::infinity();
  return policy.time_budget_s ? by_time : std::min(by_time, static_cast<double>(SamplingPolicy::kAutoBudgetSamples));
}

bool budget_spent(const SamplingPolicy& policy, std::uint64_t n, double elapsed_s) {
  return elapsed_s >= policy.time_budget_s.value_or(SamplingPolicy::kAutoBudgetMaxS) ||
         (!policy.time_budget_s && n >= SamplingPolicy::kAutoBudgetSamples);
}

std::optional<StopReason> stop_decision(const SamplingPolicy& policy, const Summary& summary, double elapsed_s,
                                        std::optional<double> earlier_half_width) {
  if (policy.fixed_samples) {
    return summary.n >= *policy.fixed_samples ? std::optional(StopReason::FixedIters) : std::nullopt;
  }
  if (summary.n >= policy.max_samples) {
    return StopReason::MaxSamples;
  }
  if (summary.n < policy.min_samples) {
    return std::nullopt;
  }
  const double half_width = relative_ci_halfwidth(summary);
  if (half_width <= policy.target_ci) {
    return StopReason::TargetCi;
  }
  if (budget_spent(policy, summary.n, elapsed_s)) {
    return StopReason::TimeBudget;
  }
  // An interval wider than kNoiseFloorWidth targets says little of the median: it keeps the
  // budget.
  if (half_width > SamplingPolicy::kNoiseFloorWidth * policy.target_ci) {
    return std::nullopt;
  }
  if (earlier_half_width && half_width > SamplingPolicy::kPlateauRatio * *earlier_half_width) {
    return StopReason::NoiseFloor;
  }
  // Samples the budget (and --max-samples) has room for at the pace so far; the interval narrows
  // as 1/sqrt(n), so if even that many would leave it wider than the target, more sampling only
  // spends time.
  const auto n = static_cast<double>(summary.n);
  const double reachable =
      std::min(budget_samples(policy, summary.n, elapsed_s), static_cast<double>(policy.max_samples));
  if (half_width * std::sqrt(n / reachable) > policy.target_ci) {
    return StopReason::NoiseFloor;
  }
  return std::nullopt;
}

std::uint64_t batch_ops_for(double per_op_s) {
  if (!(per_op_s > 0.0)) {
    return SamplingPolicy::kMaxBatchOps;
  }
  const double ops = std::ceil(SamplingPolicy::kTargetSampleS / per_op_s);
  return static_cast<std::uint64_t>(std::clamp(ops, 1.0, static_cast<double>(SamplingPolicy::kMaxBatchOps)));
}

Runner::Runner(Group& group, Backend& backend, SamplingPolicy policy, Watchdog* watchdog)
    : m_group(group), m_backend(backend), m_policy(policy), m_watchdog(watchdog) {}

void Runner::progress() noexcept {
  if (m_watchdog != nullptr) {
    m_watchdog->kick();
  }
}

std::uint64_t Runner::verify() {
  m_backend.fill_pattern();
  m_group.barrier();
  m_backend.enqueue();
  m_backend.wait();
  std::uint64_t wrong = m_backend.count_wrong();
  m_group.sum_all(std::span(&wrong, 1));
  progress();
  return wrong;
}

// The first op of a case runs alone and is waited for, so that connection set-up (NCCL connects
// lazily) and the first touch of fresh buffers land in no timed batch; the rest of the warm-up
// follows, untimed. Then the batch is calibrated, unless it is fixed.
std::uint64_t Runner::warm_up_and_calibrate() {
  m_group.barrier();
  m_backend.enqueue();
  m_backend.wait();
  for (std::uint64_t i = 1; i < m_policy.warmup_iters; ++i) {
    m_backend.enqueue();
    progress();  // a long warm-up (-w) is progress, not a hang
  }
  m_backend.wait();
  progress();
  if (m_policy.timing == TimingMode::PerOp) {
    return 1;
  }
  std::uint64_t ops = m_policy.batch_ops ? *m_policy.batch_ops : calibrate();
  if (!m_policy.batch_ops && streamed()) {
    ops = std::max(ops, m_backend.min_stream_ops());
  }
  if (m_policy.timing == TimingMode::Graph) {
    if (!m_backend.capture_graph(ops)) {
      throw UsageError("--timing graph: the " + m_backend.name() + " backend has no CUDA graphs; use --backend nccl");
    }
    m_backend.launch_graph();  // the first launch uploads the graph: untimed
    m_backend.wait();
    progress();
  }
  return ops;
}

// Batches of 1, 2, 4, ... ops until one lasts kCalibrationS, then one more of that size; the
// faster of the two sets the batch (a stall only ever lengthens a batch). Each time is the MAX
// across ranks, so every rank takes the same steps.
std::uint64_t Runner::calibrate() {
  std::uint64_t ops = 1;
  double per_op = timed_batch(ops);
  while (per_op * static_cast<double>(ops) < SamplingPolicy::kCalibrationS && ops < SamplingPolicy::kMaxBatchOps) {
    ops = std::min(ops * 2, SamplingPolicy::kMaxBatchOps);
    per_op = timed_batch(ops);
  }
  per_op = std::min(per_op, timed_batch(ops));
  return batch_ops_for(per_op);
}

bool Runner::streamed() const { return m_backend.streams(m_policy.timing); }

double Runner::timed_batch(std::uint64_t ops) {
  double per_op = take_enqueued(ops);
  m_group.max_all(std::span(&per_op, 1));
  progress();
  return per_op;
}

double Runner::take_enqueued(std::uint64_t ops) {
  m_group.barrier();
  if (m_before_sample) {
    m_before_sample();
  }
  Timer& timer = m_backend.timer();
  timer.start();
  for (std::uint64_t i = 0; i < ops; ++i) {
    m_backend.enqueue();
  }
  return timer.stop() / static_cast<double>(ops);
}

double Runner::take_sample(std::uint64_t ops) {
  double per_op = 0.0;
  if (m_policy.timing == TimingMode::Graph) {
    m_group.barrier();
    if (m_before_sample) {
      m_before_sample();
    }
    Timer& timer = m_backend.timer();
    timer.start();
    m_backend.launch_graph();  // `ops` ops, captured
    per_op = timer.stop() / static_cast<double>(ops);
  } else {
    per_op = take_enqueued(ops);
  }
  progress();
  return per_op;
}

// Every rank's own samples of this chunk, appended to `by_rank` (group rank order) on every rank: the times
// cross as text, once per chunk, between the samples' timing windows.
void Runner::gather_per_rank(const std::vector<double>& chunk, std::vector<std::vector<double>>& by_rank) {
  std::string mine;
  for (const double s : chunk) {
    mine += fmt::format("{:a} ", s);  // hexadecimal: exact
  }
  const auto all = m_group.all_gather(mine);
  by_rank.resize(all.size());
  for (std::size_t g = 0; g < all.size(); ++g) {
    std::istringstream in(all[g]);
    std::string word;
    while (in >> word) {
      by_rank[g].push_back(std::strtod(word.c_str(), nullptr));
    }
  }
  progress();
}

// Samples to take before the next (collective) stop decision: about half as many as we have,
// never past the fixed count, the maximum, or what the time budget leaves room for.
std::uint64_t Runner::next_chunk(std::uint64_t have, double elapsed_s) const {
  if (m_policy.fixed_samples) {
    return *m_policy.fixed_samples - have;
  }
  if (have < m_policy.min_samples) {
    return m_policy.min_samples - have;
  }
  std::uint64_t chunk = std::max<std::uint64_t>(have / 2, 1);
  const double room = budget_samples(m_policy, have, elapsed_s) - static_cast<double>(have);
  if (room < static_cast<double>(chunk)) {
    chunk = static_cast<std::uint64_t>(std::max(room, 1.0));
  }
  return std::min(chunk, m_policy.max_samples - have);
}

Measurement Runner::measure(const CaseSpec& spec) {
  m_backend.prepare(spec);
  Measurement m;
  if (m_policy.check) {
    m.wrong_elements = verify();
  }
  m.ops_per_sample = warm_up_and_calibrate();
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> chunk;
  std::vector<std::pair<std::uint64_t, double>> half_widths;  // at each decision: samples, width
  double elapsed = 0.0;
  while (true) {
    chunk.assign(next_chunk(m.samples_s.size(), elapsed), 0.0);
    if (streamed()) {
      m_group.barrier();
      m_backend.stream_samples(m.ops_per_sample, chunk);
      progress();
    } else {
      for (double& sample : chunk) {
        sample = take_sample(m.ops_per_sample);
      }
    }
    if (m_policy.per_rank && !streamed()) {  // (a stream's receiving side times nothing: RDMA has no per-rank view)
      gather_per_rank(chunk, m.per_rank_s);
    }
    chunk.push_back(seconds_since(start));  // reduced with the samples: one collective per chunk
    m_group.max_all(chunk);
    progress();
    elapsed = chunk.back();
    m.samples_s.insert(m.samples_s.end(), chunk.begin(), chunk.end() - 1);
    const Summary summary = summarize(m.samples_s);
    if (const auto stop = stop_decision(m_policy, summary, elapsed, width_with_half(half_widths, summary.n))) {
      m.stop_reason = *stop;
      break;
    }
    half_widths.emplace_back(summary.n, relative_ci_halfwidth(summary));
  }
  m.elapsed_s = elapsed;
  return m;
}

void summarize_into(CaseResult& result, const Measurement& m, bool keep_samples) {
  const Summary s = summarize(m.samples_s);
  result.time = s;
  result.ops_per_sample = m.ops_per_sample;
  result.stop_reason = m.stop_reason;
  result.elapsed_s = m.elapsed_s;
  result.wrong_elements = m.wrong_elements;
  if (keep_samples) {
    result.samples_s = m.samples_s;
  }
  derive_rates(result);
  const bool wrong = m.wrong_elements.value_or(0) != 0;
  result.status = wrong ? CaseStatus::Failed : CaseStatus::Ok;
  if (wrong) {
    result.reason = "verification found wrong elements";
  }
}

}  // namespace ccbench
