#include "ccbench/result_json.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "ccbench/binding.hpp"
#include "ccbench/traffic.hpp"

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

template <typename Enum, std::size_t N>
Enum enum_from(const nlohmann::json& j, const Enum (&values)[N], std::string_view what) {
  const auto text = j.get<std::string>();
  for (Enum v : values) {
    if (name(v) == text) {
      return v;
    }
  }
  throw std::runtime_error(fmt::format("unknown {} '{}'", what, text));
}

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

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> optional_from(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
}

nlohmann::json endpoint_json(const RdmaEndpoint& e) {
  return {{"rank", e.rank},
          {"host", e.host},
          {"device", e.device},
          {"port", e.port},
          {"link_layer", e.link_layer},
          {"gid_index", optional_json(e.gid_index)},
          {"gid", e.gid.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.gid)},
          {"gid_type", e.gid_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.gid_type)},
          {"lid", e.lid},
          {"rate_Gbps", optional_json(e.rate_Gbps)},
          {"active_mtu", e.active_mtu}};
}

RdmaEndpoint endpoint_from(const nlohmann::json& j) {
  RdmaEndpoint e;
  e.rank = j.at("rank").get<int>();
  e.host = j.at("host").get<std::string>();
  e.device = j.at("device").get<std::string>();
  e.port = j.at("port").get<int>();
  e.link_layer = j.at("link_layer").get<std::string>();
  e.gid_index = optional_from<int>(j.at("gid_index"));
  e.gid = j.at("gid").is_null() ? "" : j.at("gid").get<std::string>();
  e.gid_type = j.at("gid_type").is_null() ? "" : j.at("gid_type").get<std::string>();
  e.lid = j.at("lid").get<int>();
  e.rate_Gbps = optional_from<double>(j.at("rate_Gbps"));
  e.active_mtu = j.at("active_mtu").get<int>();
  return e;
}

}  // namespace

nlohmann::json rdma_to_json(const RdmaInfo& r) {
  nlohmann::json endpoints = nlohmann::json::array();
  for (const auto& e : r.endpoints) {
    endpoints.push_back(endpoint_json(e));
  }
  nlohmann::json j = {{"transport", r.transport}, {"mtu", r.mtu},       {"qps", r.qps},
                      {"tx_depth", r.tx_depth},   {"cq_mod", r.cq_mod}, {"inline_bytes", r.inline_bytes},
                      {"bidir", r.bidir},         {"mem", r.mem},       {"endpoints", endpoints}};
  if (r.run_bw_GBps) {
    j["run_bw_GBps"] = *r.run_bw_GBps;
  }
  if (r.posted_writes && r.posted_bytes) {  // 1.8.0
    j["posted_writes"] = *r.posted_writes;
    j["posted_bytes"] = *r.posted_bytes;
  }
  return j;
}

RdmaInfo rdma_from_json(const nlohmann::json& j) {
  RdmaInfo r;
  r.transport = j.at("transport").get<std::string>();
  r.mtu = j.at("mtu").get<int>();
  r.qps = j.at("qps").get<int>();
  r.tx_depth = j.at("tx_depth").get<int>();
  r.cq_mod = j.at("cq_mod").get<int>();
  r.inline_bytes = j.at("inline_bytes").get<int>();
  r.bidir = j.at("bidir").get<bool>();
  r.mem = j.at("mem").get<std::string>();
  r.run_bw_GBps = optional_from<double>(j.value("run_bw_GBps", nlohmann::json(nullptr)));
  r.posted_writes = optional_from<std::uint64_t>(j.value("posted_writes", nlohmann::json(nullptr)));
  r.posted_bytes = optional_from<std::uint64_t>(j.value("posted_bytes", nlohmann::json(nullptr)));
  for (const auto& e : j.at("endpoints")) {
    r.endpoints.push_back(endpoint_from(e));
  }
  return r;
}

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

