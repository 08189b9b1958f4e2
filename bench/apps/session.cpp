#include "session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/host_memory.hpp"
#include "ccbench/rates.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/topo/specs.hpp"
#include "ccbench/topo/topology_json.hpp"
#include "ccbench/version.hpp"
#include "debug_hooks.hpp"
#include "table_header.hpp"

namespace ccbench {

Session::Session(SessionInputs inputs, Group& world, Membership membership, HangGuard& guard, JoinRound join_round)
    : m_in(std::move(inputs)),
      m_groups(m_in.plan.groups()),
      m_coll(info(m_in.config.collective)),
      m_world(world),
      m_member(std::move(membership)),
      m_guard(guard),
      m_join_round(std::move(join_round)),
      m_variant(m_in.plan.variants.front()) {
  if (is_writer()) {
    m_guard.set_recorder([this](const Hang& h) { record_hang(h); });
  }
  watch_backend();
}

Session::~Session() {
  m_guard.set_abandon({});
  if (is_writer()) {
    m_guard.set_recorder({});
  }
}

void Session::watch_backend() {
  Backend* backend = m_member.backend.get();
  m_guard.set_abandon(backend == nullptr ? std::function<void()>{} : [backend] { backend->abandon(); });
}

void Session::rejoin(const std::vector<GroupPlan>& groups) {
  m_guard.set_abandon({});
  m_member = Membership{};  // the last communicators or queue pairs go first
  m_member = m_join_round(groups);
  watch_backend();
}

namespace {

std::string op_activity(std::string_view op, std::uint64_t size, bool in_place, const std::string& group) {
  return fmt::format("{} {} B {} in group {}", op, size, in_place ? "in-place" : "out-of-place", group);
}

}  // namespace

void Session::start_document(const std::map<std::string, std::string>& versions) {
  auto& run = m_doc.run;
  run.id = make_run_id();
  run.benchmark = std::string{m_coll.bench};
  run.started_utc = utc_now_iso8601();
  run.argv = m_in.config.argv;
  run.tool_version = std::string{tool_version()};
  run.git_revision = std::string{git_revision()};
  run.label = m_in.config.label;
  m_doc.environment.hosts = m_in.hosts;
  m_doc.environment.libraries = versions;
  m_doc.environment.variables = m_in.variables;
  m_doc.environment.binding = m_in.binding;
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : m_in.topology) {
    hosts.push_back(topo::to_json(h));
  }
  m_doc.topology = {{"hosts", hosts}};
}

void Session::plan_peaks() {
  if (is_rdma(m_in.config.collective)) {
    return;  // a pair's ports are known once it is connected (record)
  }
  for (const auto& g : m_groups) {
    std::vector<topo::RankPlace> places;
    for (const int r : g.ranks) {
      places.push_back(m_in.places[static_cast<std::size_t>(r)]);
    }
    m_peaks[g.id] = topo::expected_peak(topo::SpecDatabase::builtin(), m_in.topology, places);
  }
}

TableHeader Session::table_header(const std::map<std::string, std::string>& versions, const std::string& backend,
                                  const std::string& clock) const {
  return make_table_header(HeaderFacts{.config = m_in.config,
                                       .coll = m_coll,
                                       .ranks = m_world.size(),
                                       .hosts = static_cast<int>(m_in.hosts.size()),
                                       .plan = m_in.plan,
                                       .groups = m_groups,
                                       .peaks = m_peaks,
                                       .versions = versions,
                                       .backend = backend,
                                       .clock = clock});
}

