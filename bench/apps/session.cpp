#include "session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/memory_admission.hpp"
#include "ccbench/rates.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/topo/fabric_read.hpp"
#include "ccbench/topo/specs.hpp"
#include "ccbench/topo/topology_json.hpp"
#include "ccbench/traffic.hpp"
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
      m_variant(m_in.plan.variants.front()),
      m_recorder(
          std::string{m_coll.name}, m_in.config.timeout_s,
          [this](const GroupPlan& g, std::uint64_t size, bool in_place) { return base_result(g, size, in_place); },
          [this](const Hang& h) { return m_guard.absent(h); }) {
  if (is_writer()) {
    m_guard.set_recorder([this](const Hang& h) { m_recorder.record_hang(h); });
  }
  plan_peaks();
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
  const auto rdma = backend != nullptr ? backend->rdma_info() : std::nullopt;
  m_pair_peak =
      rdma ? std::optional(topo::rdma_pair_peak(topo::SpecDatabase::builtin(), rdma->endpoints)) : std::nullopt;
}

void Session::rejoin(const std::vector<GroupPlan>& groups) {
  m_guard.set_abandon({});
  m_member = Membership{};  // the last communicators or queue pairs go first
  m_member = m_join_round(groups, m_variant);
  watch_backend();
  expect_sweep();
}

// Collective over this rank's group (the caller's activity is watched): the backend learns every case before
// the first, so it may size (and register) its buffers once.
void Session::expect_sweep() {
  if (m_member.backend == nullptr) {
    return;
  }
  std::vector<CaseSpec> cases;
  for (const std::uint64_t size : m_in.plan.sizes) {
    for (const bool in_place : m_in.plan.placements) {
      cases.push_back(base_result(*m_member.plan, size, in_place).spec);
    }
  }
  m_member.backend->expect(cases);
}

ResultDocument Session::start_document(const std::map<std::string, std::string>& versions) const {
  ResultDocument doc;
  auto& run = doc.run;
  run.id = make_run_id();
  run.benchmark = std::string{m_coll.bench};
  run.started_utc = utc_now_iso8601();
  run.argv = m_in.config.argv;
  run.tool_version = std::string{tool_version()};
  run.git_revision = std::string{git_revision()};
  run.label = m_in.config.label;
  doc.environment.hosts = m_in.hosts;
  doc.environment.libraries = versions;
  doc.environment.variables = m_in.variables;
  doc.environment.binding = m_in.binding;
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : m_in.topology) {
    hosts.push_back(topo::to_json(h));
  }
  doc.topology = {{"hosts", hosts}};
  return doc;
}

