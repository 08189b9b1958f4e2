#include "bench_main.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>

#include "backend_registry.hpp"
#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/runner.hpp"
#include "ccbench/table_printer.hpp"
#include "ccbench/version.hpp"
#include "ccbench/watchdog.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace ccbench {
namespace {

/// Thrown on every rank once an error has been printed (by one rank) and the exit code agreed.
struct Reported {
  int exit_code;
};

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const UsageError*>(&e) != nullptr) {
    return kExitUsage;
  }
  return dynamic_cast<const TimeoutError*>(&e) != nullptr ? kExitTimeout : kExitFailure;
}

/// Runs `fn` on every rank (collective). If it threw anywhere, the lowest failing rank prints
/// its one-line message and every rank throws Reported with that rank's exit code.
template <typename Fn>
auto agreed(Group& group, std::string_view program, Fn&& fn) {
  std::optional<decltype(fn())> value;
  std::string failure;
  try {
    value.emplace(fn());
  } catch (const std::exception& e) {
    failure = fmt::format("{}{}", exit_code_of(e), e.what());
  }
  const auto all = group.all_gather(failure);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r].empty()) {
      if (static_cast<int>(r) == group.rank()) {
        fmt::print(stderr, "{}: error: {}\n", program, std::string_view(all[r]).substr(1));
      }
      throw Reported{all[r][0] - '0'};
    }
  }
  return std::move(*value);
}

struct Layout {
  std::vector<HostInfo> hosts;
  RankPlacement placement;
};

Layout discover_layout(Group& group) {
  const auto names = group.all_gather(local_hostname());
  Layout layout;
  for (std::size_t r = 0; r < names.size(); ++r) {
    auto host = std::find_if(layout.hosts.begin(), layout.hosts.end(),
                             [&](const HostInfo& h) { return h.hostname == names[r]; });
    if (host == layout.hosts.end()) {
      host = layout.hosts.insert(layout.hosts.end(), HostInfo{names[r], {}});
    }
    if (static_cast<int>(r) == group.rank()) {
      layout.placement.local_rank = static_cast<int>(host->ranks.size());
    }
    host->ranks.push_back(static_cast<int>(r));
  }
  for (const auto& h : layout.hosts) {
    if (h.hostname == names[static_cast<std::size_t>(group.rank())]) {
      layout.placement.local_size = static_cast<int>(h.ranks.size());
    }
  }
  return layout;
}

std::string default_result_path(const CollectiveInfo& coll, const std::string& host) {
  std::filesystem::create_directories("results");
  return fmt::format("results/{}-{}-{}.json", coll.bench, host, utc_now_compact());
}

class Session {
 public:
  Session(RunConfig config, MpiGroup& group, Layout layout, std::unique_ptr<Backend> backend, std::string path)
      : m_config(std::move(config)),
        m_coll(info(m_config.collective)),
        m_group(group),
        m_layout(std::move(layout)),
        m_backend(std::move(backend)),
        m_path(std::move(path)),
        m_watchdog(m_config.timeout_s, [this](const std::string& a, double w) { on_timeout(a, w); }) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;
  ~Session() = default;

  int run();

 private:
  [[nodiscard]] bool is_writer() const { return m_group.rank() == 0; }
  [[nodiscard]] std::FILE* table_stream() const { return m_path == "-" ? stderr : stdout; }
  void start_document();
  [[nodiscard]] TableHeader table_header() const;
  [[nodiscard]] CaseResult base_result(std::uint64_t size, bool in_place) const;
  CaseResult run_case(Runner& runner, std::uint64_t size, bool in_place);
  void record(const CaseResult& result);
  void write_document();
  void on_timeout(const std::string& activity, double waited_s);
  [[nodiscard]] std::vector<bool> placements() const;

  RunConfig m_config;
  const CollectiveInfo& m_coll;
  MpiGroup& m_group;
  Layout m_layout;
  std::unique_ptr<Backend> m_backend;
  std::string m_path;
  std::mutex m_doc_mutex;  // the watchdog thread records a timed-out case
  ResultDocument m_doc;
  std::optional<CaseResult> m_current;
  Watchdog m_watchdog;
};

