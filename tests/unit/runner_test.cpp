// The runner with a fake group (one rank) and a fake backend whose clock is scripted, so the
// sampling, stopping and summarising logic is tested without MPI or wall-clock time.
#include "ccbench/runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "ccbench/pattern.hpp"

namespace ccbench {
namespace {

class SoloGroup final : public Group {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  void barrier() override { ++barriers; }
  void max_all(std::span<double> /*values*/) override { ++reductions; }
  void sum_all(std::span<std::uint64_t> /*values*/) override {}
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine}; }
  int barriers = 0;
  int reductions = 0;
};

/// Each timer.stop() returns ops_since_start x the next scripted per-op time.
class ScriptedTimer final : public Timer {
 public:
  void start() override {
    ops = 0;
    running = true;
  }
  double stop() override {
    running = false;
    const double t = per_op.empty() ? 1e-3 : per_op.front();
    if (per_op.size() > 1) {
      per_op.pop_front();
    }
    return t * static_cast<double>(ops);
  }
  [[nodiscard]] std::string clock() const override { return "scripted"; }
  std::deque<double> per_op;
  std::uint64_t ops = 0;
  bool running = false;
};

/// A one-rank all-reduce is a copy; `corrupt` makes it wrong.
class FakeBackend final : public Backend {
 public:
  [[nodiscard]] std::string name() const override { return "fake"; }
  [[nodiscard]] std::map<std::string, std::string> versions() const override { return {}; }
  [[nodiscard]] std::string device_bus_id() const override { return {}; }
  [[nodiscard]] Support supports(const CaseSpec& /*spec*/) const override { return {}; }
  void prepare(const CaseSpec& spec) override {
    m_spec = spec;
    in.assign(spec.count, 0.0F);
    out.assign(spec.count, 0.0F);
  }
  void fill_pattern() override { fill_input(m_spec, 1, 0, in.data()); }
  void enqueue() override {
    ++m_timer.ops;
    ++enqueued;
    events.emplace_back(m_timer.running ? "timed op" : "untimed op");
    std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
    if (corrupt) {
      out[0] += 1.0F;
    }
  }
  void wait() override { events.emplace_back("wait"); }
  std::uint64_t count_wrong() override { return ccbench::count_wrong(m_spec, 1, 0, out.data()); }
  Timer& timer() override { return m_timer; }
  [[nodiscard]] bool streams(TimingMode timing) const override {
    return streaming && (timing == TimingMode::Batch || (timing == TimingMode::PerOp && streams_per_op));
  }
  [[nodiscard]] std::uint64_t min_stream_ops() const override { return min_ops; }
  void stream_samples(std::uint64_t ops, std::span<double> per_op_s) override {
    streamed.push_back(per_op_s.size());
    enqueued += ops * per_op_s.size();
    std::fill(per_op_s.begin(), per_op_s.end(), 1e-3);
  }

  ScriptedTimer& scripted() { return m_timer; }
  std::vector<float> in;
  std::vector<float> out;
  bool corrupt = false;
  std::uint64_t enqueued = 0;
  std::vector<std::string> events;  // "untimed op", "timed op", "wait"
  bool streaming = false;           // streams(): samples come from stream_samples() in batch timing
  bool streams_per_op = false;      // ... and in per_op timing too (ib_write_lat's round trips)
  std::uint64_t min_ops = 1;
  std::vector<std::size_t> streamed;  // samples asked of each stream_samples() call

 private:
  CaseSpec m_spec;
  ScriptedTimer m_timer;
};

const CaseSpec kSpec{Collective::AllReduce, DType::Float32, ReduceOp::Sum, 0, false, 64};