void Session::plan_peaks() {
  if (is_rdma(m_in.config.collective) || m_in.config.peak_GBps) {
    return;  // a pair's ports are known once it is connected (watch_backend); --peak-GBps overrides
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
  r.spec = {c.collective, c.dtype, c.op, c.root, in_place, 0, nullptr};
  if (m_coll.send == Span::Plan) {
    r.spec.traffic = c.traffic;  // alltoallv: the sizes follow from its traffic (traffic.hpp)
  }
  r.spec.count = case_count(r.spec, size, n);
  r.ranks = n;
  r.nodes = static_cast<int>(g.hosts.size());
  r.group = g.kind;
  r.group_id = g.id;
  r.group_ranks = g.ranks;
  r.group_hosts = g.hosts;
  r.size_bytes = r.spec.count > 0 ? case_bytes(r.spec, n) : size;
  r.bus_factor = bus_factor(m_coll.factor, n);
  r.peak_GBps = c.peak_GBps;
  if (r.peak_GBps) {
    r.peak_basis = "--peak-GBps given on the command line";
  } else if (const auto peak = m_peaks.find(g.id); peak != m_peaks.end()) {
    r.peak_GBps = peak->second.GBps;
    r.peak_basis = peak->second.basis;
  } else if (m_pair_peak && m_member.plan != nullptr && m_member.plan->id == g.id) {
    r.peak_GBps = m_pair_peak->GBps;
    r.peak_basis = m_pair_peak->basis;
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
    const MemoryNeed need = m_member.backend->memory_need(r.spec);
    const int my_host = m_in.places.at(static_cast<std::size_t>(m_world.rank())).host;
    const auto on_host =
        std::count_if(m_in.places.begin(), m_in.places.end(), [&](const auto& p) { return p.host == my_host; });
    if (auto refusal = memory_refusal(*m_member.group, need, static_cast<int>(on_host))) {
      m_guard.idle("between ops");
      r.status = CaseStatus::Skipped;
      r.reason = std::move(*refusal);
    } else {
      m_guard.begin(activity);
      const Measurement m = runner.measure(r.spec);
      r.registration = m_member.backend->registration();  // what the library granted, not what -R asked
      m_guard.idle("between ops");
      summarize_into(r, m, m_in.config.keep_samples);
      if (!m.per_rank_s.empty()) {
        r.per_rank = summarize_ranks(m.per_rank_s, r.group_ranks);
      }
    }
  }
  r.rdma = m_member.backend->rdma_info();
  return m_member.group->rank() == 0 ? json_text(case_to_json(r)) : std::string{};
}

// Every group leader's result, on every rank, in group order. It crosses ranks as the JSON text of the result
// file: a result has parts of any length (samples, strings, RDMA endpoints), so it must be serialised, and
// case_to_json is the serialiser the file already uses (tested both ways), so what world rank 0 gathers is by
// construction what the file holds; a second (binary) form would be a second serialiser to keep in step, for
// a cost outside the timed window.
std::vector<CaseResult> Session::collect(const std::string& mine, std::uint64_t size, bool in_place) {
  std::vector<CaseResult> out;
  // The case is named: a rank stopped between its op and this gather leaves the op and size in the message.
  m_guard.begin(fmt::format("gathering every group's result of {} {} B {}", m_coll.name, size,
                            in_place ? "in-place" : "out-of-place"));
  if (m_sizes_started == 3) {  // the third size: two are in the file (a test hook, CCBENCH_DEBUG_STOP=gather:R)
    debug::stop_if_asked("gather", m_world.rank());
  }
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
    if (const double late = debug::late_s(m_world.rank()); late > 0) {  // a test hook (CCBENCH_DEBUG_LATE)
      runner->before_sample([late] { std::this_thread::sleep_for(std::chrono::duration<double>(late)); });
    }
  }
  bool failed = false;
  for (const std::uint64_t size : m_in.plan.sizes) {
    if (m_sizes_started++ == 2) {  // two sizes (of any round) are in the file
      debug::fail_if_asked("sweep", m_world.rank());
      debug::stop_if_asked("sweep", m_world.rank());
    }
    std::vector<CaseResult> cells;
    for (const bool in_place : m_in.plan.placements) {
      if (is_writer()) {
        m_recorder.at(current_groups(), size, in_place);
      }
      for (auto& r : collect(runner ? measure_mine(*runner, size, in_place) : std::string{}, size, in_place)) {
        failed = failed || r.status == CaseStatus::Failed;
        if (is_writer()) {
          m_recorder.record(r);
        }
        cells.push_back(std::move(r));
      }
    }
    if (is_writer()) {
      m_recorder.size_done(cells);
    }
  }
  return failed;
}

bool Session::sweep_ring_variant() {
  if (is_writer()) {
    m_recorder.between_cases();
  }
  m_variant = m_in.plan.variants.back();
  const auto configured = m_facts.versions.find("nccl_algo");
  if (is_writer()) {
    const std::string note = fmt::format(
        "--nccl-variants: the rows above are variant configured ({}); below, variant ring: the same sweep on new "
        "communicators with NCCL_ALGO=Ring",
        configured != m_facts.versions.end() ? configured->second : "NCCL_ALGO as set");
    m_recorder.note(note);
  }
  m_guard.begin("set-up: new communicators with NCCL_ALGO=Ring (--nccl-variants)");
  rejoin(current_groups());  // the configured communicators go first
  m_guard.idle("set-up");
  return sweep();
}