std::vector<bool> Session::placements() const {
  switch (m_config.placement) {
    case Placement::OutOfPlace:
      return {false};
    case Placement::InPlace:
      return {true};
    case Placement::Both:
      break;
  }
  return {false, true};
}

void Session::start_document() {
  auto& run = m_doc.run;
  run.id = make_run_id();
  run.benchmark = std::string{m_coll.bench};
  run.started_utc = utc_now_iso8601();
  run.argv = m_config.argv;
  run.tool_version = std::string{tool_version()};
  run.git_revision = std::string{git_revision()};
  run.label = m_config.label;
  m_doc.environment.hosts = m_layout.hosts;
  m_doc.environment.libraries = m_backend->versions();
  m_doc.environment.variables = communication_variables(environ);
}

TableHeader Session::table_header() const {
  TableHeader h;
  h.title = fmt::format("{}  {}  ({})", version_string(), m_coll.bench, m_coll.name);
  const auto versions = m_backend->versions();
  const auto lib = versions.find(m_backend->name());
  h.backend = lib == versions.end() ? m_backend->name() : fmt::format("{} ({})", m_backend->name(), lib->second);
  h.ranks = m_group.size();
  h.hosts = static_cast<int>(m_layout.hosts.size());
  const std::string batch = m_config.batch_ops ? fmt::format("{} ops per sample", *m_config.batch_ops)
                                               : std::string{"ops per sample calibrated to ~1 ms"};
  h.timing =
      fmt::format("{} ({}), {}", name(m_config.timing),
                  m_config.timing == TimingMode::Batch ? batch : "one op per sample", m_backend->timer().clock());
  h.stopping = m_config.iters ? fmt::format("{} samples per size", *m_config.iters)
                              : fmt::format(
                                    "samples until the median's 95% CI is within ±{:g}% "
                                    "(at least {}, at most {:g} s per size)",
                                    m_config.target_ci * 100, m_config.min_samples, m_config.time_budget_s);
  return h;
}

CaseResult Session::base_result(std::uint64_t size, bool in_place) const {
  CaseResult r;
  r.benchmark = std::string{m_coll.bench};
  r.backend = m_backend->name();
  r.timing = m_config.timing;
  r.clock = m_backend->timer().clock();
  const int n = m_group.size();
  r.spec = {m_config.collective, m_config.dtype, m_config.op, m_config.root, in_place, 0};
  r.spec.count = count_for_bytes(m_coll, size, size_of(m_config.dtype), n);
  r.ranks = n;
  r.nodes = static_cast<int>(m_layout.hosts.size());
  r.size_bytes = r.spec.count > 0 ? algbw_bytes(m_coll, r.spec.count, size_of(m_config.dtype), n) : size;
  r.bus_factor = bus_factor(m_coll.factor, n);
  r.peak_GBps = m_config.peak_GBps;
  if (r.peak_GBps) {
    r.peak_basis = "--peak-GBps given on the command line";
  }
  return r;
}

CaseResult Session::run_case(Runner& runner, std::uint64_t size, bool in_place) {
  CaseResult r = base_result(size, in_place);
  const Support support = m_backend->supports(r.spec);
  if (!support.supported) {
    r.status = CaseStatus::Skipped;
    r.reason = support.reason;
    return r;
  }
  {
    const std::lock_guard lock(m_doc_mutex);
    m_current = r;
  }
  m_watchdog.begin(fmt::format("{} {} B {}", m_coll.name, r.size_bytes, in_place ? "in-place" : "out-of-place"));
  const Measurement m = runner.measure(r.spec);
  m_watchdog.idle();
  summarize_into(r, m, m_config.keep_samples);
  return r;
}

void Session::write_document() {
  if (m_path != "-") {
    write_file_atomically(m_path, to_json(m_doc).dump(2) + "\n");
  }
}

void Session::record(const CaseResult& result) {
  if (!is_writer()) {
    return;
  }
  const std::lock_guard lock(m_doc_mutex);
  m_current.reset();
  m_doc.results.push_back(result);
  write_document();
}