TEST(Runner, FixedIterationsTakeExactlyThatManySamples) {
  SoloGroup group;
  FakeBackend backend;
  SamplingPolicy policy;
  policy.fixed_samples = 7;
  policy.batch_ops = 3;
  policy.warmup_iters = 2;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.samples_s.size(), 7U);
  EXPECT_EQ(m.ops_per_sample, 3U);
  EXPECT_EQ(m.stop_reason, StopReason::FixedIters);
  EXPECT_EQ(backend.enqueued, 2U + 7U * 3U);
  EXPECT_FALSE(m.wrong_elements);
  for (double s : m.samples_s) {
    EXPECT_DOUBLE_EQ(s, 1e-3);  // per op: the batch time divided by its ops
  }
}

constexpr double kSample = SamplingPolicy::kTargetSampleS;

TEST(Runner, CalibratesBatchToTheTargetSampleTime) {
  SoloGroup group;
  FakeBackend backend;
  backend.scripted().per_op = {kSample / 4.096};  // -> ceil(4.096) = 5 ops per sample
  SamplingPolicy policy;
  policy.fixed_samples = 2;
  EXPECT_EQ(Runner(group, backend, policy).measure(kSpec).ops_per_sample, 5U);
  EXPECT_EQ(batch_ops_for(5 * kSample), 1U);
  EXPECT_EQ(batch_ops_for(0.0), SamplingPolicy::kMaxBatchOps);
}

// ib_write_bw: a chunk's samples are one stream of ops (no meeting between samples), and a calibrated sample
// holds at least what the backend can have in flight; a --batch the user gave stays as given.
TEST(Runner, StreamingBackendTakesEachChunkAsOneStream) {
  SoloGroup group;
  FakeBackend backend;
  backend.streaming = true;
  backend.min_ops = 64;
  SamplingPolicy policy;
  policy.fixed_samples = 7;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.samples_s.size(), 7U);
  EXPECT_EQ(m.ops_per_sample, 64U);
  EXPECT_EQ(backend.streamed, std::vector<std::size_t>{7});
  policy.batch_ops = 3;
  backend.streamed.clear();
  EXPECT_EQ(Runner(group, backend, policy).measure(kSpec).ops_per_sample, 3U);
  EXPECT_EQ(backend.streamed, std::vector<std::size_t>{7});
  policy.timing = TimingMode::PerOp;
  backend.streamed.clear();
  (void)Runner(group, backend, policy).measure(kSpec);
  EXPECT_TRUE(backend.streamed.empty());  // per_op timing times each op on its own
}

// ib_write_lat: per_op samples are single round trips of one back-to-back run, as perftest's
// iterations are, not round trips each after a meeting of the two sides.
TEST(Runner, PerOpSamplesComeFromOneStreamWhereTheBackendStreamsThem) {
  SoloGroup group;
  FakeBackend backend;
  backend.streaming = true;
  backend.streams_per_op = true;
  backend.min_ops = 64;
  SamplingPolicy policy;
  policy.timing = TimingMode::PerOp;
  policy.fixed_samples = 9;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.ops_per_sample, 1U);  // one op per sample whatever can be in flight
  EXPECT_EQ(m.samples_s.size(), 9U);
  EXPECT_EQ(backend.streamed, std::vector<std::size_t>{9});
}

TEST(Runner, FirstOpOfACaseIsUntimedAndWaitedForBeforeCalibration) {
  for (const std::uint64_t warmup : {0U, 1U, 5U}) {
    SoloGroup group;
    FakeBackend backend;
    SamplingPolicy policy;
    policy.warmup_iters = warmup;
    policy.fixed_samples = 1;
    Runner(group, backend, policy).measure(kSpec);
    ASSERT_GE(backend.events.size(), 3U);
    EXPECT_EQ(backend.events[0], "untimed op") << "warm-up " << warmup;
    EXPECT_EQ(backend.events[1], "wait") << "warm-up " << warmup;
    // Every warm-up op is untimed and waited for before the first timed op.
    const auto first_timed = std::find(backend.events.begin(), backend.events.end(), "timed op");
    ASSERT_NE(first_timed, backend.events.end());
    EXPECT_EQ(*(first_timed - 1), "wait");
    const auto untimed = static_cast<std::uint64_t>(std::count(backend.events.begin(), first_timed, "untimed op"));
    EXPECT_EQ(untimed, std::max<std::uint64_t>(warmup, 1));
  }
}