void Session::fabric_before() {
  const int me = m_world.rank();
  const int host = m_in.places.at(static_cast<std::size_t>(me)).host;
  const auto first =
      std::find_if(m_in.places.begin(), m_in.places.end(), [&](const auto& p) { return p.host == host; });
  if (first - m_in.places.begin() == me) {
    m_counters = topo::read_counters();
  }
}

// Outside every timed window: after the last case, one reading per host, its deltas and links gathered as the
// results are (the JSON text of the file).
void Session::fabric_after() {
  std::string mine;
  if (m_counters) {
    HostFabric h = counter_deltas(*m_counters, topo::read_counters());
    h.host =
        m_in.hosts.at(static_cast<std::size_t>(m_in.places.at(static_cast<std::size_t>(m_world.rank())).host)).hostname;
    h.links = topo::read_links();
    mine = json_text(fabric_to_json(h));
  }
  m_guard.begin("gathering every host's fabric counters");
  const auto texts = m_world.all_gather(mine);
  m_guard.idle("between ops");
  if (is_writer()) {
    std::vector<HostFabric> hosts;
    for (const auto& text : texts) {
      if (!text.empty()) {
        hosts.push_back(fabric_from_json(nlohmann::json::parse(text)));
      }
    }
    m_recorder.fabric(std::move(hosts));
  }
}

int Session::run() {
  m_guard.begin("set-up: the backend's buffers for the sweep (-R: allocated and registered once)");
  expect_sweep();  // before the versions: under -R they say what the library registered
  m_guard.begin("set-up: learning the backend's versions and clock");
  BackendFacts facts = backend_facts();
  m_guard.idle("set-up");
  if (!m_in.backend_choice.empty()) {
    facts.versions["backend_choice"] = m_in.backend_choice;
  }
  m_facts = facts;  // before the recorder opens: no case yet, so no hang reads it
  if (is_writer()) {
    std::vector<std::unique_ptr<ResultSink>> sinks;
    if (m_in.result_path != "-") {  // first: a row the table prints is in the file already
      sinks.push_back(json_file_sink(m_in.result_path, std::string{m_coll.bench}));
    }
    sinks.push_back(table_sink(
        table_stream(),
        TablePrinter(table_stream(), m_in.plan.placements, m_in.config.split != Split::World || m_groups.size() > 1,
                     m_in.config.rdma.gbits ? RateUnit::Gbps : RateUnit::GBps),
        m_in.result_path));
    if (m_in.result_path == "-") {  // last: after the table's footer, as before the sinks
      sinks.push_back(json_stdout_sink());
    }
    m_recorder.open(start_document(facts.versions), std::move(sinks));
    m_recorder.begin(table_header(facts.versions, facts.backend, facts.clock));
  }
  fabric_before();
  const auto first_round_start = std::chrono::steady_clock::now();
  bool failed = sweep();
  const std::chrono::duration<double> first_round = std::chrono::steady_clock::now() - first_round_start;
  if (const std::size_t rounds = m_in.plan.rounds.size(); rounds > 1 && is_writer()) {
    // The planner knows the rounds, not the fabric: the first round's time, times the rounds left.
    const double left_s = first_round.count() * static_cast<double>(rounds - 1);
    const std::string note =
        fmt::format("round 1 of {} took {:.1f} s: about {:.0f} s ({:.1f} min) more for the {} left", rounds,
                    first_round.count(), left_s, left_s / 60.0, rounds - 1);
    m_recorder.note(note);
  }
  for (std::size_t round = 1; round < m_in.plan.rounds.size(); ++round) {  // the next round's groups
    if (is_writer()) {
      m_recorder.between_cases();
    }
    m_round = round;
    m_guard.begin(fmt::format("set-up: connecting the groups of round {} of {}", round + 1, m_in.plan.rounds.size()));
    rejoin(m_in.plan.rounds[round]);
    m_guard.idle("set-up");
    failed = sweep() || failed;
  }
  if (m_in.plan.variants.size() > 1) {
    failed = sweep_ring_variant() || failed;
  }
  fabric_after();
  if (is_writer() && !m_recorder.end()) {
    return kExitTimeout;  // a hang was recorded while this rank went on: the job is being ended
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace ccbench