CaseResult Session::base_result(const GroupPlan& g, std::uint64_t size, bool in_place) const {
  const RunConfig& c = m_in.config;
  CaseResult r;
  r.benchmark = std::string{m_coll.bench};
  r.backend = m_facts.backend;
  r.timing = c.timing;
  r.clock = m_facts.clock;
  r.variant = m_variant;
  const int n = static_cast<int>(g.ranks.size());
  r.spec = {c.collective, c.dtype, c.op, c.root, in_place, 0};
  r.spec.count = count_for_bytes(m_coll, size, size_of(c.dtype), n);
  r.ranks = n;
  r.nodes = static_cast<int>(g.hosts.size());
  r.group = g.kind;
  r.group_id = g.id;
  r.group_ranks = g.ranks;
  r.group_hosts = g.hosts;
  r.size_bytes = r.spec.count > 0 ? algbw_bytes(m_coll, r.spec.count, size_of(c.dtype), n) : size;
  r.bus_factor = bus_factor(m_coll.factor, n);
  r.peak_GBps = c.peak_GBps;
  if (r.peak_GBps) {
    r.peak_basis = "--peak-GBps given on the command line";
  }
  return r;
}

// Runs this rank's case in its group; the group's rank 0 returns the result as JSON text.
std::string Session::measure_mine(Runner& runner, std::uint64_t size, bool in_place) {
  CaseResult r = base_result(*m_member.plan, size, in_place);
  const Support support = m_member.backend->supports(r.spec);
  if (m_in.config.split != Split::World && r.ranks == 1) {
    r.status = CaseStatus::Skipped;
    r.reason = fmt::format("group {} has one rank: no link to measure", r.group_id);
  } else if (!support.supported) {
    r.status = CaseStatus::Skipped;
    r.reason = support.reason;
  } else {
    // The memory check agrees across the group (two reductions): a rank stopped there is a hang like any other.
    const std::string activity = op_activity(m_coll.name, size, in_place, r.group_id);
    m_guard.begin(fmt::format("{} (agreeing that it fits in memory)", activity));
    if (auto refusal = memory_refusal(r.spec)) {
      m_guard.idle("between ops");
      r.status = CaseStatus::Skipped;
      r.reason = std::move(*refusal);
    } else {
      m_guard.begin(activity);
      const Measurement m = runner.measure(r.spec);
      m_guard.idle("between ops");
      summarize_into(r, m, m_in.config.keep_samples);
    }
  }
  r.rdma = m_member.backend->rdma_info();
  return m_member.group->rank() == 0 ? json_text(case_to_json(r)) : std::string{};
}

namespace {

constexpr double kMemoryHeadroom = 0.9;  // of what is available: the library, the runtime, the rest of the host

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / static_cast<double>(1ULL << 30)); }

}  // namespace

// Each rank's host need counts every rank on its host (they run the same sizes side by side). Two
// reductions: the worst ratio of need to room, then the numbers of the rank that has it.
std::optional<std::string> Session::memory_refusal(const CaseSpec& spec) {
  const MemoryNeed need = m_member.backend->memory_need(spec);
  const int my_host = m_in.places.at(static_cast<std::size_t>(m_world.rank())).host;
  const auto on_host =
      std::count_if(m_in.places.begin(), m_in.places.end(), [&](const auto& p) { return p.host == my_host; });
  const double host_need = static_cast<double>(need.host_bytes) * static_cast<double>(on_host);
  const std::optional<HostMemory> host = need.host_bytes > 0 ? host_memory_available() : std::nullopt;
  const double host_room = host ? kMemoryHeadroom * static_cast<double>(host->available_bytes) : 0.0;
  const double device_room = kMemoryHeadroom * static_cast<double>(need.device_free_bytes);
  const auto device_need = static_cast<double>(need.device_bytes);
  std::array<double, 2> ratio{host && host_need > 0.0 ? host_need / std::max(host_room, 1.0) : 0.0,
                              device_need > 0.0 ? device_need / std::max(device_room, 1.0) : 0.0};
  const std::array<double, 2> mine = ratio;
  m_member.group->max_all(ratio);
  if (ratio[0] <= 1.0 && ratio[1] <= 1.0) {
    return std::nullopt;
  }
  const bool host_short = ratio[0] > 1.0;
  const bool worst = mine[host_short ? 0 : 1] == ratio[host_short ? 0 : 1];
  std::array<double, 3> numbers{worst ? (host_short ? host_need : device_need) : 0.0,
                                worst ? (host_short ? host_room : device_room) / kMemoryHeadroom : 0.0,
                                worst ? static_cast<double>(on_host) : 0.0};
  m_member.group->max_all(numbers);
  if (host_short) {
    return fmt::format(
        "needs {} of host memory ({} per rank x {} rank(s) on a host) where {} is available "
        "({}, {:.0f}% usable): skipped before allocating",
        gib(numbers[0]), gib(numbers[0] / std::max(numbers[2], 1.0)), numbers[2], gib(numbers[1]),
        host ? host->basis : std::string{"MemAvailable"}, kMemoryHeadroom * 100);
  }
  return fmt::format(
      "needs {} more of GPU memory where {} is free (cudaMemGetInfo, {:.0f}% usable): skipped before "
      "allocating",
      gib(numbers[0]), gib(numbers[1]), kMemoryHeadroom * 100);
}