nlohmann::json binding_to_json(const BindingRecord& b) {
  return {{"rank", b.rank},
          {"host", b.host},
          {"policy", name(b.policy)},
          {"applied", b.applied},
          {"numa_node", optional_json(b.numa_node)},
          {"cpus", b.cpus},
          {"memory", b.memory},
          {"gpu", optional_json(b.gpu)},
          {"nic", optional_json(b.nic)},
          {"nic_applied", optional_json(b.nic_applied)},
          {"note", b.note}};
}

BindingRecord binding_from_json(const nlohmann::json& j) {
  static constexpr BindPolicy kPolicies[] = {BindPolicy::None, BindPolicy::Auto};
  BindingRecord b;
  b.rank = j.at("rank").get<int>();
  b.host = j.at("host").get<std::string>();
  b.policy = enum_from(j.at("policy"), kPolicies, "binding policy");
  b.applied = j.at("applied").get<bool>();
  b.numa_node = optional_from<int>(j.at("numa_node"));
  b.cpus = j.at("cpus").get<std::string>();
  b.memory = j.at("memory").get<std::string>();
  b.gpu = optional_from<std::string>(j.at("gpu"));
  b.nic = optional_from<std::string>(j.at("nic"));
  b.nic_applied = optional_from<std::string>(j.at("nic_applied"));
  b.note = j.at("note").get<std::string>();
  return b;
}

nlohmann::json fabric_to_json(const HostFabric& h) {
  nlohmann::json moved = nlohmann::json::array();
  for (const auto& d : h.moved) {
    nlohmann::json m = {{"source", d.source}, {"device", d.device}, {"port", d.port},
                        {"name", d.name},     {"delta", d.delta},   {"kind", name(d.kind)}};
    if (d.lower_bound) {
      m["lower_bound"] = true;
    }
    if (const auto meaning = counter_info(d.source, d.name).meaning; !meaning.empty()) {
      m["meaning"] = meaning;
    }
    moved.push_back(std::move(m));
  }
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : h.links) {
    nlohmann::json j = {{"kind", l.kind}, {"device", l.device}, {"current", l.current}, {"below", l.below}};
    const auto optional = [&j](const char* key, const std::string& value) {
      if (!value.empty()) {
        j[key] = value;
      }
    };
    optional("role", l.role);
    optional("model", l.model);
    optional("capable", l.capable);
    optional("state", l.state);
    optional("firmware", l.firmware);
    if (!l.aer.empty()) {
      j["aer"] = l.aer;
    }
    links.push_back(std::move(j));
  }
  return {{"host", h.host}, {"seconds", h.seconds}, {"counters_read", h.counters_read},
          {"moved", moved}, {"links", links},       {"warnings", h.warnings}};
}

HostFabric fabric_from_json(const nlohmann::json& j) {
  HostFabric h;
  h.host = j.at("host").get<std::string>();
  h.seconds = j.at("seconds").get<double>();
  h.counters_read = j.at("counters_read").get<std::size_t>();
  for (const auto& m : j.at("moved")) {
    CounterDelta d;
    d.source = m.at("source").get<std::string>();
    d.device = m.at("device").get<std::string>();
    d.port = m.at("port").get<int>();
    d.name = m.at("name").get<std::string>();
    d.delta = m.at("delta").get<std::uint64_t>();
    d.kind = parse_counter_kind(m.at("kind").get<std::string>()).value_or(CounterKind::Other);
    d.lower_bound = m.value("lower_bound", false);
    h.moved.push_back(std::move(d));
  }
  for (const auto& l : j.at("links")) {
    LinkState s;
    s.kind = l.at("kind").get<std::string>();
    s.device = l.at("device").get<std::string>();
    s.current = l.at("current").get<std::string>();
    s.below = l.at("below").get<bool>();
    s.role = l.value("role", "");
    s.model = l.value("model", "");
    s.capable = l.value("capable", "");
    s.state = l.value("state", "");
    s.firmware = l.value("firmware", "");
    s.aer = l.value("aer", std::map<std::string, std::uint64_t>{});
    h.links.push_back(std::move(s));
  }
  h.warnings = j.at("warnings").get<std::vector<std::string>>();
  return h;
}

