#pragma once
// The runner: warm-up, batch calibration, sampling and stopping for one case. It owns all
// timing decisions; the backend only enqueues ops and times them with its clock.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ccbench/backend.hpp"
#include "ccbench/config.hpp"
#include "ccbench/group.hpp"
#include "ccbench/result.hpp"
#include "ccbench/statistics.hpp"
#include "ccbench/watchdog.hpp"

namespace ccbench {

struct SamplingPolicy {
  TimingMode timing = TimingMode::Batch;
  std::uint64_t warmup_iters = 5;
  std::optional<std::uint64_t> batch_ops;      // unset: calibrated so a sample lasts ~kTargetSampleS
  std::optional<std::uint64_t> fixed_samples;  // -n: exactly this many samples
  double target_ci = 0.01;
  std::optional<double> time_budget_s;  // unset: kAutoBudgetSamples samples' time, at most kAutoBudgetMaxS
  std::uint64_t min_samples = 10;
  std::uint64_t max_samples = 100000;
  bool check = false;
  bool keep_samples = false;
  bool per_rank = false;  // keep every rank's own samples too (gathered once per chunk, outside the timing)

  static constexpr double kTargetSampleS = 2.5e-4;
  /// The calibration batch grows until it lasts this long: a per-op time from a handful of ops
  /// is mostly the noise of one op, and the batch size then varies from run to run.
  static constexpr double kCalibrationS = kTargetSampleS / 2;
  static constexpr std::uint64_t kMaxBatchOps = 10000;
  /// The default (auto) budget of a size: the time of this many samples at the pace so far, at
  /// most kAutoBudgetMaxS. It scales with the size's cost, so a noisy cheap size gives up after
  /// ~12 ms where a flat 1 s budget would keep sampling for a figure no steadier between runs.
  static constexpr std::uint64_t kAutoBudgetSamples = 50;
  static constexpr double kAutoBudgetMaxS = 1.0;
  /// The widest interval, in targets, that a stop at the noise floor accepts.
  static constexpr double kNoiseFloorWidth = 5.0;
  /// An interval that keeps more than this fraction of its width while the samples double has
  /// reached a plateau: the noise is not independent from sample to sample (drift, modes), and
  /// more samples will not narrow it (independent noise would leave ~0.71).
  static constexpr double kPlateauRatio = 0.9;
};

SamplingPolicy sampling_policy(const RunConfig& config);

/// Whether sampling stops after these samples (sorted, MAX across ranks) and elapsed seconds.
/// A pure function of values every rank holds identically, so every rank decides the same.
/// Besides the target and the budget it stops at the noise floor, once the median's interval is
/// within kNoiseFloorWidth targets: when it has stopped narrowing (`earlier_half_width`, its
/// relative half-width with at most half these samples, is hardly wider), or when, narrowing as
/// 1/sqrt(n), it would still be wider than the target once the budget is spent.
std::optional<StopReason> stop_decision(const SamplingPolicy& policy, const Summary& summary, double elapsed_s,
                                        std::optional<double> earlier_half_width = std::nullopt);

/// Samples the budget allows a size that took `elapsed_s` for its `n`, at that pace (infinite
/// before any time has passed).
double budget_samples(const SamplingPolicy& policy, std::uint64_t n, double elapsed_s);
/// Whether the budget is spent: its seconds, or with the auto budget kAutoBudgetSamples samples.
bool budget_spent(const SamplingPolicy& policy, std::uint64_t n, double elapsed_s);

/// Ops per sample for a measured per-op time: enough that a sample lasts kTargetSampleS.
std::uint64_t batch_ops_for(double per_op_s);

struct Measurement {
  std::optional<std::uint64_t> wrong_elements;  // summed across ranks; unset when not checked
  std::vector<double> samples_s;                // per op; MAX across ranks of each sample
  std::vector<std::vector<double>> per_rank_s;  // per_rank: each group rank's own, per op, in sample order
  std::uint64_t ops_per_sample = 1;
  StopReason stop_reason = StopReason::FixedIters;
  double elapsed_s = 0.0;
};

class Runner {
 public:
  /// `watchdog`, when given, is kicked after every sample, warm-up and check.
  Runner(Group& group, Backend& backend, SamplingPolicy policy, Watchdog* watchdog = nullptr);
  /// Runs one case (the backend must support it). Collective: every rank calls it.
  Measurement measure(const CaseSpec& spec);
  /// Called on this rank after each sample's barrier, before its timer starts (a test hook: a rank made late).
  void before_sample(std::function<void()> hook) { m_before_sample = std::move(hook); }

 private:
  std::uint64_t verify();
  std::uint64_t warm_up_and_calibrate();
  std::uint64_t calibrate();
  /// A timing whose samples come from one stream per chunk (Backend::streams).
  [[nodiscard]] bool streamed() const;
  double timed_batch(std::uint64_t ops);    // per op, MAX across ranks
  double take_enqueued(std::uint64_t ops);  // per op, this rank
  double take_sample(std::uint64_t ops);
  void gather_per_rank(const std::vector<double>& chunk, std::vector<std::vector<double>>& by_rank);
  [[nodiscard]] std::uint64_t next_chunk(std::uint64_t have, double elapsed_s) const;
  void progress() noexcept;

  Group& m_group;
  Backend& m_backend;
  SamplingPolicy m_policy;
  Watchdog* m_watchdog;
  std::function<void()> m_before_sample;
};

/// Summarize: statistics and bandwidths of a measurement (algbw = S / t, busbw = algbw x factor).
void summarize_into(CaseResult& result, const Measurement& m, bool keep_samples);

}  // namespace ccbench
