// One result (an element of "results") to and from JSON: its statistics, samples, per-rank times and traffic.
#include <memory>
#include <stdexcept>

#include "ccbench/result_json.hpp"
#include "ccbench/traffic.hpp"
#include "result_json_detail.hpp"

namespace ccbench {

std::string_view name(CaseStatus status) {
  switch (status) {
    case CaseStatus::Ok:
      return "ok";
    case CaseStatus::Failed:
      return "failed";
    case CaseStatus::Skipped:
      return "skipped";
    case CaseStatus::TimedOut:
      return "timed_out";
  }
  return "failed";
}

std::string_view name(StopReason reason) {
  switch (reason) {
    case StopReason::FixedIters:
      return "fixed_iters";
    case StopReason::TargetCi:
      return "target_ci";
    case StopReason::TimeBudget:
      return "time_budget";
    case StopReason::MaxSamples:
      return "max_samples";
    case StopReason::NoiseFloor:
      return "noise_floor";
  }
  return "fixed_iters";
}

namespace {

constexpr double kUs = 1e6;

nlohmann::json summary_json(const Summary& s) {
  return {{"n", s.n},
          {"min_us", s.min * kUs},
          {"p50_us", s.p50 * kUs},
          {"mean_us", s.mean * kUs},
          {"p95_us", s.p95 * kUs},
          {"p99_us", s.p99 * kUs},
          {"p999_us", s.p999 * kUs},
          {"max_us", s.max * kUs},
          {"stdev_us", s.stdev * kUs},
          {"p50_ci95_lo_us", s.p50_ci95 ? nlohmann::json(s.p50_ci95->lo * kUs) : nlohmann::json(nullptr)},
          {"p50_ci95_hi_us", s.p50_ci95 ? nlohmann::json(s.p50_ci95->hi * kUs) : nlohmann::json(nullptr)}};
}

Summary summary_from(const nlohmann::json& j) {
  Summary s;
  s.n = j.at("n").get<std::uint64_t>();
  s.min = j.at("min_us").get<double>() / kUs;
  s.p50 = j.at("p50_us").get<double>() / kUs;
  s.mean = j.at("mean_us").get<double>() / kUs;
  s.p95 = j.at("p95_us").get<double>() / kUs;
  s.p99 = j.at("p99_us").get<double>() / kUs;
  s.p999 = j.value("p999_us", j.at("max_us").get<double>()) / kUs;  // 1.3.0; before, the closest is max
  s.max = j.at("max_us").get<double>() / kUs;
  s.stdev = j.at("stdev_us").get<double>() / kUs;
  const auto& lo = j.at("p50_ci95_lo_us");
  const auto& hi = j.at("p50_ci95_hi_us");
  // Below 6 samples there is no 95% CI: null from 1.6.0; before, min..max stood in for one.
  if (s.n >= 6 && !lo.is_null() && !hi.is_null()) {
    s.p50_ci95 = Interval{lo.get<double>() / kUs, hi.get<double>() / kUs};
  }
  return s;
}

}  // namespace

nlohmann::json case_to_json(const CaseResult& r) {
  const auto& coll = info(r.spec.collective);
  nlohmann::json samples_us = nlohmann::json::array();
  for (double s : r.samples_s) {
    samples_us.push_back(s * kUs);
  }
  nlohmann::json j{{"benchmark", r.benchmark},
                   {"backend", r.backend},
                   {"timing", name(r.timing)},
                   {"clock", r.clock},
                   {"op", coll.name},
                   {"dtype", name(r.spec.dtype)},
                   {"redop", coll.has_reduce_op ? nlohmann::json(name(r.spec.op)) : nlohmann::json(nullptr)},
                   {"root", coll.has_root ? nlohmann::json(r.spec.root) : nlohmann::json(nullptr)},
                   {"in_place", r.spec.in_place},
                   {"ranks", r.ranks},
                   {"nodes", r.nodes},
                   {"group", r.group},
                   {"group_id", r.group_id},
                   {"group_ranks", r.group_ranks},
                   {"group_hosts", r.group_hosts},
                   {"size_bytes", r.size_bytes},
                   {"count", r.spec.count},
                   {"ops_per_sample", r.ops_per_sample},
                   {"stop_reason", r.stop_reason ? nlohmann::json(name(*r.stop_reason)) : nlohmann::json(nullptr)},
                   {"time", r.time ? summary_json(*r.time) : nlohmann::json(nullptr)},
                   {"samples_us", samples_us},
                   {"bus_factor", r.bus_factor},
                   {"algbw_GBps", r.algbw_GBps},
                   {"busbw_GBps", r.busbw_GBps},
                   {"busbw_mean_GBps", r.busbw_mean_GBps},
                   {"peak_GBps", optional_json(r.peak_GBps)},
                   {"pct_of_peak", optional_json(r.pct_of_peak)},
                   {"peak_basis", r.peak_basis.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.peak_basis)},
                   {"wrong_elements", optional_json(r.wrong_elements)},
                   {"status", name(r.status)},
                   {"reason", r.reason},
                   {"elapsed_s", r.elapsed_s}};
  if (r.rdma) {  // 1.3.0, ib_write_* only
    j["rdma"] = rdma_to_json(*r.rdma);
    j["bw_peak_GBps"] = optional_json(r.bw_peak_GBps);
  }
  if (!r.per_rank.empty()) {  // 1.9.0, --per-rank only
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& t : r.per_rank) {
      nlohmann::json samples = nlohmann::json::array();
      for (const double x : t.samples_s) {
        samples.push_back(x * kUs);
      }
      ranks.push_back({{"rank", t.rank},
                       {"p50_us", t.p50_s * kUs},
                       {"mean_us", t.mean_s * kUs},
                       {"min_us", t.min_s * kUs},
                       {"max_us", t.max_s * kUs},
                       {"cv", t.cv},
                       {"last", t.last},
                       {"slowest", t.slowest},
                       {"samples_us", samples}});
    }
    j["per_rank"] = ranks;
  }
  if (!r.variant.empty()) {  // 1.5.0, --nccl-variants only
    j["variant"] = r.variant;
  }
  if (!r.registration.empty()) {  // 1.10.0, -R 1 or 2 only
    j["registration"] = r.registration;
  }
  if (r.spec.traffic) {  // 1.10.0, alltoallv only: where its per-peer sizes came from
    const Traffic& t = *r.spec.traffic;
    j["traffic"] =
        t.from_matrix()
            ? nlohmann::json{{"spread", t.spread}, {"matrix_file", t.matrix_file}, {"scale", t.scale}, {"dim", t.dim}}
            : nlohmann::json{{"spread", t.spread}};
  }
  return j;
}