// Every group leader's result, on every rank, in group order.
std::vector<CaseResult> Session::collect(const std::string& mine) {
  std::vector<CaseResult> out;
  m_guard.begin("gathering the results of every group");
  const auto texts = m_world.all_gather(mine);
  m_guard.idle("between ops");
  for (const auto& text : texts) {
    if (!text.empty()) {
      out.push_back(case_from_json(nlohmann::json::parse(text)));
    }
  }
  std::stable_sort(out.begin(), out.end(), [this](const CaseResult& a, const CaseResult& b) {
    const auto color = [this](const CaseResult& r) {
      return std::find_if(m_groups.begin(), m_groups.end(), [&](const GroupPlan& g) { return g.id == r.group_id; }) -
             m_groups.begin();
    };
    return color(a) < color(b);
  });
  return out;
}

namespace {

// An RDMA pair is bounded by the slower of its two ports, as rated in the spec database.
topo::Peak rdma_peak(const RdmaInfo& rdma) {
  topo::Peak peak;
  for (const auto& e : rdma.endpoints) {
    const auto spec = e.rate_Gbps ? topo::SpecDatabase::builtin().nic(*e.rate_Gbps, e.link_layer) : std::nullopt;
    if (!spec) {
      peak.GBps.reset();
      peak.basis =
          fmt::format("{} port {} on {}: {} is not a rated port in the spec database", e.device, e.port, e.host,
                      e.rate_Gbps ? fmt::format("{} {:g} Gb/s", e.link_layer, *e.rate_Gbps)
                                  : std::string{"its rate is unknown, which"});
      return peak;
    }
    if (!peak.GBps || spec->GBps < *peak.GBps) {
      peak.GBps = spec->GBps;
      peak.basis = fmt::format("{} ({} port {} on {})", spec->name, e.device, e.port, e.host);
    }
  }
  return peak;
}

}  // namespace

void Session::record(CaseResult& result) {
  if (!is_writer()) {
    return;
  }
  if (result.rdma && !m_in.config.peak_GBps) {
    m_peaks[result.group_id] = rdma_peak(*result.rdma);
  }
  const auto peak = m_peaks.find(result.group_id);
  if (!m_in.config.peak_GBps && peak != m_peaks.end()) {
    result.peak_GBps = peak->second.GBps;
    result.peak_basis = peak->second.basis;
  }
  derive_pct_of_peak(result);
  const std::lock_guard lock(m_doc_mutex);
  m_doc.results.push_back(result);
}