TEST(Runner, CalibrationBatchGrowsUntilItLastsHalfASample) {
  SoloGroup group;
  FakeBackend backend;
  // Batches of 1, 2 and 4 ops last under half a sample; 8 ops do not, and are timed twice.
  backend.scripted().per_op = {kSample / 8.192};
  SamplingPolicy policy;
  policy.warmup_iters = 1;
  policy.fixed_samples = 1;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.ops_per_sample, 9U);  // ceil(8.192)
  EXPECT_EQ(backend.enqueued, 1U + (1U + 2U + 4U + 8U + 8U) + 9U);
}

TEST(Runner, OneSlowCalibrationBatchDoesNotSetTheBatch) {
  SoloGroup group;
  FakeBackend backend;
  // The batch of 4 stalls (four samples' time per op); its repeat runs at the steady pace.
  backend.scripted().per_op = {kSample / 4.096, kSample / 4.096, 4 * kSample, kSample / 4.096};
  SamplingPolicy policy;
  policy.fixed_samples = 1;
  EXPECT_EQ(Runner(group, backend, policy).measure(kSpec).ops_per_sample, 5U);
}

TEST(Runner, FixedBatchSkipsCalibration) {
  SoloGroup group;
  FakeBackend backend;
  SamplingPolicy policy;
  policy.batch_ops = 4;
  policy.warmup_iters = 3;
  policy.fixed_samples = 2;
  Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(backend.enqueued, 3U + 2U * 4U);
  EXPECT_EQ(group.reductions, 1);  // the one chunk: no calibration batch was reduced
}

TEST(Runner, PerOpTimingTakesOneOpPerSample) {
  SoloGroup group;
  FakeBackend backend;
  SamplingPolicy policy;
  policy.timing = TimingMode::PerOp;
  policy.fixed_samples = 4;
  EXPECT_EQ(Runner(group, backend, policy).measure(kSpec).ops_per_sample, 1U);
}

TEST(Runner, StopsOnTargetCiWhenSamplesAreSteady) {
  SoloGroup group;
  FakeBackend backend;  // every op 1 ms: the CI has zero width
  SamplingPolicy policy;
  policy.min_samples = 10;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.stop_reason, StopReason::TargetCi);
  EXPECT_EQ(m.samples_s.size(), 10U);
  EXPECT_EQ(group.reductions, 3);  // two calibration batches + one chunk: one collective per chunk
}

/// 400 ops alternating 1 ms and 3 ms: the median's interval never narrows.
void script_noisy(FakeBackend& backend) {
  for (int i = 0; i < 400; ++i) {
    backend.scripted().per_op.push_back(i % 2 == 0 ? 1e-3 : 3e-3);
  }
}

TEST(Runner, NoisySamplesRunIntoMaxSamples) {
  SoloGroup group;
  FakeBackend backend;
  script_noisy(backend);
  SamplingPolicy policy;
  policy.batch_ops = 1;
  policy.max_samples = 50;
  policy.time_budget_s = 1e9;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.stop_reason, StopReason::MaxSamples);
  EXPECT_EQ(m.samples_s.size(), 50U);
}

// The default budget: 50 samples' time at the pace so far, so a size whose interval will not
// narrow gives up after 50 samples (12.5 ms of 0.25 ms samples) rather than after 1 s.
TEST(Runner, AutoBudgetEndsANoisySizeAfterFiftySamples) {
  SoloGroup group;
  FakeBackend backend;
  script_noisy(backend);
  SamplingPolicy policy;
  policy.batch_ops = 1;
  ASSERT_FALSE(policy.time_budget_s);
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.stop_reason, StopReason::TimeBudget);
  EXPECT_EQ(m.samples_s.size(), SamplingPolicy::kAutoBudgetSamples);  // chunks end at 10 15 22 33 49 50
}