CaseResult case_from_json(const nlohmann::json& j) {
  static constexpr TimingMode kModes[] = {TimingMode::Batch, TimingMode::PerOp, TimingMode::Graph};
  static constexpr CaseStatus kStatuses[] = {CaseStatus::Ok, CaseStatus::Failed, CaseStatus::Skipped,
                                             CaseStatus::TimedOut};
  static constexpr StopReason kReasons[] = {StopReason::FixedIters, StopReason::TargetCi, StopReason::TimeBudget,
                                            StopReason::MaxSamples, StopReason::NoiseFloor};
  CaseResult r;
  r.benchmark = j.at("benchmark").get<std::string>();
  r.backend = j.at("backend").get<std::string>();
  r.timing = enum_from(j.at("timing"), kModes, "timing");
  r.clock = j.at("clock").get<std::string>();
  const auto coll = parse_collective(j.at("op").get<std::string>());
  if (!coll) {
    throw std::runtime_error("unknown op " + j.at("op").dump());
  }
  r.spec.collective = *coll;
  const auto dtype = parse_dtype(j.at("dtype").get<std::string>());
  if (!dtype) {
    throw std::runtime_error("unknown dtype " + j.at("dtype").dump());
  }
  r.spec.dtype = *dtype;
  if (!j.at("redop").is_null()) {
    r.spec.op = parse_reduce_op(j.at("redop").get<std::string>()).value_or(ReduceOp::Sum);
  }
  r.spec.root = j.at("root").is_null() ? 0 : j.at("root").get<int>();
  r.spec.in_place = j.at("in_place").get<bool>();
  r.spec.count = j.at("count").get<std::uint64_t>();
  r.ranks = j.at("ranks").get<int>();
  r.nodes = j.at("nodes").get<int>();
  r.group = j.at("group").get<std::string>();
  // Added in 1.1.0; a 1.0 document is one world group.
  r.group_id = j.value("group_id", r.group);
  r.group_ranks = j.value("group_ranks", std::vector<int>{});
  r.group_hosts = j.value("group_hosts", std::vector<std::string>{});
  r.size_bytes = j.at("size_bytes").get<std::uint64_t>();
  r.ops_per_sample = j.at("ops_per_sample").get<std::uint64_t>();
  if (!j.at("stop_reason").is_null()) {
    r.stop_reason = enum_from(j.at("stop_reason"), kReasons, "stop_reason");
  }
  if (!j.at("time").is_null()) {
    r.time = summary_from(j.at("time"));
  }
  for (const auto& s : j.at("samples_us")) {
    r.samples_s.push_back(s.get<double>() / kUs);
  }
  r.bus_factor = j.at("bus_factor").get<double>();
  r.algbw_GBps = j.at("algbw_GBps").get<double>();
  r.busbw_GBps = j.at("busbw_GBps").get<double>();
  r.busbw_mean_GBps = j.at("busbw_mean_GBps").get<double>();
  r.peak_GBps = optional_from<double>(j.at("peak_GBps"));
  r.pct_of_peak = optional_from<double>(j.at("pct_of_peak"));
  r.peak_basis = j.at("peak_basis").is_null() ? "" : j.at("peak_basis").get<std::string>();
  r.wrong_elements = optional_from<std::uint64_t>(j.at("wrong_elements"));
  r.status = enum_from(j.at("status"), kStatuses, "status");
  r.reason = j.at("reason").get<std::string>();
  r.elapsed_s = j.at("elapsed_s").get<double>();
  if (j.contains("rdma")) {
    r.rdma = rdma_from_json(j.at("rdma"));
    r.bw_peak_GBps = optional_from<double>(j.value("bw_peak_GBps", nlohmann::json(nullptr)));
  }
  r.variant = j.value("variant", std::string{});
  r.registration = j.value("registration", std::string{});
  if (const auto t = j.find("traffic"); t != j.end()) {  // 1.10.0: the matrix's values are not kept, its file is
    auto traffic = std::make_shared<Traffic>();
    traffic->spread = t->at("spread").get<double>();
    traffic->matrix_file = t->value("matrix_file", std::string{});
    traffic->scale = t->value("scale", 1.0);
    traffic->dim = t->value("dim", 0);
    r.spec.traffic = std::move(traffic);
  }
  for (const auto& t : j.value("per_rank", nlohmann::json::array())) {  // 1.9.0
    RankTimes rt;
    rt.rank = t.at("rank").get<int>();
    rt.p50_s = t.at("p50_us").get<double>() / kUs;
    rt.mean_s = t.at("mean_us").get<double>() / kUs;
    rt.min_s = t.at("min_us").get<double>() / kUs;
    rt.max_s = t.at("max_us").get<double>() / kUs;
    rt.cv = t.at("cv").get<double>();
    rt.last = t.at("last").get<std::uint64_t>();
    rt.slowest = t.at("slowest").get<std::uint64_t>();
    for (const auto& x : t.at("samples_us")) {
      rt.samples_s.push_back(x.get<double>() / kUs);
    }
    r.per_rank.push_back(std::move(rt));
  }
  return r;
}

}  // namespace ccbench