// On world rank 0, from the hang guard's thread, while the main thread may be blocked anywhere.
void Session::record_hang(const Hang& hang) {
  const std::lock_guard lock(m_doc_mutex);
  if (!m_position || m_closed) {
    return;  // still setting up: no case to mark
  }
  // A group's case timed out when one of its ranks did not answer the roll call, or when the rank that waited
  // out --timeout was in that case (its op, or the memory check before it). A rank that answered from inside
  // its op is not enough: a group still measuring is in its op too, and must not be marked for another's hang.
  const auto in_op = [&](const GroupPlan& g, int rank) {
    const bool silent = std::find(hang.silent.begin(), hang.silent.end(), rank) != hang.silent.end();
    const std::string op = op_activity(m_coll.name, m_position->size, m_position->in_place, g.id);
    return silent || (rank == hang.reporter && (hang.activity == op || hang.activity.starts_with(op + " (")));
  };
  auto& done = m_position->timed_out;
  for (const auto& g : current_groups()) {
    if (std::find(done.begin(), done.end(), g.id) != done.end() ||
        std::none_of(g.ranks.begin(), g.ranks.end(), [&](int rank) { return in_op(g, rank); })) {
      continue;
    }
    CaseResult r = base_result(g, m_position->size, m_position->in_place);
    r.status = CaseStatus::TimedOut;
    r.reason = fmt::format("no progress for {:.1f} s (--timeout {:g}); {}", hang.waited_s, m_in.config.timeout_s,
                           m_guard.absent(hang));
    m_doc.results.push_back(std::move(r));
    done.push_back(g.id);
  }
  if (m_doc.results.empty()) {
    return;  // a document without results is not a valid one
  }
  m_doc.run.ended_utc = utc_now_iso8601();
  for (const auto& sink : m_sinks) {
    sink->hang(m_doc);
  }
  m_closed = true;  // the job ends now: the writer lets go of the result path next (HangGuard)
}

// World rank 0 prints and writes; it learns the backend's name, versions and clock from the
// leader of the first group (every rank takes part in the gather).
Session::BackendFacts Session::backend_facts() {
  const bool leader = m_member.backend != nullptr && m_member.group->rank() == 0;
  const std::string mine = leader ? nlohmann::json{{"versions", m_member.backend->versions()},
                                                   {"backend", m_member.backend->name()},
                                                   {"clock", m_member.backend->timer().clock()}}
                                        .dump()
                                  : std::string{};
  const auto all = m_world.all_gather(mine);
  const auto first = std::find_if(all.begin(), all.end(), [](const auto& s) { return !s.empty(); });
  const auto j = nlohmann::json::parse(*first);  // every group has a leader
  return {j.at("versions").get<std::map<std::string, std::string>>(), j.at("backend"), j.at("clock")};
}

bool Session::sweep() {
  std::optional<Runner> runner;
  if (m_member.backend != nullptr) {
    runner.emplace(*m_member.group, *m_member.backend, sampling_policy(m_in.config), &m_guard.watchdog());
  }
  bool failed = false;
  for (const std::uint64_t size : m_in.plan.sizes) {
    if (m_sizes_started++ == 2) {  // two sizes (of any round) are in the file
      debug::fail_if_asked("sweep", m_world.rank());
      debug::stop_if_asked("sweep", m_world.rank());
    }
    std::vector<CaseResult> cells;
    for (const bool in_place : m_in.plan.placements) {
      {
        const std::lock_guard lock(m_doc_mutex);
        m_position = Position{size, in_place, {}};
      }
      for (auto& r : collect(runner ? measure_mine(*runner, size, in_place) : std::string{})) {
        failed = failed || r.status == CaseStatus::Failed;
        record(r);
        cells.push_back(std::move(r));
      }
    }
    if (is_writer()) {
      emit([&](ResultSink& sink) { sink.size_done(m_doc, cells); });
    }
  }
  return failed;
}

