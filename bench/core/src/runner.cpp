#include "ccbench/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  return p;
}

std::optional<StopReason> stop_decision(const SamplingPolicy& policy, const Summary& summary, double elapsed_s) {
  if (policy.fixed_samples) {
    return summary.n >= *policy.fixed_samples ? std::optional(StopReason::FixedIters) : std::nullopt;
  }
  if (summary.n >= policy.max_samples) {
    return StopReason::MaxSamples;
  }
  if (summary.n < policy.min_samples) {
    return std::nullopt;
  }
  if (relative_ci_halfwidth(summary) <= policy.target_ci) {
    return StopReason::TargetCi;
  }
  if (elapsed_s >= policy.time_budget_s) {
    return StopReason::TimeBudget;
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

// Warm-up ops are timed as one batch; their per-op time (MAX across ranks) sets the batch.
std::uint64_t Runner::warm_up_and_calibrate() {
  const std::uint64_t warmup = std::max<std::uint64_t>(m_policy.warmup_iters, 1);
  m_group.barrier();
  Timer& timer = m_backend.timer();
  timer.start();
  for (std::uint64_t i = 0; i < warmup; ++i) {
    m_backend.enqueue();
  }
  double per_op = timer.stop() / static_cast<double>(warmup);
  m_group.max_all(std::span(&per_op, 1));
  progress();
  if (m_policy.timing == TimingMode::PerOp) {
    return 1;
  }
  const std::uint64_t ops = m_policy.batch_ops.value_or(batch_ops_for(per_op));
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

double Runner::take_sample(std::uint64_t ops) {
  m_group.barrier();
  Timer& timer = m_backend.timer();
  timer.start();
  if (m_policy.timing == TimingMode::Graph) {
    m_backend.launch_graph();  // `ops` ops, captured
  } else {
    for (std::uint64_t i = 0; i < ops; ++i) {
      m_backend.enqueue();
    }
  }
  const double per_op = timer.stop() / static_cast<double>(ops);
  progress();
  return per_op;
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
  const double per_sample = elapsed_s / static_cast<double>(have);
  if (per_sample > 0.0) {
    const double room = (m_policy.time_budget_s - elapsed_s) / per_sample;
    chunk = std::min(chunk, static_cast<std::uint64_t>(std::max(room, 1.0)));
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
  double elapsed = 0.0;
  while (true) {
    chunk.assign(next_chunk(m.samples_s.size(), elapsed), 0.0);
    if (m_policy.timing == TimingMode::Batch && m_backend.streams()) {
      m_group.barrier();
      m_backend.stream_samples(m.ops_per_sample, chunk);
      progress();
    } else {
      for (double& sample : chunk) {
        sample = take_sample(m.ops_per_sample);
      }
    }
    chunk.push_back(seconds_since(start));  // reduced with the samples: one collective per chunk
    m_group.max_all(chunk);
    progress();
    elapsed = chunk.back();
    m.samples_s.insert(m.samples_s.end(), chunk.begin(), chunk.end() - 1);
    if (const auto stop = stop_decision(m_policy, summarize(m.samples_s), elapsed)) {
      m.stop_reason = *stop;
      break;
    }
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
  const auto bytes = static_cast<double>(result.size_bytes);
  result.algbw_GBps = s.p50 > 0.0 ? bytes / s.p50 / 1e9 : 0.0;
  result.busbw_GBps = result.algbw_GBps * result.bus_factor;
  result.busbw_mean_GBps = s.mean > 0.0 ? bytes / s.mean / 1e9 * result.bus_factor : 0.0;
  if (result.peak_GBps) {
    result.pct_of_peak = 100.0 * result.busbw_GBps / *result.peak_GBps;
  }
  const bool wrong = m.wrong_elements.value_or(0) != 0;
  result.status = wrong ? CaseStatus::Failed : CaseStatus::Ok;
  if (wrong) {
    result.reason = "verification found wrong elements";
  }
}

}  // namespace ccbench