TEST(Runner, CheckCountsWrongElements) {
  SoloGroup group;
  FakeBackend backend;
  SamplingPolicy policy;
  policy.fixed_samples = 1;
  policy.check = true;
  EXPECT_EQ(Runner(group, backend, policy).measure(kSpec).wrong_elements, 0U);
  backend.corrupt = true;
  EXPECT_EQ(Runner(group, backend, policy).measure(kSpec).wrong_elements, 1U);
}

TEST(StopDecision, RulesInOrder) {
  SamplingPolicy p;
  p.min_samples = 10;
  p.max_samples = 100;
  p.time_budget_s = 1.0;
  Summary s;
  s.p50 = 1.0;
  s.p50_ci95 = {0.95, 1.05};  // +-5%: 250 samples reach +-1%, and the budget has room for 1000
  s.n = 5;
  EXPECT_FALSE(stop_decision(p, s, 5.0));  // below min samples, even past the budget
  s.n = 10;
  EXPECT_FALSE(stop_decision(p, s, 0.01));
  EXPECT_EQ(stop_decision(p, s, 1.0), StopReason::TimeBudget);
  s.p50_ci95 = {0.995, 1.005};
  EXPECT_EQ(stop_decision(p, s, 0.1), StopReason::TargetCi);
  s.p50_ci95 = {0.5, 1.5};
  s.n = 100;
  EXPECT_EQ(stop_decision(p, s, 0.1), StopReason::MaxSamples);
  p.fixed_samples = 200;
  EXPECT_FALSE(stop_decision(p, s, 100.0));  // fixed -n ignores the budget
}

TEST(StopDecision, NoiseFloorWhenTheBudgetCannotReachTheTarget) {
  SamplingPolicy p;
  p.min_samples = 10;
  p.time_budget_s = 1.0;
  Summary s;
  s.n = 10;
  s.p50 = 1.0;
  // 10 samples in 10 ms: the budget has room for 1000, which narrow +-4% to +-0.4%.
  s.p50_ci95 = {0.96, 1.04};
  EXPECT_FALSE(stop_decision(p, s, 0.01));
  // 10 samples in 100 ms: room for 100, which leave +-4% at +-1.3%: stop now.
  EXPECT_EQ(stop_decision(p, s, 0.1), StopReason::NoiseFloor);
  // +-20% is too wide to report at the noise floor: the budget is spent on it.
  s.p50_ci95 = {0.8, 1.2};
  EXPECT_FALSE(stop_decision(p, s, 0.1));
  EXPECT_EQ(stop_decision(p, s, 1.0), StopReason::TimeBudget);
  // A looser target is reached instead.
  s.p50_ci95 = {0.96, 1.04};
  p.target_ci = 0.05;
  EXPECT_EQ(stop_decision(p, s, 0.1), StopReason::TargetCi);
}