nlohmann::json to_json(const ResultDocument& doc) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : doc.environment.hosts) {
    hosts.push_back({{"hostname", h.hostname}, {"ranks", h.ranks}});
    if (!h.machine.empty()) {  // 1.11.0
      hosts.back()["machine"] = h.machine;
    }
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : doc.results) {
    results.push_back(case_to_json(r));
  }
  nlohmann::json environment = {
      {"hosts", hosts}, {"libraries", doc.environment.libraries}, {"variables", doc.environment.variables}};
  if (!doc.environment.binding.empty()) {  // optional since 1.2: a document built without ranks has none
    nlohmann::json binding = nlohmann::json::array();
    for (const auto& b : doc.environment.binding) {
      binding.push_back(binding_to_json(b));
    }
    environment["binding"] = binding;
  }
  const auto& run = doc.run;
  nlohmann::json out = {
      {"schema", kSchemaName},
      {"schema_version", kSchemaVersion},
      {"run",
       {{"id", run.id},
        {"benchmark", run.benchmark},
        {"started_utc", run.started_utc},
        {"ended_utc", run.ended_utc.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.ended_utc)},
        {"argv", run.argv},
        {"tool_version", run.tool_version},
        {"git_revision", run.git_revision},
        {"label", run.label}}},
      {"environment", environment},
      {"topology", doc.topology},
      {"results", results}};
  if (run.source) {  // 1.10.0, imported runs only
    const auto& src = *run.source;
    out["run"]["source"] = {{"tool", src.tool},
                            {"version", src.version},
                            {"format", src.format},
                            {"files", src.files},
                            {"notes", src.notes}};
  }
  if (!doc.fabric.empty()) {
    nlohmann::json fabric = nlohmann::json::array();
    for (const auto& h : doc.fabric) {
      fabric.push_back(fabric_to_json(h));
    }
    out["fabric"] = std::move(fabric);
  }
  return out;
}

ResultDocument document_from_json(const nlohmann::json& j) {
  if (j.at("schema").get<std::string>() != kSchemaName) {
    throw std::runtime_error("not a ccbench result document (schema " + j.at("schema").dump() + ")");
  }
  ResultDocument doc;
  const auto& run = j.at("run");
  doc.run.id = run.at("id").get<std::string>();
  doc.run.benchmark = run.at("benchmark").get<std::string>();
  doc.run.started_utc = run.at("started_utc").get<std::string>();
  doc.run.ended_utc = run.at("ended_utc").is_null() ? "" : run.at("ended_utc").get<std::string>();
  doc.run.argv = run.at("argv").get<std::vector<std::string>>();
  doc.run.tool_version = run.at("tool_version").get<std::string>();
  doc.run.git_revision = run.at("git_revision").get<std::string>();
  doc.run.label = run.at("label").get<std::string>();
  if (const auto src = run.find("source"); src != run.end()) {  // 1.10.0
    doc.run.source = RunSource{src->at("tool").get<std::string>(), src->at("version").get<std::string>(),
                               src->at("format").get<std::string>(), src->at("files").get<std::vector<std::string>>(),
                               src->at("notes").get<std::vector<std::string>>()};
  }
  const auto& env = j.at("environment");
  for (const auto& h : env.at("hosts")) {
    doc.environment.hosts.emplace_back(h.at("hostname").get<std::string>(), h.at("ranks").get<std::vector<int>>(),
                                       h.value("machine", std::string()));
  }
  doc.environment.libraries = env.at("libraries").get<std::map<std::string, std::string>>();
  doc.environment.variables = env.at("variables").get<std::map<std::string, std::string>>();
  for (const auto& b : env.value("binding", nlohmann::json::array())) {  // added in 1.2.0
    doc.environment.binding.push_back(binding_from_json(b));
  }
  doc.topology = j.at("topology");
  for (const auto& h : j.value("fabric", nlohmann::json::array())) {  // added in 1.8.0
    doc.fabric.push_back(fabric_from_json(h));
  }
  for (const auto& r : j.at("results")) {
    doc.results.push_back(case_from_json(r));
  }
  return doc;
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ccbench