bool Session::sweep_ring_variant() {
  {
    const std::lock_guard lock(m_doc_mutex);
    m_variant = m_in.plan.variants.back();
    m_position.reset();
  }
  const auto configured = m_facts.versions.find("nccl_algo");
  if (is_writer()) {
    const std::string note = fmt::format(
        "--nccl-variants: the rows above are variant configured ({}); below, variant ring: the same sweep on new "
        "communicators with NCCL_ALGO=Ring",
        configured != m_facts.versions.end() ? configured->second : "NCCL_ALGO as set");
    emit([&](ResultSink& sink) { sink.note(note); });
  }
  m_guard.begin("set-up: new communicators with NCCL_ALGO=Ring (--nccl-variants)");
  // NCCL reads NCCL_ALGO when it creates a communicator (its tuning model), so the next ones ring.
  if (::setenv("NCCL_ALGO", "Ring", 1) != 0) {
    throw std::runtime_error("--nccl-variants: setenv(NCCL_ALGO) failed");
  }
  rejoin(current_groups());  // the configured communicators go first
  m_guard.idle("set-up");
  return sweep();
}

int Session::run() {
  m_guard.begin("set-up: learning the backend's versions and clock");
  BackendFacts facts = backend_facts();
  m_guard.idle("set-up");
  if (!m_in.backend_choice.empty()) {
    facts.versions["backend_choice"] = m_in.backend_choice;
  }
  {
    const std::lock_guard lock(m_doc_mutex);
    m_facts = facts;
  }
  if (is_writer()) {
    start_document(facts.versions);
    plan_peaks();
    {
      const std::lock_guard lock(m_doc_mutex);
      if (m_in.result_path != "-") {  // first: a row the table prints is in the file already
        m_sinks.push_back(json_file_sink(m_in.result_path, std::string{m_coll.bench}));
      }
      m_sinks.push_back(table_sink(
          table_stream(),
          TablePrinter(table_stream(), m_in.plan.placements, m_in.config.split != Split::World || m_groups.size() > 1,
                       m_in.config.rdma.gbits ? RateUnit::Gbps : RateUnit::GBps),
          m_in.result_path));
      if (m_in.result_path == "-") {  // last: after the table's footer, as before the sinks
        m_sinks.push_back(json_stdout_sink());
      }
    }
    const TableHeader header = table_header(facts.versions, facts.backend, facts.clock);
    emit([&](ResultSink& sink) { sink.begin(header); });
  }
  const auto first_round_start = std::chrono::steady_clock::now();
  bool failed = sweep();
  const std::chrono::duration<double> first_round = std::chrono::steady_clock::now() - first_round_start;
  if (const std::size_t rounds = m_in.plan.rounds.size(); rounds > 1 && is_writer()) {
    // The planner knows the rounds, not the fabric: the first round's time, times the rounds left.
    const double left_s = first_round.count() * static_cast<double>(rounds - 1);
    const std::string note =
        fmt::format("round 1 of {} took {:.1f} s: about {:.0f} s ({:.1f} min) more for the {} left", rounds,
                    first_round.count(), left_s, left_s / 60.0, rounds - 1);
    emit([&](ResultSink& sink) { sink.note(note); });
  }
  for (std::size_t round = 1; round < m_in.plan.rounds.size(); ++round) {  // the next round's groups
    {
      const std::lock_guard lock(m_doc_mutex);
      m_round = round;
      m_position.reset();
    }
    m_guard.begin(fmt::format("set-up: connecting the groups of round {} of {}", round + 1, m_in.plan.rounds.size()));
    rejoin(m_in.plan.rounds[round]);
    m_guard.idle("set-up");
    failed = sweep() || failed;
  }
  if (m_in.plan.variants.size() > 1) {
    failed = sweep_ring_variant() || failed;
  }
  if (is_writer()) {
    const std::lock_guard lock(m_doc_mutex);
    m_position.reset();
    if (m_closed) {
      return kExitTimeout;  // a hang was recorded while this rank went on: the job is being ended
    }
    m_doc.run.ended_utc = utc_now_iso8601();
    for (const auto& sink : m_sinks) {
      sink->end(m_doc);
    }
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace ccbench