TEST(StopDecision, AutoBudgetIsFiftySamplesTimeAtMostOneSecond) {
  SamplingPolicy p;
  p.min_samples = 10;
  EXPECT_DOUBLE_EQ(budget_samples(p, 10, 0.01), 50.0);  // 1 ms a sample: 50 of them
  EXPECT_DOUBLE_EQ(budget_samples(p, 10, 0.5), 20.0);   // 50 ms a sample: what fits 1 s
  EXPECT_FALSE(budget_spent(p, 49, 0.049));
  EXPECT_TRUE(budget_spent(p, 50, 0.05));
  EXPECT_TRUE(budget_spent(p, 10, 1.0));
  p.time_budget_s = 3.0;
  EXPECT_DOUBLE_EQ(budget_samples(p, 10, 0.01), 3000.0);  // a budget given is seconds only
  EXPECT_FALSE(budget_spent(p, 50, 0.05));
  p.time_budget_s.reset();
  Summary s;
  s.p50 = 1.0;
  s.p50_ci95 = {0.8, 1.2};  // too wide for the noise floor: sampled to the budget
  s.n = 49;
  EXPECT_FALSE(stop_decision(p, s, 0.049));
  s.n = 50;
  EXPECT_EQ(stop_decision(p, s, 0.05), StopReason::TimeBudget);
  s.n = 10;
  EXPECT_EQ(stop_decision(p, s, 1.0), StopReason::TimeBudget);  // 10 samples of 100 ms spent the 1 s
  // +-4% after 10 samples: 50 samples would leave +-1.8%, so the auto budget stops at the noise
  // floor now, where a 1 s budget at 1 ms a sample (1000 samples: +-0.4%) keeps sampling.
  s.p50_ci95 = {0.96, 1.04};
  EXPECT_EQ(stop_decision(p, s, 0.01), StopReason::NoiseFloor);
  p.time_budget_s = 1.0;
  EXPECT_FALSE(stop_decision(p, s, 0.01));
  // --max-samples bounds the samples the noise-floor projection counts on, as the budget does.
  p.max_samples = 50;
  EXPECT_EQ(stop_decision(p, s, 0.01), StopReason::NoiseFloor);
}

TEST(StopDecision, NoiseFloorOnAPlateau) {
  SamplingPolicy p;
  p.min_samples = 10;
  p.time_budget_s = 1e9;  // the budget never runs out: only the plateau can stop it
  Summary s;
  s.n = 22;
  s.p50 = 1.0;
  s.p50_ci95 = {0.97, 1.03};
  EXPECT_FALSE(stop_decision(p, s, 1.0));                              // no earlier interval yet
  EXPECT_FALSE(stop_decision(p, s, 1.0, 0.05));                        // narrowed from +-5% to +-3%
  EXPECT_EQ(stop_decision(p, s, 1.0, 0.031), StopReason::NoiseFloor);  // +-3.1% to +-3%: a plateau
  s.p50_ci95 = {0.9, 1.1};
  EXPECT_FALSE(stop_decision(p, s, 1.0, 0.1));  // +-10% is too wide to report at the noise floor
}

TEST(Runner, DriftingSamplesStopAtTheNoiseFloor) {
  SoloGroup group;
  FakeBackend backend;
  // Two interleaved modes 3% apart: the median's interval spans both however many samples.
  for (int i = 0; i < 400; ++i) {
    backend.scripted().per_op.push_back(i % 2 == 0 ? 1.00e-3 : 1.03e-3);
  }
  SamplingPolicy policy;
  policy.batch_ops = 1;
  policy.time_budget_s = 1e9;
  const Measurement m = Runner(group, backend, policy).measure(kSpec);
  EXPECT_EQ(m.stop_reason, StopReason::NoiseFloor);
  EXPECT_EQ(m.samples_s.size(), 22U);  // decisions at 10, 15, 22: the first with an earlier half
}

TEST(Summarize, BandwidthsFromMedianAndMean) {
  CaseResult r;
  r.size_bytes = 1'000'000;
  r.bus_factor = 1.5;
  r.peak_GBps = 10.0;
  Measurement m;
  m.samples_s = {1e-3, 1e-3, 2e-3};  // median 1 ms, mean 4/3 ms
  summarize_into(r, m, true);
  EXPECT_DOUBLE_EQ(r.algbw_GBps, 1.0);
  EXPECT_DOUBLE_EQ(r.busbw_GBps, 1.5);
  EXPECT_NEAR(r.busbw_mean_GBps, 1.125, 1e-12);
  EXPECT_DOUBLE_EQ(*r.pct_of_peak, 15.0);
  EXPECT_EQ(r.samples_s.size(), 3U);
  EXPECT_EQ(r.status, CaseStatus::Ok);
  m.wrong_elements = 3;
  summarize_into(r, m, false);
  EXPECT_EQ(r.status, CaseStatus::Failed);
}

}  // namespace
}  // namespace ccbench