void Session::on_timeout(const std::string& activity, double waited_s) {
  fmt::print(stderr, "{}: error: timeout: {} made no progress for {:.1f} s on rank {} ({}); ending the job\n",
             m_coll.bench, activity, waited_s, m_group.rank(), local_hostname());
  if (is_writer()) {
    const std::lock_guard lock(m_doc_mutex);
    if (m_current) {
      m_current->status = CaseStatus::TimedOut;
      m_current->reason = fmt::format("no progress for {:.1f} s (--timeout {:g})", waited_s, m_config.timeout_s);
      m_doc.results.push_back(*m_current);
    }
    m_doc.run.ended_utc = utc_now_iso8601();
    try {
      write_document();
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: error: {}\n", m_coll.bench, e.what());
    }
  }
  MpiContext::abort(kExitTimeout);
}

int Session::run() {
  const TablePrinter printer(table_stream(), placements());
  if (is_writer()) {
    start_document();
    printer.header(table_header());
  }
  Runner runner(m_group, *m_backend, sampling_policy(m_config), &m_watchdog);
  bool failed = false;
  for (const std::uint64_t size : sweep_sizes(m_config.min_bytes, m_config.max_bytes, m_config.step_factor)) {
    std::vector<CaseResult> cells;
    for (const bool in_place : placements()) {
      cells.push_back(run_case(runner, size, in_place));
      failed = failed || cells.back().status == CaseStatus::Failed;
      record(cells.back());
    }
    if (is_writer()) {
      printer.row(cells);
    }
  }
  if (is_writer()) {
    m_doc.run.ended_utc = utc_now_iso8601();
    write_document();
    printer.footer(m_doc.results, m_path == "-" ? std::string{} : m_path);
    if (m_path == "-") {
      fmt::print("{}\n", to_json(m_doc).dump(2));
    }
  }
  return failed ? kExitFailure : kExitOk;
}

int run_program(Collective collective, MpiGroup& world, int argc, char** argv) {
  const auto& coll = info(collective);
  const std::span<const char* const> args(argv, static_cast<std::size_t>(argc));
  auto parsed = agreed(world, coll.bench, [&] { return parse_command_line(collective, args); });
  if (const auto* early = std::get_if<EarlyExit>(&parsed)) {
    if (world.rank() == 0) {
      fmt::print("{}", early->text);
    }
    return kExitOk;
  }
  RunConfig config = std::get<RunConfig>(std::move(parsed));
  agreed(world, coll.bench, [&] {
    if (coll.has_root && config.root >= world.size()) {
      throw UsageError(fmt::format("--root {} is not a rank of this job ({} ranks: 0..{})", config.root, world.size(),
                                   world.size() - 1));
    }
    return true;
  });
  Layout layout = discover_layout(world);
  const BackendChoice choice = resolve_backend(config.backend);
  agreed(world, coll.bench, [&] {  // local checks first, so no rank enters set-up alone
    check_can_run(choice, layout.placement, local_hostname(), visible_gpus());
    return true;
  });
  auto backend =
      agreed(world, coll.bench, [&] { return make_backend(choice, world, layout.placement, config.timeout_s); });
  const std::string host = layout.hosts.front().hostname;
  std::string path = agreed(world, coll.bench, [&] {
    if (!config.out_path.empty() || world.rank() != 0) {
      return config.out_path;
    }
    return default_result_path(coll, host);
  });
  Session session(std::move(config), world, std::move(layout), std::move(backend), std::move(path));
  try {
    return session.run();
  } catch (const std::exception& e) {  // other ranks may be inside a collective: end the job
    fmt::print(stderr, "{}: error: {}\n", coll.bench, e.what());
    MpiContext::abort(exit_code_of(e));
  }
}

}  // namespace

int bench_main(Collective collective, int argc, char** argv) {
  try {
    MpiContext mpi(argc, argv);
    MpiGroup world(MPI_COMM_WORLD);
    try {
      return run_program(collective, world, argc, argv);
    } catch (const Reported& r) {
      return r.exit_code;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", info(collective).bench, e.what());
    return kExitFailure;
  }
}

}  // namespace ccbench
